package web

import (
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/live"
)

// The prediction's words, from the facts the store found.
func TestPredictionSummary(t *testing.T) {
	fresh := func(v live.Tally) live.Prediction {
		n := v.Total()
		return live.Prediction{Mode: live.ModeFresh, Total: n, Headline: live.Headline{Kind: live.BasisExact, Exact: n, Verdicts: v}}
	}
	partly := fresh(live.Tally{Match: 14, Withheld: 4})
	gaps := fresh(live.Tally{Match: 10})
	gaps.Headline.Kind, gaps.Missing, gaps.UnknownToKafka = live.BasisUncertain, 3, 3
	restore := fresh(live.Tally{Match: 12})
	restore.Mode, restore.History = live.ModeRestore, []int{4, 6}
	for _, tc := range []struct {
		name string
		pr   live.Prediction
		w    *live.Withheld
		want []string
	}{
		{"all where the model puts them", fresh(live.Tally{Match: 12}), nil, []string{"all 12 partitions are where a fresh start puts them"}},
		{"restore model", restore, nil, []string{"all 12 partitions are where the restore model for 4→6 puts them"}},
		{"drift from a fresh start names the usual cause", fresh(live.Tally{Match: 10, Drift: 2}), nil,
			[]string{"2 of 12 partitions are not where a fresh start puts them", "restored from a checkpoint or savepoint"}},
		{"all withheld", fresh(live.Tally{Withheld: 18}), &live.Withheld{Cause: live.CauseMetricDumpLimit, Setting: "pekko.framesize (10 MiB)", All: true},
			[]string{"prediction only", "Flink withheld the readers' metrics of 18 partitions", "metric dump", "a fresh start"}},
		{"partly withheld", partly, &live.Withheld{Cause: live.CauseMetricDumpLimit, Subtasks: []int{3}},
			[]string{"14 of 18 partitions are where a fresh start puts them", "4 prediction only", "subtask 3"}},
		{"listed, no values", fresh(live.Tally{Withheld: 6}), &live.Withheld{Cause: live.CauseNoValues, All: true}, []string{"listed but no values returned"}},
		{"a partition set not settled", gaps, nil, []string{"the 10 partitions shown are", "may be missing 3 partitions", "does not list 3 partitions"}},
		{"not running", live.Prediction{Mode: live.ModeNone, NotModelled: &live.NotModelled{Reason: live.ReasonNotRunning, JobState: "FINISHED"}}, nil,
			[]string{"The job is finished"}},
		{"rescaling", live.Prediction{Mode: live.ModeNone, NotModelled: &live.NotModelled{Reason: live.ReasonRescaling, From: 4, To: 6}}, nil,
			[]string{"Changing parallelism from 4 to 6"}},
		{"restored unseen", live.Prediction{Mode: live.ModeNone, NotModelled: &live.NotModelled{Reason: live.ReasonRestoredUnseen, Savepoint: true,
			Inference: &live.Inference{Outcome: live.InferNoFit, Steps: 2, Bound: 12, Tail: []int{6}, Observed: 18}}}, nil,
			[]string{"Restored from a savepoint before skewscope first saw it", "No history of ≤ 2 restores with earlier parallelisms up to 12 reproduces the observed layout (18 partitions compared)", "?history="}},
		{"unnamed topics", live.Prediction{Mode: live.ModeNone, NotModelled: &live.NotModelled{Reason: live.ReasonUnnamedTopics, Topics: []string{"a_b", "c_d"}}}, nil,
			[]string{`the real name of topics "a_b", "c_d" is not known`}},
		{"restore model error", live.Prediction{Mode: live.ModeNone, NotModelled: &live.NotModelled{Reason: live.ReasonModelError, Restore: true, Error: "bad"}}, nil,
			[]string{"the restore model could not run: bad"}},
	} {
		got := predictionSummary(tc.pr, tc.w)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q, want it to say %q", tc.name, got, w)
			}
		}
		for _, bad := range []string{"not determined", "before the latest restart", "0 of 18"} {
			if strings.Contains(got, bad) {
				t.Errorf("%s: %q says %q", tc.name, got, bad)
			}
		}
	}
}

