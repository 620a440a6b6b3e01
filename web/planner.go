package web

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/strategy"
	"github.com/skewscope/skewscope/views"
)

const (
	// maxPlanBody bounds a posted planner form: big enough to read a 10 MB
	// paste (URL-encoded, up to three times its size) and answer it with an
	// inline message.
	maxPlanBody = 32 << 20
	// maxRedirectQuery is the longest query a posted form is redirected
	// to; a longer plan is rendered in place (it could not be bookmarked
	// in most browsers and proxies anyway).
	maxRedirectQuery = 32 << 10
	// compactCells: grids with more partitions than this draw cells
	// without their partition numbers.
	compactCells = 2000
	// candidateLimit is how many ranked parallelisms the planner lists.
	candidateLimit = 8
	// listMoves caps the partition moves listed by name.
	listMoves = 60
	// stateRows caps the per-subtask keyed-state table.
	stateRows = 256
	// stripTitles: key-group strips of more subtasks than this draw one
	// segment that summarises them (the grid rows say each subtask's range).
	stripTitles = 256
)

// servePlan answers GET /plan (inputs in the query) and POST /plan (the
// form). A valid post is redirected to the equivalent GET URL, so every
// plan can be bookmarked, pasted into a ticket or put into an alert.
func (s *Server) servePlan(w http.ResponseWriter, r *http.Request) (int, templ.Component, error) {
	var vals url.Values
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxPlanBody)
		if err := r.ParseForm(); err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				f := &planForm{Errors: map[string]string{"rates": fmt.Sprintf("the form is over %d MB; paste at most %d MB of rates", maxPlanBody>>20, maxRatesBytes>>20)}}
				return http.StatusRequestEntityTooLarge, views.Planner(s.newPlannerPage(r, f, nil)), nil
			}
			return 0, nil, badInput("form", "%v", err)
		}
		vals = r.PostForm
	} else {
		vals = r.URL.Query()
	}
	embed := vals.Get("embed") == "1"
	if len(vals) == 0 || (len(vals) == 1 && embed) {
		return http.StatusOK, views.Planner(s.newPlannerPage(r, newEmptyPlanForm(), nil)), nil
	}
	f := parsePlanForm(vals)
	if len(f.Errors) > 0 {
		return http.StatusBadRequest, views.Planner(s.newPlannerPage(r, f, nil)), nil
	}
	if r.Method == http.MethodPost && r.Header.Get("X-Skewscope-Fragment") == "" {
		q := f.canonicalQuery()
		if embed {
			q.Set("embed", "1")
		}
		if enc := q.Encode(); len(enc) <= maxRedirectQuery {
			http.Redirect(w, r, s.prefix+"/plan?"+enc, http.StatusSeeOther)
			return 0, nil, nil
		}
	}
	pl, nowRestore, err := assign.MakePlanAfterRestores(f.planInput(), f.planHistory())
	if err != nil {
		f.fail("parallelism", "%v", err)
		return http.StatusBadRequest, views.Planner(s.newPlannerPage(r, f, nil)), nil
	}
	in := f.recommendInput(pl.MaxParallelism)
	cands, err := assign.Recommend(in)
	if err != nil {
		return 0, nil, fmt.Errorf("recommend: %w", err)
	}
	return http.StatusOK, views.Planner(s.newPlannerPage(r, f, &planResult{plan: pl, nowRestore: nowRestore, cands: cands, upper: in.UpperLimit})), nil
}

// planHistory is the source's parallelism history for the plan: the one
// given, or just the current parallelism (a fresh start).
func (f *planForm) planHistory() []int {
	if len(f.history) > 1 {
		return f.history
	}
	return []int{f.current}
}

func newEmptyPlanForm() *planForm {
	return &planForm{Mode: "fresh", Strategy: strategy.Default, Color: "topic"}
}

func (f *planForm) planInput() assign.PlanInput {
	in := assign.PlanInput{
		Topics: f.topics, Rates: f.rates, Current: f.current, Target: f.target,
		MaxParallelism: f.maxP, Start: f.mode, StateBytes: f.stateBytes,
	}
	if f.strat.Name != strategy.Default {
		in.Assign = f.strat.Assign
	}
	return in
}

// recommendInput sweeps parallelisms up to the partition count, but not
// beyond what a user would consider for this job: twice the larger of
// current and target, and at least 64.
func (f *planForm) recommendInput(maxP int) assign.RecommendInput {
	total := 0
	for _, t := range f.topics {
		total += t.Partitions
	}
	upper := min(total, maxP, max(2*max(f.current, f.target), 64))
	return assign.RecommendInput{
		Topics: f.topics, Rates: f.rates, MaxParallelism: maxP,
		Current: f.current, Target: f.target, UpperLimit: upper, Limit: candidateLimit,
	}
}

type planResult struct {
	plan assign.Plan
	// nowRestore is the restore model's current layout when the form gives
	// a restore history, nil for a fresh start.
	nowRestore *assign.RestoreResult
	cands      []assign.Candidate
	upper      int
}

