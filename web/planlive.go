package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/live"
)

// servePlanFromLive answers GET /jobs/{jobID}/vertices/{vertexID}/plan: the
// planner filled in with what is observed of the vertex's job right now —
// the Kafka source's topics, produced rates per partition, busy ratios and
// records/s per subtask, the job's parallelism history, and the keyed
// vertex's records in, busy ratios and state sizes. It redirects to the
// planner's own URL, so the plan keeps those figures when bookmarked; a
// plan too long for a URL is rendered in place.
func (s *Server) servePlanFromLive(w http.ResponseWriter, r *http.Request) (int, templ.Component, error) {
	st, err := s.liveState()
	if err != nil {
		return 0, nil, err
	}
	job, err := pathID(r, "jobID")
	if err != nil {
		return 0, nil, err
	}
	vertex, err := pathID(r, "vertexID")
	if err != nil {
		return 0, nil, err
	}
	vq, err := vertexQuery(r.URL.Query())
	if err != nil {
		return 0, nil, err
	}
	vv, err := st.Vertex(job, vertex, vq)
	if err != nil {
		return 0, nil, notFound(err)
	}
	var src, keyed *live.VertexView
	switch {
	case vv.Kafka:
		src = &vv
	case vv.Keyed:
		keyed = &vv
	}
	for _, v := range st.JobVertices(vv.Endpoint, vv.JobID) {
		if src == nil && v.Kafka {
			if x, err := st.Vertex(job, v.ID, vq); err == nil {
				src = &x
			}
		}
		if keyed == nil && v.Keyed {
			if x, err := st.Vertex(job, v.ID, vq); err == nil {
				keyed = &x
			}
		}
	}
	if src == nil || src.Parallelism <= 0 {
		return 0, nil, badInput("vertexID", "job %s has no Kafka source that skewscope reads: the planner models a Kafka source and the keyed vertex behind it", vv.JobName)
	}
	q := livePlanQuery(*src, keyed, s.now())
	if id := r.URL.Query().Get("sample"); id != "" {
		q.Set("sample", id)
	}
	if err := openAt(q, r.URL.Query()); err != nil {
		return 0, nil, err
	}
	if enc := q.Encode(); len(enc) <= maxRedirectQuery {
		http.Redirect(w, r, s.prefix+"/plan?"+enc, http.StatusSeeOther)
		return 0, nil, nil
	}
	return s.planFromValues(r, q)
}

// livePlanQuery is the planner query for a Kafka source and the keyed
// vertex behind it (livePlanValues), dated by the older of the polls its
// figures come from (now when neither is known), and naming the job.
func livePlanQuery(src live.VertexView, keyed *live.VertexView, now time.Time) url.Values {
	q := livePlanValues(src, keyed)
	at := src.Flink.At
	if k := src.KafkaAge; k != nil && (at.IsZero() || !k.At.IsZero() && k.At.Before(at)) {
		at = k.At
	}
	if at.IsZero() {
		at = now
	}
	if !at.IsZero() {
		q.Set("observedAt", at.UTC().Format(time.RFC3339))
		q.Set("job", src.JobName)
	}
	return q
}

// openAt sets the target the planner opens at: the one the request names
// (a link from the "why is it hot?" panel, which may ask for a fresh start
// with mode=fresh), else the answer to "plan a rescale": the recommended
// parallelism, or, when none carries the load, the best candidate (the
// page then says why none is recommended first).
func openAt(q, req url.Values) error {
	if t := strings.TrimSpace(req.Get("target")); t != "" {
		p, err := strconv.Atoi(t)
		if err != nil || p < 1 || p > assign.UpperBoundMaxParallelism {
			return badInput("target", "%s is not a parallelism: Flink accepts 1..%d", quote.Clip(t), assign.UpperBoundMaxParallelism)
		}
		q.Set("target", t)
		if req.Get("mode") == "fresh" {
			q.Set("mode", "fresh")
		}
		return nil
	}
	f := parsePlanForm(q)
	if len(f.Errors) > 0 {
		return nil // the planner shows what is wrong
	}
	res, err := f.computePlan()
	if err != nil {
		return nil
	}
	// The planner draws both sides; a target it could not draw stays
	// where it was.
	if p := answerTarget(res.sizing); p > 0 && f.current+p <= maxPlannerSubtasks {
		q.Set("target", strconv.Itoa(p))
	}
	return nil
}

