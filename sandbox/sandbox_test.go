package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// startSandbox starts a sandbox for one test and closes it at the end.
func startSandbox(t *testing.T, opts Options) *Sandbox {
	t.Helper()
	if opts.Seed == 0 {
		opts.Seed = 42
	}
	if testing.Verbose() {
		opts.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	t0 := time.Now()
	sb, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	t.Logf("sandbox started in %v", time.Since(t0))
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return sb
}

func newFlinkClient(t *testing.T, sb *Sandbox) *flink.Client {
	t.Helper()
	c, err := flink.NewClient(sb.FlinkURL())
	if err != nil {
		t.Fatalf("flink.NewClient(%q) error = %v", sb.FlinkURL(), err)
	}
	return c
}

func newAdmin(t *testing.T, sb *Sandbox) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(sb.KafkaBrokers()...))
	if err != nil {
		t.Fatalf("kgo.NewClient: %v", err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// poll calls f until it returns nil or the deadline passes, then fails with
// f's last error.
func poll(t *testing.T, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %v", timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func jobNamed(t *testing.T, sb *Sandbox, name string) JobInfo {
	t.Helper()
	for _, j := range sb.Jobs() {
		if j.Name == name {
			return j
		}
	}
	t.Fatalf("Jobs() has no running job %q", name)
	return JobInfo{}
}

// observed reads the observed partition → subtask assignment of a job's
// source vertex through the Flink client, the way the dashboard does, with
// topics resolved to real names. Only partitions whose owner has emitted a
// record or has a current offset metric count; values are included.
func observed(ctx context.Context, c *flink.Client, j JobInfo) (map[assign.TopicPartition]int, *flink.KafkaSourceObservation, error) {
	job, err := c.Job(ctx, j.ID)
	if err != nil {
		return nil, nil, err
	}
	plan, err := c.JobPlan(ctx, j.ID)
	if err != nil {
		return nil, nil, err
	}
	src := flink.SourceVertices(plan)
	if len(src) != 1 || src[0] != j.SourceVertexID {
		return nil, nil, fmt.Errorf("SourceVertices = %v, want [%s]", src, j.SourceVertexID)
	}
	if len(job.Vertices) != 2 {
		return nil, nil, fmt.Errorf("job has %d vertices, want 2", len(job.Vertices))
	}
	ids, err := c.VertexMetricIDs(ctx, j.ID, j.SourceVertexID)
	if err != nil {
		return nil, nil, err
	}
	obs := flink.ParseKafkaSourceMetricIDs(ids)
	ms, err := c.VertexMetrics(ctx, j.ID, j.SourceVertexID, obs.OffsetIDs())
	if err != nil {
		return nil, nil, err
	}
	obs.ApplyValues(ms)
	owners, ambiguous := obs.Assignment()
	if len(ambiguous) > 0 {
		return nil, nil, fmt.Errorf("ambiguous partitions %v", ambiguous)
	}
	out := map[assign.TopicPartition]int{}
	for kp, sub := range owners {
		names := flink.ResolveTopic(kp.Topic, j.Topics)
		if len(names) != 1 {
			return nil, nil, fmt.Errorf("topic %q resolves to %v", kp.Topic, names)
		}
		out[assign.TopicPartition{Topic: names[0], Partition: kp.Partition}] = sub
	}
	return out, obs, nil
}

func partitionCounts(ctx context.Context, adm *kadm.Client, topics []string) ([]assign.Topic, error) {
	td, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return nil, err
	}
	var out []assign.Topic
	for _, name := range topics {
		out = append(out, assign.Topic{Name: name, Partitions: len(td[name].Partitions)})
	}
	return out, nil
}

func ownersOf(a assign.Assignment) map[assign.TopicPartition]int {
	m := map[assign.TopicPartition]int{}
	for tp, sub := range a.All() {
		m[tp] = sub
	}
	return m
}

func diffOwners(got, want map[assign.TopicPartition]int) error {
	if maps.Equal(got, want) {
		return nil
	}
	var lines []string
	for tp, w := range want {
		if g, ok := got[tp]; !ok || g != w {
			lines = append(lines, fmt.Sprintf("%s: observed %d (present %v), want %d", tp.SplitID(), g, ok, w))
		}
	}
	for tp, g := range got {
		if _, ok := want[tp]; !ok {
			lines = append(lines, fmt.Sprintf("%s: observed on %d, not predicted", tp.SplitID(), g))
		}
	}
	slices.Sort(lines)
	return fmt.Errorf("observed assignment differs from prediction:\n%v", lines)
}

func TestCollidingTopicsShareSubtasks(t *testing.T) {
	for _, p := range []int{4, 6} {
		a, errA := assign.KafkaStartIndex(topicClicks, p)
		b, errB := assign.KafkaStartIndex(topicPageviews, p)
		if errA != nil || errB != nil {
			t.Fatalf("KafkaStartIndex(_, %d) errors: %v, %v", p, errA, errB)
		}
		if a != b {
			t.Errorf("KafkaStartIndex(%q, %d) = %d, KafkaStartIndex(%q, %d) = %d, want equal", topicClicks, p, a, topicPageviews, p, b)
		}
	}
	// The two hottest orders partitions share a subtask at p = 4.
	hot := []int{}
	for p, r := range ordersRank {
		if r < 2 {
			o, err := assign.KafkaSplitOwner(assign.TopicPartition{Topic: topicOrders, Partition: int32(p)}, 4)
			if err != nil {
				t.Fatalf("KafkaSplitOwner(%s-%d, 4) error = %v", topicOrders, p, err)
			}
			hot = append(hot, o)
		}
	}
	if len(hot) != 2 || hot[0] != hot[1] {
		t.Errorf("owners of the two hottest orders partitions = %v, want one subtask", hot)
	}
}

func TestObservedAssignmentIsFreshStart(t *testing.T) {
	sb := startSandbox(t, Options{})
	c, adm := newFlinkClient(t, sb), newAdmin(t, sb)
	jobs := sb.Jobs()
	if len(jobs) != len(jobSpecs) {
		t.Fatalf("Jobs() = %d jobs, want %d", len(jobs), len(jobSpecs))
	}
	ov, err := c.JobsOverview(t.Context())
	if err != nil {
		t.Fatalf("JobsOverview() error = %v", err)
	}
	if len(ov) != len(jobSpecs) {
		t.Fatalf("JobsOverview() = %d jobs, want %d", len(ov), len(jobSpecs))
	}
	for _, j := range jobs {
		topics, err := partitionCounts(t.Context(), adm, j.Topics)
		if err != nil {
			t.Fatal(err)
		}
		want, err := assign.FreshAssignment(topics, j.Parallelism)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := observed(t.Context(), c, j)
		if err != nil {
			t.Fatalf("%s: %v", j.Name, err)
		}
		if err := diffOwners(got, ownersOf(want)); err != nil {
			t.Errorf("%s: %v", j.Name, err)
		}
	}
}

// lagBySubtask is end offset − (currentOffset + 1) summed per subtask, for
// partitions that have emitted a record.
func lagBySubtask(ctx context.Context, c *flink.Client, adm *kadm.Client, j JobInfo) (map[int]int64, error) {
	_, obs, err := observed(ctx, c, j)
	if err != nil {
		return nil, err
	}
	ends, err := adm.ListEndOffsets(ctx, j.Topics...)
	if err != nil {
		return nil, err
	}
	lag := map[int]int64{}
	for _, st := range obs.States {
		names := flink.ResolveTopic(st.Topic, j.Topics)
		end, ok := ends.Lookup(names[0], st.Partition)
		if !ok || st.CurrentOffset < 0 {
			continue
		}
		lag[st.Subtask] += end.Offset - (st.CurrentOffset + 1)
	}
	return lag, nil
}

func TestLagGrowsOnHotSubtask(t *testing.T) {
	sb := startSandbox(t, Options{})
	c, adm := newFlinkClient(t, sb), newAdmin(t, sb)
	j := jobNamed(t, sb, "orders-enrichment")
	hot, _ := assign.KafkaSplitOwner(assign.TopicPartition{Topic: topicOrders, Partition: 0}, j.Parallelism)

	var first map[int]int64
	poll(t, 20*time.Second, func() error {
		lag, err := lagBySubtask(t.Context(), c, adm, j)
		if err != nil {
			return err
		}
		if _, ok := lag[hot]; !ok {
			return fmt.Errorf("subtask %d has emitted nothing yet", hot)
		}
		first = lag
		return nil
	})
	poll(t, 30*time.Second, func() error {
		lag, err := lagBySubtask(t.Context(), c, adm, j)
		if err != nil {
			return err
		}
		if lag[hot] < first[hot]+200 {
			return fmt.Errorf("lag of hot subtask %d = %d, want ≥ %d (first %v, now %v)", hot, lag[hot], first[hot]+200, first, lag)
		}
		for sub, l := range lag {
			if sub != hot && l >= lag[hot] {
				return fmt.Errorf("subtask %d lag %d ≥ hot subtask %d lag %d", sub, l, hot, lag[hot])
			}
		}
		return nil
	})
	// The hot subtask shows it: busy near 1000 ms/s.
	poll(t, 20*time.Second, func() error {
		ms, err := c.VertexMetrics(t.Context(), j.ID, j.SourceVertexID, []string{fmt.Sprintf("%d.busyTimeMsPerSecond", hot)})
		if err != nil {
			return err
		}
		if len(ms) != 1 || ms[0].Value < 900 {
			return fmt.Errorf("busyTimeMsPerSecond of subtask %d = %v, want ≥ 900", hot, ms)
		}
		return nil
	})
}

func TestCheckpointsCommitOffsets(t *testing.T) {
	sb := startSandbox(t, Options{checkpointEvery: time.Second})
	c, adm := newFlinkClient(t, sb), newAdmin(t, sb)
	for _, j := range sb.Jobs() {
		poll(t, 20*time.Second, func() error {
			cps, err := c.Checkpoints(t.Context(), j.ID)
			if err != nil {
				return err
			}
			if cps.Counts.Completed < 2 || cps.Latest.Completed == nil {
				return fmt.Errorf("%s: %d completed checkpoints, want ≥ 2", j.Name, cps.Counts.Completed)
			}
			task, err := c.CheckpointSubtasks(t.Context(), j.ID, cps.Latest.Completed.ID, j.KeyedVertexID)
			if err != nil {
				return err
			}
			if len(task.Subtasks) != j.KeyedParallelism {
				return fmt.Errorf("%s: checkpoint subtasks = %d, want %d", j.Name, len(task.Subtasks), j.KeyedParallelism)
			}
			offs, err := adm.FetchOffsets(t.Context(), j.GroupID)
			if err != nil {
				return err
			}
			_, obs, err := observed(t.Context(), c, j)
			if err != nil {
				return err
			}
			n := 0
			for _, st := range obs.States {
				if st.CommittedOffset < 0 {
					continue
				}
				names := flink.ResolveTopic(st.Topic, j.Topics)
				o, ok := offs.Lookup(names[0], st.Partition)
				if !ok {
					return fmt.Errorf("%s: committedOffset metric %d for %s-%d but nothing in group %s", j.Name, st.CommittedOffset, names[0], st.Partition, j.GroupID)
				}
				if o.At < st.CommittedOffset {
					return fmt.Errorf("%s: group offset %d < committedOffset metric %d", j.Name, o.At, st.CommittedOffset)
				}
				n++
			}
			if n == 0 {
				return fmt.Errorf("%s: no partition has a committed offset yet", j.Name)
			}
			return nil
		})
	}
}

func TestRestoreFollowsSavepointRedistribution(t *testing.T) {
	sb := startSandbox(t, Options{})
	c, adm := newFlinkClient(t, sb), newAdmin(t, sb)
	for _, name := range []string{"clickstream-sessions", "orders-enrichment", paymentsJob} {
		old := jobNamed(t, sb, name)
		// Let the job read something so the savepoint holds offsets.
		poll(t, 20*time.Second, func() error {
			_, obs, err := observed(t.Context(), c, old)
			if err != nil {
				return err
			}
			for _, st := range obs.States {
				if st.CurrentOffset >= 0 {
					return nil
				}
			}
			return fmt.Errorf("%s has emitted nothing", name)
		})
		topics, err := partitionCounts(t.Context(), adm, old.Topics)
		if err != nil {
			t.Fatal(err)
		}
		if err := sb.Restore(name, 6); err != nil {
			t.Fatalf("Restore(%q, 6) error = %v", name, err)
		}
		nj := jobNamed(t, sb, name)
		if nj.ID == old.ID || nj.Parallelism != 6 || !slices.Equal(nj.ParallelismHistory, []int{4, 6}) {
			t.Fatalf("after Restore: %+v, want a new job id at parallelism 6, history [4 6]", nj)
		}
		if nj.SourceVertexID != old.SourceVertexID {
			t.Errorf("source vertex id changed across restore: %s → %s", old.SourceVertexID, nj.SourceVertexID)
		}
		pred, err := assign.Restore(assign.RestoreInput{Topics: topics, History: []int{4, 6}})
		if err != nil {
			t.Fatal(err)
		}
		if !pred.Exact {
			t.Fatalf("%s: assign.Restore is not exact (uncertain %v); pick other topic names", name, pred.Uncertain)
		}
		poll(t, 20*time.Second, func() error {
			got, _, err := observed(t.Context(), c, nj)
			if err != nil {
				return err
			}
			return diffOwners(got, ownersOf(pred.Assignment))
		})
		ov, err := c.JobsOverview(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		states := map[string]flink.JobState{}
		for _, o := range ov {
			states[o.ID] = o.State
		}
		if states[old.ID] != "FINISHED" || states[nj.ID] != "RUNNING" {
			t.Errorf("JobsOverview states: old %s = %q, new %s = %q; want FINISHED, RUNNING", old.ID, states[old.ID], nj.ID, states[nj.ID])
		}
		cps, err := c.Checkpoints(t.Context(), nj.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cps.Latest.Restored == nil || !cps.Latest.Restored.IsSavepoint {
			t.Errorf("new job's latest.restored = %+v, want the savepoint", cps.Latest.Restored)
		}
		// The restored job resumes: it keeps emitting past the savepoint.
		poll(t, 20*time.Second, func() error {
			_, obs, err := observed(t.Context(), c, nj)
			if err != nil {
				return err
			}
			for _, st := range obs.States {
				if st.CurrentOffset >= 0 {
					return nil
				}
			}
			return fmt.Errorf("restored %s has emitted nothing", name)
		})
	}
	if err := sb.Restore("no-such-job", 2); err == nil {
		t.Errorf("Restore(no-such-job) = nil, want error")
	}
}

func TestGrownPartitionsGetPredictedOwner(t *testing.T) {
	sb := startSandbox(t, Options{growEvery: 700 * time.Millisecond, discoverEvery: 300 * time.Millisecond})
	c, adm := newFlinkClient(t, sb), newAdmin(t, sb)
	j := jobNamed(t, sb, "orders-enrichment")
	poll(t, 30*time.Second, func() error {
		topics, err := partitionCounts(t.Context(), adm, []string{topicInventory})
		if err != nil {
			return err
		}
		if topics[0].Partitions < 6 {
			return fmt.Errorf("%s has %d partitions, want ≥ 6", topicInventory, topics[0].Partitions)
		}
		got, obs, err := observed(t.Context(), c, j)
		if err != nil {
			return err
		}
		for p := int32(3); p < int32(topics[0].Partitions); p++ {
			tp := assign.TopicPartition{Topic: topicInventory, Partition: p}
			want, _ := assign.KafkaSplitOwner(tp, j.Parallelism)
			if g, ok := got[tp]; !ok || g != want {
				return fmt.Errorf("%s: observed owner %d (present %v), want %d", tp.SplitID(), g, ok, want)
			}
			emitted := false
			for _, st := range obs.States {
				if st.Partition == p && st.Subtask == want && st.CurrentOffset >= 0 && st.Topic == "inventory_events" {
					emitted = true
				}
			}
			if !emitted {
				return fmt.Errorf("%s: subtask %d has not emitted from it yet", tp.SplitID(), want)
			}
		}
		return nil
	})
}

func TestCloseStopsEverything(t *testing.T) {
	before := runtime.NumGoroutine()
	sb, err := Start(t.Context(), Options{Seed: 7, checkpointEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	url := sb.FlinkURL()
	hc := &http.Client{Transport: &http.Transport{}}
	c0, _ := flink.NewClient(url, flink.WithHTTPClient(hc))
	poll(t, 10*time.Second, func() error {
		if sb.Stats().Consumed == 0 {
			return fmt.Errorf("nothing consumed yet")
		}
		_, err := c0.JobsOverview(t.Context())
		return err
	})
	if err := sb.Restore("clickstream-sessions", 2); err != nil {
		t.Fatal(err)
	}
	hc.CloseIdleConnections()
	if err := sb.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if err := sb.Close(); err != nil {
		t.Fatalf("second Close() = %v", err)
	}
	c, _ := flink.NewClient(url, flink.WithHTTPClient(&http.Client{Transport: hc.Transport, Timeout: time.Second}))
	if _, err := c.Overview(t.Context()); err == nil {
		t.Errorf("Overview() after Close succeeded, want an error")
	}
	hc.CloseIdleConnections()
	poll(t, 10*time.Second, func() error {
		if n := runtime.NumGoroutine(); n > before {
			return fmt.Errorf("%d goroutines after Close, %d before Start", n, before)
		}
		return nil
	})
}

func TestContextCancelStops(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	sb, err := Start(ctx, Options{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	c, _ := flink.NewClient(sb.FlinkURL(), flink.WithHTTPClient(&http.Client{Timeout: time.Second}))
	poll(t, 10*time.Second, func() error {
		if _, err := c.Overview(t.Context()); err == nil {
			return fmt.Errorf("REST still serving after ctx cancel")
		}
		return nil
	})
	sb.Close()
}

func BenchmarkStart(b *testing.B) {
	for b.Loop() {
		sb, err := Start(b.Context(), Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		sb.Close()
	}
}

// Every sandbox topic reports the retention its trimmer applies, so the
// dashboard shows the sandbox's real retention (2 minutes by default).
func TestTopicsReportTheirRetention(t *testing.T) {
	sb := startSandbox(t, Options{})
	adm := newAdmin(t, sb)
	var names []string
	for _, tp := range sandboxTopics {
		names = append(names, tp.name)
	}
	rcs, err := adm.DescribeTopicConfigs(t.Context(), names...)
	if err != nil {
		t.Fatal(err)
	}
	if len(rcs) != len(names) {
		t.Fatalf("DescribeTopicConfigs answered %d topics, want %d", len(rcs), len(names))
	}
	for _, rc := range rcs {
		got := map[string]string{}
		for _, c := range rc.Configs {
			if c.Value != nil {
				got[c.Key] = *c.Value
			}
		}
		if rc.Err != nil || got["retention.ms"] != "120000" || got["cleanup.policy"] != "delete" {
			t.Errorf("topic %s: retention.ms %q, cleanup.policy %q, err %v; want 120000, delete", rc.Name, got["retention.ms"], got["cleanup.policy"], rc.Err)
		}
	}
}
