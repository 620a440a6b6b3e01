package web

import (
	"slices"
	"strconv"
	"time"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

// concernText is a concern in the words of the overview and the first
// screen of a vertex page.
func concernText(c live.Concern) string {
	switch c {
	case live.ConcernLosing:
		return "losing records"
	case live.ConcernRetention:
		return "falling past retention"
	case live.ConcernGrowing:
		return "lag growing"
	case live.ConcernLagging:
		return "lagging"
	case live.ConcernWatermark:
		return "holds the watermark"
	case live.ConcernSkewed:
		return "skewed"
	}
	return "ok"
}

// levelValue is a colour step as a Meter's value: the element that is
// not a <meter> takes it as its data-level.
func levelValue(n int) string { return strconv.Itoa(n) }

// lagStep is the colour step of a lag time on the cells' scale; 0 when
// unknown.
func lagStep(seconds float64, kind kafka.TimeLagKind) int {
	if !kind.Known() || seconds < 0 {
		return 0
	}
	return live.LagTimeStep(seconds)
}

// lagTimeTrend is a lag time with its trend: "≥ 36 s · growing", "2 s",
// "–" unknown.
func lagTimeTrend(seconds float64, kind kafka.TimeLagKind, trend live.Trend) string {
	if !kind.Known() || seconds < 0 {
		return "–"
	}
	s := format.Seconds(seconds)
	if kind == kafka.TimeLagAtLeast {
		s = "≥ " + s
	}
	if trend == live.TrendGrowing || trend == live.TrendShrinking {
		s += " · " + string(trend)
	}
	return s
}

// focusAnchor links a job's row to the vertex and subtask its concern is
// about, highlighted.
func focusAnchor(pl pageLinks, j live.JobSummary) *views.Anchor {
	f := j.Focus
	if f == nil {
		return nil
	}
	n := strconv.Itoa(f.Subtask)
	return &views.Anchor{Text: f.VertexName + " · subtask " + n,
		URL: pl.url(views.VertexPath(j.ID, f.VertexID) + "?highlight=subtask:" + n)}
}

// foldRuns folds the overview's replaced runs under the run that
// replaced them (their chain's current run), and the ended runs of a name
// under that name's running job on the same endpoint, in the overview's
// order; a run with no row to fold under keeps its own.
func foldRuns(pl pageLinks, jobs []live.JobSummary, rows []views.JobRow) []views.JobRow {
	type key struct{ endpoint, id string }
	at := map[key]int{}
	running := map[key]int{} // endpoint, name → row of its running job
	for i, j := range jobs {
		at[key{j.Endpoint, j.ID}] = i
		if j.ReplacedBy == nil && !j.State.GloballyTerminal() {
			if _, ok := running[key{j.Endpoint, j.Name}]; !ok {
				running[key{j.Endpoint, j.Name}] = i
			}
		}
	}
	under := make([]int, len(jobs))
	for i, j := range jobs {
		under[i] = -1
		switch {
		case j.ReplacedBy != nil:
			if k, ok := at[key{j.Endpoint, j.ReplacedBy.Current}]; ok && jobs[k].ReplacedBy == nil {
				under[i] = k
			}
		case j.State.GloballyTerminal():
			if k, ok := running[key{j.Endpoint, j.Name}]; ok {
				under[i] = k
			}
		}
	}
	out := make([]views.JobRow, 0, len(rows))
	index := map[int]int{} // job → its row in out
	for i := range jobs {
		if under[i] < 0 {
			index[i] = len(out)
			out = append(out, rows[i])
		}
	}
	for i := range jobs {
		k := under[i]
		if k < 0 {
			continue
		}
		j := jobs[i]
		e := views.EarlierRun{ID: j.ID, URL: pl.url(views.JobPath(j.ID)), State: string(j.State), Note: "ended"}
		if j.ReplacedBy != nil {
			e.Note = "replaced by " + shortID(j.ReplacedBy.NewID) + " at " + j.ReplacedBy.At.UTC().Format("2006-01-02 15:04:05Z")
		}
		e.Lost = lostNote(j.RecordsLost)
		r := &out[index[k]]
		r.Earlier = append(r.Earlier, e)
	}
	return out
}

// figureLevel is a headline figure's colour step on the cells' scale:
// records lost and partitions in a losing state at the alarm step, the
// largest lag time at its own step, a time to retention at the alarm
// step; every other figure 0.
func figureLevel(vv live.VertexView, f live.Figure) int {
	switch f.Name {
	case live.FigureRecordsLost:
		if f.Value > 0 {
			return 3
		}
	case live.FigureMaxLagTime:
		if f.Value >= 0 {
			return lagStep(f.Value, kafka.TimeLagInterpolated)
		}
	case live.FigureTimeToRetention:
		if f.Value >= 0 {
			return 3
		}
	case live.FigureStates:
		for _, sc := range vv.States {
			switch sc.State {
			case live.ReaderLost:
				return 3
			case live.ReaderStalled, live.ReaderWarning, live.ReaderStopped, live.ReaderRewind:
				if sc.Count > 0 {
					return 2
				}
			}
		}
	}
	return 0
}

// lostWhen is between which polls skewscope saw a subtask's partitions
// lose records, "" when none did.
func lostWhen(r live.SubtaskRow) string {
	var first, last time.Time
	for i := range r.Partitions {
		l := r.Partitions[i].Reading.Lost
		if l == nil || l.Records == 0 || l.FirstSeen.IsZero() {
			continue
		}
		if first.IsZero() || l.FirstSeen.Before(first) {
			first = l.FirstSeen
		}
		if l.LastSeen.After(last) {
			last = l.LastSeen
		}
	}
	if first.IsZero() {
		return ""
	}
	return format.Between(first, last)
}

// copyOf repeats a row's live text in the brief; keyed false (the row is
// not on the page) makes a copy that no update changes.
func copyOf(t views.Text, keyed bool) views.Copy {
	if !keyed {
		return views.Copy{Text: t.Text}
	}
	return views.Copy(t)
}

// vertexBrief is a vertex page's first screen: the highlighted subtask,
// else the vertex's worst, with its state from its row, the why panel's
// lines about it and the one action; or, when no subtask needs a look and
// none is highlighted, a calm line.
func vertexBrief(p *views.VertexPage, vv live.VertexView) *views.Brief {
	subject, from := -1, ""
	for _, r := range vv.Subtasks {
		if r.Highlight {
			subject, from = r.Subtask, "highlighted by the link"
		}
	}
	if subject < 0 && worstSubtask(vv) >= 0 {
		subject, from = worstSubtask(vv), "needs a look most of "+countOf(vv.Parallelism, "subtask", "subtasks")
	}
	if subject < 0 || subject >= len(vv.Subtasks) {
		if len(vv.Subtasks) == 0 {
			return nil
		}
		calm := "No subtask needs a look: none is losing records, falling past retention, " +
			"growing its lag or a minute behind, and the why panel names none."
		if whyNamesCause(vv) {
			calm = "No subtask here is losing records, falling past retention, growing its lag or a minute behind; " +
				"the why panel below says what the vertex waits on."
		}
		return &views.Brief{Level: views.Copy{Text: "0"}, Calm: calm}
	}
	r := vv.Subtasks[subject]
	n := strconv.Itoa(subject)
	b := &views.Brief{Subtask: n, From: from}
	// The row's texts as the grid or table shows them; a row the grid's
	// filter hides is written here as it is now.
	var row views.SourceRow
	var trow views.SubtaskTableRow
	shown := false
	if p.Grid != nil {
		for i := range p.Grid.Rows {
			if p.Grid.Rows[i].Subtask == n {
				row, shown = p.Grid.Rows[i], true
			}
		}
	}
	if p.Table != nil {
		for i := range p.Table.Rows {
			if p.Table.Rows[i].Subtask == n {
				trow, shown = p.Table.Rows[i], true
			}
		}
	}
	if shown {
		b.Row = "subtask-" + n
	}
	k := "s/" + n + "/"
	concern := text(k+"concern", concernText(r.Concern))
	level := views.Copy{Key: k + "level", Text: levelValue(r.Concern.Level())}
	if !shown {
		level.Key = ""
	}
	b.Level, b.Concern = level, copyOf(concern, shown)
	if vv.Kafka {
		if !shown {
			row = views.SourceRow{Lag: text("", format.Int(r.Lag)), LagTime: text("", lagTime(r)), Lost: text("", lostNote(r.RecordsLost)),
				LostWhen: text("", lostWhen(r)), CatchUp: text("", rowCatchUp(r))}
		}
		b.Lag, b.LagTime, b.Lost, b.LostWhen, b.CatchUp = copyOf(row.Lag, shown), copyOf(row.LagTime, shown), copyOf(row.Lost, shown),
			copyOf(row.LostWhen, shown), copyOf(row.CatchUp, shown)
	} else {
		if !shown {
			trow = views.SubtaskTableRow{BusyText: text("", format.Ratio(r.Busy)), In: text("", format.Rate(r.RecordsIn)),
				BackPressured: text("", format.Ratio(r.BackPressured))}
		}
		b.Busy, b.In, b.BackPressured = copyOf(trow.BusyText, shown), copyOf(trow.In, shown), copyOf(trow.BackPressured, shown)
	}
	if w := p.Why; w != nil {
		for _, c := range w.Causes {
			if !c.Hot || !slices.Contains(c.Subtasks, n) {
				continue
			}
			for _, cl := range c.Clauses {
				b.Why = append(b.Why, views.WhyCopy{Kind: cl.Kind, Text: views.Copy{Key: cl.Text.Key, Text: cl.Text.Text}})
			}
			if c.Planner != nil && b.Action == nil {
				b.Action, b.ActionKind = c.Planner, c.PlannerKind
			}
		}
	}
	if b.Action == nil && p.Links.PlanRescale != "" && r.Concern > live.ConcernOK {
		b.Action = &views.Anchor{Text: "plan a rescale", URL: p.Links.PlanRescale}
	}
	return b
}

// foldDiscoveries groups a lineage's events into runs: consecutive
// partition discoveries of one job at one parallelism are one run (a
// source that discovers partitions every few minutes would grow the table
// by a row each time); every other event is a run of its own.
func foldDiscoveries(events []live.LineageEvent) [][]live.LineageEvent {
	var runs [][]live.LineageEvent
	for i, e := range events {
		if n := len(runs); n > 0 && e.Kind == live.EventPartitions {
			last := runs[n-1][0]
			if last.Kind == live.EventPartitions && last.JobID == e.JobID && last.To == e.To {
				runs[n-1] = append(runs[n-1], e)
				continue
			}
		}
		runs = append(runs, events[i:i+1:i+1])
	}
	return runs
}

// foldedWhen is the span of a run of events: "2026-12-02 13:48:46Z –
// 13:49:34Z" (the date once when both fall on one day).
func foldedWhen(run []live.LineageEvent) string {
	first, last := run[0].At.UTC(), run[len(run)-1].At.UTC()
	to := last.Format("2006-01-02 15:04:05Z")
	if first.Format(time.DateOnly) == last.Format(time.DateOnly) {
		to = last.Format("15:04:05Z")
	}
	return first.Format("2006-01-02 15:04:05Z") + " – " + to
}

// discoveriesText says what a run of partition discoveries found: "3
// discoveries at p=4: 5 new partitions".
func discoveriesText(run []live.LineageEvent) string {
	n := 0
	for _, e := range run {
		n += e.NewPartitions
	}
	return strconv.Itoa(len(run)) + " discoveries at p=" + strconv.Itoa(run[0].To) + ": " + countOf(n, "new partition", "new partitions")
}

// worstSubtask is the vertex's Worst when that subtask needs a look, -1
// otherwise.
// whyNamesCause reports whether the why panel has a line about a cause:
// one that is not "balanced" or "unknown".
func whyNamesCause(vv live.VertexView) bool {
	return vv.Why != nil && slices.ContainsFunc(vv.Why.Lines, func(l live.WhyLine) bool {
		return l.Kind != live.WhyBalanced && l.Kind != live.WhyUnknown
	})
}

func worstSubtask(vv live.VertexView) int {
	if w := vv.Worst; w >= 0 && w < len(vv.Subtasks) && vv.Subtasks[w].Concern > live.ConcernOK {
		return w
	}
	return -1
}

// rowCatchUp is a source subtask's time to catch up in words; "–" for one
// that reads no partition, which has nothing to catch up on.
func rowCatchUp(r live.SubtaskRow) string {
	if len(r.Partitions) == 0 {
		return "–"
	}
	return catchUpText(r.CatchUp, r.CatchUpSeconds, r.Trend)
}
