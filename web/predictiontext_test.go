package web

import (
	"strings"
	"testing"

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
		{"restored unseen", live.Prediction{Mode: live.ModeNone, NotModelled: &live.NotModelled{Reason: live.ReasonRestoredUnseen, Savepoint: true, InferNote: "No history of ≤ 2 restores fits."}}, nil,
			[]string{"Restored from a savepoint before skewscope first saw it", "No history of ≤ 2 restores fits.", "?history="}},
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
	for from, want := range map[string]string{
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