func TestEventTextCountsPartitions(t *testing.T) {
	for n, want := range map[int]string{1: "1 new partition discovered at p=4", 3: "3 new partitions discovered at p=4"} {
		if got := eventText(live.LineageEvent{Kind: live.EventPartitions, NewPartitions: n, To: 4}); got != want {
			t.Errorf("eventText(%d new) = %q, want %q", n, got, want)
		}
	}
	e := live.LineageEvent{Kind: live.EventRescaleElsewhere, From: 3, To: 3, Rescaled: []live.VertexRescale{{Name: "Source: orders", From: 4, To: 6}}}
	if txt := eventText(e); !strings.Contains(txt, "Source: orders 4→6") || strings.Contains(txt, "failover") {
		t.Errorf("rescale elsewhere: %q", txt)
	}
}

func TestHistorySource(t *testing.T) {
	l := &live.LineageView{Events: []live.LineageEvent{{Kind: live.EventStart, To: 4}, {Kind: live.EventFailover, To: 4}, {Kind: live.EventRestore, From: 4, To: 6}}}
	for from, want := range map[live.HistoryOrigin]string{
		live.HistoryFromURL:  "from the URL (?history=)",
		live.HistoryInferred: "inferred from the observed layout",
		live.HistoryObserved: "observed by skewscope: fresh start at p=4; restored under a new job id, p 4→6",
	} {
		if got := historySource(live.Prediction{HistoryFrom: from}, l); got != want {
			t.Errorf("%s: %q, want %q", from, got, want)
		}
	}
}

func TestNoteText(t *testing.T) {
	for _, tc := range []struct {
		n    live.Note
		want []string
		not  []string
	}{
		{live.Note{Kind: live.NoteModel, Text: "as the model says"}, []string{"as the model says"}, nil},
		{live.Note{Kind: live.NoteFreshOffsets, P: 4}, []string{"the fresh start at parallelism 4 read the partitions it had then from the earliest offsets"}, nil},
		{live.Note{Kind: live.NoteUnsureDiscovery, Partitions: 1, From: 5, To: 2}, []string{"1 partition appeared after the latest restore", "(at p=5, so that the restore dealt them out) or after it (at p=2"}, nil},
		{live.Note{Kind: live.NoteDiscoveredBeforeRestore}, []string{"Partitions were discovered before the latest restore or rescale"}, nil},
		{live.Note{Kind: live.NoteDiscoverySettled, Partitions: 3, From: 5, To: 2, Before: true, Step: live.EventRescale},
			[]string{"The observed readers show the 3 new partitions were discovered before the rescale to p = 2 (at p = 5, so that the restore dealt them out"}, []string{"after"}},
		{live.Note{Kind: live.NoteDiscoverySettled, Partitions: 1, From: 2, To: 4, Step: live.EventRestore},
			[]string{"the new partition was discovered after the restore to p = 4 (placed by the hash rule at p = 4)"}, []string{"before"}},
		{live.Note{Kind: live.NoteDiscoverySettled, Partitions: 2, From: 2, To: 4},
			[]string{"discovered after the restore or rescale to p = 4"}, nil},
		{live.Note{Kind: live.NoteUnnamedTopics, Topics: []string{"inventory_events"}}, []string{`the real name of topic "inventory_events" is not known`}, nil},
		{live.Note{Kind: live.NoteUndetermined, Partitions: 2, Listed: true}, []string{"The readers of 2 partitions are not determined", "still carry values from before the latest restart",
			"a cell's title names the subtasks", "settles it."}, nil},
		{live.Note{Kind: live.NoteUndetermined, Partitions: 1, Withheld: true}, []string{"The reader of 1 partition is not determined", "see the note on the missing metrics", "not of an observed reader."},
			[]string{"still carry values", "settles it"}},
	} {
		got := noteText(tc.n)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: %q, want it to say %q", tc.n, got, w)
			}
		}
		for _, bad := range tc.not {
			if strings.Contains(got, bad) {
				t.Errorf("%+v: %q says %q", tc.n, got, bad)
			}
		}
	}
}