// newPlannerPage builds the planner's view model.
func (s *Server) newPlannerPage(r *http.Request, f *planForm, res *planResult) views.PlannerPage {
	l := s.layout(r, "Planner", "plan")
	p := views.PlannerPage{Layout: l, Form: newPlannerForm(l, f)}
	if res != nil {
		v := newPlanView(l, f, res)
		p.Plan = &v
	}
	return p
}

func newPlannerForm(l views.Layout, f *planForm) views.PlannerForm {
	pf := views.PlannerForm{
		Action: l.URL("/plan"), Topics: f.Topics, Rates: f.Rates, State: f.State,
		Parallelism: f.Parallelism, Target: f.Target, MaxParallelism: f.MaxParallelism,
		Highlight: f.Highlight, History: f.History, Errors: f.Errors,
	}
	if l.Embed {
		pf.Action += "?embed=1"
	}
	if f.current > 0 {
		d, _ := assign.DefaultMaxParallelism(f.current)
		pf.MaxPHint = strconv.Itoa(d)
		pf.MaxPNote = fmt.Sprintf("Empty: %d, Flink's default for p=%d.", d, f.current)
	} else {
		pf.MaxPNote = "Empty: Flink's default for the current parallelism."
	}
	pf.Modes = []views.Option{
		{Value: "fresh", Label: "Fresh start (no state)", Selected: f.Mode != "restore"},
		{Value: "restore", Label: "Restore from savepoint", Selected: f.Mode == "restore"},
	}
	for _, st := range strategy.All() {
		pf.Strategies = append(pf.Strategies, views.Option{Value: st.Name, Label: st.Label, Selected: st.Name == f.Strategy})
	}
	pf.Colors = []views.Option{
		{Value: "topic", Label: "Topic", Selected: f.Color != "rate"},
		{Value: "rate", Label: "Rate", Selected: f.Color == "rate"},
	}
	return pf
}

// maxLinkQuery is the longest query the planner puts into links on the
// page. Plans with longer inputs (thousands of pasted rates) apply
// candidates through the form instead, so the page does not carry the rates
// once per link.
const maxLinkQuery = 8 << 10

// planURL is the planner URL for f with some parameters replaced, or ""
// when that URL would be too long to be a link.
func planURL(l views.Layout, f *planForm, set map[string]string) string {
	if f.queryLen() > maxLinkQuery {
		return ""
	}
	q := f.canonicalQuery()
	for k, v := range set {
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
	}
	return l.URL("/plan?" + q.Encode())
}

func newPlanView(l views.Layout, f *planForm, res *planResult) views.PlanView {
	pl := res.plan
	hasRates := pl.HasRates
	topicIdx := map[string]int{}
	for i, t := range f.topics {
		topicIdx[t.Name] = i
	}
	maxRate := 0.0
	for _, r := range f.rates {
		maxRate = max(maxRate, r)
	}
	hl := parseHighlight(f.Highlight)
	nowMoves := map[assign.TopicPartition]bool{}
	moves := pl.MovesFresh.Moves
	if pl.Start == assign.StartRestore {
		moves = pl.MovesRestore.Moves
	}
	for _, m := range moves {
		nowMoves[m.Partition] = true
	}
	var uncertain map[assign.TopicPartition]bool
	if pl.Restore != nil && len(pl.Restore.Uncertain) > 0 {
		uncertain = map[assign.TopicPartition]bool{}
		for _, tp := range pl.Restore.Uncertain {
			uncertain[tp] = true
		}
	}
	gc := gridContext{f: f, topicIdx: topicIdx, maxRate: maxRate, hasRates: hasRates, highlight: hl, maxP: pl.MaxParallelism}
	v := views.PlanView{
		SelfURL:  planURL(l, f, map[string]string{"embed": ""}),
		EmbedURL: planURL(l, f, map[string]string{"embed": "1"}),
	}
	v.Embedded = l.Embed
	if v.SelfURL == "" {
		v.TooLongForLink = fmt.Sprintf("This plan's inputs are %d KB, too long for a link; candidates apply through the form.", f.queryLen()>>10)
	}
	nowMode := "fresh start"
	var nowUnc map[assign.TopicPartition]bool
	if nr := res.nowRestore; nr != nil {
		nowMode = "restored: " + strings.ReplaceAll(assign.FormatHistory(nr.History), ",", " → ")
		if len(nr.Uncertain) > 0 {
			nowUnc = map[assign.TopicPartition]bool{}
			for _, tp := range nr.Uncertain {
				nowUnc[tp] = true
			}
		}
	}
	v.Now = gc.grid("now", "Now", pl.Now, nowMode, nil, nowUnc)
	thenMode := "fresh start"
	var thenUnc map[assign.TopicPartition]bool
	if pl.Start == assign.StartRestore {
		thenMode = fmt.Sprintf("restored from a savepoint taken at p=%d", f.current)
		thenUnc = uncertain
	}
	v.Then = gc.grid("target", "Target", pl.Target, thenMode, nowMoves, thenUnc)

	v.Figures = planFigures(pl, hasRates)
	v.Why = explainSkew(f, pl)
	v.Strip = keyGroupStrip(pl)
	v.State = stateView(pl)
	v.Moves = movesView(f, pl)
	v.Candidates = candidatesView(l, f, res)
	v.Legend = legend(f, maxRate, pl)
	v.Formula, v.Notes = formula(f, pl)
	jq := url.Values{}
	for _, t := range f.topics {
		jq.Add("topic", t.Name+":"+strconv.Itoa(t.Partitions))
	}
	jq.Set("parallelism", strconv.Itoa(f.target))
	jq.Set("strategy", f.strat.Name)
	if pl.Start == assign.StartRestore {
		jq.Set("mode", "restore")
		jq.Set("from", assign.FormatHistory(f.planHistory()))
	}
	v.JSONURL = l.URL("/api/v1/assignment?" + jq.Encode())
	if f.strat.Comparison {
		v.Comparison = "Comparison: " + f.strat.Label + ". This is not how Flink's KafkaSource assigns partitions. " + f.strat.Description
	}
	return v
}

