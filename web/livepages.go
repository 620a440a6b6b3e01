package web

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/internal/linkout"
	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

// The builders of the live pages' models. Each is pure: it reads a view the
// store built (a snapshot, taken under the store's lock) and writes every
// text of the page once, outside the lock. The page renders the model and
// views.UpdateOf gathers the same texts into its websocket update.

// pageLinks is what a builder needs to write the URLs of a page: the route
// prefix, whether the page is embedded, and the links into other tools.
type pageLinks struct {
	base  string
	embed bool
	out   outLinks
}

func linksOf(l views.Layout) pageLinks { return pageLinks{base: l.Base, embed: l.Embed} }

// outLinks are the links into the Flink Web UI of each endpoint and the
// Kafka UI of each cluster, by name (Options.FlinkUI, KafkaUI).
type outLinks struct {
	flink map[string]linkout.Flink
	kafka map[string]linkout.Kafka
}

// pageLinks is linksOf with the server's links into other tools.
func (s *Server) pageLinks(l views.Layout) pageLinks {
	pl := linksOf(l)
	pl.out = outLinks{flink: s.flinkUI, kafka: s.kafkaUI}
	return pl
}

// An embedded page links to nothing outside skewscope but its own page:
// a portal shows the grid, not another tool.

// flinkJob is a job's page in its endpoint's Flink Web UI, "" when none.
// The Web UI routes a job that ended (FINISHED, FAILED, CANCELED) under
// #/job/completed/.
func (pl pageLinks) flinkJob(endpoint, job string, state flink.JobState) string {
	if pl.embed {
		return ""
	}
	return pl.out.flink[endpoint].JobURL(endpoint, job, state.GloballyTerminal())
}

// flinkVertex is a vertex's page in the Flink Web UI, "" when none.
func (pl pageLinks) flinkVertex(endpoint, job, vertex string, state flink.JobState) string {
	if pl.embed {
		return ""
	}
	return pl.out.flink[endpoint].VertexURL(endpoint, job, vertex, state.GloballyTerminal())
}

// flinkSubtask is a subtask's page in the Flink Web UI, nil when none.
func (pl pageLinks) flinkSubtask(endpoint, job, vertex string, subtask int, state flink.JobState) *views.Anchor {
	if pl.embed {
		return nil
	}
	u := pl.out.flink[endpoint].SubtaskURL(endpoint, job, vertex, subtask, state.GloballyTerminal())
	if u == "" {
		return nil
	}
	return &views.Anchor{Text: "Flink UI: subtask " + strconv.Itoa(subtask), URL: u}
}

// kafkaTopic is a topic's page in its cluster's Kafka UI, "" when none.
func (pl pageLinks) kafkaTopic(cluster, topic string) string {
	if pl.embed {
		return ""
	}
	return pl.out.kafka[cluster].TopicURL(cluster, topic)
}

// kafkaGroup is a consumer group's page in its cluster's Kafka UI, ""
// when none.
func (pl pageLinks) kafkaGroup(cluster, group string) string {
	if pl.embed {
		return ""
	}
	return pl.out.kafka[cluster].GroupURL(cluster, group)
}

// url is path under the route prefix. An embedded page's links open
// outside its frame (?target=, _top by default), so they open the page of
// its own, not another embedded one.
func (pl pageLinks) url(path string) string { return pl.base + path }

func text(key, t string) views.Text { return views.Text{Key: key, Text: t} }

// ageOf is a data-age element of a live page.
func ageOf(key string, a live.Age) views.LiveAge {
	at := int64(0)
	if !a.At.IsZero() {
		at = a.At.UnixMilli()
	}
	return views.LiveAge{Key: key, At: at, Text: ageText(a)}
}

func stale(a live.Age) bool { return a.Stale || a.Err != "" }

func stateText(stale bool) string {
	if stale {
		return "stale"
	}
	return "live"
}

func liveBar(flink live.Age, kafka *live.Age) views.LiveBar {
	b := views.LiveBar{Stale: stale(flink), Flink: ageOf("age", flink), Err: flink.Err}
	if kafka != nil {
		k := ageOf("age:kafka", *kafka)
		b.Kafka, b.KafkaErr = &k, kafka.Err
		b.Stale = b.Stale || stale(*kafka)
	}
	b.State = stateText(b.Stale)
	return b
}

// rowAge is an overview row's stale mark: whether its data is not from
// the latest poll (an error beside fresh data is not) and, then, the
// data's age (no key when there is none, or the row is fresh: the page
// shows no age to update).
func rowAge(key string, a live.Age) (bool, views.LiveAge) {
	if !a.Stale {
		return false, views.LiveAge{}
	}
	if a.At.IsZero() {
		return true, views.LiveAge{}
	}
	return true, ageOf(key, a)
}

func backendState(key string, a live.Age) views.BackendCell {
	st := views.BackendCell{NotPolled: a.State == live.StateNotPolled, Age: ageOf(key, a), Err: a.Err}
	if st.NotPolled || a.At.IsZero() { // no data, no age
		st.Age = views.LiveAge{}
	}
	if a.State != live.StateOK {
		st.State = string(a.State)
	}
	return st
}