// answerTarget is the parallelism a plan's answer opens at: the
// recommended one, else the candidate with the lowest busiest subtask; 0
// when the sizing has neither.
func answerTarget(sz assign.Sizing) int {
	if sz.Recommended > 0 {
		return sz.Recommended
	}
	for _, c := range sz.Candidates {
		if slices.Contains(c.Roles, assign.RoleBest) {
			return c.Parallelism
		}
	}
	return 0
}

// livePlanValues is the planner query for a Kafka source and the keyed
// vertex behind it (nil when the job has none), from their views.
func livePlanValues(src live.VertexView, keyed *live.VertexView) url.Values {
	q := plannerValues(src, src.Parallelism)
	q.Del("target")
	// A running job is rescaled by a restore from a savepoint (or, by the
	// adaptive scheduler, from a checkpoint, which redistributes the same
	// way): candidates are judged under the layout that gives.
	q.Set("mode", "restore")
	if rates := measuredRates(src, 2); rates != "" {
		q.Set("rates", rates)
	}
	// The backlog and the retention, so each candidate says when its
	// backlog clears and the autoscaler's catch-up term reads it.
	var backlog strings.Builder
	for _, r := range src.Subtasks {
		for _, c := range r.Partitions {
			if c.Lag >= 0 {
				backlog.WriteString(c.Topic + "," + strconv.Itoa(int(c.Partition)) + "," + strconv.FormatInt(c.Lag, 10) + "\n")
			}
		}
	}
	if backlog.Len() > 0 {
		q.Set("backlog", backlog.String())
	}
	var retention strings.Builder
	for _, tr := range src.Retention {
		if tr.Deletes && tr.RetentionMs != nil {
			retention.WriteString(tr.Topic + "," + strconv.FormatInt(*tr.RetentionMs, 10) + "\n")
		}
	}
	if retention.Len() > 0 {
		q.Set("retention", retention.String())
	}
	ratio := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	rate := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	// all formats one figure of every subtask, or "" when any is unknown.
	all := func(rows []live.SubtaskRow, get func(live.SubtaskRow) float64, f func(float64) string) string {
		out := make([]string, len(rows))
		for i, r := range rows {
			v := get(r)
			if v < 0 {
				return ""
			}
			out[i] = f(v)
		}
		return strings.Join(out, ",")
	}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("busy", all(src.Subtasks, func(r live.SubtaskRow) float64 { return r.Busy }, ratio))
	set("observed", all(src.Subtasks, func(r live.SubtaskRow) float64 { return r.RecordsOut }, rate))
	maxP := src.MaxParallelism
	if keyed != nil && len(keyed.Subtasks) == src.Parallelism {
		maxP = keyed.MaxParallelism
		set("keyedIn", all(keyed.Subtasks, func(r live.SubtaskRow) float64 { return r.RecordsIn }, rate))
		if q.Has("keyedIn") {
			set("keyedBusy", all(keyed.Subtasks, func(r live.SubtaskRow) float64 { return r.Busy }, ratio))
		}
		set("state", all(keyed.Subtasks, func(r live.SubtaskRow) float64 { return float64(r.StateSize) }, func(v float64) string { return strconv.FormatInt(int64(v), 10) }))
	}
	if maxP > 0 {
		q.Set("maxParallelism", strconv.Itoa(maxP))
	}
	return q
}

// liveNote says where a plan filled in from a live job comes from.
func liveNote(f *planForm, now time.Time) string {
	if f.observedAt.IsZero() {
		return ""
	}
	return "Filled in from the live job " + f.Job + " as observed at " + f.observedAt.Format("15:04:05 MST") +
		" (" + format.Seconds(now.Sub(f.observedAt).Seconds()) + " ago): produced rates, busy ratios, records/s and state sizes are observed figures of that moment and do not update here."
}