type gridContext struct {
	f         *planForm
	topicIdx  map[string]int
	maxRate   float64
	hasRates  bool
	highlight highlight
	maxP      int
}

// highlight is a parsed ?highlight=subtask:N or partition:TOPIC:N.
type highlight struct {
	subtask   int // -1: none
	partition *assign.TopicPartition
}

func parseHighlight(s string) highlight {
	h := highlight{subtask: -1}
	switch {
	case strings.HasPrefix(s, "subtask:"):
		if n, err := strconv.Atoi(s[len("subtask:"):]); err == nil && n >= 0 {
			h.subtask = n
		}
	case strings.HasPrefix(s, "partition:"):
		rest := s[len("partition:"):]
		if i := strings.LastIndexByte(rest, ':'); i > 0 {
			if n, err := strconv.Atoi(rest[i+1:]); err == nil && n >= 0 {
				h.partition = &assign.TopicPartition{Topic: rest[:i], Partition: int32(n)}
			}
		}
	}
	return h
}

func (gc gridContext) grid(id, title string, side assign.PlanSide, mode string, moved, unc map[assign.TopicPartition]bool) views.GridView {
	g := views.GridView{ID: id, Title: title, Parallelism: side.Parallelism, Mode: mode}
	total := 0
	for _, ps := range side.Assignment.Subtasks {
		total += len(ps)
	}
	g.Compact = total > compactCells
	load := side.Assignment.Counts()
	sk := side.PartitionSkew
	g.Unit = "partitions"
	if gc.hasRates {
		load, sk, g.Unit = side.Load, side.RateSkew, "records/s"
	}
	maxLoad := 0.0
	for _, x := range load {
		maxLoad = max(maxLoad, x)
	}
	g.Rows = make([]views.GridRow, side.Parallelism)
	cellBuf := make([]views.Cell, total)
	names := make([]string, len(gc.f.topics)) // isolated names, once per topic
	colour := make([]string, len(gc.f.topics))
	for t, tc := range gc.f.topics {
		names[t] = isolate(tc.Name)
		colour[t] = "c t" + strconv.Itoa(t%8)
	}
	less := func(a, b assign.TopicPartition) int {
		return cmp.Or(cmp.Compare(gc.topicIdx[a.Topic], gc.topicIdx[b.Topic]), cmp.Compare(a.Partition, b.Partition))
	}
	var sb strings.Builder
	for i, ps := range side.Assignment.Subtasks {
		if !slices.IsSortedFunc(ps, less) {
			ps = slices.Clone(ps)
			slices.SortFunc(ps, less)
		}
		kr := side.Ranges[i]
		row := views.GridRow{
			Subtask: i, Idle: len(ps) == 0, Load: math.Round(load[i]), LoadMax: math.Ceil(max(maxLoad, 1)),
			LoadLow: math.Round(sk.Mean * 1.1), LoadHigh: math.Round(sk.Mean * 1.25),
			LoadText:  format.Num(load[i]),
			KeyGroups: strconv.Itoa(kr.Start) + "–" + strconv.Itoa(kr.End),
			Busiest:   side.Parallelism > 1 && maxLoad > 0 && i == sk.Busiest,
			Highlight: i == gc.highlight.subtask,
			Cells:     cellBuf[:len(ps):len(ps)],
		}
		cellBuf = cellBuf[len(ps):]
		for j, tp := range ps {
			t := gc.topicIdx[tp.Topic]
			isMoved, isUnc := moved[tp], unc[tp]
			c := views.Cell{Class: colour[t], Moved: isMoved, Uncertain: isUnc}
			part := strconv.Itoa(int(tp.Partition))
			sb.Reset()
			sb.WriteString(names[t])
			sb.WriteByte('-')
			sb.WriteString(part)
			if !g.Compact {
				// Large grids keep the hover text short; the row's
				// header carries the subtask and key-group range.
				c.Label = part
				sb.WriteString(" · subtask ")
				sb.WriteString(strconv.Itoa(i))
			}
			if gc.hasRates {
				r := gc.f.rates[tp]
				sb.WriteString(" · ")
				sb.WriteString(format.Num(r))
				sb.WriteString("/s")
				if gc.f.Color == "rate" {
					c.Class = "c rate r" + strconv.Itoa(rateBand(r, gc.maxRate))
				} else {
					c.Class += " i" + strconv.Itoa(max(1, rateBand(r, gc.maxRate)))
				}
			}
			if !g.Compact {
				sb.WriteString(" · key groups ")
				sb.WriteString(row.KeyGroups)
			}
			if isMoved {
				sb.WriteString(" · changes subtask")
				c.Class += " mv"
			}
			if isUnc {
				sb.WriteString(" · owner not determined: depends on an order Flink does not fix")
				c.Class += " unc"
			}
			if gc.highlight.partition != nil && *gc.highlight.partition == tp {
				c.Class += " hl"
				row.Highlight = true
			}
			c.Title = sb.String()
			row.Cells[j] = c
		}
		g.Rows[i] = row
	}
	if gc.hasRates {
		g.Footer = fmt.Sprintf("records/s per subtask · skew %s · max/mean %s · given rates", format.Percent(sk.FlinkPercent), format.Factor(sk.MaxOverMean))
	} else {
		g.Footer = fmt.Sprintf("partitions per subtask · skew %s · max/mean %s · %d idle", format.Percent(sk.FlinkPercent), format.Factor(sk.MaxOverMean), sk.Idle)
	}
	return g
}