// newOverviewPage builds the overview.
func newOverviewPage(pl pageLinks, ov live.OverviewView) views.OverviewPage {
	p := views.OverviewPage{Live: views.Live{Topic: overviewTopic}}
	for _, e := range ov.Endpoints {
		k := "e/" + e.Name + "/"
		p.Endpoints = append(p.Endpoints, views.EndpointRow{
			Name: e.Name, URL: e.URL, Version: e.FlinkVersion, Stale: stale(e.Age),
			Jobs:    backendFigure(e.Age, strconv.Itoa(e.Jobs)),
			Dropped: text(k+"dropped", droppedJobs(e.DroppedJobs, e.MaxJobs)),
			Poll:    text(k+"poll", pollText(e.Age, e.PollMillis)),
			Cost:    text(k+"cost", endpointCost(e)),
			Budget:  text(k+"budget", endpointBudget(e)),
			Backoff: text(k+"backoff", endpointBackoff(e)),
			State:   backendState(k+"age", e.Age),
		})
	}
	jobs := make([]views.JobRow, 0, len(ov.Jobs))
	for _, j := range ov.Jobs {
		k := "j/" + j.Endpoint + "/" + j.ID + "/"
		row := views.JobRow{
			Name: j.Name, ID: j.ID, URL: pl.url(views.JobPath(j.ID)), State: string(j.State), Vertices: strconv.Itoa(j.Vertices),
			Concern:      text(k+"concern", concernText(j.Concern)),
			Level:        views.Meter{Key: k + "level", Value: levelValue(j.Concern.Level())},
			Focus:        focusAnchor(pl, j),
			LagTime:      text(k+"lagtime", lagTimeTrend(j.LagSeconds, j.LagKind, j.Trend)),
			LagStep:      views.Meter{Key: k + "lagstep", Value: levelValue(lagStep(j.LagSeconds, j.LagKind))},
			Lag:          text(k+"lag", format.Int(j.Lag)),
			Lost:         text(k+"lost", lostCount(j.RecordsLost, j.Lag >= 0)),
			Lossy:        j.RecordsLost > 0,
			MaxBusy:      text(k+"busy", format.Ratio(j.MaxBusy)),
			Backpressure: text(k+"bp", orDash(j.Backpressure)),
		}
		row.Stale, row.DataAge = rowAge(k+"age", j.Age)
		row.Unlisted = unlistedText(j.Unlisted)
		row.FlinkUI = pl.flinkJob(j.Endpoint, j.ID, j.State)
		if j.ReplacedBy != nil {
			row.ReplacedBy = &views.Anchor{Text: j.ReplacedBy.Current, URL: pl.url(views.JobPath(j.ReplacedBy.Current))}
		} else {
			d := text(k+"drift", jobDrift(j))
			row.Drift = &d
		}
		jobs = append(jobs, row)
	}
	p.Jobs = foldRuns(pl, ov.Jobs, jobs)
	for _, c := range ov.Clusters {
		k := "c/" + c.Name + "/"
		p.Clusters = append(p.Clusters, views.ClusterRow{
			Name: c.Name, Stale: stale(c.Age),
			Topics:     backendFigure(c.Age, strconv.Itoa(c.Topics)),
			Partitions: backendFigure(c.Age, strconv.Itoa(c.Partitions)),
			Groups:     backendFigure(c.Age, strconv.Itoa(c.Groups)),
			Produced:   text(k+"rate", backendFigure(c.Age, format.Rate(c.Rate))),
			Poll:       text(k+"poll", pollText(c.Age, c.PollMillis)),
			State:      backendState(k+"age", c.Age),
		})
	}
	for _, t := range ov.Topics {
		row := views.TopicRow{
			Name: t.Name, URL: pl.url(views.TopicPath(t.Cluster, t.Name)), Cluster: t.Cluster, KafkaUI: pl.kafkaTopic(t.Cluster, t.Name),
			Partitions: strconv.Itoa(t.Partitions), Groups: strconv.Itoa(t.Groups),
			Produced: text("t/"+t.Cluster+"/"+t.Name, format.Rate(t.Rate)),
		}
		row.Stale, row.DataAge = rowAge("t/"+t.Cluster+"/"+t.Name+"/age", t.Age)
		p.Topics = append(p.Topics, row)
	}
	p.Shape = views.ShapeOf(p)
	return p
}

