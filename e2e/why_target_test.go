//go:build e2e

package e2e

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	fcollect "github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/live"
)

// The why panel's rescale target, applied as proposed: a fresh job whose
// source has two hot partitions on one subtask (more records produced to
// two partitions the fresh-start formula puts together), a dashboard that
// saw it start, the target its "why is it hot?" line names, then
// stop-with-savepoint and a restore at that target. The data path must
// show the two partitions on different subtasks afterwards; where the
// panel says no restore parts them, assign.Restore must agree for every
// parallelism up to the limit it judged.

var (
	whyTopic = assign.Topic{Name: "whyhot", Partitions: 6}
	whyOut   = assign.Topic{Name: "whyhot-out", Partitions: 1}
	// whyHot are the hot partitions: on one subtask at a fresh start at 3;
	// a fresh start at 4 would part them, a restore from 3 only at 5.
	whyHot = []assign.TopicPartition{{Topic: whyTopic.Name, Partition: 2}, {Topic: whyTopic.Name, Partition: 5}}
	whyJob = jobSpec{Name: "skewscope-why-target", Topics: []string{whyTopic.Name}, Out: whyOut.Name, Group: "skewscope-why-target", SourceP: 3, KeyedP: 3}
)

const (
	// whyHotPerTick and whyColdPerTick are the records per 200 ms written
	// to each hot and each other partition.
	whyHotPerTick  = 20
	whyColdPerTick = 1
	// whyPolls bounds the polls until the panel names the hot pair.
	whyPolls = 30
)

func (e *lineEnv) testWhyTarget(t *testing.T) {
	start := time.Now()
	topics := []assign.Topic{whyTopic}
	p := whyJob.SourceP
	fresh, err := assign.FreshAssignment(topics, p)
	if err != nil {
		t.Fatal(err)
	}
	hot := whyHot
	if a, _ := fresh.OwnerOf(hot[0]); a != mustOwner(t, fresh, hot[1]) {
		t.Fatalf("a fresh start at %d puts %s and %s on different subtasks: no hot pair", p, hot[0].SplitID(), hot[1].SplitID())
	}
	e.kc.createTopics(t, whyTopic, whyOut)
	d := newDashboard(t, e)
	idA := e.flink.submit(t, whyJob)
	stopped := false
	defer func() {
		if !stopped {
			e.flink.REST.cancel(idA)
		}
	}()
	j, err := e.flink.REST.job(idA)
	if err != nil {
		t.Fatal(err)
	}
	src, err := vertexNamed(j, "Source: Kafka Source")
	if err != nil {
		t.Fatal(err)
	}
	truthA := e.kc.groundTruth(t, whyOut.Name, "why-a", topics, p, 120*time.Second)
	if truthA[hot[0]] != truthA[hot[1]] {
		t.Fatalf("the data path reads %s on %d and %s on %d: not one subtask at the fresh start", hot[0].SplitID(), truthA[hot[0]], hot[1].SplitID(), truthA[hot[1]])
	}

	// 1. Traffic with the hot pair, until the panel names both partitions
	// on their subtask and judges a rescale for them.
	rates := uniformFlow(topics, whyColdPerTick)
	rates[hot[0]], rates[hot[1]] = whyHotPerTick, whyHotPerTick
	stop := e.kc.flow(t, rates)
	line, polls := d.waitHotLine(t, idA, src.ID, truthA[hot[0]], hot)
	stop()
	js, _ := json.Marshal(line)
	t.Logf("Flink %s, why panel of job %s after %d polls: hot partitions %s and %s on subtask %d\n  line: %s",
		e.flink.Version, idA, polls, hot[0].SplitID(), hot[1].SplitID(), truthA[hot[0]], js)
	rs := line.Rescale
	if rs == nil {
		t.Fatalf("the hot line names %v but judges no rescale", line.Partitions)
	}
	if !slices.Equal(rs.History, []int{p}) {
		t.Errorf("the rescale is judged over history %v, want [%d] (the job started fresh at %d)", rs.History, p, p)
	}
	if rs.Target != 0 && rs.Fresh != 0 {
		t.Errorf("the panel offers a fresh start at %d although a restore at %d parts them", rs.Fresh, rs.Target)
	}
	if line.Target != rs.Target {
		t.Errorf("line targetParallelism %d, rescale targetParallelism %d", line.Target, rs.Target)
	}

	// 2. No target: the panel's statement must hold under assign.Restore.
	if rs.Target == 0 {
		e.checkNoTarget(t, topics, rs, hot)
		return
	}

	// 3. The target, through a real restore from a savepoint.
	target := rs.Target
	last, err := e.flink.REST.latestCheckpoint(idA)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.flink.REST.waitCheckpointOf(idA, lifeVertices*p, last, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	spDir := workDir(t, "savepoint")
	loc, err := e.flink.REST.stopWithSavepoint(idA, "file://"+spDir)
	if err != nil {
		t.Fatalf("stop with savepoint: %v", err)
	}
	stopped = true
	b := whyJob
	b.SourceP, b.KeyedP, b.Savepoint = target, target, loc
	idB := e.flink.submit(t, b)
	defer func() {
		if err := e.flink.REST.cancel(idB); err != nil {
			t.Errorf("cancel %s: %v", idB, err)
		}
	}()
	truthB := e.kc.groundTruth(t, whyOut.Name, "why-b", topics, target, 120*time.Second)
	model, err := assign.Restore(assign.RestoreInput{Topics: topics, History: []int{p, target}, ConnectorLine: e.line.ConnectorLine})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Flink %s, the why panel's target %d applied through a restore from %s (job %s)\n  data path before (p=%d):%s\n  data path after (p=%d):%s\n  restore model [%d %d]:%s",
		e.flink.Version, target, loc, idB, p, layoutString(ownersLayout(truthA, p)), target, layoutString(ownersLayout(truthB, target)),
		p, target, layoutString(sortedLayout(model.Assignment.Subtasks, target)))
	if truthB[hot[0]] == truthB[hot[1]] {
		t.Errorf("the why panel's target %d did not part them: after the restore the data path reads %s and %s both on subtask %d",
			target, hot[0].SplitID(), hot[1].SplitID(), truthB[hot[0]])
	} else {
		t.Logf("PARTED: %s on %d, %s on %d", hot[0].SplitID(), truthB[hot[0]], hot[1].SplitID(), truthB[hot[1]])
	}
	if !sameOwners(truthB, ownerMap(model.Assignment.Subtasks)) {
		t.Errorf("MISMATCH: the data path after the restore differs from assign.Restore (uncertain: %v)", splitIDs(model.Uncertain))
	}
	t.Logf("Flink %s, why-panel target through a restore took %s", e.flink.Version, time.Since(start).Round(time.Second))
}