func rateBand(r, maxRate float64) int {
	if maxRate <= 0 || r <= 0 {
		return 0
	}
	return min(9, 1+int(8.999*r/maxRate))
}

func planFigures(pl assign.Plan, hasRates bool) []views.Figure {
	now, then := pl.Now.PartitionSkew, pl.Target.PartitionSkew
	what := "partitions"
	if hasRates {
		now, then, what = pl.Now.RateSkew, pl.Target.RateSkew, "records/s"
	}
	kind := "computed"
	if hasRates {
		kind = "given"
	}
	figs := []views.Figure{
		{ID: "skew", Label: "Source skew (Flink %)", Now: format.Percent(now.FlinkPercent), Then: format.Percent(then.FlinkPercent),
			Kind: kind, Note: "over " + what + " per subtask", Worse: then.FlinkPercent > now.FlinkPercent+0.05, Better: then.FlinkPercent < now.FlinkPercent-0.05},
		{ID: "maxmean", Label: "Max / mean load", Now: format.Factor(now.MaxOverMean), Then: format.Factor(then.MaxOverMean),
			Kind: kind, Note: "busiest subtask against the average", Worse: then.MaxOverMean > now.MaxOverMean+0.005, Better: then.MaxOverMean < now.MaxOverMean-0.005},
		{ID: "idle", Label: "Idle subtasks", Now: strconv.Itoa(pl.Now.PartitionSkew.Idle), Then: strconv.Itoa(pl.Target.PartitionSkew.Idle),
			Kind: "computed", Note: "source subtasks without a partition", Worse: pl.Target.PartitionSkew.Idle > pl.Now.PartitionSkew.Idle},
		{ID: "keygroups", Label: "Key groups changing owner", SingleOnly: true,
			Then: fmt.Sprintf("%d / %d", pl.Keyed.Moved, pl.MaxParallelism), Kind: "computed",
			Note: fmt.Sprintf("%s of keyed state changes subtask", format.Percent(100*pl.Keyed.MovedFraction))},
	}
	if pl.Keyed.BytesKnown {
		figs = append(figs, views.Figure{ID: "state", Label: "State to move", SingleOnly: true,
			Then: format.Bytes(pl.Keyed.MovedBytes), Kind: "estimated",
			Note: "of " + format.Bytes(pl.Keyed.TotalBytes) + " checkpointed"})
	} else {
		figs = append(figs, views.Figure{ID: "kgskew", Label: "Key groups max / mean",
			Now: format.Factor(pl.Now.KeyGroupSkew.MaxOverMean), Then: format.Factor(pl.Target.KeyGroupSkew.MaxOverMean), Kind: "computed",
			Note:  fmt.Sprintf("%d key groups over the subtasks", pl.MaxParallelism),
			Worse: pl.Target.KeyGroupSkew.MaxOverMean > pl.Now.KeyGroupSkew.MaxOverMean+0.005, Better: pl.Target.KeyGroupSkew.MaxOverMean < pl.Now.KeyGroupSkew.MaxOverMean-0.005})
	}
	return figs
}

