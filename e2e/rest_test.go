//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/skewscope/skewscope/assign"
	fcollect "github.com/skewscope/skewscope/collectors/flink"
)

// restClient talks to a Flink JobManager's REST endpoint: reads go through
// skewscope's own client (fc), the job control calls (cancel, stop with a
// savepoint) and raw recordings through hc.
type restClient struct {
	base string
	hc   *http.Client
	fc   *fcollect.Client
}

func newREST(base string) (*restClient, error) {
	base = strings.TrimRight(base, "/")
	hc := &http.Client{Timeout: 30 * time.Second}
	fc, err := fcollect.NewClient(base, fcollect.WithHTTPClient(hc))
	if err != nil {
		return nil, err
	}
	return &restClient{base: base, hc: hc, fc: fc}, nil
}

func (r *restClient) do(method, path string, body, v any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, clip(string(b), 600))
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s %s: decode %T: %v: %s", method, path, v, err, clip(string(b), 600))
	}
	return nil
}

func (r *restClient) get(path string, v any) error { return r.do(http.MethodGet, path, nil, v) }

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (r *restClient) job(id string) (*fcollect.Job, error) {
	return r.fc.Job(context.Background(), id)
}

// vertexNamed returns the job's vertex whose name has the given prefix.
func vertexNamed(j *fcollect.Job, prefix string) (fcollect.Vertex, error) {
	for _, v := range j.Vertices {
		if strings.HasPrefix(v.Name, prefix) {
			return v, nil
		}
	}
	names := make([]string, len(j.Vertices))
	for i, v := range j.Vertices {
		names[i] = v.Name
	}
	return fcollect.Vertex{}, fmt.Errorf("job %s has no vertex named %q…; vertices: %q", j.ID, prefix, names)
}

// waitRunning waits until the job and every vertex are RUNNING.
func (r *restClient) waitRunning(id string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		d, err := r.job(id)
		if err == nil {
			last = string(d.State)
			ok := d.State == "RUNNING" && len(d.Vertices) > 0
			for _, v := range d.Vertices {
				ok = ok && v.Status == "RUNNING"
				last += fmt.Sprintf(" %s=%s", v.Name, v.Status)
			}
			if ok {
				return nil
			}
			if d.State == "FAILED" || d.State == "CANCELED" || d.State == "FINISHED" {
				return fmt.Errorf("job reached %s while waiting for RUNNING", d.State)
			}
		} else {
			last = err.Error()
		}
		time.Sleep(300 * time.Millisecond)
	}
	return fmt.Errorf("job not running after %s: %s", timeout, last)
}

// waitState waits until the job's state is one of states.
func (r *restClient) waitState(id string, timeout time.Duration, states ...string) error {
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		d, err := r.job(id)
		if err == nil {
			last = string(d.State)
			for _, s := range states {
				if string(d.State) == s {
					return nil
				}
			}
		} else {
			last = err.Error()
		}
		time.Sleep(300 * time.Millisecond)
	}
	return fmt.Errorf("job %s not in %v after %s (last: %s)", id, states, timeout, last)
}

// cancel cancels through REST (PATCH /jobs/:jobid?mode=cancel) and waits
// for CANCELED.
func (r *restClient) cancel(id string) error {
	if err := r.do(http.MethodPatch, "/jobs/"+id+"?mode=cancel", nil, nil); err != nil {
		return err
	}
	return r.waitState(id, 90*time.Second, "CANCELED")
}

// stopWithSavepoint is POST /jobs/:jobid/stop, then polls the trigger until
// the savepoint completes; it returns the savepoint location.
func (r *restClient) stopWithSavepoint(id, dir string) (string, error) {
	var trig struct {
		RequestID string `json:"request-id"`
	}
	if err := r.do(http.MethodPost, "/jobs/"+id+"/stop", map[string]any{"targetDirectory": dir, "drain": false}, &trig); err != nil {
		return "", err
	}
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Before(deadline) {
		var st struct {
			Status struct {
				ID string `json:"id"`
			} `json:"status"`
			Operation struct {
				Location     string          `json:"location"`
				FailureCause json.RawMessage `json:"failure-cause"`
			} `json:"operation"`
		}
		if err := r.get("/jobs/"+id+"/savepoints/"+trig.RequestID, &st); err != nil {
			return "", err
		}
		if st.Status.ID == "COMPLETED" {
			if st.Operation.Location == "" {
				return "", fmt.Errorf("stop-with-savepoint failed: %s", clip(string(st.Operation.FailureCause), 2000))
			}
			if err := r.waitState(id, 60*time.Second, "FINISHED"); err != nil {
				return "", err
			}
			return st.Operation.Location, nil
		}
		time.Sleep(300 * time.Millisecond)
	}
	return "", fmt.Errorf("savepoint of %s not complete after 120 s", id)
}