// The headline figures' words, from the facts the store found.
func TestFigureWords(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 10, 0, time.UTC)
	ms := int64(120_000)
	vv := live.VertexView{Source: true, Parallelism: 4, MaxParallelism: 128,
		States:    []live.StateCount{{State: live.ReaderLost, Count: 1}, {State: live.ReaderOK, Count: 3}},
		Retention: []live.TopicRetention{{Topic: "orders", RetentionMs: &ms, CleanupPolicy: "delete", Deletes: true, Age: live.Age{Seconds: 4}}},
		Prediction: &live.Prediction{Mode: live.ModeFresh, Total: 4, Matched: 3, Drift: 1,
			Headline: live.Headline{Kind: live.BasisExact, Exact: 4, Verdicts: live.Tally{Match: 3, Drift: 1}}}}
	for _, tc := range []struct {
		f                   live.Figure
		label, text, inNote string
	}{
		{live.Figure{Name: live.FigureTotalLag, Value: -1}, "Total lag", "–", "no end offsets or current offsets yet"},
		{live.Figure{Name: live.FigureMaxLagTime, Value: 90, Partition: "orders-0", AtLeast: true, Unknown: 1, Of: 4}, "Max lag in time", format.Seconds(90), "orders-0 (at least) · 1 of 4 partitions unknown"},
		{live.Figure{Name: live.FigureMaxLagTime, Of: 4}, "Max lag in time", format.Seconds(0), "all partitions caught up"},
		{live.Figure{Name: live.FigureMaxLagTime, Value: -1, Unknown: 4, Of: 4}, "Max lag in time", "–", "no partition's lag in time is known yet"},
		{live.Figure{Name: live.FigureRecordsLost, Value: 200, Partition: "orders-0", Records: 200, Partitions: 1, From: at, To: at, Since: at}, "Records deleted unread", "≈ 200",
			"on orders-0 at 12:00:10 UTC"},
		{live.Figure{Name: live.FigureRecordsLost, Value: 450, Partition: "orders-0", Records: 300, Partitions: 3, From: at, To: at.Add(10 * time.Second), Since: at}, "Records deleted unread", "≈ 450",
			"on orders-0 (≈ 300) and 2 more partitions between 12:00:10 and 12:00:20 UTC"},
		{live.Figure{Name: live.FigureRecordsLost, Since: at}, "Records deleted unread", "0", "none seen: no position below its partition's log start; counted since skewscope started"},
		{live.Figure{Name: live.FigureRetention, Value: 120}, "Retention", "2 m 0 s", "orders: 2 m 0 s, cleanup delete"},
		{live.Figure{Name: live.FigureTimeToRetention, Value: 140, Subtask: 3, Partition: "orders-0", Seconds: 30}, "Time to retention", "≈ 2 m 20 s",
			"at this rate subtask 3 falls past the 30-second retention of orders-0 in about 2 min"},
		{live.Figure{Name: live.FigureTimeToRetention, Value: 0, Subtask: 1, Partition: "orders-2", Seconds: 120}, "Time to retention", "0 s", "subtask 1 is past the 2-minute retention of orders-2"},
		{live.Figure{Name: live.FigureStates, Value: 1}, "Partition states", "1 lost · 3 ok", "samples"},
		{live.Figure{Name: live.FigureSkew, Value: 37.5, Ratio: 1.375}, "Source skew (Flink %)", format.Percent(37.5), "max/mean 1.38"},
		{live.Figure{Name: live.FigureAssignment, Value: 3}, "Assignment", "3 / 4 partitions", "1 differ from the fresh prediction"},
		{live.Figure{Name: live.FigureKeyGroups, Value: 32, Min: 32}, "Key groups per subtask", "32", "maxParallelism 128 over 4 subtasks"},
		{live.Figure{Name: live.FigureBusiest, Value: 0.9, Subtask: 2, Ratio: 0.25}, "Busiest subtask", "#2 · 90% busy", "backpressured 25%"},
		{live.Figure{Name: live.FigureBusiest, Value: -1, Subtask: -1}, "Busiest subtask", "–", "busy time not reported"},
	} {
		label, txt, note := figureWords(vv, tc.f)
		if label != tc.label || txt != tc.text || !strings.Contains(note, tc.inNote) {
			t.Errorf("%+v: %q %q (%q), want %q %q and a note with %q", tc.f, label, txt, note, tc.label, tc.text, tc.inNote)
		}
	}
}