// explainSkew says in plain words why the target layout is uneven.
func explainSkew(f *planForm, pl assign.Plan) []views.WhyLine {
	var out []views.WhyLine
	side := pl.Target
	p := side.Parallelism
	if pl.HasRates && side.RateSkew.Total > 0 {
		type pr struct {
			tp assign.TopicPartition
			r  float64
		}
		// The three hottest partitions, without sorting them all.
		hotter := func(a, b pr) bool {
			return cmp.Or(cmp.Compare(b.r, a.r), cmp.Compare(a.tp.Topic, b.tp.Topic), cmp.Compare(a.tp.Partition, b.tp.Partition)) < 0
		}
		var all []pr
		for tp, r := range f.rates {
			x := pr{tp, r}
			i := len(all)
			for i > 0 && hotter(x, all[i-1]) {
				i--
			}
			if i < 3 {
				all = slices.Insert(all, i, x)
				if len(all) > 3 {
					all = all[:3]
				}
			}
		}
		total := side.RateSkew.Total
		nParts := 0
		for _, t := range f.topics {
			nParts += t.Partitions
		}
		mean := total / float64(nParts)
		var hot []pr
		share := 0.0
		for _, x := range all {
			if len(hot) == 3 || x.r < 2*mean {
				break
			}
			hot = append(hot, x)
			share += x.r
		}
		if len(hot) > 0 {
			names := make([]string, len(hot))
			owners := make([]string, 0, len(hot))
			seen := map[int]bool{}
			for i, h := range hot {
				names[i] = fmt.Sprintf("%s-%d (%s rec/s)", isolate(h.tp.Topic), h.tp.Partition, format.Num(h.r))
				if o, ok := side.Assignment.OwnerOf(h.tp); ok && !seen[o] {
					seen[o] = true
					owners = append(owners, strconv.Itoa(o))
				}
			}
			verb := "carries"
			if len(hot) > 1 {
				verb = "carry"
			}
			where := "subtask " + joinAnd(owners)
			if len(owners) > 1 {
				where = "subtasks " + joinAnd(owners)
			}
			out = append(out, views.WhyLine{Hot: true, Text: fmt.Sprintf("%s %s %s of all traffic. A subtask that owns one of them is the bottleneck whatever the parallelism: at p = %d they sit on %s.",
				joinAnd(names), verb, format.Percent(100*share/total), p, where)})
			floor := hot[0].r
			if side.RateSkew.Max <= floor*1.0001 {
				out = append(out, views.WhyLine{Text: fmt.Sprintf("At p = %d the busiest subtask carries %s rec/s, which is the hottest partition alone: more subtasks cannot bring it lower. Spreading the hot keys, or more partitions for %s, can.", p, format.Num(side.RateSkew.Max), isolate(hot[0].tp.Topic))})
			} else {
				out = append(out, views.WhyLine{Text: fmt.Sprintf("More subtasks cannot bring the busiest one below %s rec/s (the hottest partition); at p = %d it carries %s rec/s.", format.Num(floor), p, format.Num(side.RateSkew.Max))})
			}
		}
	}
	// Partition counts per subtask: report start-index collisions only when
	// the layout is uneven beyond the unavoidable (counts within one).
	counts := side.Assignment.Counts()
	lo, hi := math.Inf(1), 0.0
	for _, c := range counts {
		lo, hi = min(lo, c), max(hi, c)
	}
	unevenCounts := hi-lo > 1
	if unevenCounts && !f.strat.Comparison && pl.Start == assign.StartFresh {
		starts := map[int][]string{}
		for _, t := range f.topics {
			si, _ := assign.KafkaStartIndex(t.Name, p)
			starts[si] = append(starts[si], t.Name)
		}
		keys := make([]int, 0, len(starts))
		for si := range starts {
			keys = append(keys, si)
		}
		slices.Sort(keys)
		for _, si := range keys {
			names := starts[si]
			if len(names) < 2 {
				continue
			}
			all := "all start"
			if len(names) == 2 {
				all = "both start"
			}
			out = append(out, views.WhyLine{Hot: true, Text: fmt.Sprintf("%s %s at subtask %d at p = %d (Flink gives each topic its own start index, (hash(topic)·31 & 0x7FFFFFFF) mod p), so their partitions pile onto the same subtasks.", joinAnd(quoteAll(names)), all, si, p)})
		}
	}
	if unevenCounts && pl.Start == assign.StartRestore && !f.strat.Comparison {
		out = append(out, views.WhyLine{Hot: true, Text: fmt.Sprintf("After the restore subtasks read between %.0f and %.0f partitions: the saved split lists are dealt out in contiguous chunks, so partitions of one topic stay together instead of being spread by the start-index rule.", lo, hi)})
	} else if unevenCounts && f.strat.Comparison {
		out = append(out, views.WhyLine{Hot: true, Text: fmt.Sprintf("Under %s subtasks read between %.0f and %.0f partitions.", f.strat.Label, lo, hi)})
	} else if unevenCounts && len(out) == 0 {
		out = append(out, views.WhyLine{Hot: true, Text: fmt.Sprintf("Subtasks read between %.0f and %.0f partitions at p = %d: each topic's partitions are dealt from that topic's own start index, so the topics' remainders land on overlapping subtasks.", lo, hi, p)})
	}
	if idle := side.PartitionSkew.Idle; idle > 0 {
		nParts := 0
		for _, t := range f.topics {
			nParts += t.Partitions
		}
		if nParts < p {
			out = append(out, views.WhyLine{Hot: true, Text: fmt.Sprintf("%d of %d source subtasks read nothing: there are only %d partitions. They stay running and do not go idle for watermarks on their own; set an idle timeout in the watermark strategy, or lower the source parallelism.", idle, p, nParts)})
		} else {
			out = append(out, views.WhyLine{Hot: true, Text: fmt.Sprintf("%d of %d source subtasks read no partition although there are %d partitions, because of where each topic's partitions start.", idle, p, nParts)})
		}
	}
	if kg := side.KeyGroupSkew; kg.MaxOverMean > 1.1 {
		big, small := 0, 0
		hi := (pl.MaxParallelism + p - 1) / p
		for _, r := range side.Ranges {
			if r.Size() == hi {
				big++
			} else {
				small++
			}
		}
		out = append(out, views.WhyLine{Hot: true, Text: fmt.Sprintf("Key groups split unevenly at p = %d: %d subtasks own %d key groups and %d own %d (max/mean %s). A parallelism that divides %d spreads keyed state evenly.", p, big, hi, small, hi-1, format.Factor(kg.MaxOverMean), pl.MaxParallelism)})
	}
	if len(out) == 0 {
		out = append(out, views.WhyLine{Text: fmt.Sprintf("At p = %d partition counts differ by at most one between subtasks and key groups are split as evenly as %d allows.", p, pl.MaxParallelism)})
	}
	return out
}

