package views

import (
	"slices"
	"testing"
)

// shapeVertex is a source's page with a grid of two rows, a prediction, a
// why line and a lineage event.
func shapeVertex() VertexPage {
	cell := func(part int, predicted int32, lvl int) GridCell {
		p := string(rune('0' + part))
		return GridCell{Topic: "orders", Partition: p, Label: "o" + p, Predicted: predicted, Title: "orders-" + p,
			Live: LiveCell{Key: "c0." + p, Level: lvl, Text: "12", State: "st-ok"}}
	}
	return VertexPage{
		Live: Live{Topic: "vertex:j/v"}, Cluster: "prod", Name: "Source", Parallelism: "2",
		Figures:    []FigureCard{{Label: "Total lag", Kind: "observed", Text: Text{Key: "f/0/value", Text: "24"}}},
		Prediction: &PredictionCard{Kind: "exact", KindClass: "ok", Summary: Text{Key: "pr/summary", Text: "all 3 partitions"}, Notes: []string{"a note"}},
		Why: &WhyPanel{Causes: []WhyCause{{Kind: "hot", Hot: true, Subtasks: []string{"1"},
			Clauses: []WhyClause{{Kind: "observed", Text: Text{Key: "why/0/0", Text: "Subtask 1 carries 60%."}}}}}},
		Lineage: &LineagePanel{Events: []LineageRow{{Kind: "start", When: "2026-11-30 12:00:00Z", Event: "fresh start at p=2"}}},
		Grid: &SourceGrid{Color: "lag", Labels: []CellLabel{{"o", "orders"}}, Rows: []SourceRow{
			{Subtask: "0", Cells: []GridCell{cell(0, 0, 1), cell(2, 0, 0)}, Lag: Text{Key: "s/0/lag", Text: "24"},
				Busy: Meter{Key: "s/0/meter", Value: "0.5"}, SparkLag: Spark{Key: "s/0/spark/lag", Values: []float64{1, 2}}},
			{Subtask: "1", Cells: []GridCell{cell(1, 1, 2)}, Lag: Text{Key: "s/1/lag", Text: "12"}},
		}},
	}
}

func TestShapeOfLeavesOutLiveFigures(t *testing.T) {
	base := ShapeOf(shapeVertex())
	for name, change := range map[string]func(*VertexPage){
		"a figure's text":    func(p *VertexPage) { p.Figures[0].Text.Text = "25" },
		"the summary":        func(p *VertexPage) { p.Prediction.Summary.Text = "2 of 3 partitions" },
		"a why sentence":     func(p *VertexPage) { p.Why.Causes[0].Clauses[0].Text.Text = "Subtask 1 carries 70%." },
		"a cell's level":     func(p *VertexPage) { p.Grid.Rows[0].Cells[0].Live.Level = 3 },
		"a cell's text":      func(p *VertexPage) { p.Grid.Rows[0].Cells[0].Live.Text = "1.2k" },
		"a cell's state":     func(p *VertexPage) { p.Grid.Rows[1].Cells[0].Live.State = "st-stalled" },
		"a meter":            func(p *VertexPage) { p.Grid.Rows[0].Busy.Value = "0.9" },
		"a sparkline":        func(p *VertexPage) { p.Grid.Rows[0].SparkLag.Values = []float64{2, 3} },
		"the data's age":     func(p *VertexPage) { p.Bar.Flink = LiveAge{Key: "age", At: 5, Text: "1 s ago"} },
		"the stale flag":     func(p *VertexPage) { p.Stale, p.Bar.State = true, "stale" },
		"the highlight":      func(p *VertexPage) { p.Grid.Rows[1].Highlight, p.Grid.Rows[1].Cells[0].Highlight = true, true },
		"the cell titles":    func(p *VertexPage) { p.Grid.Rows[0].Cells[0].Title = "" }, // an update carries none
		"the grid controls":  func(p *VertexPage) { p.Grid.Controls = &GridControls{Order: "by lag"} },
		"the links":          func(p *VertexPage) { p.Links.Planner = "/plan"; p.Why.Causes[0].Planner = &Anchor{"open", "/plan"} },
		"the peers":          func(p *VertexPage) { p.Peers = []PeerLink{{Kind: "keyed vertex", Name: "Window"}} },
		"a why copy":         func(p *VertexPage) { p.Grid.Rows[1].Why = []WhyCopy{{Kind: "observed", Text: Copy{Key: "why/0/0"}}} },
		"the rows' order":    func(p *VertexPage) { slices.Reverse(p.Grid.Rows) },
		"the highlight note": func(p *VertexPage) { p.HighlightNote = "Subtask 7 is not one of this vertex's 2 subtasks" },
	} {
		p := shapeVertex()
		change(&p)
		if got := ShapeOf(p); got != base {
			t.Errorf("%s changed the shape (%s, was %s): it is not the page's layout", name, got, base)
		}
	}
}

