package web

import (
	"math"
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
	"github.com/skewscope/skewscope/plan"
	"github.com/skewscope/skewscope/strategy"
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
	pr := livePlanRequest(*src, keyed, s.now())
	if id := strings.TrimSpace(r.URL.Query().Get("sample")); id != "" {
		pr.Sample = id
	}
	if err := openAt(&pr, r.URL.Query()); err != nil {
		return 0, nil, err
	}
	q := pr.Query()
	if enc := q.Encode(); len(enc) <= maxRedirectQuery {
		http.Redirect(w, r, s.prefix+"/plan?"+enc, http.StatusSeeOther)
		return 0, nil, nil
	}
	return s.planFromValues(r, q)
}

// livePlanRequest is the planner request for a Kafka source and the keyed
// vertex behind it (nil when the job has none), from their views: the
// source's topics, parallelism and history (live.PlannerModelOf) at its
// current parallelism as the target, its measured rates, backlog,
// retention, busy ratios and records/s, and the keyed vertex's records
// in, busy ratios and state sizes. It is dated by the older of the polls
// its figures come from (now when neither is known) and names the job.
// Figures are rounded (rates and records/s to 2 decimals, busy ratios to
// 3), so that links stay short.
func livePlanRequest(src live.VertexView, keyed *live.VertexView, now time.Time) plan.Request {
	m := live.PlannerModelOf(&src)
	// A running job is rescaled by a restore from a savepoint (or, by the
	// adaptive scheduler, from a checkpoint, which redistributes the same
	// way): candidates are judged under the layout that gives.
	pr := plan.Request{Topics: m.Topics, Parallelism: src.Parallelism, Target: src.Parallelism, Mode: assign.StartRestore, Strategy: strategy.Default}
	if len(m.History) > 1 {
		pr.History = m.History
	}
	// The backlog and the retention, so each candidate says when its
	// backlog clears and the autoscaler's catch-up term reads it.
	for _, r := range src.Subtasks {
		for _, c := range r.Partitions {
			tp := assign.TopicPartition{Topic: c.Topic, Partition: c.Partition}
			if c.Rate >= 0 {
				if pr.Rates == nil {
					pr.Rates = map[assign.TopicPartition]float64{}
				}
				pr.Rates[tp] = round(c.Rate, 2)
			}
			if c.Lag >= 0 {
				if pr.Backlog == nil {
					pr.Backlog = map[assign.TopicPartition]float64{}
				}
				pr.Backlog[tp] = float64(c.Lag)
			}
		}
	}
	for _, tr := range src.Retention {
		// retention.ms -1 (no limit) and 0 bound nothing.
		if tr.Deletes && tr.RetentionMs != nil && *tr.RetentionMs > 0 && *tr.RetentionMs <= math.MaxInt64/int64(time.Millisecond) {
			if pr.Retention == nil {
				pr.Retention = map[string]time.Duration{}
			}
			pr.Retention[tr.Topic] = time.Duration(*tr.RetentionMs) * time.Millisecond
		}
	}
	// all is one figure of every subtask, rounded to prec decimals, or nil
	// when any is unknown.
	all := func(rows []live.SubtaskRow, get func(live.SubtaskRow) float64, prec int) []float64 {
		out := make([]float64, len(rows))
		for i, r := range rows {
			v := get(r)
			if v < 0 {
				return nil
			}
			out[i] = round(v, prec)
		}
		return out
	}
	pr.Busy = all(src.Subtasks, func(r live.SubtaskRow) float64 { return r.Busy }, 3)
	pr.Observed = all(src.Subtasks, func(r live.SubtaskRow) float64 { return r.RecordsOut }, 2)
	maxP := src.MaxParallelism
	if keyed != nil && len(keyed.Subtasks) == src.Parallelism {
		maxP = keyed.MaxParallelism
		pr.KeyedIn = all(keyed.Subtasks, func(r live.SubtaskRow) float64 { return r.RecordsIn }, 2)
		if pr.KeyedIn != nil {
			pr.KeyedBusy = all(keyed.Subtasks, func(r live.SubtaskRow) float64 { return r.Busy }, 3)
		}
		for _, r := range keyed.Subtasks {
			if r.StateSize < 0 {
				pr.State = nil
				break
			}
			pr.State = append(pr.State, r.StateSize)
		}
	}
	if maxP > 0 {
		pr.MaxParallelism = maxP
	}
	at := src.Flink.At
	if k := src.KafkaAge; k != nil && (at.IsZero() || !k.At.IsZero() && k.At.Before(at)) {
		at = k.At
	}
	if at.IsZero() {
		at = now
	}
	if !at.IsZero() {
		// To the second: the planner says the time to the second.
		pr.ObservedAt = at.UTC().Truncate(time.Second)
		pr.Job = src.JobName
	}
	return pr
}

// round is v rounded to prec decimals.
func round(v float64, prec int) float64 {
	p := math.Pow10(prec)
	return math.Round(v*p) / p
}

// openAt sets the target the planner opens at: the one the request names
// (a link from the "why is it hot?" panel, which may ask for a fresh start
// with mode=fresh), else the answer to "plan a rescale": the recommended
// parallelism, or, when none carries the load, the best candidate (the
// page then says why none is recommended first).
func openAt(pr *plan.Request, req url.Values) error {
	if t := strings.TrimSpace(req.Get("target")); t != "" {
		p, err := strconv.Atoi(t)
		if err != nil || p < 1 || p > assign.UpperBoundMaxParallelism {
			return badInput("target", "%s is not a parallelism: Flink accepts 1..%d", quote.Clip(t), assign.UpperBoundMaxParallelism)
		}
		pr.Target = p
		if req.Get("mode") == "fresh" {
			pr.Mode = assign.StartFresh
		}
		return nil
	}
	if pr.Validate() != nil {
		return nil // the planner shows what is wrong
	}
	res, err := pr.Compute(nil)
	if err != nil {
		return nil
	}
	// The planner draws both sides; a target it could not draw stays
	// where it was.
	if p := answerTarget(res.Sizing); p > 0 && pr.Parallelism+p <= maxPlannerSubtasks {
		pr.Target = p
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

// liveNote says where a plan filled in from a live job comes from.
func liveNote(f *planForm, now time.Time) string {
	if f.req.ObservedAt.IsZero() {
		return ""
	}
	return "Filled in from the live job " + f.Job + " as observed at " + f.req.ObservedAt.Format("15:04:05 MST") +
		" (" + format.Seconds(now.Sub(f.req.ObservedAt).Seconds()) + " ago): produced rates, busy ratios, records/s and state sizes are observed figures of that moment and do not update here."
}