func keyGroupStrip(pl assign.Plan) views.KeyGroupStrip {
	s := views.KeyGroupStrip{MaxParallelism: pl.MaxParallelism}
	for k, side := range []assign.PlanSide{pl.Now, pl.Target} {
		row := views.StripRow{Label: [2]string{"now", "target"}[k] + " p = " + strconv.Itoa(side.Parallelism)}
		m := float64(pl.MaxParallelism)
		hi := (pl.MaxParallelism + side.Parallelism - 1) / side.Parallelism
		lo := pl.MaxParallelism / side.Parallelism
		if side.Parallelism > stripTitles {
			// Too many subtasks to tell apart at any width: one segment
			// that says what every subtask owns.
			desc := fmt.Sprintf("%d subtasks of %d key groups each", side.Parallelism, lo)
			if hi != lo {
				big := pl.MaxParallelism % side.Parallelism
				desc = fmt.Sprintf("%d subtasks own %d key groups, %d own %d", big, hi, side.Parallelism-big, lo)
			}
			row.Segments = []views.Segment{{Subtask: 0, X: 0, W: 100, Range: desc, Class: "k0", Title: desc + "; each row of the grids gives its range", Label: true, Whole: true}}
			s.Rows = append(s.Rows, row)
			continue
		}
		for i, r := range side.Ranges {
			seg := views.Segment{
				Subtask: i, X: 100 * float64(r.Start) / m, W: 100 * float64(r.Size()) / m,
				Range: fmt.Sprintf("%d–%d", r.Start, r.End), Size: r.Size(),
				Class: "k" + strconv.Itoa(i%2),
			}
			seg.Label = seg.W >= 5
			if side.Parallelism <= stripTitles {
				seg.Title = fmt.Sprintf("subtask %d · key groups %s · %d key groups", i, seg.Range, r.Size())
			}
			if hi != lo && r.Size() == hi {
				seg.Class += " big"
				if seg.Title != "" {
					seg.Title += " (one more than the smallest)"
				}
			}
			row.Segments = append(row.Segments, seg)
		}
		s.Rows = append(s.Rows, row)
	}
	var parts []string
	for i, st := range pl.Keyed.Subtasks {
		if i == 32 {
			parts = append(parts, fmt.Sprintf("… (%d more)", len(pl.Keyed.Subtasks)-32))
			break
		}
		olds := make([]string, len(st.Sources))
		for j, src := range st.Sources {
			olds[j] = strconv.Itoa(src.OldSubtask)
		}
		parts = append(parts, fmt.Sprintf("%d←%s", st.Subtask, strings.Join(olds, ",")))
	}
	s.FanIn = "Each new subtask restores keyed state from old subtasks: " + strings.Join(parts, " · ") +
		fmt.Sprintf(" (max fan-in %d)", pl.Keyed.MaxFanIn)
	if t := pl.Target; t.KeyGroupSkew.MaxOverMean > 1 {
		s.Uneven = fmt.Sprintf("At p = %d the ranges differ by one key group (darker segments own one more); max/mean %s.", t.Parallelism, format.Factor(t.KeyGroupSkew.MaxOverMean))
	}
	return s
}