func TestShapeOfFollowsTheLayout(t *testing.T) {
	base := ShapeOf(shapeVertex())
	for name, change := range map[string]func(*VertexPage){
		// The outline of an uncertain cell is drawn with the page, not
		// by live updates.
		"a cell becoming uncertain": func(p *VertexPage) { p.Grid.Rows[0].Cells[0].Uncertain = true },
		"a cell found elsewhere":    func(p *VertexPage) { p.Grid.Rows[0].Cells[0].Miss = true },
		"a cell losing records":     func(p *VertexPage) { p.Grid.Rows[0].Cells[1].Lost = true },
		"another prediction":        func(p *VertexPage) { p.Grid.Rows[0].Cells[0].Predicted = 1 },
		"a cell moving": func(p *VertexPage) {
			p.Grid.Rows[1].Cells = append(p.Grid.Rows[1].Cells, p.Grid.Rows[0].Cells[1])
			p.Grid.Rows[0].Cells = p.Grid.Rows[0].Cells[:1]
		},
		"a row less":           func(p *VertexPage) { p.Grid.Rows = p.Grid.Rows[:1] },
		"a replacement banner": func(p *VertexPage) { p.Replaced = &ReplacedPage{NewID: "j2"} },
		"a why line appearing": func(p *VertexPage) {
			p.Why.Causes = append(p.Why.Causes, WhyCause{Kind: "backpressure", Hot: true, Clauses: []WhyClause{{Kind: "observed"}}})
		},
		"a why sentence appearing": func(p *VertexPage) {
			p.Why.Causes[0].Clauses = append(p.Why.Causes[0].Clauses, WhyClause{Kind: "computed", Text: Text{Key: "why/0/1"}})
		},
		"another verdict":       func(p *VertexPage) { p.Prediction.Kind, p.Prediction.KindClass = "uncertain", "warn" },
		"a history":             func(p *VertexPage) { p.Prediction.History = "Parallelism history 2 → 4, from the URL." },
		"a note more":           func(p *VertexPage) { p.Prediction.Notes = append(p.Prediction.Notes, "another") },
		"a lineage event":       func(p *VertexPage) { p.Lineage.Events = append(p.Lineage.Events, LineageRow{Kind: "rescale"}) },
		"a figure more":         func(p *VertexPage) { p.Figures = append(p.Figures, FigureCard{Label: "Produced", Kind: "observed"}) },
		"a figure's provenance": func(p *VertexPage) { p.Figures[0].Kind = "computed" },
		"colour by rate":        func(p *VertexPage) { p.Grid.Color = "rate" },
		"an error":              func(p *VertexPage) { p.Error = "metrics: timeout" },
		// A root cause can arrive a poll after its failover, under a later
		// event.
		"a failover's cause": func(p *VertexPage) { p.Lineage.Events[0].Cause = "Root cause: E." },
	} {
		p := shapeVertex()
		change(&p)
		if got := ShapeOf(p); got == base {
			t.Errorf("%s left the shape as it was (%s): open pages would not show it", name, got)
		}
	}
}

// TestShapeOfSlowestSubtask: the slowest mark is drawn with the page;
// the checkpoint figures are live.
func TestShapeOfSlowestSubtask(t *testing.T) {
	table := func(slowest bool, ms string) VertexPage {
		return VertexPage{Table: &SubtaskTable{Keyed: true, Checkpoint: Text{Key: "ckpt/of", Text: "checkpoint " + ms},
			Rows: []SubtaskTableRow{{Subtask: "0", Slowest: slowest, Checkpoint: Text{Key: "s/0/ckpt", Text: ms + " ms"}}}}}
	}
	if ShapeOf(table(false, "4")) == ShapeOf(table(true, "4")) {
		t.Error("marking the slowest subtask left the shape as it was")
	}
	if ShapeOf(table(true, "4")) != ShapeOf(table(true, "480")) {
		t.Error("a checkpoint figure changed the shape: it is live")
	}
}

func TestShapeOfOtherPages(t *testing.T) {
	ov := OverviewPage{Jobs: []JobRow{{Name: "orders", ID: "j1", State: "RUNNING", Lag: Text{Key: "j/lag", Text: "1"}}}}
	same, more := ov, ov
	same.Jobs = []JobRow{ov.Jobs[0]}
	same.Jobs[0].Lag.Text = "2"
	more.Topics = []TopicRow{{Name: "orders", Cluster: "prod"}}
	if ShapeOf(same) != ShapeOf(ov) || ShapeOf(more) == ShapeOf(ov) {
		t.Error("overview: a job's lag changed the shape, or a topic row appearing did not")
	}

	jv := JobPage{ID: "j1", Vertices: []JobVertexRow{{Name: "Source", Parallelism: "2", Lag: Text{Key: "v/lag", Text: "1"}}}}
	rescaled := jv
	rescaled.Vertices = []JobVertexRow{jv.Vertices[0]}
	rescaled.Vertices[0].Parallelism = "4"
	lagging := jv
	lagging.Vertices = []JobVertexRow{jv.Vertices[0]}
	lagging.Vertices[0].Lag.Text = "9"
	if ShapeOf(rescaled) == ShapeOf(jv) || ShapeOf(lagging) != ShapeOf(jv) {
		t.Error("job: a rescale left the shape, or a lag changed it")
	}

	tv := TopicPage{Name: "orders", Rows: []TopicTableRow{{Partition: "0", Groups: []GroupLag{{Lag: Text{Key: "p/0/g/0/lag", Text: "1"}}}}}}
	lost := tv
	lost.Rows = []TopicTableRow{{Partition: "0", Groups: []GroupLag{{Lost: true}}}}
	if ShapeOf(lost) == ShapeOf(tv) {
		t.Error("topic: a group losing records on a partition left the shape as it was")
	}
}
