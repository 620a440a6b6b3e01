package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/plan"
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
	// foldRates: more pasted rates than this are folded away until the
	// reader opens them.
	foldRates = 2000
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
				f := &planForm{Errors: map[string]string{"rates": fmt.Sprintf("the form is over %d MB; paste at most %d MB of rates", maxPlanBody>>20, plan.MaxRatesBytes>>20)}}
				return http.StatusRequestEntityTooLarge, views.Planner(s.newPlannerPage(r, f, nil)), nil
			}
			return 0, nil, badInput("form", "%v", err)
		}
		vals = r.PostForm
	} else {
		vals = r.URL.Query()
	}
	if r.Method == http.MethodPost && r.Header.Get("X-Skewscope-Fragment") == "" {
		f := parsePlanForm(vals)
		if len(f.Errors) == 0 {
			q := f.canonicalQuery()
			if vals.Get("embed") == "1" {
				q.Set("embed", "1")
			}
			if enc := q.Encode(); len(enc) <= maxRedirectQuery {
				http.Redirect(w, r, s.prefix+"/plan?"+enc, http.StatusSeeOther)
				return 0, nil, nil
			}
		}
	}
	return s.planFromValues(r, vals)
}

// planFromValues renders the planner for the inputs in vals.
func (s *Server) planFromValues(r *http.Request, vals url.Values) (int, templ.Component, error) {
	embed := vals.Get("embed") == "1"
	if len(vals) == 0 || (len(vals) == 1 && embed) {
		return http.StatusOK, views.Planner(s.newPlannerPage(r, newEmptyPlanForm(), nil)), nil
	}
	f := parsePlanForm(vals)
	s.attachSample(f)
	if len(f.Errors) > 0 {
		return http.StatusBadRequest, views.Planner(s.newPlannerPage(r, f, nil)), nil
	}
	res, err := f.req.Compute(f.sample)
	if err != nil {
		var fe *plan.FieldError
		if errors.As(err, &fe) {
			f.fail(fe.Field, "%s", fe.Msg)
			return http.StatusBadRequest, views.Planner(s.newPlannerPage(r, f, nil)), nil
		}
		return 0, nil, err
	}
	return http.StatusOK, views.Planner(s.newPlannerPage(r, f, res)), nil
}

func newEmptyPlanForm() *planForm {
	return &planForm{Texts: plan.Texts{Mode: "fresh", Strategy: strategy.Default}, Color: "topic"}
}

// newPlannerPage builds the planner's view model.
func (s *Server) newPlannerPage(r *http.Request, f *planForm, res *plan.Result) views.PlannerPage {
	l := s.layout(r, "Planner", "plan")
	p := views.PlannerPage{Layout: l, Form: newPlannerForm(l, f)}
	if res != nil {
		v := newPlanView(l, f, res)
		v.LiveNote = liveNote(f, s.now())
		if have, ok := r.Header[gridsHeader]; ok {
			// The planner script asks: it keeps its grids and its form.
			keepGrids(strings.Join(have, ","), &v)
			p.Form.Rates = ""
		}
		p.Plan = &v
	}
	return p
}