func stateView(pl assign.Plan) views.StateView {
	k := pl.Keyed
	v := views.StateView{Moved: k.Moved, MaxParallelism: k.MaxParallelism, MovedPercent: format.Percent(100 * k.MovedFraction), BytesKnown: k.BytesKnown}
	if k.BytesKnown {
		v.BytesNote = fmt.Sprintf("About %s of %s keyed state lands on a subtask with another index; restore reads about %s beyond each subtask's largest handle.", format.Bytes(k.MovedBytes), format.Bytes(k.TotalBytes), format.Bytes(k.NonBaseBytes))
	}
	for i, st := range k.Subtasks {
		if i == stateRows {
			v.More = fmt.Sprintf("Showing %d of %d new subtasks; the JSON API lists them all.", stateRows, len(k.Subtasks))
			break
		}
		srcs := make([]string, len(st.Sources))
		for i, src := range st.Sources {
			srcs[i] = fmt.Sprintf("old %d: %d", src.OldSubtask, src.KeyGroups)
		}
		row := views.StateRow{Subtask: st.Subtask, Range: fmt.Sprintf("%d–%d", st.Range.Start, st.Range.End), Sources: strings.Join(srcs, " · "), FanIn: st.FanIn}
		if k.BytesKnown {
			row.Bytes, row.NonBase = format.Bytes(st.Bytes), format.Bytes(st.NonBaseBytes)
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

func movesView(f *planForm, pl assign.Plan) views.MovesView {
	mv := views.MovesView{Fresh: fmtMoved(pl.MovesFresh)}
	if pl.Restore == nil {
		mv.RestoreNotApplicable = "Restore from a savepoint is modelled for Flink's KafkaSource only."
	} else {
		mv.RestoreApplies = true
		mv.Restore = fmtMoved(pl.MovesRestore)
		if n := len(pl.Restore.Uncertain); n > 0 {
			mv.RestoreUncertain = fmt.Sprintf("%d partitions have an owner after the restore that Flink does not fix deterministically; they are marked with a dashed outline.", n)
		}
	}
	list := func(d assign.SourceRescaleDiff) []string {
		var out []string
		for i, m := range d.Moves {
			if i == listMoves {
				mv.More = fmt.Sprintf("Lists are cut at %d partitions; the JSON API has them all.", listMoves)
				break
			}
			out = append(out, fmt.Sprintf("%s-%d: subtask %d → %d", isolate(m.Partition.Topic), m.Partition.Partition, m.From, m.To))
		}
		return out
	}
	mv.FreshList = list(pl.MovesFresh)
	if pl.Restore != nil {
		mv.RestoreList = list(pl.MovesRestore)
	}
	return mv
}

func candidatesView(l views.Layout, f *planForm, res *planResult) views.CandidatesView {
	v := views.CandidatesView{HasRate: res.plan.HasRates}
	if v.HasRate {
		v.Caption = fmt.Sprintf("ranked by the busiest subtask's records/s (it bounds throughput), p ≤ %d", res.upper)
	} else {
		v.Caption = fmt.Sprintf("ranked by how evenly partitions and key groups spread, p ≤ %d", res.upper)
	}
	for _, c := range res.cands {
		row := views.CandidateRow{
			P:          c.Parallelism,
			Form:       views.IDPlanForm,
			URL:        planURL(l, f, map[string]string{"target": strconv.Itoa(c.Parallelism), "embed": embedParam(l)}),
			Busiest:    format.Num(c.BusiestLoad),
			Partitions: fmt.Sprintf("%d–%d", c.PartitionsMin, c.PartitionsMax),
			KeyGroups:  fmt.Sprintf("%d–%d", c.KeyGroupsMin, c.KeyGroupsMax),
			Note:       candidateNote(c, f, res.plan.MaxParallelism),
			IsTarget:   c.Parallelism == f.target,
		}
		sk := c.PartitionSkew
		if v.HasRate {
			sk = c.RateSkew
		}
		row.Skew, row.MaxMean = format.Percent(sk.FlinkPercent), format.Factor(sk.MaxOverMean)
		v.Rows = append(v.Rows, row)
	}
	return v
}

// embedParam keeps embed=1 on links that stay inside an embedded view.
func embedParam(l views.Layout) string {
	if l.Embed {
		return "1"
	}
	return ""
}

// candidateNote is the short "alignment" note of a candidate: what it
// divides, how many subtasks idle, and whether the autoscaler would pick it.
func candidateNote(c assign.Candidate, f *planForm, maxP int) string {
	var parts []string
	total := 0
	for _, t := range f.topics {
		total += t.Partitions
	}
	if c.DividesMaxParallelism {
		parts = append(parts, fmt.Sprintf("divides %d key groups", maxP))
	}
	if c.DividesPartitions && total > 0 {
		parts = append(parts, fmt.Sprintf("divides %d partitions", total))
	}
	if c.Idle > 0 {
		parts = append(parts, fmt.Sprintf("%d idle", c.Idle))
	}
	var modes []string
	for _, a := range c.AutoscalerPicks {
		switch a.Mode {
		case assign.Balanced, assign.EvenlySpread:
			modes = append(modes, string(a.Mode))
		}
	}
	if len(modes) > 0 && f.target != c.Parallelism {
		parts = append(parts, "autoscaler's pick for target "+strconv.Itoa(f.target)+" ("+strings.Join(modes, ", ")+")")
	}
	if c.Parallelism == f.current {
		parts = append(parts, "current")
	}
	if c.Parallelism == f.target {
		parts = append(parts, "target")
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

func legend(f *planForm, maxRate float64, pl assign.Plan) []views.LegendItem {
	out := legendColours(f, maxRate)
	if f.Color != "rate" && maxRate > 0 {
		out = append(out, views.LegendItem{Class: "c t6 i2", Label: "lighter: lower rate"})
	}
	if f.current != f.target || pl.Start == assign.StartRestore {
		out = append(out, views.LegendItem{Class: "c t6 mv", Label: "target cell underlined: partition changes subtask"})
	}
	if pl.Restore != nil && pl.Start == assign.StartRestore && len(pl.Restore.Uncertain) > 0 {
		out = append(out, views.LegendItem{Class: "c t6 unc", Label: "dashed: owner not fixed by Flink"})
	}
	return out
}

func legendColours(f *planForm, maxRate float64) []views.LegendItem {
	if f.Color == "rate" && maxRate > 0 {
		return []views.LegendItem{
			{Class: "rate r1", Label: "low rate"},
			{Class: "rate r5", Label: format.Num(maxRate/2) + " rec/s"},
			{Class: "rate r9", Label: format.Num(maxRate) + " rec/s (hottest)"},
		}
	}
	var out []views.LegendItem
	for i, t := range f.topics {
		if i == 16 {
			out = append(out, views.LegendItem{Class: "", Label: fmt.Sprintf("… %d more topics (colours repeat)", len(f.topics)-16)})
			break
		}
		out = append(out, views.LegendItem{Class: "t" + strconv.Itoa(i%8), Name: t.Name, Label: fmt.Sprintf("× %d", t.Partitions)})
	}
	return out
}

func formula(f *planForm, pl assign.Plan) (views.Formula, []string) {
	var notes []string
	if f.strat.Comparison {
		return views.Formula{Text: f.strat.Label, Source: f.strat.Source}, notes
	}
	fm := views.Formula{
		Text:   "owner = ((hash(topic)·31 & 0x7FFFFFFF) mod p + partition) mod p; key group = murmurHash(hash(key)) mod maxParallelism; subtask = keyGroup·p / maxParallelism",
		Source: "KafkaSourceEnumerator.getSplitOwner (flink-connector-kafka 3.0–5.0); KeyGroupRangeAssignment and MathUtils.murmurHash (Flink 1.10–2.2)",
	}
	if pl.MaxParallelismDefaulted {
		notes = append(notes, fmt.Sprintf("Max parallelism %d is Flink's default for p = %d. A job restored from a savepoint keeps the max parallelism it was started with; set it explicitly (pipeline.max-parallelism) before the first savepoint.", pl.MaxParallelism, f.current))
	}
	if pl.Restore != nil {
		fm.Source += "; restore: " + pl.Restore.Source
		if pl.Start == assign.StartRestore {
			notes = append(notes, pl.Restore.Notes...)
		} else {
			notes = append(notes, fmt.Sprintf("A job stopped with a savepoint at p = %d and restored at p = %d does not get this layout: its saved split lists are dealt out in contiguous chunks. Choose \"Restore from savepoint\" to see that layout.", f.current, f.target))
		}
	}
	return fm, notes
}

// isolate wraps a user-given name in Unicode first-strong isolates when it
// holds right-to-left characters or bidi controls, so that a right-to-left
// override inside a topic name cannot reorder the text around it (in
// titles and sentences, where no <bdi> element can go).
func isolate(s string) string {
	for _, r := range s {
		if r >= 0x0590 && r <= 0x08FF || r >= 0xFB1D && r <= 0xFEFF || r >= 0x200E && r <= 0x200F ||
			r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r >= 0x10800 && r <= 0x10FFF || r >= 0x1E800 && r <= 0x1EFFF {
			return "\u2068" + s + "\u2069"
		}
	}
	return s
}

func fmtMoved(d assign.SourceRescaleDiff) string {
	return fmt.Sprintf("%d of %d (%s)", d.Moved, d.Common, format.Percent(100*d.MovedFraction))
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "“" + isolate(x) + "”"
	}
	return out
}
