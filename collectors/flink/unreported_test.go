package flink

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestListedOffsetIDsWithoutValuesAreUnreported: the JobManager goes on
// listing a subtask's KafkaSourceReader offset ids while the values
// answer leaves them out (its TaskManager's dump now withholds its
// gauges, or the TaskManager is lost). Those entries name no owner: they
// leave States for Unreported, on every poll that sees them so, and the
// other subtasks' entries stay as they are. With every subtask silent the
// source keeps its observation, every entry Unreported.
func TestListedOffsetIDsWithoutValuesAreUnreported(t *testing.T) {
	f := newFakeFlink(t, "2.3.0")
	srv := f.start()
	src := f.jobPath("vertices", f.sourceID, "metrics")
	lc := countLists(f, src)
	clock := newTestClock()
	c := newTestCollector(t, Config{URL: srv.URL, PollInterval: 10 * time.Second})
	clock.install(c)
	poll := func(step string) *KafkaSourceObservation {
		t.Helper()
		s := c.PollOnce(context.Background())
		clock.add(10 * time.Second)
		if len(s.Jobs) == 0 {
			t.Fatalf("%s: no jobs", step)
		}
		v := findVertex(t, s.Jobs[0], f.sourceID)
		if v.Err != nil || v.Stale || v.Kafka == nil {
			t.Fatalf("%s: source vertex err %v, stale %v, kafka %+v", step, v.Err, v.Stale, v.Kafka)
		}
		return v.Kafka
	}
	first := poll("first poll")
	if len(first.Unreported) != 0 || len(first.States) == 0 {
		t.Fatalf("first poll: %d entries, %d unreported, want entries and none unreported", len(first.States), len(first.Unreported))
	}
	subtasks := map[int]int{}
	for _, s := range first.States {
		subtasks[s.Subtask]++
	}
	if len(subtasks) < 2 {
		t.Fatalf("the recording lists entries of %d subtasks, want at least 2", len(subtasks))
	}
	silent := first.States[0].Subtask
	offsetOf := func(it map[string]any, subtask int) bool {
		id, _ := it["id"].(string)
		_, ok := ParseKafkaOffsetID(id)
		return ok && (subtask < 0 || strings.HasPrefix(id, strconv.Itoa(subtask)+"."))
	}
	lc.setEdit(func(it map[string]any) bool { return !offsetOf(it, silent) })
	for _, step := range []string{"values of one subtask gone", "values of one subtask still gone (list read again)"} {
		got := poll(step)
		if us := got.UnreportedSubtasks(); !slices.Equal(us, []int{silent}) {
			t.Errorf("%s: unreported subtasks %v, want [%d]", step, us, silent)
		}
		if len(got.Unreported) != subtasks[silent] {
			t.Errorf("%s: %d unreported entries, want subtask %d's %d", step, len(got.Unreported), silent, subtasks[silent])
		}
		for _, s := range got.States {
			if s.Subtask == silent {
				t.Errorf("%s: %+v of the silent subtask kept as an entry", step, s)
			}
		}
		if len(got.States) != len(first.States)-subtasks[silent] {
			t.Errorf("%s: %d entries, want the other subtasks' %d", step, len(got.States), len(first.States)-subtasks[silent])
		}
	}
	lc.setEdit(func(it map[string]any) bool { return !offsetOf(it, -1) })
	all := poll("no offset value at all")
	if len(all.States) != 0 || len(all.Unreported) != len(first.States) {
		t.Errorf("no offset value: %d entries and %d unreported, want none and all %d", len(all.States), len(all.Unreported), len(first.States))
	}
	lc.setEdit(nil)
	back := poll("values back")
	poll("values back, settled")
	if len(back.Unreported) != 0 {
		t.Errorf("values back: %d unreported, want none", len(back.Unreported))
	}
}

// ApplyValues on an answer that leaves out some of a subtask's ids keeps
// that subtask's entries (an id can be read between two dumps); one that
// leaves out all of them moves them to Unreported. A nil or empty answer
// never panics.
func TestApplyValuesUnreportedSubtasks(t *testing.T) {
	ids := []string{
		"0.Src.KafkaSourceReader.topic.t.partition.0.currentOffset", "0.Src.KafkaSourceReader.topic.t.partition.0.committedOffset",
		"0.Src.KafkaSourceReader.topic.t.partition.2.currentOffset",
		"1.Src.KafkaSourceReader.topic.t.partition.1.currentOffset", "1.Src.KafkaSourceReader.topic.t.partition.1.committedOffset",
	}
	o := ParseKafkaSourceMetricIDs(ids)
	o.ApplyValues([]Metric{{ID: ids[0], Raw: "7", Value: 7}})
	if len(o.States) != 2 || o.States[0].CurrentOffset != 7 || o.States[1].Partition != 2 || o.States[1].CurrentOffset != -1 {
		t.Errorf("ApplyValues(one value of subtask 0) kept %+v, want subtask 0's two entries", o.States)
	}
	if us := o.UnreportedSubtasks(); !slices.Equal(us, []int{1}) || len(o.Unreported) != 1 || o.Unreported[0].Partition != 1 {
		t.Errorf("ApplyValues(one value of subtask 0): unreported %v %+v, want subtask 1's partition 1", us, o.Unreported)
	}
	o = ParseKafkaSourceMetricIDs(ids)
	o.ApplyValues(nil)
	if len(o.States) != 0 || !slices.Equal(o.UnreportedSubtasks(), []int{0, 1}) {
		t.Errorf("ApplyValues(nil): entries %+v, unreported %v, want none and [0 1]", o.States, o.UnreportedSubtasks())
	}
	var empty KafkaSourceObservation
	empty.ApplyValues(nil)
	if empty.UnreportedSubtasks() != nil {
		t.Errorf("empty observation: unreported %v, want none", empty.UnreportedSubtasks())
	}
}
