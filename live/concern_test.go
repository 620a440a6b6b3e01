package live

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/skewscope/skewscope/collectors/kafka"
)

// Each concern rests on the figure it names, and a worse one wins over
// the others on the same subtask.
func TestRowConcern(t *testing.T) {
	vv := &VertexView{Kafka: true, LagTimeSteps: lagTimeSteps, Thresholds: lagSteps}
	cell := func(state ReaderState, lagSeconds float64, kind kafka.TimeLagKind, lag int64, ttr float64) PartitionCell {
		return PartitionCell{Reading: Reading{State: state}, LagSeconds: lagSeconds, LagKind: kind, Lag: lag, TimeToRetentionSeconds: ttr}
	}
	ok := cell(ReaderOK, 2, kafka.TimeLagInterpolated, 10, -1)
	tests := []struct {
		name   string
		cells  []PartitionCell
		skewed bool
		want   Concern
	}{
		{"all ok", []PartitionCell{ok, ok}, false, ConcernOK},
		{"named by the why panel", []PartitionCell{ok}, true, ConcernSkewed},
		{"a minute behind", []PartitionCell{ok, cell(ReaderOK, 60, kafka.TimeLagInterpolated, 100, -1)}, false, ConcernLagging},
		{"59 s is not", []PartitionCell{cell(ReaderOK, 59, kafka.TimeLagInterpolated, 100, -1)}, false, ConcernOK},
		{"a lower bound counts", []PartitionCell{cell(ReaderOK, 90, kafka.TimeLagAtLeast, 100, -1)}, false, ConcernLagging},
		{"time unknown: records at the minute's step", []PartitionCell{cell(ReaderUnknown, 0, kafka.TimeLagUnknown, 20000, -1)}, false, ConcernLagging},
		{"time unknown, few records", []PartitionCell{cell(ReaderUnknown, 0, kafka.TimeLagUnknown, 19999, -1)}, false, ConcernOK},
		{"lag growing", []PartitionCell{ok, cell(ReaderWarning, 3, kafka.TimeLagInterpolated, 10, -1)}, true, ConcernGrowing},
		{"stalled", []PartitionCell{cell(ReaderStalled, 3, kafka.TimeLagInterpolated, 10, -1)}, false, ConcernGrowing},
		{"falls past retention", []PartitionCell{cell(ReaderWarning, 30, kafka.TimeLagInterpolated, 10, 95)}, false, ConcernRetention},
		{"losing beats everything", []PartitionCell{cell(ReaderWarning, 30, kafka.TimeLagInterpolated, 10, 95), cell(ReaderLost, 400, kafka.TimeLagAtLeast, 1e6, 0)}, true, ConcernLosing},
	}
	for _, tt := range tests {
		r := &SubtaskRow{Partitions: tt.cells}
		if got := rowConcern(vv, r, tt.skewed); got != tt.want {
			t.Errorf("%s: concern %v, want %v", tt.name, got, tt.want)
		}
	}
}