func newPlannerForm(l views.Layout, f *planForm) views.PlannerForm {
	pf := views.PlannerForm{
		Action: l.URL("/plan"), Topics: f.Topics, Rates: f.Rates, State: f.State,
		Parallelism: f.Parallelism, Target: f.Target, MaxParallelism: f.MaxParallelism,
		Highlight: f.Highlight, History: f.History, Errors: f.Errors,
		Busy: f.Busy, Observed: f.Observed, Capacity: f.Capacity,
		KeyedIn: f.KeyedIn, KeyedBusy: f.KeyedBusy, KeyedCapacity: f.KeyedCapacity, Utilization: f.Utilization,
		Backlog: f.Backlog, Retention: f.Retention,
		ObservedAt: f.ObservedAt, Job: f.Job, Sample: f.Sample,
	}
	pf.CapacityOpen = f.Busy != "" || f.Observed != "" || f.Capacity != "" || f.KeyedIn != "" || f.KeyedBusy != "" || f.KeyedCapacity != "" || f.Utilization != "" || f.Backlog != "" || f.Retention != ""
	for _, k := range []string{"busy", "observed", "capacity", "keyedIn", "keyedBusy", "keyedCapacity", "utilization"} {
		if f.Errors[k] != "" {
			pf.CapacityOpen = true
		}
	}
	if l.Embed {
		pf.Action += "?embed=1"
	}
	if n := len(f.req.Rates); n > foldRates {
		pf.RatesSummary = fmt.Sprintf("%s rates given (%s); show them to edit", format.Int(int64(n)), format.Bytes(int64(len(f.Rates))))
	}
	if f.req.Parallelism > 0 {
		d, _ := assign.DefaultMaxParallelism(f.req.Parallelism)
		pf.MaxPHint = strconv.Itoa(d)
		pf.MaxPNote = fmt.Sprintf("Empty: %d, Flink's default for p=%d.", d, f.req.Parallelism)
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

func newPlanView(l views.Layout, f *planForm, res *plan.Result) views.PlanResult {
	pl, st := res.Plan, res.Strategy
	hasRates := pl.HasRates
	topicIdx := map[string]int{}
	for i, t := range f.req.Topics {
		topicIdx[t.Name] = i
	}
	maxRate := 0.0
	for _, r := range f.req.Rates {
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
	gc.rateBands()
	v := views.PlanResult{
		SelfURL:  planURL(l, f, map[string]string{"embed": ""}),
		EmbedURL: planURL(l, f, map[string]string{"embed": "1"}),
	}
	v.Embedded = l.Embed
	if v.SelfURL == "" {
		v.TooLongForLink = fmt.Sprintf("This plan's inputs are %d KB, too long for a link; candidates apply through the form.", f.queryLen()>>10)
	}
	nowMode := "fresh start"
	var nowUnc map[assign.TopicPartition]bool
	if nr := res.NowRestore; nr != nil {
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
		thenMode = fmt.Sprintf("restored from a savepoint taken at p=%d", f.req.Parallelism)
		thenUnc = uncertain
	}
	v.Then = gc.grid("target", "Target", pl.Target, thenMode, nowMoves, thenUnc)
	v.HighlightNote = planHighlightNote(f, hl)

	v.Figures = planFigures(pl, hasRates)
	v.Why = explainSkew(f, pl, res.Strategy)
	v.Strip = keyGroupStrip(pl)
	v.State = stateView(pl)
	v.Moves = movesView(pl, res.Strategy)
	v.Candidates = candidatesView(l, f, res)
	v.Answer = planAnswer(f, res)
	v.Legend = legend(f, maxRate, pl)
	v.Formula, v.Notes = formula(f, pl, res.Strategy)
	jq := url.Values{}
	for _, t := range f.req.Topics {
		jq.Add("topic", t.Name+":"+strconv.Itoa(t.Partitions))
	}
	jq.Set("parallelism", strconv.Itoa(f.req.Target))
	jq.Set("strategy", st.Name)
	if pl.Start == assign.StartRestore {
		jq.Set("mode", "restore")
		jq.Set("from", assign.FormatHistory(f.req.PlanHistory()))
	}
	v.JSONURL = l.URL("/api/v1/assignment?" + jq.Encode())
	if st.Comparison {
		v.Comparison = "Comparison: " + st.Label + ". This is not how Flink's KafkaSource assigns partitions. " + st.Description
	}
	return v
}

func planFigures(pl assign.Plan, hasRates bool) []views.PlanFigure {
	now, then := pl.Now.PartitionSkew, pl.Target.PartitionSkew
	what := "partitions"
	if hasRates {
		now, then, what = pl.Now.RateSkew, pl.Target.RateSkew, "records/s"
	}
	kind := "computed"
	if hasRates {
		kind = "given"
	}
	figs := []views.PlanFigure{
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
		figs = append(figs, views.PlanFigure{ID: "state", Label: "State to move", SingleOnly: true,
			Then: format.Bytes(pl.Keyed.MovedBytes), Kind: "estimated",
			Note: "of " + format.Bytes(pl.Keyed.TotalBytes) + " checkpointed"})
	} else {
		figs = append(figs, views.PlanFigure{ID: "kgskew", Label: "Key groups max / mean",
			Now: format.Factor(pl.Now.KeyGroupSkew.MaxOverMean), Then: format.Factor(pl.Target.KeyGroupSkew.MaxOverMean), Kind: "computed",
			Note:  fmt.Sprintf("%d key groups over the subtasks", pl.MaxParallelism),
			Worse: pl.Target.KeyGroupSkew.MaxOverMean > pl.Now.KeyGroupSkew.MaxOverMean+0.005, Better: pl.Target.KeyGroupSkew.MaxOverMean < pl.Now.KeyGroupSkew.MaxOverMean-0.005})
	}
	return figs
}

func stateView(pl assign.Plan) views.StatePanel {
	k := pl.Keyed
	v := views.StatePanel{Moved: k.Moved, MaxParallelism: k.MaxParallelism, MovedPercent: format.Percent(100 * k.MovedFraction), BytesKnown: k.BytesKnown}
	if k.BytesKnown {
		slowest := int64(0)
		for _, st := range k.Subtasks {
			slowest = max(slowest, st.NonBaseBytes)
		}
		v.BytesNote = fmt.Sprintf("About %s of %s keyed state lands on a subtask with another index. "+
			"On restore each new subtask opens the state of the old subtask it shares most with and copies in the rest key by key "+
			"(with RocksDB, the slow part of a rescale): %s in all, at most %s on one subtask.",
			format.Bytes(k.MovedBytes), format.Bytes(k.TotalBytes), format.Bytes(k.NonBaseBytes), format.Bytes(slowest))
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

func movesView(pl assign.Plan, st strategy.Strategy) views.MovesPanel {
	mv := views.MovesPanel{Fresh: fmtMoved(pl.MovesFresh)}
	switch {
	case st.Name != strategy.Default:
		mv.RestoreNotApplicable = "Restore from a savepoint is modelled for Flink's KafkaSource only."
	case pl.Restore == nil:
		// A fresh start of more partitions than plan models a restore for.
		mv.RestoreOnRequest = "What a restore from a savepoint would move: choose Restore from savepoint"
	default:
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
			out = append(out, fmt.Sprintf("%s-%d: subtask %d → %d", views.Isolate(m.Partition.Topic), m.Partition.Partition, m.From, m.To))
		}
		return out
	}
	mv.FreshList = list(pl.MovesFresh)
	if pl.Restore != nil {
		mv.RestoreList = list(pl.MovesRestore)
	}
	return mv
}

func candidatesView(l views.Layout, f *planForm, res *plan.Result) views.CandidatesTable {
	sz, st := res.Sizing, res.Strategy
	v := views.CandidatesTable{HasRate: res.Plan.HasRates, ByCapacity: sz.Basis == "capacity"}
	layout := "a fresh start"
	switch {
	case st.Comparison:
		layout = st.Label + "'s own layout"
	case sz.Layout == "restore":
		layout = fmt.Sprintf("a restore from a savepoint taken at p = %d", f.req.Parallelism)
	}
	if v.ByCapacity {
		v.Caption = fmt.Sprintf("judged by the busiest subtask's predicted share of its capacity under %s, p ≤ %d", layout, res.Upper)
	} else {
		v.Caption = fmt.Sprintf("judged by the busiest subtask's load against the target's busiest (p = %d) under %s, p ≤ %d; give busy ratios or a capacity to judge by capacity", f.req.Target, layout, res.Upper)
	}
	if sz.SweptNote != "" {
		v.Caption += "; " + sz.SweptNote
	}
	v.Capacity = capacityLines(res)
	v.Autoscaler = autoscalerLine(f, res)
	for _, c := range sz.Candidates {
		row := views.CandidateRow{
			P:          c.Parallelism,
			Form:       views.IDPlanForm,
			URL:        planURL(l, f, map[string]string{"target": strconv.Itoa(c.Parallelism), "embed": embedParam(l)}),
			Role:       roleLabel(c.Roles),
			Partitions: fmt.Sprintf("%d–%d", c.PartitionsMin, c.PartitionsMax),
			KeyGroups:  fmt.Sprintf("%d–%d", c.KeyGroupsMin, c.KeyGroupsMax),
			Note:       candidateNote(c, f, res.Plan.MaxParallelism),
			Verdict:    c.Verdict,
			Meets:      c.Meets,
			IsTarget:   c.Parallelism == f.req.Target,
			Moved:      format.Percent(100 * c.StateMovedFraction),
		}
		if c.StateMovedBytes >= 0 {
			row.Moved = format.Bytes(c.StateMovedBytes) + " (" + row.Moved + ")"
		}
		switch {
		case v.ByCapacity:
			row.Busiest = utilText(c.Utilization)
		case v.HasRate:
			row.Busiest = format.Num(c.SourceBusiest) + " rec/s"
		case c.SourceBusiest >= 0:
			row.Busiest = format.Num(c.SourceBusiest) + " partitions"
		default:
			row.Busiest = strconv.Itoa(c.KeyGroupsMax) + " key groups"
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// utilText is a predicted utilisation as a percentage, "—" unknown.
func utilText(u float64) string {
	if u < 0 {
		return "—"
	}
	return format.Percent(100 * u)
}

// roleLabel names a candidate's roles for the table.
func roleLabel(roles []string) string {
	names := map[string]string{
		assign.RoleRecommended: "recommended",
		assign.RoleEven:        "even spread",
		assign.RoleHeadroom:    "more headroom",
		assign.RoleBest:        "lowest busiest",
		assign.RoleCheaper:     "cheaper",
		assign.RoleAutoscaler:  "autoscaler",
		assign.RoleTarget:      "your target",
		assign.RoleCurrent:     "current",
	}
	out := make([]string, 0, len(roles))
	for _, r := range roles {
		out = append(out, names[r])
	}
	return strings.Join(out, ", ")
}

// embedParam keeps embed=1 on links that stay inside an embedded view.
func embedParam(l views.Layout) string {
	if l.Embed {
		return "1"
	}
	return ""
}

func fmtMoved(d assign.SourceRescaleDiff) string {
	return fmt.Sprintf("%d of %d (%s)", d.Moved, d.Common, format.Percent(100*d.MovedFraction))
}
