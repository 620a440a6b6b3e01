//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/assign"
	fcollect "github.com/skewscope/skewscope/collectors/flink"
	kcollect "github.com/skewscope/skewscope/collectors/kafka"
)

// The job's life under the adaptive scheduler: a fresh start at 4, an
// in-place rescale to 6 and later to 3 (PUT …/resource-requirements, the
// job keeps its id and restores from its latest checkpoint), then one
// failover at 3 (a source subtask throws once, the job restarts from its
// last checkpoint under the same id). After each change, with no traffic
// since, the dashboard polls Flink once (the first poll, recorded), once
// more after Flink's metrics refreshed, and once after one record per
// partition told which source subtask really reads it (the data-path
// ground truth, independent of metrics).

// The lifecycle job: one topic of 12 partitions, source and keyed
// parallelism moved together.
var (
	lifeTopics = []assign.Topic{{Name: "life12", Partitions: 12}}
	lifeOut    = assign.Topic{Name: "life-out", Partitions: 2}
	lifeJob    = jobSpec{Name: "skewscope-lifecycle", Topics: topicNames(lifeTopics), Out: lifeOut.Name, Group: "skewscope-lifecycle", SourceP: 4, KeyedP: 4}
	// lifeRescales are the in-place rescales after the fresh start.
	lifeRescales = []int{6, 3}
)

// failOnceKey is SkewJob.FAIL_ONCE_KEY: a record with this key and a value
// of [a-z0-9-]+ makes the source subtask that reads it throw, once.
const failOnceKey = "skewscope-e2e-fail-once"

// vertices per job of SkewJob: source+tagger, router+sink.
const lifeVertices = 2

// lifecycleRun is one run of the scenario on one adaptive MiniCluster.
type lifecycleRun struct {
	e     *lineEnv
	flink *flinkCluster
	rec   *restRecorder
	dash  *dashboard
	jobID string
	srcID string
	steps []*lifeStep
	kcol  *kcollect.Collector
}