// newJobPage builds a job page; replaced is its banner when a later job
// replaced it.
func newJobPage(pl pageLinks, jv live.JobView, replaced *views.ReplacedPage) views.JobPage {
	p := views.JobPage{
		Live:     views.Live{Topic: jobTopic(jv.ID), Stale: stale(jv.Age)},
		Replaced: replaced, Endpoint: jv.Endpoint, Name: jv.Name, ID: jv.ID, State: string(jv.State),
		Bar: liveBar(jv.Age, nil), Ended: jobEndedText(jv.State, jv.LastReported),
		FlinkUI: pl.flinkJob(jv.Endpoint, jv.ID, jv.State),
	}
	if jv.Restarts >= 0 {
		p.Restarts = restartsText(jv.Restarts)
	}
	if jv.Restored != nil {
		p.Restored = restoredText(jv.Restored)
	}
	if s := jobWatermarkText(jv); s != "" {
		t := text("watermark", s)
		p.Watermark = &t
	}
	wms := vertexWatermarks(jv)
	for _, v := range jv.Vertices {
		k := "v/" + v.ID + "/"
		wm, ok := wms[v.ID]
		if !ok {
			wm = "–"
		}
		p.Vertices = append(p.Vertices, views.JobVertexRow{
			Watermark: text(k+"wm", wm),
			Name:      v.Name, URL: pl.url(views.VertexPath(jv.ID, v.ID)),
			Parallelism: strconv.Itoa(v.Parallelism), MaxParallelism: strconv.Itoa(v.MaxParallelism), Kind: vertexKind(v),
			Concern:      text(k+"concern", concernText(v.Concern)),
			Level:        views.Meter{Key: k + "level", Value: levelValue(v.Concern.Level())},
			LagTime:      text(k+"lagtime", lagTimeTrend(v.LagSeconds, v.LagKind, v.Trend)),
			LagStep:      views.Meter{Key: k + "lagstep", Value: levelValue(lagStep(v.LagSeconds, v.LagKind))},
			Skew:         text(k+"skew", skewText(v.Skew)),
			Busiest:      text(k+"busiest", busiestText(v)),
			Backpressure: text(k+"bp", orDash(v.Backpressure)),
			Lag:          text(k+"lag", format.Int(v.Lag)),
			Lost:         text(k+"lost", lostCount(v.RecordsLost, v.Kafka)),
			Lossy:        v.RecordsLost > 0,
			Drift:        text(k+"drift", vertexDrift(v)),
		})
	}
	p.Shape = views.ShapeOf(p)
	return p
}

// jobEndedText says that a job in state has ended and that its figures are
// what Flink last reported at *at; with at nil, for an ended job skewscope
// never saw run, that only its job graph is shown; "" for a job that runs.
func jobEndedText(state flink.JobState, at *time.Time) string {
	switch {
	case at != nil:
		return "Job " + string(state) + ": Flink reports no metrics for a job that has ended; these are the figures it last reported, at " +
			at.UTC().Format("2006-01-02 15:04:05 UTC") + "."
	case state.GloballyTerminal() || state == flink.JobSuspended:
		return "Job " + string(state) + ": Flink reports no metrics for a job that has ended, and skewscope did not see this one run: only its vertices and their parallelisms are shown."
	}
	return ""
}

// vertexPageInput is what a vertex page shows beside the store's view: its
// topic, links and banner, which depend on the request.
type vertexPageInput struct {
	links pageLinks
	topic string
	// update is set when the page is built for its live update only:
	// the static texts and links no update carries (cell titles, the why
	// panel's planner links) are left out.
	update   bool
	hrefs    views.VertexLinks
	replaced *views.ReplacedPage
	// sandboxRestore is the sandbox's restore action, "" without the
	// sandbox.
	sandboxRestore string
	// parts are the sections shown (zero: all of them).
	parts vertexParts
	// peers link to the job's other vertices.
	peers []views.PeerLink
	// cell is the partition ?highlight=partition:TOPIC:N marks, if any.
	cell *cellRef
	// highlightNote says that ?highlight= names what the vertex does not
	// have (highlightNote), "" otherwise.
	highlightNote string
	// grid is the source grid's order and filter; gridURL, set when the
	// page is rendered (nil on an update), is the page's URL with the given
	// parameters set ("" deletes one), query its parameters and at the
	// time its rows were sorted.
	grid    gridQuery
	gridURL func(kv ...string) string
	query   url.Values
	at      time.Time
	// keyed is the keyed vertex behind a Kafka source, whose figures its
	// planner links carry; nil when none (or on an update, which carries
	// texts, not links).
	keyed *live.VertexView
}

// cellRef names a partition.
type cellRef struct {
	topic     string
	partition int32
}

// newVertexPage builds a vertex page.
// whyHolds reports whether vv's why panel has a line naming what holds
// its watermark back.
func whyHolds(vv live.VertexView) bool {
	if vv.Why == nil {
		return false
	}
	return slices.ContainsFunc(vv.Why.Lines, func(l live.WhyLine) bool { return l.Kind == live.WhyWatermark && l.Holder != nil })
}

// vertexLinksOf is the page's links: colouring by event-time lag is
// offered where the job reports watermarks, and kept while it is chosen.
func vertexLinksOf(l views.VertexLinks, vv live.VertexView) views.VertexLinks {
	if !hasWatermarks(vv) && vv.Color != "watermark" {
		l.ColorWatermark = ""
	}
	return l
}

