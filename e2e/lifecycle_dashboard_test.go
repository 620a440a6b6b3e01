//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
)

// lifecycleDashboardChecks turns on the dashboard's checks of in-place
// rescales, failovers and restores under a new job id (ownerUndetermined,
// candidates, prediction.headline, lineage, replacedBy, the by-name
// routes).
const lifecycleDashboardChecks = true

// lifeVertexJSON is the part of GET /api/v1/jobs/{jobID}/vertices/{vertexID}
// these checks read.
type lifeVertexJSON struct {
	JobID    string `json:"jobId"`
	ID       string `json:"id"`
	Subtasks []struct {
		Subtask    int `json:"subtask"`
		Partitions []struct {
			Topic             string `json:"topic"`
			Partition         int32  `json:"partition"`
			OwnerUndetermined bool   `json:"ownerUndetermined"`
			Candidates        []int  `json:"candidates"`
		} `json:"partitions"`
	} `json:"subtasks"`
	Prediction *struct {
		Mode     string `json:"mode"`
		History  []int  `json:"history"`
		Drift    int    `json:"drift"`
		Headline struct {
			Kind     string         `json:"kind"`
			Verdicts map[string]int `json:"verdicts"`
		} `json:"headline"`
		// Notes are strings or objects; the checks search their JSON text.
		Notes []json.RawMessage `json:"notes"`
	} `json:"prediction"`
	Lineage *struct {
		Events []struct {
			Kind string `json:"kind"`
			From *int   `json:"from"`
			To   *int   `json:"to"`
		} `json:"events"`
	} `json:"lineage"`
}

// lifeJobJSON is the part of GET /api/v1/jobs/{jobID} the restore check reads.
type lifeJobJSON struct {
	ID         string `json:"id"`
	ReplacedBy *struct {
		ID string `json:"id"`
	} `json:"replacedBy"`
}

// lifeWant is what one lifecycle step expects of the source vertex's JSON.
type lifeWant struct {
	jobID, vertexID string
	step            string
	history         []int
	// owners is the data path's truth, nil when this step comes before
	// its truth round (checked then against the model, see checkLifecycle).
	owners   map[assign.TopicPartition]int
	failover bool     // the job has failed over once by now
	rescales [][2]int // the in-place rescales so far
}

// falseNotes are note texts that would mean the dashboard lost track of
// the job's history.
var falseNotes = []string{"did not see", "earlier job of this lineage"}

// checkLifecycle reads the vertex JSON the store built from this step's
// single poll and checks owners, prediction and lineage.
func (d *dashboard) checkLifecycle(t *testing.T, w lifeWant) {
	t.Helper()
	var vv lifeVertexJSON
	d.getJSON(t, "/api/v1/jobs/"+w.jobID+"/vertices/"+w.vertexID, &vv)
	if strings.HasSuffix(w.step, "-metrics-refreshed") {
		// Flink's JobManager fetches metric dumps lazily (at most once per
		// metrics.fetcher.update-interval, on a request): poll until the
		// dashboard has seen a dump from after the restart, then every
		// reader must be settled.
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		for i := 0; i < 30 && undeterminedCells(vv) > 0; i++ {
			time.Sleep(time.Second)
			d.fcol.PollOnce(ctx)
			d.getJSON(t, "/api/v1/jobs/"+w.jobID+"/vertices/"+w.vertexID, &vv)
		}
	}
	d.checkCheckpointsAndCause(t, w)
	owners := w.owners
	if owners == nil {
		// Before the truth round the layout is the model's: the
		// scenario's compare (lifecycleRun.compare) fails the test if the
		// two ever differ.
		res, err := assign.Restore(assign.RestoreInput{Topics: lifeTopics, History: w.history, ConnectorLine: d.env.line.ConnectorLine})
		if err != nil {
			t.Fatal(err)
		}
		owners = ownerMap(res.Assignment.Subtasks)
	}
	checkCellOwners(t, w.step, vv, owners)
	if len(w.history) == 1 {
		if vv.Prediction == nil || vv.Prediction.Mode != "fresh" {
			t.Errorf("%s: prediction %+v, want mode \"fresh\" before any rescale", w.step, vv.Prediction)
		}
		return
	}
	// After the failover too: the prediction is unchanged (a restart at
	// the same parallelism is not a rescale). On the first poll after a
	// restart Flink's REST may still serve the pre-restart metrics: then
	// the readers it does not settle are outlined (checkCellOwners has
	// checked they sit where their reader is) and the verdict is
	// "uncertain", never a confident "exact"; once Flink has refreshed its
	// metrics it must be exact.
	headline := "exact"
	if strings.HasSuffix(w.step, "-first-poll") && undeterminedCells(vv) > 0 {
		headline = "uncertain"
	}
	checkPrediction(t, w.step, vv, "restore", w.history, headline)
	if w.failover {
		failovers := 0
		if vv.Lineage != nil {
			for _, e := range vv.Lineage.Events {
				if e.Kind == "failover" {
					failovers++
				}
			}
		}
		if failovers == 0 {
			t.Errorf("%s: lineage.events has no event of kind \"failover\": %+v", w.step, vv.Lineage)
		}
	}
	if len(w.rescales) > 0 {
		var got [][2]int
		if vv.Lineage != nil {
			for _, e := range vv.Lineage.Events {
				if e.Kind == "rescale" && e.From != nil && e.To != nil {
					got = append(got, [2]int{*e.From, *e.To})
				}
			}
		}
		for _, r := range w.rescales {
			if !slices.Contains(got, r) {
				t.Errorf("%s: lineage.events has no rescale from %d to %d (rescales listed: %v)", w.step, r[0], r[1], got)
			}
		}
	}
}

