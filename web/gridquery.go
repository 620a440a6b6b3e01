package web

import (
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

// gridQuery is a source grid's choice of rows: their order (?sort=, fixed
// when the page is rendered) and which rows and cells are shown (?topic=,
// ?subtasks=). It changes the page's rows, so it is part of the page's
// topic; the update's keys do not depend on the order.
type gridQuery struct {
	// Sort is the figure rows are sorted by, descending: "lag", "lagtime",
	// "busy" or "rate"; "" by subtask.
	Sort string
	// Topic shows only that topic's cells, and only the rows with some;
	// "" all.
	Topic string
	// Ranged shows only subtasks From to To, inclusive.
	Ranged   bool
	From, To int
}

// gridSorts are the choices of ?sort=, with their texts.
var gridSorts = []struct{ Value, Text string }{
	{"subtask", "subtask"}, {"lag", "lag"}, {"lagtime", "lag time"}, {"busy", "busy"}, {"rate", "rate"},
}

func gridSortText(s string) string {
	for _, c := range gridSorts {
		if c.Value == s {
			return c.Text
		}
	}
	return "subtask"
}

// parseGridQuery reads ?sort=, ?topic= and ?subtasks=.
func parseGridQuery(q url.Values) (gridQuery, error) {
	g := gridQuery{}
	switch s := q.Get("sort"); s {
	case "", "subtask":
	case "lag", "lagtime", "busy", "rate":
		g.Sort = s
	default:
		return g, badInput("sort", "%s: sort rows by lag, lagtime, busy, rate or subtask", quote.Clip(s))
	}
	if t := q.Get("topic"); t != "" {
		if !validTopicName(t) {
			return g, badInput("topic", "%s: a Kafka topic name is 1–249 letters, digits, '.', '_' or '-'", quote.Clip(t))
		}
		g.Topic = t
	}
	if s := q.Get("subtasks"); s != "" {
		from, to, ok := parseSubtaskRange(s)
		if !ok {
			return g, badInput("subtasks", "%s: want a subtask N or a range FROM-TO with FROM ≤ TO, e.g. 10-20", quote.Clip(s))
		}
		g.Ranged, g.From, g.To = true, from, to
	}
	return g, nil
}

func parseSubtaskRange(s string) (from, to int, ok bool) {
	a, b, isRange := strings.Cut(s, "-")
	from, err := strconv.Atoi(a)
	if err != nil || from < 0 || a != strconv.Itoa(from) {
		return 0, 0, false
	}
	to = from
	if isRange {
		if to, err = strconv.Atoi(b); err != nil || to < from || b != strconv.Itoa(to) {
			return 0, 0, false
		}
	}
	return from, to, true
}

// validTopicName is Kafka's rule for topic names.
func validTopicName(t string) bool {
	if len(t) == 0 || len(t) > 249 || t == "." || t == ".." {
		return false
	}
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// topicOptions are the query's options in a vertex topic:
// ":sort=lag:topic=orders:subtasks=10-20".
func (g gridQuery) topicOptions() string {
	t := ""
	if g.Sort != "" {
		t += ":sort=" + g.Sort
	}
	if g.Topic != "" {
		t += ":topic=" + g.Topic
	}
	if g.Ranged {
		t += ":subtasks=" + g.subtasks()
	}
	return t
}

// subtasks is the range as ?subtasks= writes it.
func (g gridQuery) subtasks() string {
	if !g.Ranged {
		return ""
	}
	if g.From == g.To {
		return strconv.Itoa(g.From)
	}
	return strconv.Itoa(g.From) + "-" + strconv.Itoa(g.To)
}

// emptyText says why no row is shown.
func (g gridQuery) emptyText() string {
	switch {
	case g.Topic != "" && g.Ranged:
		return "none of subtasks " + g.subtasks() + " reads " + g.Topic + "."
	case g.Topic != "":
		return "no subtask reads " + g.Topic + "."
	default:
		return "the vertex has no subtask " + g.subtasks() + "."
	}
}

// filtered reports whether some rows or cells may be hidden.
func (g gridQuery) filtered() bool { return g.Topic != "" || g.Ranged }

// gridRows are the rows the grid shows, in its order: those in the
// subtask range, with only the topic's cells (rows without any hidden),
// sorted by the figure descending, unknown figures last, ties by subtask.
func gridRows(rows []live.SubtaskRow, g gridQuery) []live.SubtaskRow {
	out := make([]live.SubtaskRow, 0, len(rows))
	for _, r := range rows {
		if g.Ranged && (r.Subtask < g.From || r.Subtask > g.To) {
			continue
		}
		if g.Topic != "" {
			var cells []live.PartitionCell
			for _, c := range r.Partitions {
				if c.Topic == g.Topic {
					cells = append(cells, c)
				}
			}
			if len(cells) == 0 {
				continue
			}
			r.Partitions = cells
			topicFigures(&r)
		}
		out = append(out, r)
	}
	if g.Sort == "" {
		return out
	}
	by := func(r live.SubtaskRow) float64 {
		switch g.Sort {
		case "lag":
			return float64(r.Lag)
		case "lagtime":
			if !r.LagKind.Known() {
				return -1
			}
			return r.LagSeconds
		case "busy":
			return r.Busy
		default:
			return r.Rate
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		x, y := by(out[a]), by(out[b])
		if x != y {
			return x > y
		}
		return out[a].Subtask < out[b].Subtask
	})
	return out
}

// topicFigures makes a row's produced rate, lag, lag time and records
// lost those of the cells it shows (one topic's); its records out, busy
// time and catch-up stay the subtask's.
func topicFigures(r *live.SubtaskRow) {
	r.Lag, r.Rate, r.LagSeconds, r.LagKind, r.RecordsLost = -1, -1, 0, kafka.TimeLagUnknown, 0
	for _, c := range r.Partitions {
		if c.Lag >= 0 {
			r.Lag = max(r.Lag, 0) + c.Lag
		}
		if c.Rate >= 0 {
			r.Rate = max(r.Rate, 0) + c.Rate
		}
		if c.LagKind.Known() && (c.LagSeconds > r.LagSeconds || !r.LagKind.Known()) {
			r.LagSeconds, r.LagKind = c.LagSeconds, c.LagKind
		}
		if c.Reading.Lost != nil {
			r.RecordsLost += c.Reading.Lost.Records
		}
	}
}

// gridControls are the grid's sort and filter form, its order's time and
// the link to the busiest shown subtask. url is the page's URL with the
// given query parameters set ("" deletes one).
func gridControls(vv live.VertexView, g gridQuery, shown []live.SubtaskRow, at time.Time, url func(kv ...string) string, keep url.Values) *views.GridControls {
	c := &views.GridControls{Action: url("sort", "", "topic", "", "subtasks", "", "highlight", ""), Subtasks: g.subtasks(),
		Placeholder: "0-" + strconv.Itoa(max(0, vv.Parallelism-1))}
	if i := strings.IndexByte(c.Action, '?'); i >= 0 {
		c.Action = c.Action[:i]
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range keep {
			if !yield(k) {
				return
			}
		}
	}) {
		switch k {
		case "sort", "topic", "subtasks":
			continue
		}
		for _, v := range keep[k] {
			c.Hidden = append(c.Hidden, views.Field{Name: k, Value: v})
		}
	}
	for _, s := range gridSorts {
		c.Sorts = append(c.Sorts, views.Option{Value: s.Value, Label: s.Text, Selected: s.Value == g.Sort || (s.Value == "subtask" && g.Sort == "")})
	}
	c.Topics = append(c.Topics, views.Option{Value: "", Label: "all topics", Selected: g.Topic == ""})
	for _, t := range vv.Topics {
		c.Topics = append(c.Topics, views.Option{Value: t, Label: t, Selected: t == g.Topic})
	}
	if g.Sort != "" {
		c.Order = "sorted by " + gridSortText(g.Sort) + " at " + at.UTC().Format("15:04:05") + " UTC"
		c.Resort = url()
	}
	if g.filtered() {
		c.Shown = format.Int(int64(len(shown))) + " of " + format.Int(int64(len(vv.Subtasks))) + " subtasks shown"
		if g.Topic != "" {
			c.Shown += "; cells, produced, lag and lag time of " + g.Topic + " only"
		}
	}
	busiest := -1
	for i, r := range shown {
		if r.Busy >= 0 && (busiest < 0 || r.Busy > shown[busiest].Busy) {
			busiest = i
		}
	}
	if busiest >= 0 {
		n := strconv.Itoa(shown[busiest].Subtask)
		c.Busiest = &views.Anchor{Text: "jump to the busiest, subtask " + n + " (" + format.Ratio(shown[busiest].Busy) + " busy)",
			URL: url("highlight", "subtask:"+n) + "#subtask-" + n}
	}
	return c
}