// metricIDs lists the metric ids of path (no get=); the subtask endpoint,
// which skewscope's client does not list.
func (r *restClient) metricIDs(path string) ([]string, error) {
	var ms []struct {
		ID string `json:"id"`
	}
	if err := r.get(path, &ms); err != nil {
		return nil, err
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return ids, nil
}

// metricValues reads ids of a vertex (raw strings by id), split into
// requests within Flink's request-line limit by skewscope's client.
func (r *restClient) metricValues(jobID, vertexID string, ids []string) (map[string]string, error) {
	ms, err := r.fc.VertexMetrics(context.Background(), jobID, vertexID, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(ms))
	for _, m := range ms {
		out[m.ID] = m.Raw
	}
	return out, nil
}

// observation is the source assignment read from REST metric ids.
type observation struct {
	Vertex   string                    // source vertex id
	Subtasks [][]assign.TopicPartition // sorted per subtask
	Sample   []string                  // a few raw ids, for the report
	IDCount  int                       // metric ids of the vertex
	Operator string                    // operator prefix seen in the ids
}

// topicFromMetric maps a (sanitised) topic of a metric id back to the
// known topic it names.
func topicFromMetric(name string, topics []assign.Topic) string {
	if c := fcollect.ResolveTopic(name, topicNames(topics)); len(c) > 0 {
		return c[0]
	}
	return name
}

// observeSource polls the source vertex's metric id list until every
// partition of topics is listed by exactly one subtask and (if
// requireRead) each one's currentOffset is >= 0, i.e. that subtask has
// emitted a record of it. It then cross-checks the per-subtask metric
// endpoints against the vertex-level list.
func (r *restClient) observeSource(jobID string, topics []assign.Topic, p int, requireRead bool, timeout time.Duration) (observation, error) {
	d, err := r.job(jobID)
	if err != nil {
		return observation{}, err
	}
	src, err := vertexNamed(d, "Source: Kafka Source")
	if err != nil {
		return observation{}, err
	}
	if src.Parallelism != p {
		return observation{}, fmt.Errorf("source vertex parallelism %d, want %d", src.Parallelism, p)
	}
	want := map[assign.TopicPartition]bool{}
	for _, tp := range assign.Partitions(topics) {
		want[tp] = true
	}
	deadline := time.Now().Add(timeout)
	var obs observation
	var problem string
	for {
		obs, problem, err = r.observeOnce(jobID, src.ID, topics, p, want, requireRead)
		if err != nil {
			return obs, err
		}
		if problem == "" {
			break
		}
		if time.Now().After(deadline) {
			return obs, fmt.Errorf("after %s: %s; last observed:%s", timeout, problem, layoutString(obs.Subtasks))
		}
		time.Sleep(time.Second)
	}
	// Cross-check: GET …/subtasks/:i/metrics lists the same partitions
	// without the "<subtask>." prefix.
	for i := 0; i < p; i++ {
		ids, err := r.metricIDs(fmt.Sprintf("/jobs/%s/vertices/%s/subtasks/%d/metrics", jobID, src.ID, i))
		if err != nil {
			return obs, err
		}
		var got []assign.TopicPartition
		for _, id := range ids {
			m, ok := fcollect.ParseKafkaOffsetID(id)
			if !ok || m.Subtask >= 0 || m.Kind != fcollect.KafkaCurrentOffset {
				continue
			}
			got = append(got, assign.TopicPartition{Topic: topicFromMetric(m.Topic, topics), Partition: m.Partition})
		}
		got = sortedLayout([][]assign.TopicPartition{got}, 1)[0]
		if !sameLayout([][]assign.TopicPartition{got}, [][]assign.TopicPartition{obs.Subtasks[i]}) {
			return obs, fmt.Errorf("subtask %d: per-subtask endpoint lists %v, vertex endpoint %v", i, got, obs.Subtasks[i])
		}
	}
	return obs, nil
}

func (r *restClient) observeOnce(jobID, vertexID string, topics []assign.Topic, p int, want map[assign.TopicPartition]bool, requireRead bool) (observation, string, error) {
	obs := observation{Vertex: vertexID, Subtasks: make([][]assign.TopicPartition, p)}
	ctx := context.Background()
	ids, err := r.fc.VertexMetricIDs(ctx, jobID, vertexID)
	if err != nil {
		return obs, "", err
	}
	obs.IDCount = len(ids)
	parsed := fcollect.ParseKafkaSourceMetricIDs(ids)
	owners := map[assign.TopicPartition][]int{}
	var offsetIDs []string
	for _, st := range parsed.States {
		if st.CurrentID == "" {
			continue
		}
		tp := assign.TopicPartition{Topic: topicFromMetric(st.Topic, topics), Partition: st.Partition}
		if st.Subtask >= p {
			return obs, "", fmt.Errorf("metric id %q names subtask %d of a vertex with parallelism %d", st.CurrentID, st.Subtask, p)
		}
		obs.Operator = st.Operator
		obs.Subtasks[st.Subtask] = append(obs.Subtasks[st.Subtask], tp)
		owners[tp] = append(owners[tp], st.Subtask)
		offsetIDs = append(offsetIDs, st.CurrentID)
		if len(obs.Sample) < 2 {
			obs.Sample = append(obs.Sample, st.CurrentID)
		}
	}
	obs.Subtasks = sortedLayout(obs.Subtasks, p)
	var problems []string
	var missing, extra, dup []string
	for tp := range want {
		if len(owners[tp]) == 0 {
			missing = append(missing, tp.SplitID())
		}
	}
	for tp, subs := range owners {
		if !want[tp] {
			extra = append(extra, tp.SplitID())
		}
		if len(subs) > 1 {
			dup = append(dup, fmt.Sprintf("%s on %v", tp.SplitID(), subs))
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	sort.Strings(dup)
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("%d partitions not yet listed (%s)", len(missing), clip(strings.Join(missing, " "), 300)))
	}
	if len(extra) > 0 {
		problems = append(problems, "unexpected partitions "+strings.Join(extra, " "))
	}
	if len(dup) > 0 {
		problems = append(problems, "partitions on more than one subtask: "+strings.Join(dup, "; "))
	}
	if requireRead && len(problems) == 0 && len(offsetIDs) > 0 {
		ms, err := r.fc.VertexMetrics(ctx, jobID, vertexID, offsetIDs)
		if err != nil {
			return obs, "", err
		}
		parsed.ApplyValues(ms)
		var unread []string
		for _, st := range parsed.States {
			if st.CurrentID != "" && st.CurrentOffset < 0 {
				unread = append(unread, assign.TopicPartition{Topic: topicFromMetric(st.Topic, topics), Partition: st.Partition}.SplitID())
			}
		}
		if len(unread) > 0 {
			sort.Strings(unread)
			problems = append(problems, fmt.Sprintf("%d partitions with currentOffset -1 (nothing emitted yet): %s", len(unread), clip(strings.Join(unread, " "), 300)))
		}
	}
	return obs, strings.Join(problems, "; "), nil
}

// checkpointsCompleted is counts.completed of GET /jobs/:jobid/checkpoints.
func (r *restClient) checkpointsCompleted(id string) (int, error) {
	c, err := r.fc.Checkpoints(context.Background(), id)
	if err != nil {
		return 0, err
	}
	return c.Counts.Completed, nil
}

// resourceRequirements is the body of GET and PUT
// /jobs/:jobid/resource-requirements: per vertex id
// {"parallelism":{"lowerBound":L,"upperBound":U}} (FLIP-291, ≥1.18).
type resourceRequirements map[string]struct {
	Parallelism struct {
		LowerBound int `json:"lowerBound"`
		UpperBound int `json:"upperBound"`
	} `json:"parallelism"`
}

// rescale asks the adaptive scheduler to run every vertex of the job at p
// (lowerBound 1, upperBound p): the vertex ids come from the job's own
// GET …/resource-requirements, the new bounds go back with PUT.
func (r *restClient) rescale(jobID string, p int) error {
	var req resourceRequirements
	if err := r.get("/jobs/"+jobID+"/resource-requirements", &req); err != nil {
		return err
	}
	if len(req) == 0 {
		return fmt.Errorf("GET /jobs/%s/resource-requirements lists no vertices", jobID)
	}
	for id, v := range req {
		v.Parallelism.LowerBound, v.Parallelism.UpperBound = 1, p
		req[id] = v
	}
	return r.do(http.MethodPut, "/jobs/"+jobID+"/resource-requirements", req, nil)
}

// waitParallelism waits until the job is RUNNING with every vertex at
// parallelism p and every subtask of every vertex RUNNING (vertex details,
// not the vertex's aggregate status). It returns the job.
func (r *restClient) waitParallelism(jobID string, p int, timeout time.Duration) (*fcollect.Job, error) {
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		j, err := r.job(jobID)
		if err == nil {
			last = string(j.State)
			ok := j.State == "RUNNING" && len(j.Vertices) > 0
			for _, v := range j.Vertices {
				last += fmt.Sprintf(" %s=%s×%d", v.Name, v.Status, v.Parallelism)
				if !ok || v.Parallelism != p || v.Status != "RUNNING" {
					ok = false
					continue
				}
				det, err := r.fc.VertexDetails(context.Background(), jobID, v.ID)
				if err != nil || len(det.Subtasks) != p {
					ok = false
					continue
				}
				for _, st := range det.Subtasks {
					ok = ok && st.Status == "RUNNING"
				}
			}
			if ok {
				return j, nil
			}
			if j.State == "FAILED" || j.State == "CANCELED" || j.State == "FINISHED" {
				return nil, fmt.Errorf("job %s reached %s while waiting for parallelism %d", jobID, j.State, p)
			}
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("job %s not RUNNING with every subtask at parallelism %d after %s (last: %s)", jobID, p, timeout, last)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// waitCheckpointOf waits for a completed checkpoint with id > after that
// every one of subtasks subtasks acknowledged, i.e. one taken at the job's
// current parallelism; it returns its id.
func (r *restClient) waitCheckpointOf(jobID string, subtasks int, after int64, timeout time.Duration) (int64, error) {
	deadline := time.Now().Add(timeout)
	last := "no completed checkpoint"
	for {
		c, err := r.fc.Checkpoints(context.Background(), jobID)
		if err != nil {
			last = err.Error()
		} else if l := c.Latest.Completed; l != nil {
			last = fmt.Sprintf("latest completed checkpoint %d with %d subtasks", l.ID, l.NumSubtasks)
			if l.ID > after && l.NumSubtasks == subtasks {
				return l.ID, nil
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("job %s: no completed checkpoint after %d with %d subtasks within %s (%s)", jobID, after, subtasks, timeout, last)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// latestCheckpoint is the id of the latest completed checkpoint, 0 if none.
func (r *restClient) latestCheckpoint(jobID string) (int64, error) {
	c, err := r.fc.Checkpoints(context.Background(), jobID)
	if err != nil {
		return 0, err
	}
	if c.Latest.Completed == nil {
		return 0, nil
	}
	return c.Latest.Completed.ID, nil
}

// numRestarts is the job metric numRestarts (GET /jobs/:jobid/metrics?get=numRestarts).
func (r *restClient) numRestarts(jobID string) (int64, error) {
	var ms []struct {
		ID    string `json:"id"`
		Value string `json:"value"`
	}
	if err := r.get("/jobs/"+jobID+"/metrics?get=numRestarts", &ms); err != nil {
		return 0, err
	}
	for _, m := range ms {
		if m.ID == "numRestarts" {
			return strconv.ParseInt(m.Value, 10, 64)
		}
	}
	return 0, fmt.Errorf("job %s lists no numRestarts metric yet", jobID)
}