// What the search for a restored source's history found, in words: each
// outcome, the search's scope (one restore or several, ending with the
// parallelisms skewscope saw) and the histories that fit.
func TestInferenceText(t *testing.T) {
	scope2 := "of ≤ 2 restores with earlier parallelisms up to 12"
	for _, tc := range []struct {
		name string
		in   live.Inference
		want string
	}{
		{"too large", live.Inference{Outcome: live.InferTooLarge, Observed: 200000, Limit: 100000},
			"No history is inferred for 200000 partitions: the search is bounded to 100000 so that it stays within a poll."},
		{"failed", live.Inference{Outcome: live.InferFailed, Error: "boom"}, "No history could be inferred: boom."},
		{"no fit", live.Inference{Outcome: live.InferNoFit, Steps: 2, Bound: 12, Tail: []int{6}, Observed: 18},
			"No history " + scope2 + " reproduces the observed layout (18 partitions compared), so skewscope does not guess one."},
		{"no fit ending with what skewscope saw", live.Inference{Outcome: live.InferNoFit, Steps: 2, Bound: 12, Tail: []int{4, 6}, Observed: 18},
			"No history " + scope2 + " ending with the parallelisms skewscope saw, 4→6, reproduces the observed layout (18 partitions compared), so skewscope does not guess one."},
		{"one restore", live.Inference{Outcome: live.InferOne, Steps: 1, Bound: 12, Tail: []int{6}, Observed: 18, Fits: [][]int{{4, 6}}},
			"Inferred, not witnessed: the observed layout is consistent with a restore from p=4, the only history of one restore from a parallelism up to 12 that reproduces it."},
		{"a fresh start", live.Inference{Outcome: live.InferOne, Steps: 1, Bound: 12, Tail: []int{6}, Observed: 18, Fits: [][]int{{6}}},
			"Inferred, not witnessed: the observed layout is consistent with a fresh start at p=6 (or restores that kept the parallelism), the only history of one restore from a parallelism up to 12 that reproduces it."},
		{"two restores", live.Inference{Outcome: live.InferOne, Steps: 2, Bound: 12, Tail: []int{4, 6}, Observed: 18, Fits: [][]int{{2, 4, 6}}},
			"Inferred, not witnessed: the observed layout is consistent with restores through p=2, p=4, the only history " + scope2 + " ending with the parallelisms skewscope saw, 4→6, that reproduces it."},
		{"several", live.Inference{Outcome: live.InferSeveral, Steps: 2, Bound: 12, Tail: []int{6}, Observed: 18, Fits: [][]int{{4, 6}, {2, 4, 6}, {3, 6}}},
			"Inferred, not witnessed: several histories " + scope2 + " reproduce the observed layout: 4→6, 2→4→6, 3→6. The page models 4→6; they all place every observed partition alike, and may differ on partitions discovered later."},
		{"one listed, more found", live.Inference{Outcome: live.InferSeveral, Steps: 2, Bound: 12, Tail: []int{6}, Observed: 18, Fits: [][]int{{4, 6}}, More: true},
			"Inferred, not witnessed: several histories " + scope2 + " reproduce the observed layout: 4→6 and more. The page models 4→6; they all place every observed partition alike, and may differ on partitions discovered later."},
	} {
		if got := inferenceText(&tc.in); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		if got := noteText(live.Note{Kind: live.NoteInferred, Inference: &tc.in}); got != tc.want {
			t.Errorf("%s: note %q, want %q", tc.name, got, tc.want)
		}
	}
}