// The worst subtask is the one of the worst concern, then the most
// records lost, then the furthest behind by colour step (not by the
// second, so that neighbours do not swap at every poll), then the lowest.
func TestMarkConcernsPicksTheWorstSubtask(t *testing.T) {
	row := func(n int, state ReaderState, lagSeconds float64, lost int64) SubtaskRow {
		c := PartitionCell{Reading: Reading{State: state}, LagSeconds: lagSeconds, LagKind: kafka.TimeLagInterpolated, TimeToRetentionSeconds: -1}
		return SubtaskRow{Subtask: n, Partitions: []PartitionCell{c}, RecordsLost: lost, LagSeconds: lagSeconds, LagKind: kafka.TimeLagInterpolated}
	}
	tests := []struct {
		name  string
		rows  []SubtaskRow
		worst int
		want  Concern
	}{
		{"none", []SubtaskRow{row(0, ReaderOK, 1, 0), row(1, ReaderOK, 2, 0)}, -1, ConcernOK},
		{"the losing one", []SubtaskRow{row(0, ReaderWarning, 100, 0), row(1, ReaderLost, 5, 10), row(2, ReaderWarning, 400, 0)}, 1, ConcernLosing},
		{"most records lost", []SubtaskRow{row(0, ReaderLost, 5, 10), row(1, ReaderLost, 5, 30)}, 1, ConcernLosing},
		{"same step: the lowest", []SubtaskRow{row(0, ReaderWarning, 70, 0), row(1, ReaderWarning, 290, 0)}, 0, ConcernGrowing},
		{"a further step", []SubtaskRow{row(0, ReaderWarning, 70, 0), row(1, ReaderWarning, 310, 0)}, 1, ConcernGrowing},
	}
	for _, tt := range tests {
		vv := &VertexView{Kafka: true, LagTimeSteps: lagTimeSteps, Thresholds: lagSteps, Subtasks: tt.rows}
		markConcerns(vv)
		if vv.Worst != tt.worst || vv.Concern != tt.want {
			t.Errorf("%s: worst %d (%v), want %d (%v)", tt.name, vv.Worst, vv.Concern, tt.worst, tt.want)
		}
	}
	// A keyed vertex's subtask is skewed when a why line names it.
	vv := &VertexView{Keyed: true, Subtasks: []SubtaskRow{{Subtask: 0}, {Subtask: 1}},
		Why: &WhyView{Lines: []WhyLine{{Kind: WhyBalanced, Subtasks: []int{0}}, {Kind: WhyKeys, Subtasks: []int{1}},
			{Kind: WhyBackpressured, Subtasks: []int{0}}, {Kind: WhyKeyedIdle, Subtasks: []int{0}}}}}
	markConcerns(vv)
	if vv.Worst != 1 || vv.Subtasks[0].Concern != ConcernOK || vv.Subtasks[1].Concern != ConcernSkewed {
		t.Errorf("keyed: worst %d, concerns %v %v, want subtask 1 skewed", vv.Worst, vv.Subtasks[0].Concern, vv.Subtasks[1].Concern)
	}
}

func TestConcernJSON(t *testing.T) {
	for c := ConcernOK; c <= ConcernLosing; c++ {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var back Concern
		if err := json.Unmarshal(b, &back); err != nil || back != c {
			t.Errorf("%s reads back as %v (%v)", b, back, err)
		}
	}
	var c Concern
	if err := json.Unmarshal([]byte(`"burning"`), &c); err == nil {
		t.Error("an unknown concern reads without an error")
	}
	if got := []int{ConcernOK.Level(), ConcernSkewed.Level(), ConcernLagging.Level(), ConcernGrowing.Level(), ConcernRetention.Level(), ConcernLosing.Level()}; got[0] != 0 || got[1] != 1 || got[3] != 2 || got[5] != 3 {
		t.Errorf("levels %v", got)
	}
}

// The overview lists running jobs worst first, then the ended ones, then
// the replaced ones.
func TestSortJobsTriage(t *testing.T) {
	jobs := []JobSummary{
		{ID: "replaced", State: "CANCELED", Concern: ConcernLosing, ReplacedBy: &Replacement{}},
		{ID: "ended", State: "FINISHED", Concern: ConcernLosing},
		{ID: "calm", State: "RUNNING"},
		{ID: "skewed", State: "RUNNING", Concern: ConcernSkewed},
		{ID: "losing-less", State: "RUNNING", Concern: ConcernLosing, RecordsLost: 10},
		{ID: "growing", State: "RUNNING", Concern: ConcernGrowing, LagSeconds: 5},
		{ID: "losing-more", State: "RUNNING", Concern: ConcernLosing, RecordsLost: 500},
		{ID: "growing-further", State: "RUNNING", Concern: ConcernGrowing, LagSeconds: 50},
	}
	sortJobs(jobs)
	var got []string
	for _, j := range jobs {
		got = append(got, j.ID)
	}
	want := []string{"losing-more", "losing-less", "growing-further", "growing", "skewed", "calm", "ended", "replaced"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