func newVertexPage(in vertexPageInput, vv live.VertexView) views.VertexPage {
	pl := in.links
	p := views.VertexPage{
		Live:     views.Live{Topic: in.topic, Stale: stale(vv.Flink) || (vv.KafkaAge != nil && stale(*vv.KafkaAge))},
		Replaced: in.replaced, Cluster: vv.Cluster,
		Job:  views.Anchor{Text: vv.JobName, URL: pl.url(views.JobPath(vv.JobID))},
		Name: vv.Name, Parallelism: strconv.Itoa(vv.Parallelism),
		Peers: in.peers,
		Bar:   liveBar(vv.Flink, vv.KafkaAge),
		Error: vv.Error, LagMethod: vv.Kafka && !pl.embed, Links: vertexLinksOf(in.hrefs, vv),
		Ended: jobEndedText(vv.JobState, vv.LastReported),
	}
	if vv.Withheld != nil {
		p.Withheld = withheldText(vv.Withheld, vv.Parallelism)
	}
	// The note says where the watermark stands unless the why panel,
	// shown, says what holds it back; embedded, only what holds it back.
	held, whyShown := whyHolds(vv), in.parts.shows(partWhy)
	if s := holderText(vv.Name, vv.EventTime); s != "" && !(whyShown && held) && (held || !in.links.embed) {
		t := text("watermark", s)
		p.Watermark = &t
	}
	if vv.Keyed {
		p.MaxParallelism = strconv.Itoa(vv.MaxParallelism)
		p.SQL = sqlKeyNoteOf(vv, pl.url)
	}
	if vv.Group != nil {
		p.Group = &views.Group{Name: vv.Group.Name, How: groupHow(vv.Group), KafkaUI: pl.kafkaGroup(vv.Cluster, vv.Group.Name)}
	}
	if vv.Cluster != "" {
		for _, t := range vv.Topics {
			p.Topics = append(p.Topics, views.Anchor{Text: t, URL: pl.url(views.TopicPath(vv.Cluster, t))})
		}
	}
	if vv.Restored != nil {
		p.Restored = restoredText(vv.Restored)
	}
	p.HighlightNote = in.highlightNote
	for i, f := range vv.Figures {
		k := "f/" + strconv.Itoa(i) + "/"
		label, value, note := figureWords(vv, f)
		p.Figures = append(p.Figures, views.FigureCard{Label: label, Kind: string(f.Kind), Text: text(k+"value", value), Note: text(k+"note", note),
			Level: views.Meter{Key: k + "level", Value: levelValue(figureLevel(vv, f))}})
	}
	if pr := vv.Prediction; pr != nil {
		v := &views.PredictionCard{
			Drift: pr.Drift > 0, Kind: string(pr.Headline.Kind), KindClass: verdictClass(pr.Headline.Kind), Summary: text("pr/summary", predictionSummary(*pr, vv.Withheld)),
			Counts: text("pr/counts", headlineCounts(pr.Headline)), Notes: noteTexts(pr.Notes), Source: pr.Source,
		}
		if len(pr.History) > 0 {
			v.History = "Parallelism history " + historyText(pr.History) + ", " + historySource(*pr, vv.Lineage) + "."
		}
		p.Prediction = v
	}
	p.Why = whyPanel(pl.base, vv, in.keyed, in.at, !in.update)
	if lv := vv.Lineage; lv != nil && len(lv.Events) > 0 {
		l := &views.LineagePanel{Intro: lineageIntro(*lv)}
		for _, run := range foldDiscoveries(lv.Events) {
			e := run[0]
			row := views.LineageRow{
				Kind: string(e.Kind), When: e.At.UTC().Format("2006-01-02 15:04:05Z"), Event: eventText(e),
				Job: views.Anchor{Text: shortID(e.JobID), URL: pl.url(views.JobPath(e.JobID))}, From: eventFrom(e), Moved: eventMoved(e),
				Cause: causeText(e.Cause),
			}
			if len(run) > 1 {
				row.When, row.Event = foldedWhen(run), discoveriesText(run)
			}
			l.Events = append(l.Events, row)
		}
		p.Lineage = l
	}
	if in.sandboxRestore != "" && vv.Source && !pl.embed {
		p.SandboxRestore = &views.SandboxRestore{Action: in.sandboxRestore, Job: vv.JobName, Parallelism: strconv.Itoa(vv.Parallelism + 2)}
	}
	if vv.Kafka {
		p.Grid = sourceGrid(vv, in)
	} else {
		p.Table = subtaskTable(pl, vv)
	}
	if w := worstSubtask(vv); w >= 0 {
		p.Worst = strconv.Itoa(w)
	}
	// The shape is the whole page's, embedded or not, whatever parts it
	// shows: the pages of one topic share their updates.
	p.Shape = views.ShapeOf(p)
	if pl.embed {
		// An embedded page has a one-line head (views.embedHead) in place
		// of the context, the live bar and the prediction card: it names
		// the group, not how it was found, and leaves the model to the
		// page of its own it links to.
		if p.Group != nil {
			p.Group.How = ""
		}
		p.Restored = ""
		p.Prediction = nil
	}
	hideParts(&p, in.parts)
	if !pl.embed {
		rowWhy(&p)
		if !in.update { // its figures are copies, which an update leaves out
			p.Brief = vertexBrief(&p, vv)
		}
	}
	return p
}