// checkCellOwners: every partition is listed under its true owner, once;
// an undetermined cell must name the truth among its candidates.
func checkCellOwners(t *testing.T, step string, vv lifeVertexJSON, owners map[assign.TopicPartition]int) {
	t.Helper()
	seen := map[assign.TopicPartition]int{}
	for _, row := range vv.Subtasks {
		for _, c := range row.Partitions {
			tp := assign.TopicPartition{Topic: c.Topic, Partition: c.Partition}
			want, known := owners[tp]
			if !known {
				t.Errorf("%s: cell %s under subtask %d is not a partition of the job", step, tp.SplitID(), row.Subtask)
				continue
			}
			if c.OwnerUndetermined {
				// Listed under several subtasks: the reader is one of them.
				// Listed only in ids from before the restart (no
				// candidates): shown where the exact model puts it.
				if (len(c.Candidates) > 0 && !slices.Contains(c.Candidates, want)) || (len(c.Candidates) == 0 && row.Subtask != want) {
					t.Errorf("%s: %s is ownerUndetermined under subtask %d with candidates %v; its reader is %d", step, tp.SplitID(), row.Subtask, c.Candidates, want)
				}
				seen[tp]++
				continue
			}
			seen[tp]++
			if row.Subtask != want {
				t.Errorf("%s: %s listed under subtask %d, read by subtask %d", step, tp.SplitID(), row.Subtask, want)
			}
		}
	}
	for tp := range owners {
		if seen[tp] != 1 {
			t.Errorf("%s: %s listed %d times, want once", step, tp.SplitID(), seen[tp])
		}
	}
}

// checkPrediction: mode, history, no drift, the headline kind and no note
// saying the dashboard missed part of the lineage.
func checkPrediction(t *testing.T, step string, vv lifeVertexJSON, mode string, history []int, headline string) {
	t.Helper()
	pr := vv.Prediction
	if pr == nil {
		t.Errorf("%s: vertex JSON has no prediction", step)
		return
	}
	if pr.Mode != mode || !slices.Equal(pr.History, history) || pr.Drift != 0 || pr.Headline.Kind != headline {
		notes := make([]string, len(pr.Notes))
		for i, n := range pr.Notes {
			notes[i] = string(n)
		}
		t.Errorf("%s: prediction mode %q history %v drift %d headline %q (%+v); want mode %q history %v drift 0 headline %q\n  notes: %s",
			step, pr.Mode, pr.History, pr.Drift, pr.Headline.Kind, pr.Headline.Verdicts, mode, history, headline, strings.Join(notes, "\n    "))
	}
	for _, n := range pr.Notes {
		for _, bad := range falseNotes {
			if strings.Contains(strings.ToLower(string(n)), bad) {
				t.Errorf("%s: prediction note %s says %q", step, n, bad)
			}
		}
	}
}

