package live

import (
	"testing"

	"github.com/skewscope/skewscope/collectors/kafka"
)

// TestLevel: by lag, a cell is coloured by its time behind (10 s, 1 min,
// 5 min; a lower bound counts as that time), else by its records (1k, 20k,
// 80k); by rate, by its share of the fastest partition's rate; by
// watermark, by its event-time lag on the time steps.
func TestLevel(t *testing.T) {
	known, atLeast, unknown := kafka.TimeLagInterpolated, kafka.TimeLagAtLeast, kafka.TimeLagUnknown
	byLag := &VertexView{Color: "lag", Thresholds: lagSteps, LagTimeSteps: lagTimeSteps}
	byRate := &VertexView{Color: "rate", Thresholds: [3]float64{25, 50, 75}, LagTimeSteps: lagTimeSteps}
	byWatermark := &VertexView{Color: "watermark", Thresholds: lagSteps, LagTimeSteps: lagTimeSteps}
	et := func(lag float64, none bool) *PartitionEventTime {
		return &PartitionEventTime{LagSeconds: lag, None: none, Kind: Observed, State: PartitionActive}
	}
	for _, tc := range []struct {
		name string
		vv   *VertexView
		c    PartitionCell
		want int
	}{
		{"caught up", byLag, PartitionCell{Lag: 0, LagSeconds: 0, LagKind: known}, 0},
		{"9 s", byLag, PartitionCell{Lag: 90000, LagSeconds: 9.9, LagKind: known}, 0},
		{"10 s", byLag, PartitionCell{Lag: 10, LagSeconds: 10, LagKind: known}, 1},
		{"14k records, 2½ min", byLag, PartitionCell{Lag: 14000, LagSeconds: 150, LagKind: known}, 2},
		{"5 min", byLag, PartitionCell{Lag: 5, LagSeconds: 300, LagKind: known}, 3},
		{"at least 6 min", byLag, PartitionCell{Lag: 500, LagSeconds: 360, LagKind: atLeast}, 3},
		{"at least 30 s", byLag, PartitionCell{Lag: 500, LagSeconds: 30, LagKind: atLeast}, 1},
		{"time unknown: records", byLag, PartitionCell{Lag: 14000, LagKind: unknown}, 1},
		{"time unknown: 80k records", byLag, PartitionCell{Lag: 80000, LagKind: unknown}, 3},
		{"nothing known", byLag, PartitionCell{Lag: -1, LagKind: unknown}, -1},
		{"by rate: time ignored", byRate, PartitionCell{Lag: 0, LagSeconds: 900, LagKind: known, Rate: 10}, 0},
		{"by rate: the fastest", byRate, PartitionCell{Rate: 100, LagKind: known}, 3},
		{"by rate: unknown", byRate, PartitionCell{Rate: -1, LagKind: known, LagSeconds: 1}, -1},
		{"by watermark: lag ignored", byWatermark, PartitionCell{Lag: 90000, LagSeconds: 900, LagKind: known, EventTime: et(5, false)}, 0},
		{"by watermark: 41 min behind", byWatermark, PartitionCell{Lag: 0, LagSeconds: 0, LagKind: known, EventTime: et(41*60, false)}, 3},
		{"by watermark: 1 min", byWatermark, PartitionCell{Lag: 0, LagKind: known, EventTime: et(60, false)}, 2},
		{"by watermark: ahead of the clock", byWatermark, PartitionCell{EventTime: et(-3, false)}, 0},
		{"by watermark: none yet", byWatermark, PartitionCell{Lag: 5, LagKind: known, EventTime: et(-1, true)}, -1},
		{"by watermark: no event time", byWatermark, PartitionCell{Lag: 5, LagSeconds: 1, LagKind: known}, -1},
	} {
		if got := level(tc.vv, &tc.c); got != tc.want {
			t.Errorf("level(%s, %s) = %d, want %d", tc.vv.Color, tc.name, got, tc.want)
		}
	}
}