// rowWhy repeats under the highlighted row of a source's grid the why
// panel's first line about its subtask: an alert's link shows the row, its
// lag, its loss, when it catches up and why, together. The sentences are
// copies, updated with the panel's; an embedded page, which has no
// explanations, gets none.
func rowWhy(p *views.VertexPage) {
	if p.Why == nil || p.Grid == nil {
		return
	}
	for i := range p.Grid.Rows {
		r := &p.Grid.Rows[i]
		if !r.Highlight {
			continue
		}
		for _, c := range p.Why.Causes {
			if !c.Hot || !slices.Contains(c.Subtasks, r.Subtask) {
				continue
			}
			for _, cl := range c.Clauses {
				r.Why = append(r.Why, views.WhyCopy{Kind: cl.Kind, Text: views.Copy{Key: cl.Text.Key, Text: cl.Text.Text}})
			}
			break
		}
	}
}

// sparkValues is a sparkline's samples with anything not finite unknown,
// to a tenth (24 pixels show no more, and an update carries up to 360
// samples per sparkline: 57.3, not 57.333333333333336).
func sparkValues(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			x = -1
		}
		out[i] = math.Round(x*10) / 10
	}
	return out
}

// sparkTimes is the sparklines' sample times (Unix seconds) to the
// millisecond.
func sparkTimes(at []float64) []float64 {
	out := make([]float64, len(at))
	for i, x := range at {
		out[i] = math.Round(x*1000) / 1000
	}
	return out
}

// watermarkSparks is each subtask's event-time lag sparkline, by subtask,
// on one scale; nil when the job reports no watermarks.
func watermarkSparks(vv live.VertexView, window string) map[int]views.Spark {
	if !hasWatermarks(vv) {
		return nil
	}
	top := 0.0
	for _, r := range vv.Subtasks {
		top = max(top, sparkMax(r.SparkWatermark))
	}
	label := "event-time lag, " + window + ", scale 0 to " + format.Seconds(top)
	out := make(map[int]views.Spark, len(vv.Subtasks))
	for _, r := range vv.Subtasks {
		out[r.Subtask] = views.Spark{Key: "s/" + strconv.Itoa(r.Subtask) + "/spark/wm", Values: sparkValues(r.SparkWatermark), Max: top, Label: label}
	}
	return out
}

// sparkAxisKey is the key of the sparklines' times on a vertex page.
const sparkAxisKey = "spark/t"

// sparkMax is a sparkline's highest known sample, 0 when none.
func sparkMax(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		if !math.IsInf(x, 0) && x > m { // NaN is not greater
			m = x
		}
	}
	return m
}

// sparkWindow is the span the sparklines cover: "last 15 min", "last
// 40 s", or, with fewer than two samples, "no history yet".
func sparkWindow(at []float64) string {
	if len(at) < 2 {
		return "no history yet"
	}
	span := at[len(at)-1] - at[0]
	if span < 60 {
		return "last " + strconv.Itoa(int(math.Round(span))) + " s"
	}
	return "last " + strconv.Itoa(int(math.Round(span/60))) + " min"
}

