package web

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

func TestSparkWindow(t *testing.T) {
	for _, tc := range []struct {
		at   []float64
		want string
	}{
		{nil, "no history yet"},
		{[]float64{100}, "no history yet"},
		{[]float64{100, 104}, "last 4 s"},
		{[]float64{100, 159.4}, "last 59 s"},
		{[]float64{100, 130, 340}, "last 4 min"},
		{[]float64{0, 900}, "last 15 min"},
	} {
		if got := sparkWindow(tc.at); got != tc.want {
			t.Errorf("sparkWindow(%v) = %q, want %q", tc.at, got, tc.want)
		}
	}
}

// A 10-record blip on a healthy subtask is drawn on the scale of the
// column's worst subtask, not stretched to full height.
func TestSourceGridSparksShareTheColumnsScale(t *testing.T) {
	vv := live.VertexView{Kafka: true, Color: "lag", SparkTimes: []float64{0, 300, 600, 900},
		Subtasks: []live.SubtaskRow{
			{Subtask: 0, SparkLag: []float64{0, 10, 0, 0}, SparkRate: []float64{50, 50, -1, 50}},
			{Subtask: 1, SparkLag: []float64{9000, 12000, math.Inf(1), 11000}, SparkRate: []float64{20, math.NaN(), 25.04, 30}},
			{Subtask: 2},
		}}
	g := sourceGrid(vv, vertexPageInput{})
	type spark struct {
		Max   float64
		Label string
	}
	var got [][2]spark
	for _, r := range g.Rows {
		got = append(got, [2]spark{{r.SparkLag.Max, r.SparkLag.Label}, {r.SparkRate.Max, r.SparkRate.Label}})
	}
	lag := spark{12000, "lag, last 15 min, scale 0 to 12k records"}
	rate := spark{50, "records out per second, last 15 min, scale 0 to 50/s"}
	if diff := cmp.Diff([][2]spark{{lag, rate}, {lag, rate}, {lag, rate}}, got); diff != "" {
		t.Errorf("sparklines' scales (-want +got):\n%s", diff)
	}
	if got, want := g.Rows[1].SparkRate.Values, []float64{20, -1, 25, 30}; !cmp.Equal(got, want) {
		t.Errorf("subtask 1's rate samples = %v, want %v (to a tenth, NaN unknown)", got, want)
	}
	wantAxis := views.Spark{Key: "spark/t", Values: []float64{0, 300, 600, 900}}
	if diff := cmp.Diff(wantAxis, g.SparkAxis); diff != "" {
		t.Errorf("SparkAxis (-want +got):\n%s", diff)
	}
	if want := [2]views.Text{{Key: "spark/window/lag", Text: "last 15 min"}, {Key: "spark/window/rate", Text: "last 15 min"}}; g.SparkWindow != want {
		t.Errorf("SparkWindow = %v, want %v", g.SparkWindow, want)
	}
}