func (e *lineEnv) testLifecycle(t *testing.T) {
	start := time.Now()
	flink := startFlinkScheduler(t, e.line, e.kafka.Bootstrap, "adaptive")
	rec := newRESTRecorder(t, flink.REST.base)
	lr := &lifecycleRun{e: e, flink: flink, rec: rec, dash: newDashboardAt(t, e, rec.URL())}
	lr.dash.rest = flink.REST // the cluster behind the recorder
	lr.kcol = lr.dash.kcol

	e.kc.createTopics(t, lifeTopics...)
	e.kc.createTopics(t, lifeOut)
	lr.jobID = flink.submit(t, lifeJob)
	defer func() {
		if err := flink.REST.cancel(lr.jobID); err != nil {
			t.Errorf("cancel %s: %v", lr.jobID, err)
		}
	}()
	j, err := flink.REST.waitParallelism(lr.jobID, lifeJob.SourceP, 120*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	src, err := vertexNamed(j, "Source: Kafka Source")
	if err != nil {
		t.Fatal(err)
	}
	lr.srcID = src.ID

	// 1. Fresh start at 4: the data path, the metric ids and the formula agree.
	history := []int{lifeJob.SourceP}
	fresh, err := assign.FreshAssignment(lifeTopics, lifeJob.SourceP)
	if err != nil {
		t.Fatal(err)
	}
	truth := lr.truth(t, "fresh", lifeJob.SourceP)
	lr.compare(t, "fresh start at 4", truth, ownerMap(fresh.Subtasks), nil)
	obs, err := flink.REST.observeSource(lr.jobID, lifeTopics, lifeJob.SourceP, true, 90*time.Second)
	if err != nil {
		t.Fatalf("observe the fresh start: %v", err)
	}
	if !sameOwners(ownerMap(obs.Subtasks), truth) {
		t.Errorf("fresh start: REST metric ids show%s\n  the data path shows%s", layoutString(obs.Subtasks), layoutString(ownersLayout(truth, lifeJob.SourceP)))
	}
	lr.step(t, "p4-running", "rescale", "fresh start at 4, before any rescale; one record per partition read, metrics populated", history, truth, "p4-running")

	// 2. In-place rescales.
	p := lifeJob.SourceP
	for _, to := range lifeRescales {
		// A checkpoint at the current parallelism first: the rescale
		// restores from the latest one, and the model's history is the
		// parallelism of each checkpoint restored.
		last, err := flink.REST.latestCheckpoint(lr.jobID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := flink.REST.waitCheckpointOf(lr.jobID, lifeVertices*p, last, 60*time.Second); err != nil {
			t.Fatal(err)
		}
		if err := flink.REST.rescale(lr.jobID, to); err != nil {
			t.Fatalf("rescale %d → %d: %v", p, to, err)
		}
		if _, err := flink.REST.waitParallelism(lr.jobID, to, 180*time.Second); err != nil {
			t.Fatalf("rescale %d → %d: %v", p, to, err)
		}
		from := p
		p = to
		history = append(history, to)
		name := fmt.Sprintf("p%d", to)
		lr.step(t, name+"-first-poll", "rescale", fmt.Sprintf("first poll after the in-place rescale %d → %d, no traffic since", from, to), history, nil, name+"-after-traffic")
		lr.waitMetricRefresh(t)
		lr.step(t, name+"-metrics-refreshed", "rescale", fmt.Sprintf("after %d → %d, Flink's metrics refreshed, still no traffic", from, to), history, nil, name+"-after-traffic")
		res, err := assign.Restore(assign.RestoreInput{Topics: lifeTopics, History: slices.Clone(history), ConnectorLine: e.line.ConnectorLine})
		if err != nil {
			t.Fatal(err)
		}
		truth = lr.truth(t, name, to)
		lr.compare(t, fmt.Sprintf("in-place rescale, history %v (connector line %s)", history, res.ConnectorLine), truth, ownerMap(res.Assignment.Subtasks), res.Uncertain)
		lr.waitOwnersRead(t, truth)
		lr.step(t, name+"-after-traffic", "rescale", fmt.Sprintf("after %d → %d and one record per partition", from, to), history, truth, name+"-after-traffic")
	}

	// 3. A failover at the same parallelism.
	last, err := flink.REST.latestCheckpoint(lr.jobID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := flink.REST.waitCheckpointOf(lr.jobID, lifeVertices*p, last, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	restarts, err := flink.REST.numRestarts(lr.jobID)
	if err != nil {
		t.Fatal(err)
	}
	before := truth
	lr.step(t, "failover-before", "failover", fmt.Sprintf("at %d with a checkpoint at %d, before the failure", p, p), history, before, "p3-after-traffic")
	lr.failOnce(t, restarts)
	if _, err := flink.REST.waitParallelism(lr.jobID, p, 180*time.Second); err != nil {
		t.Fatalf("after the failover: %v", err)
	}
	lr.step(t, "failover-first-poll", "failover", "first poll after the restart from the last checkpoint, same job id, no traffic since", history, nil, "failover-after-traffic")
	lr.waitMetricRefresh(t)
	lr.step(t, "failover-metrics-refreshed", "failover", "after the restart, Flink's metrics refreshed, still no traffic", history, nil, "failover-after-traffic")
	truth = lr.truth(t, "failover", p)
	lr.compare(t, "after the failover (layout unchanged)", truth, before, nil)
	lr.waitOwnersRead(t, truth)
	lr.step(t, "failover-after-traffic", "failover", "after the restart and one record per partition", history, truth, "failover-after-traffic")

	lr.fillOwners()
	lr.recordings(t)
	t.Logf("Flink %s, lifecycle (adaptive scheduler, history %v then a failover; cluster start included) took %s", flink.Version, history, time.Since(start).Round(time.Second))
}

// truth writes one record to every partition and returns the source
// subtask that read each (see kafkaClient.groundTruth).
func (lr *lifecycleRun) truth(t *testing.T, round string, p int) map[assign.TopicPartition]int {
	t.Helper()
	return lr.e.kc.groundTruth(t, lifeOut.Name, round, lifeTopics, p, 120*time.Second)
}

// compare fails t unless the data path's owners equal the model's; the
// model's uncertain partitions are named but count as mismatches too.
func (lr *lifecycleRun) compare(t *testing.T, what string, truth, model map[assign.TopicPartition]int, uncertain []assign.TopicPartition) {
	t.Helper()
	var diff []string
	for _, tp := range assign.Partitions(lifeTopics) {
		if truth[tp] != model[tp] {
			diff = append(diff, fmt.Sprintf("%s read by %d, model %d", tp.SplitID(), truth[tp], model[tp]))
		}
	}
	p := 0
	for _, s := range truth {
		p = max(p, s+1)
	}
	for _, s := range model {
		p = max(p, s+1)
	}
	t.Logf("Flink %s, %s (job %s)\n  data path (source subtask that read one new record per partition):%s\n  model:%s",
		lr.flink.Version, what, lr.jobID, layoutString(ownersLayout(truth, p)), layoutString(ownersLayout(model, p)))
	if len(diff) > 0 {
		t.Errorf("MISMATCH %s (model's uncertain partitions: %v): %s", what, splitIDs(uncertain), strings.Join(diff, "; "))
	} else {
		t.Logf("MATCH")
	}
}

// waitMetricRefresh gives the JobManager time to fetch the task managers'
// metrics again: three metrics.fetcher.update-interval periods (1 s each),
// so the next poll serves what the restarted subtasks registered, not the
// first poll's possibly half-registered set.
func (lr *lifecycleRun) waitMetricRefresh(t *testing.T) {
	t.Helper()
	time.Sleep(3 * time.Second)
}

// waitOwnersRead waits until, for every partition, its true owner's
// currentOffset metric is ≥ 0 (the record of the truth round was read and
// Flink's metrics show it).
func (lr *lifecycleRun) waitOwnersRead(t *testing.T, truth map[assign.TopicPartition]int) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ids, err := lr.flink.REST.fc.VertexMetricIDs(ctx, lr.jobID, lr.srcID)
		if err != nil {
			t.Fatal(err)
		}
		obs := fcollect.ParseKafkaSourceMetricIDs(ids)
		var want []string
		for _, st := range obs.States {
			tp := assign.TopicPartition{Topic: topicFromMetric(st.Topic, lifeTopics), Partition: st.Partition}
			if o, ok := truth[tp]; ok && o == st.Subtask && st.CurrentID != "" {
				want = append(want, st.CurrentID)
			}
		}
		missing := len(truth) - len(want)
		if missing == 0 {
			ms, err := lr.flink.REST.fc.VertexMetrics(ctx, lr.jobID, lr.srcID, want)
			if err != nil {
				t.Fatal(err)
			}
			obs.ApplyValues(ms)
			for _, st := range obs.States {
				tp := assign.TopicPartition{Topic: topicFromMetric(st.Topic, lifeTopics), Partition: st.Partition}
				if o, ok := truth[tp]; ok && o == st.Subtask && st.CurrentOffset < 0 {
					missing++
				}
			}
		}
		if missing == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s, %d partitions' true owners show no currentOffset ≥ 0", missing)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// failOnce writes the fail-once marker to partition 0 and waits until the
// job has restarted (numRestarts above restarts) under the same id.
func (lr *lifecycleRun) failOnce(t *testing.T, restarts int64) {
	t.Helper()
	marker := fmt.Sprintf("failover-%s", lr.jobID[:8])
	lr.e.kc.produce(t, []*kgo.Record{{Topic: lifeTopics[0].Name, Partition: 0, Key: []byte(failOnceKey), Value: []byte(marker)}})
	deadline := time.Now().Add(120 * time.Second)
	for {
		n, err := lr.flink.REST.numRestarts(lr.jobID)
		if err == nil && n > restarts {
			if n != restarts+1 {
				t.Errorf("numRestarts went from %d to %d after one injected failure", restarts, n)
			}
			t.Logf("job %s failed once (marker %q on %s-0) and restarted: numRestarts %d → %d", lr.jobID, marker, lifeTopics[0].Name, restarts, n)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: numRestarts still %d 120 s after the fail-once marker (%v)", lr.jobID, restarts, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// step polls the dashboard once through the recording proxy (Flink, then
// Kafka), adds GET …/metrics?get=numRestarts (and …/exceptions at the
// failover steps), keeps what was fetched, and
// runs the dashboard's lifecycle checks when they are enabled. owners is
// the data path's truth when already known at this step; ownersFrom names
// the step whose traffic gives it.
func (lr *lifecycleRun) step(t *testing.T, name, scenario, what string, history []int, owners map[assign.TopicPartition]int, ownersFrom string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lr.rec.take() // drop anything not of this step
	fs := lr.dash.fcol.PollOnce(ctx)
	if _, _, err := lr.rec.get("/jobs/" + lr.jobID + "/metrics?get=numRestarts"); err != nil {
		t.Fatal(err)
	}
	if scenario == "failover" {
		// The collector asks for the exception history only in the poll
		// that sees numRestarts change; every failover step records it.
		if _, _, err := lr.rec.get("/jobs/" + lr.jobID + "/exceptions?maxExceptions=10"); err != nil {
			t.Fatal(err)
		}
	}
	calls := lr.rec.take()
	lr.kcol.PollOnce(ctx)
	if fs.Err != nil {
		t.Logf("step %s: Flink snapshot error (kept in the recording): %v", name, fs.Err)
	}
	st := &lifeStep{Name: name, Scenario: scenario, What: what, Parallelism: history[len(history)-1],
		History: slices.Clone(history), OwnersFrom: ownersFrom, owners: owners, calls: calls}
	lr.steps = append(lr.steps, st)
	t.Logf("step %s: %d requests recorded (%s)", name, len(calls), what)
	if lifecycleDashboardChecks {
		lr.dash.checkLifecycle(t, lifeWant{jobID: lr.jobID, vertexID: lr.srcID, step: name, history: history,
			owners: owners, failover: scenario == "failover" && name != "failover-before", rescales: lifeRescalePairs(history)})
	}
}

// fillOwners gives every step the truth of the step named in its
// OwnersFrom (the layout does not change between them).
func (lr *lifecycleRun) fillOwners() {
	by := map[string]*lifeStep{}
	for _, s := range lr.steps {
		by[s.Name] = s
	}
	for _, s := range lr.steps {
		if s.owners == nil {
			if src := by[s.OwnersFrom]; src != nil {
				s.owners = src.owners
			}
		}
	}
}

func lifeRescalePairs(history []int) [][2]int {
	var out [][2]int
	for i := 1; i < len(history); i++ {
		out = append(out, [2]int{history[i-1], history[i]})
	}
	return out
}

// ---------------------------------------------------------------------------
// Data-path ground truth.

// groundTruth writes one record to every partition of topics (key
// "truth-<round>-<topic>-<partition>", tag "truth-<round>") and reads out
// from the start until each has come back. The job's Source Tagger,
// chained to the source, stamps every record with the source subtask that
// read it and the record's topic and partition, so the answer is the real
// owner of every partition, whatever the metrics say. Every record of the
// round must report source parallelism p and the partition it was written
// to; a partition read by two subtasks fails t.
func (k *kafkaClient) groundTruth(t *testing.T, out, round string, topics []assign.Topic, p int, timeout time.Duration) map[assign.TopicPartition]int {
	t.Helper()
	tag := "truth-" + round
	want := map[string]assign.TopicPartition{}
	var recs []*kgo.Record
	for _, tp := range assign.Partitions(topics) {
		key := fmt.Sprintf("%s-%s-%d", tag, tp.Topic, tp.Partition)
		want[key] = tp
		recs = append(recs, &kgo.Record{Topic: tp.Topic, Partition: tp.Partition, Key: []byte(key), Value: []byte(tag)})
	}
	k.produce(t, recs)
	owners := map[assign.TopicPartition]int{}
	var bad []string
	err := k.readRoutes(t, out, timeout, func(r route) bool {
		if r.Tag != tag {
			return false
		}
		tp, ok := want[r.Key]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("unknown key %q", r.Key))
		case r.Topic != tp.Topic || r.Partition != tp.Partition:
			bad = append(bad, fmt.Sprintf("%q written to %s came back from %s-%d", r.Key, tp.SplitID(), r.Topic, r.Partition))
		case r.SourceParallelism != p:
			bad = append(bad, fmt.Sprintf("%s read by source subtask %d of %d, want parallelism %d", tp.SplitID(), r.SourceSubtask, r.SourceParallelism, p))
		default:
			if o, seen := owners[tp]; seen && o != r.SourceSubtask {
				bad = append(bad, fmt.Sprintf("%s read by source subtasks %d and %d", tp.SplitID(), o, r.SourceSubtask))
			}
			owners[tp] = r.SourceSubtask
		}
		return len(owners) == len(want)
	})
	if err != nil {
		t.Fatalf("ground truth %q: %v: %d of %d partitions came back", round, err, len(owners), len(want))
	}
	if len(bad) > 0 {
		t.Fatalf("ground truth %q: %s", round, strings.Join(bad, "; "))
	}
	return owners
}

// ownersLayout turns partition → subtask into sorted per-subtask lists.
func ownersLayout(owners map[assign.TopicPartition]int, p int) [][]assign.TopicPartition {
	out := make([][]assign.TopicPartition, p)
	for tp, s := range owners {
		if s >= 0 && s < p {
			out[s] = append(out[s], tp)
		}
	}
	return sortedLayout(out, p)
}

func sameOwners(a, b map[assign.TopicPartition]int) bool {
	if len(a) != len(b) {
		return false
	}
	for tp, s := range a {
		if o, ok := b[tp]; !ok || o != s {
			return false
		}
	}
	return true
}