func sourceGrid(vv live.VertexView, in vertexPageInput) *views.SourceGrid {
	hl := in.cell
	g := &views.SourceGrid{Color: vv.Color, ByRate: vv.Color == "rate", EventTime: hasWatermarks(vv), Labels: cellLabels(vv), Values: "its lag in records"}
	switch vv.Color {
	case "rate":
		g.Values = "the records per second produced to it"
	case "watermark":
		g.Color, g.Values = "event-time lag", "its event-time lag (now − its watermark)"
	}
	if g.ByRate {
		for i := range 3 {
			g.Legend[i] = "<" + format.Count(vv.Thresholds[i])
		}
		g.Legend[3] = "≥" + format.Count(vv.Thresholds[2])
	} else {
		// By lag, cells are coloured by time behind; one whose time is
		// unknown by its records.
		for i := range 3 {
			g.Legend[i] = "< " + stepTime(vv.LagTimeSteps[i])
		}
		g.Legend[3] = "≥ " + stepTime(vv.LagTimeSteps[2])
		g.LegendNote = "time behind; where it is unknown, records: <" + format.Count(vv.Thresholds[0]) +
			", <" + format.Count(vv.Thresholds[1]) + ", <" + format.Count(vv.Thresholds[2]) + ", ≥" + format.Count(vv.Thresholds[2])
		if vv.Color == "watermark" {
			g.LegendNote = "event time behind now: the split's watermark (observed) on Flink 2.1+, before that the produce time of the last record read (estimated); uncoloured: no watermark yet"
			if !g.EventTime {
				g.LegendNote = "this job reports no watermarks (no watermark strategy, or none emitted yet): no cell has an event-time lag"
			}
		}
	}
	topicIndex := make(map[string]string, len(vv.Topics))
	for i, t := range vv.Topics {
		topicIndex[t] = strconv.Itoa(i)
	}
	// Every sparkline of a column has one scale, 0 to the column's
	// highest sample, so that a small blip on a healthy subtask is small.
	var lagMax, rateMax float64
	for _, r := range vv.Subtasks {
		lagMax, rateMax = max(lagMax, sparkMax(r.SparkLag)), max(rateMax, sparkMax(r.SparkRate))
	}
	window := sparkWindow(vv.SparkTimes)
	wmSparks := watermarkSparks(vv, window)
	g.SparkAxis = views.Spark{Key: sparkAxisKey, Values: sparkTimes(vv.SparkTimes)}
	g.SparkWindow = [2]views.Text{text("spark/window/lag", window), text("spark/window/rate", window)}
	lagLabel := "lag, " + window + ", scale 0 to " + format.Records(lagMax)
	rateLabel := "records out per second, " + window + ", scale 0 to " + format.Rate(rateMax)
	rows := vv.Subtasks
	if in.grid != (gridQuery{}) {
		rows = gridRows(vv.Subtasks, in.grid)
	}
	if in.gridURL != nil && !in.links.embed { // an embedded page has no forms
		g.Controls = gridControls(vv, in.grid, rows, in.at, in.gridURL, in.query)
	}
	if len(rows) == 0 && len(vv.Subtasks) > 0 {
		g.Empty = "No row to show: " + in.grid.emptyText()
	}
	// The rows' cells are cut from one array, and their keys and
	// partition numbers from one string ("c1.12": the topic's index in
	// the view's topics and the partition), made once: a source may read
	// ten thousand partitions.
	total := 0
	for _, r := range rows {
		total += len(r.Partitions)
	}
	cells := make([]views.GridCell, 0, total)
	keyBuf := make([]byte, 0, 8*total)
	keyEnds := make([]int, 0, 2*total)
	for _, r := range rows {
		for _, c := range r.Partitions {
			keyBuf = append(keyBuf, 'c')
			if ti, ok := topicIndex[c.Topic]; ok {
				keyBuf = append(keyBuf, ti...)
			} else {
				keyBuf = append(keyBuf, c.Topic...)
			}
			keyBuf = append(keyBuf, '.')
			keyEnds = append(keyEnds, len(keyBuf))
			keyBuf = strconv.AppendInt(keyBuf, int64(c.Partition), 10)
			keyEnds = append(keyEnds, len(keyBuf))
		}
	}
	keys, kn, kfrom := string(keyBuf), 0, 0
	for _, r := range rows {
		n := strconv.Itoa(r.Subtask)
		k := "s/" + n + "/"
		row := views.SourceRow{
			// Its cells' verdicts (a topic filter shows some of them).
			Subtask: n, ID: "subtask-" + n, Highlight: r.Highlight, Drift: live.TallyOf(r.Partitions, r.Subtask).Drift > 0, Lossy: r.RecordsLost > 0,
			Rate:       text(k+"rate", format.Rate(r.Rate)),
			RecordsOut: text(k+"out", format.Rate(r.RecordsOut)),
			Lag:        text(k+"lag", format.Int(r.Lag)),
			Lost:       text(k+"lost", lostNote(r.RecordsLost)),
			LostWhen:   text(k+"lostwhen", lostWhen(r)),
			Concern:    text(k+"concern", concernText(r.Concern)),
			Level:      views.Meter{Key: k + "level", Value: levelValue(r.Concern.Level())},
			LagTime:    text(k+"lagtime", lagTime(r)),
			CatchUp:    text(k+"catchup", rowCatchUp(r)),
			Busy:       views.Meter{Key: k + "meter", Value: meterValue(r.Busy)},
			BusyText:   text(k+"busy", format.Ratio(r.Busy)),
			SparkLag:   views.Spark{Key: k + "spark/lag", Values: sparkValues(r.SparkLag), Max: lagMax, Label: lagLabel},
			SparkRate:  views.Spark{Key: k + "spark/rate", Values: sparkValues(r.SparkRate), Max: rateMax, Label: rateLabel},
			Vs:         text(k+"vs", rowVs(vv, r)),
		}
		if g.EventTime {
			row.Watermark = text(k+"wm", subtaskWatermarkText(r.Watermark))
			row.SparkWatermark = wmSparks[r.Subtask]
		}
		row.Cells = cells[len(cells) : len(cells) : len(cells)+len(r.Partitions)]
		cells = cells[:len(cells)+len(r.Partitions)]
		for _, c := range r.Partitions {
			// A partition is shown once on the page.
			key, part := keys[kfrom:keyEnds[kn+1]], keys[keyEnds[kn]:keyEnds[kn+1]]
			kfrom, kn = keyEnds[kn+1], kn+2
			row.Cells = append(row.Cells, views.GridCell{
				Topic: c.Topic, Partition: part, Label: c.Label,
				Miss: c.Predicted >= 0 && c.Predicted != r.Subtask, Uncertain: c.Uncertain || c.OwnerUndetermined,
				Highlight: hl != nil && hl.topic == c.Topic && hl.partition == c.Partition,
				Lost:      c.Reading.Lost != nil && c.Reading.Lost.Records > 0,
				Predicted: int32(c.Predicted),
				Title:     staticCellTitle(in.update, c, r.Subtask),
				Live: views.LiveCell{Key: key, Level: c.Level, Text: cellText(vv, c),
					State: stateClass(c.Reading.State), Title: cellReading(c, vv.Color == "watermark")},
			})
		}
		g.Rows = append(g.Rows, row)
	}
	return g
}