// checkRestoreLineage checks a restore under a new job id: the new job's
// source vertex (mode restore, drift 0, headline exact, no false note),
// the old job's replacedBy, and the by-name routes, HTML (a redirect to
// the new job) and API (the new job's vertex JSON).
func (d *dashboard) checkRestoreLineage(t *testing.T, oldID, newID, jobName, vertexName, vertexID string, history []int) {
	t.Helper()
	var vv lifeVertexJSON
	d.getJSON(t, "/api/v1/jobs/"+newID+"/vertices/"+vertexID, &vv)
	checkPrediction(t, "restore", vv, "restore", history, "exact")
	var old lifeJobJSON
	d.getJSON(t, "/api/v1/jobs/"+oldID, &old)
	if old.ReplacedBy == nil || old.ReplacedBy.ID != newID {
		t.Errorf("old job %s: replacedBy %+v, want id %s", oldID, old.ReplacedBy, newID)
	}
	byName := "/jobs/by-name/" + url.PathEscape(jobName) + "/vertices/" + url.PathEscape(vertexName)
	noFollow := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(d.srv.URL + byName)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if (resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther) || !strings.Contains(resp.Header.Get("Location"), newID) {
		t.Errorf("GET %s: %s Location %q, want 302 or 303 to job %s", byName, resp.Status, resp.Header.Get("Location"), newID)
	}
	var byNameJSON lifeVertexJSON
	d.getJSON(t, "/api/v1"+byName, &byNameJSON)
	if byNameJSON.JobID != newID || byNameJSON.ID != vertexID {
		t.Errorf("GET /api/v1%s: job %q vertex %q, want %s and %s", byName, byNameJSON.JobID, byNameJSON.ID, newID, vertexID)
	}
}

// checkInferred polls a second dashboard (a new store and collectors)
// that never saw the old job and checks that it infers the true history
// from the restored job alone.
func (d *dashboard) checkInferred(t *testing.T, jobID, vertexID string, history []int) {
	t.Helper()
	var vv lifeVertexJSON
	deadline := time.Now().Add(60 * time.Second)
	for {
		d.pollOnce(t)
		d.getJSON(t, "/api/v1/jobs/"+jobID+"/vertices/"+vertexID, &vv)
		if vv.Prediction != nil && vv.Prediction.Mode == "inferred" {
			break
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	checkPrediction(t, "second dashboard after the restore", vv, "inferred", history, "inferred")
}

// pollUntilCells polls d until the vertex view shows n cells none of which
// is undetermined (at most 60 s) and returns the last view.
func (d *dashboard) pollUntilCells(t *testing.T, jobID, vertexID string, n int) lifeVertexJSON {
	t.Helper()
	var vv lifeVertexJSON
	deadline := time.Now().Add(60 * time.Second)
	for {
		d.pollOnce(t)
		vv = lifeVertexJSON{}
		d.getJSON(t, "/api/v1/jobs/"+jobID+"/vertices/"+vertexID, &vv)
		cells := 0
		for _, row := range vv.Subtasks {
			cells += len(row.Partitions)
		}
		if cells == n && undeterminedCells(vv) == 0 {
			return vv
		}
		if time.Now().After(deadline) {
			t.Errorf("vertex %s of job %s: %d cells (%d undetermined) after 60 s, want %d settled", vertexID, jobID, cells, undeterminedCells(vv), n)
			return vv
		}
		time.Sleep(time.Second)
	}
}

// lifeLayout is the vertex JSON's layout, each subtask's partitions sorted.
func lifeLayout(vv lifeVertexJSON, p int) [][]assign.TopicPartition {
	out := make([][]assign.TopicPartition, p)
	for _, row := range vv.Subtasks {
		if row.Subtask < 0 || row.Subtask >= p {
			continue
		}
		for _, c := range row.Partitions {
			out[row.Subtask] = append(out[row.Subtask], assign.TopicPartition{Topic: c.Topic, Partition: c.Partition})
		}
	}
	return sortedLayout(out, p)
}

// pollOnce polls Flink, then Kafka, once into the store.
func (d *dashboard) pollOnce(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d.fcol.PollOnce(ctx)
	d.kcol.PollOnce(ctx)
}

// undeterminedCells counts the cells whose reader the metric ids do not
// settle.
func undeterminedCells(vv lifeVertexJSON) int {
	n := 0
	for _, row := range vv.Subtasks {
		for _, c := range row.Partitions {
			if c.OwnerUndetermined {
				n++
			}
		}
	}
	return n
}