func mustOwner(t *testing.T, a assign.Assignment, tp assign.TopicPartition) int {
	t.Helper()
	o, ok := a.OwnerOf(tp)
	if !ok {
		t.Fatalf("%s is not in the assignment", tp.SplitID())
	}
	return o
}

// waitHotLine polls (Flink, then Kafka) until the vertex's why panel has a
// hot line for subtask that names both partitions of hot and judges a
// rescale; it returns that line and the polls taken.
func (d *dashboard) waitHotLine(t *testing.T, jobID, vertexID string, subtask int, hot []assign.TopicPartition) (live.WhyLine, int) {
	t.Helper()
	var vv live.VertexView
	for n := 1; n <= whyPolls; n++ {
		time.Sleep(fcollect.MinPollInterval)
		d.pollOnce(t)
		d.getJSON(t, "/api/v1/jobs/"+jobID+"/vertices/"+vertexID, &vv)
		if vv.Why == nil {
			continue
		}
		for _, l := range vv.Why.Lines {
			if l.Kind == live.WhyHot && slices.Equal(l.Subtasks, []int{subtask}) && namesAll(l.Partitions, hot) && l.Rescale != nil {
				return l, n
			}
		}
	}
	js, _ := json.Marshal(vv.Why)
	t.Fatalf("after %d polls the why panel has no hot line for subtask %d naming %s and %s with a rescale: %s", whyPolls, subtask, hot[0].SplitID(), hot[1].SplitID(), js)
	return live.WhyLine{}, 0
}

func namesAll(ps []live.WhyPartition, tps []assign.TopicPartition) bool {
	for _, tp := range tps {
		if !slices.ContainsFunc(ps, func(p live.WhyPartition) bool { return p.Topic == tp.Topic && p.Partition == tp.Partition }) {
			return false
		}
	}
	return true
}

// checkNoTarget checks a "no restore target" against assign.Restore: with
// reason apart, no parallelism up to the limit parts the partitions; with
// reason capacity, Apart is the smallest that does.
func (e *lineEnv) checkNoTarget(t *testing.T, topics []assign.Topic, rs *live.WhyRescale, hot []assign.TopicPartition) {
	t.Helper()
	p := rs.History[len(rs.History)-1]
	first := 0
	for q := p + 1; q <= rs.Limit; q++ {
		res, err := assign.Restore(assign.RestoreInput{Topics: topics, History: append(slices.Clone(rs.History), q), ConnectorLine: e.line.ConnectorLine})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := res.Assignment.OwnerOf(hot[0])
		b, _ := res.Assignment.OwnerOf(hot[1])
		if a != b && !slices.Contains(res.Uncertain, hot[0]) && !slices.Contains(res.Uncertain, hot[1]) {
			first = q
			break
		}
	}
	t.Logf("the panel says no restore target (reason %q, limit %d, apart %d); assign.Restore first parts them at %d (0: none)", rs.None, rs.Limit, rs.Apart, first)
	switch rs.None {
	case live.NoTargetApart:
		if first != 0 {
			t.Errorf("the panel says no restore up to %d parts %s and %s; assign.Restore parts them at %d", rs.Limit, hot[0].SplitID(), hot[1].SplitID(), first)
		}
	case live.NoTargetCapacity:
		if first != rs.Apart {
			t.Errorf("the panel says a restore parts them first at %d; assign.Restore at %d", rs.Apart, first)
		}
	default:
		t.Errorf("no restore target for reason %q on a job the dashboard saw start fresh", rs.None)
	}
}