// staticCellTitle is cellTitle, or "" for a page built for its live
// update, which carries no static title: thousands of strings saved.
func staticCellTitle(update bool, c live.PartitionCell, subtask int) string {
	if update {
		return ""
	}
	return cellTitle(c, subtask)
}

// highlightNote says when ?highlight= names a subtask or a partition the
// vertex does not have: a link copied before a rescale, or from another
// vertex. The page then marks nothing, and says why rather than failing
// silently. "" when the highlight is on the page or none was asked for.
func highlightNote(vv live.VertexView, q live.VertexQuery) string {
	if q.Highlight >= 0 && !slices.ContainsFunc(vv.Subtasks, func(r live.SubtaskRow) bool { return r.Subtask == q.Highlight }) {
		n := len(vv.Subtasks)
		switch n {
		case 0:
			return fmt.Sprintf("Subtask %d is not highlighted: Flink lists no subtasks of this vertex yet.", q.Highlight)
		case 1:
			return fmt.Sprintf("Subtask %d is not one of this vertex's subtasks: it has 1, subtask 0; the job may have been rescaled since the link was made.", q.Highlight)
		}
		return fmt.Sprintf("Subtask %d is not one of this vertex's %d subtasks (0–%d); the job may have been rescaled since the link was made.", q.Highlight, n, n-1)
	}
	if q.HighlightTopic == "" {
		return ""
	}
	what := fmt.Sprintf("Partition %d of topic %s", q.HighlightPartition, quote.Clip(q.HighlightTopic))
	if !vv.Kafka {
		return what + " is not highlighted: this vertex reads no Kafka partitions; a partition is highlighted on its Kafka source's page."
	}
	of := 0
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			if c.Topic != q.HighlightTopic {
				continue
			}
			if c.Partition == q.HighlightPartition {
				return ""
			}
			of++
		}
	}
	if of == 0 {
		return what + " is not one this source reads: Flink's metrics list no partition of that topic here."
	}
	return fmt.Sprintf("%s is not one of the %d partitions of that topic this source reads; the topic may have fewer partitions than the link assumes.", what, of)
}

// stepTime is a colour step's time: "10 s", "1 min", "5 min".
func stepTime(sec float64) string {
	if sec >= 60 && int64(sec)%60 == 0 {
		return strconv.FormatInt(int64(sec)/60, 10) + " min"
	}
	return strconv.FormatFloat(sec, 'f', -1, 64) + " s"
}

func subtaskTable(pl pageLinks, vv live.VertexView) *views.SubtaskTable {
	t := &views.SubtaskTable{Keyed: vv.Keyed, EventTime: hasWatermarks(vv), Checkpoint: text("ckpt/of", checkpointOf(vv.Checkpoint))}
	var wmSparks map[int]views.Spark
	if t.EventTime {
		window := sparkWindow(vv.SparkTimes)
		wmSparks = watermarkSparks(vv, window)
		t.SparkAxis = views.Spark{Key: sparkAxisKey, Values: sparkTimes(vv.SparkTimes)}
		t.SparkWindow = text("spark/window/wm", window)
	}
	slow := -1
	if vv.Checkpoint != nil {
		slow = vv.Checkpoint.Slowest
	}
	keyed := vv.Keyed && vv.MaxParallelism > 0
	if keyed {
		s := &views.KeyGroupBar{Label: "key groups 0–" + strconv.Itoa(vv.MaxParallelism-1)}
		for _, r := range vv.Subtasks {
			kg := r.KeyGroups
			if kg == nil {
				continue
			}
			n := strconv.Itoa(r.Subtask)
			seg := views.KeyGroupSegment{
				Class: "k" + strconv.Itoa(r.Subtask%2),
				Title: "subtask " + n + ": key groups " + strconv.Itoa(kg.Start) + "–" + strconv.Itoa(kg.End) + " (" + strconv.Itoa(kg.Size) + ")",
				X:     kgPct(kg.Start, vv.MaxParallelism), Width: kgPct(kg.Size, vv.MaxParallelism),
				Highlight: r.Highlight,
			}
			// A number fits when the segment is wide enough, or the strip
			// has few segments.
			if kg.Size*vv.Parallelism*40 >= vv.MaxParallelism*3 || vv.Parallelism <= 24 {
				seg.Label = n
			}
			s.Segments = append(s.Segments, seg)
		}
		t.Strip = s
	}
	for _, r := range vv.Subtasks {
		n := strconv.Itoa(r.Subtask)
		k := "s/" + n + "/"
		row := views.SubtaskTableRow{
			Subtask: n, ID: "subtask-" + n, Highlight: r.Highlight,
			In:            text(k+"in", format.Rate(r.RecordsIn)),
			Out:           text(k+"out", format.Rate(r.RecordsOut)),
			Busy:          views.Meter{Key: k + "meter", Value: meterValue(r.Busy)},
			BusyText:      text(k+"busy", format.Ratio(r.Busy)),
			BackPressured: text(k+"bp", format.Ratio(r.BackPressured)),
			State:         text(k+"state", format.Bytes(r.StateSize)),
			Concern:       text(k+"concern", concernText(r.Concern)),
			Level:         views.Meter{Key: k + "level", Value: levelValue(r.Concern.Level())},
			Checkpoint:    text(k+"ckpt", format.Unknown),
			Alignment:     text(k+"align", format.Unknown),
			StartDelay:    text(k+"delay", format.Unknown),
			Slowest:       r.Subtask == slow,
		}
		if t.EventTime {
			row.Watermark = text(k+"wm", subtaskWatermarkText(r.Watermark))
			row.SparkWatermark = wmSparks[r.Subtask]
		}
		if c := r.Checkpoint; c != nil {
			row.Checkpoint.Text, row.StartDelay.Text = format.Millis(c.DurationMs), format.Millis(c.StartDelayMs)
			row.Alignment.Text = format.Millis(c.AlignmentMs)
			if c.Unaligned {
				row.Alignment.Text += " (unaligned)"
			}
		}
		if vv.Keyed && r.KeyGroups != nil {
			row.KeyGroups = strconv.Itoa(r.KeyGroups.Start) + "–" + strconv.Itoa(r.KeyGroups.End)
			row.KeyGroupSize = "(" + strconv.Itoa(r.KeyGroups.Size) + ")"
		}
		t.Rows = append(t.Rows, row)
	}
	if vv.Keyed && !pl.embed {
		t.Lookup = &views.KeyLookupForm{Action: pl.base + "/keys", Parallelism: strconv.Itoa(vv.Parallelism), MaxParallelism: strconv.Itoa(vv.MaxParallelism)}
		if vv.SQL != nil {
			t.Lookup.SQL = true
			if vv.SQL.Named && len(vv.SQL.Columns) > 0 {
				t.Lookup.Columns = sqlColumnList(vv.SQL.Columns[0])
			}
		}
	}
	return t
}

// newTopicPage builds a topic page.
func newTopicPage(pl pageLinks, tv live.TopicView) views.TopicPage {
	p := views.TopicPage{
		KafkaUI: pl.kafkaTopic(tv.Cluster, tv.Name),
		Live:    views.Live{Topic: topicTopic(tv.Cluster, tv.Name), Stale: stale(tv.Age)},
		Cluster: tv.Cluster, Name: tv.Name, Partitions: strconv.Itoa(len(tv.Partitions)),
		Produced: text("rate", format.Rate(tv.Rate)),
		Bar:      liveBar(tv.Age, nil), Error: tv.Error,
	}
	if tr := tv.Retention; tr != nil {
		p.Retention = text("retention", retentionText(*tr))
		age := format.Seconds(float64(tr.Age.Seconds)) + " ago"
		if tr.Age.Stale || tr.Age.Err != "" {
			age += " (the latest read failed)"
		}
		if len(tr.Errors) > 0 {
			age += " · " + strings.Join(tr.Errors, "; ")
		}
		p.RetentionAge = text("retention-age", age)
	}
	seen := map[string]bool{}
	for i, g := range tv.Groups {
		gk := "g/" + strconv.Itoa(i) + "/"
		title := groupStateTitle(g.State)
		p.Groups = append(p.Groups, views.TopicGroupHead{Name: g.Name, State: orDash(g.State), Title: title, KafkaUI: pl.kafkaGroup(tv.Cluster, g.Name),
			Readers: text(gk+"readers", statesText(g.States)), Lost: text(gk+"lost", lostNote(g.RecordsLost)), Lossy: g.RecordsLost > 0})
		if title != "" && !seen[g.State] {
			seen[g.State] = true
			p.States = append(p.States, title)
		}
	}
	for _, r := range tv.Partitions {
		n := strconv.Itoa(int(r.Partition))
		k := "p/" + n + "/"
		row := views.TopicTableRow{
			Partition: n, Stale: r.Stale,
			Start:    text(k+"start", format.Int(r.Start)),
			End:      text(k+"end", format.Int(r.End)),
			Produced: text(k+"rate", format.Rate(r.Rate)),
		}
		for i, g := range r.Groups {
			gk := k + "g/" + strconv.Itoa(i) + "/"
			reader := "–"
			if g.Committed >= 0 {
				reader = readerText(g.Reading)
			}
			row.Groups = append(row.Groups, views.GroupLag{Lag: text(gk+"lag", format.Int(g.Lag)), LagTime: text(gk+"time", groupLagTime(g)),
				Reader: text(gk+"reader", reader), Lost: g.Reading.Lost != nil && g.Reading.Lost.Records > 0})
		}
		p.Rows = append(p.Rows, row)
	}
	p.Shape = views.ShapeOf(p)
	return p
}

// replacedAge is the age the replaced-job banner counts up.
func replacedAge(at, now time.Time) views.LiveAge {
	return ageOf("age:replaced", live.Age{At: at, Seconds: max(0, int64(now.Sub(at)/time.Second))})
}
