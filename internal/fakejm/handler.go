package fakejm

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// maxRequestLine is Netty's HttpServerCodec default initial line limit,
// which Flink's REST server keeps.
const maxRequestLine = 4096

// Cluster is what a fake JobManager answers from. Handler owns Flink's
// REST API (its routes, errors, the request-line limit and the metric
// stores' query semantics); a Cluster only says what is there. A method
// returning nil makes its endpoint answer 404, as Flink does for an id it
// does not know.
type Cluster interface {
	// DashboardConfig answers /config.
	DashboardConfig() *DashboardConfig
	// Overview answers /overview.
	Overview() *Overview
	// TaskManagers answers /taskmanagers.
	TaskManagers() *TaskManagers
	// JobsOverview answers /jobs/overview.
	JobsOverview() *JobsOverview
	// Job returns the job with this id, nil for none.
	Job(id string) Job
}

// Job is one job of a Cluster.
type Job interface {
	// Details answers /jobs/:id.
	Details() *JobDetails
	// Plan answers /jobs/:id/plan.
	Plan() *JobPlan
	// Config answers /jobs/:id/config.
	Config() *JobConfig
	// Metrics is the job-scope metric store (/jobs/:id/metrics).
	Metrics() Metrics
	// Checkpoints answers /jobs/:id/checkpoints.
	Checkpoints() *Checkpoints
	// CheckpointConfig answers /jobs/:id/checkpoints/config.
	CheckpointConfig() *CheckpointConfig
	// Checkpoint answers /jobs/:id/checkpoints/details/:cp: nil when the
	// job keeps no statistics of checkpoint id.
	Checkpoint(id int64) *CheckpointStatistics
	// Exceptions answers /jobs/:id/exceptions with at most max entries
	// (Flink's maxExceptions): the failures that restarted the job,
	// newest first.
	Exceptions(max int) *JobExceptions
	// Vertex returns the vertex with this id, nil for none.
	Vertex(id string) Vertex
}

// Vertex is one job vertex.
type Vertex interface {
	// Parallelism is its number of subtasks.
	Parallelism() int
	// Details answers /jobs/:id/vertices/:vid.
	Details() *VertexDetails
	// Backpressure answers …/backpressure.
	Backpressure() *Backpressure
	// Metrics is the metric store of one subtask (…/subtasks/:i/metrics,
	// ids relative to the subtask), or with subtask −1 the vertex's
	// (…/metrics, ids prefixed "<subtask>.", see SubtaskID).
	Metrics(subtask int) Metrics
	// CheckpointSubtasks answers
	// /jobs/:id/checkpoints/details/:cp/subtasks/:vid: nil when there are
	// no statistics of checkpoint id for the vertex.
	CheckpointSubtasks(id int64) *CheckpointSubtasks
}

// Metrics is one metric store as Flink's MetricStore holds it: ids and
// their values, which Flink sends as strings.
type Metrics interface {
	// IDs lists the store's ids in the order Flink lists them.
	IDs() []string
	// AppendValue appends id's value (unquoted) to b; ok is false for an
	// id the store does not have.
	AppendValue(b []byte, id string) (_ []byte, ok bool)
}

// encodedIDs is implemented by the fake's own stores that keep their id
// list answer encoded.
type encodedIDs interface{ idListBody() []byte }

// Handler is a fake JobManager's REST API over a Cluster. It is safe for
// concurrent use when the Cluster is.
type Handler struct {
	c     Cluster
	cfg   Config // New's, for Config
	stats counters
}

// NewHandler serves c.
func NewHandler(c Cluster) *Handler { return &Handler{c: c} }

// restError is an error answer: its status and Flink's message.
type restError struct {
	status int
	msg    string
}

func notFoundErr(msg string) *restError { return &restError{http.StatusNotFound, msg} }

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if len(r.Method)+1+len(r.RequestURI)+1+len(r.Proto) > maxRequestLine {
		h.write(w, r, KindRejected, http.StatusRequestEntityTooLarge, errorBody("An HTTP line is larger than 4096 bytes."))
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		h.write(w, r, KindRejected, http.StatusMethodNotAllowed, errorBody("Method not allowed: "+r.Method))
		return
	}
	// Flink answers under /v1 too, and ignores a trailing slash.
	path := strings.TrimPrefix(strings.TrimSuffix(r.URL.Path, "/"), "/v1")
	kind, body, err := h.route(strings.Split(strings.TrimPrefix(path, "/"), "/"), r)
	if err != nil {
		h.write(w, r, kind, err.status, errorBody(err.msg))
		return
	}
	h.write(w, r, kind, http.StatusOK, body)
}

// route answers the path segments seg.
func (h *Handler) route(seg []string, r *http.Request) (Kind, []byte, *restError) {
	nf := notFoundErr("Not found: " + r.URL.Path)
	switch {
	case len(seg) == 1 && seg[0] == "config":
		return answer(KindOverview, h.c.DashboardConfig(), nf)
	case len(seg) == 1 && seg[0] == "overview":
		return answer(KindOverview, h.c.Overview(), nf)
	case len(seg) == 1 && seg[0] == "taskmanagers":
		return answer(KindOverview, h.c.TaskManagers(), nf)
	case len(seg) == 2 && seg[0] == "jobs" && seg[1] == "overview":
		return answer(KindJobsOverview, h.c.JobsOverview(), nf)
	case len(seg) < 2 || seg[0] != "jobs":
		return KindNotFound, nil, nf
	}
	j := h.c.Job(seg[1])
	if j == nil {
		return KindNotFound, nil, notFoundErr("Job " + seg[1] + " not found")
	}
	rest := seg[2:]
	switch {
	case len(rest) == 0:
		return answer(KindJob, j.Details(), nf)
	case len(rest) == 1 && rest[0] == "plan":
		return answer(KindJob, j.Plan(), nf)
	case len(rest) == 1 && rest[0] == "config":
		return answer(KindJob, j.Config(), nf)
	case len(rest) == 1 && rest[0] == "metrics":
		return metricsAnswer(r, j.Metrics())
	case len(rest) == 1 && rest[0] == "checkpoints":
		return answer(KindCheckpoints, j.Checkpoints(), nf)
	case len(rest) == 1 && rest[0] == "exceptions":
		// JobExceptionsHandler: maxExceptions defaults to 20 and must
		// parse as an integer.
		n := 20
		if q := r.URL.Query().Get("maxExceptions"); q != "" {
			v, err := strconv.Atoi(q)
			if err != nil {
				return KindRejected, nil, &restError{http.StatusBadRequest, "Bad request, could not parse parameters: maxExceptions"}
			}
			n = max(v, 0)
		}
		return answer(KindJob, j.Exceptions(n), nf)
	case len(rest) == 2 && rest[0] == "checkpoints" && rest[1] == "config":
		return answer(KindCheckpoints, j.CheckpointConfig(), nf)
	case len(rest) >= 3 && rest[0] == "checkpoints" && rest[1] == "details":
		id, err := strconv.ParseInt(rest[2], 10, 64)
		if err != nil {
			return KindCheckpoints, nil, &restError{http.StatusBadRequest, "Bad request, could not parse parameters: checkpointid"}
		}
		noStats := notFoundErr("Could not find checkpointing statistics for checkpoint " + rest[2] + ".")
		switch {
		case len(rest) == 3:
			return answer(KindCheckpoints, j.Checkpoint(id), noStats)
		case len(rest) == 5 && rest[3] == "subtasks":
			if j.Checkpoint(id) == nil {
				return KindNotFound, nil, noStats
			}
			noTask := notFoundErr("There is no checkpoint statistics for task " + rest[4] + ".")
			v := j.Vertex(rest[4])
			if v == nil {
				return KindNotFound, nil, noTask
			}
			return answer(KindCheckpoints, v.CheckpointSubtasks(id), noTask)
		}
		return KindNotFound, nil, nf
	case len(rest) >= 2 && rest[0] == "vertices":
		v := j.Vertex(rest[1])
		if v == nil {
			return KindNotFound, nil, notFoundErr("JobVertex " + rest[1] + " not found")
		}
		return vertexRoute(v, rest[2:], r, nf)
	}
	return KindNotFound, nil, nf
}

func vertexRoute(v Vertex, rest []string, r *http.Request, nf *restError) (Kind, []byte, *restError) {
	switch {
	case len(rest) == 0:
		return answer(KindVertex, v.Details(), nf)
	case len(rest) == 1 && rest[0] == "metrics":
		return metricsAnswer(r, v.Metrics(-1))
	case len(rest) == 1 && rest[0] == "backpressure":
		return answer(KindBackpressure, v.Backpressure(), nf)
	case len(rest) == 1 && rest[0] == "watermarks":
		return KindMetricValues, watermarks(v), nil
	case len(rest) == 2 && rest[0] == "subtasks" && rest[1] == "metrics":
		return aggregate(r, v)
	case len(rest) == 3 && rest[0] == "subtasks" && rest[2] == "metrics":
		s := rest[1]
		i, err := strconv.Atoi(s)
		if err != nil || i < 0 || i >= v.Parallelism() || strconv.Itoa(i) != s {
			return KindNotFound, nil, notFoundErr("Subtask " + s + " not found")
		}
		return metricsAnswer(r, v.Metrics(i))
	}
	return KindNotFound, nil, nf
}

// answer encodes a Cluster's answer; a nil one is the error nf.
func answer[T any](kind Kind, v *T, nf *restError) (Kind, []byte, *restError) {
	if v == nil {
		return KindNotFound, nil, nf
	}
	if f, ok := any(v).(interface{ encoding() []byte }); ok {
		if b := f.encoding(); b != nil {
			return kind, b, nil
		}
	}
	b, err := marshal(v)
	if err != nil {
		return kind, nil, &restError{http.StatusInternalServerError, "Internal server error."}
	}
	return kind, b, nil
}

// metricsAnswer answers a metric endpoint: the id list without get=
// (KindMetricList); with it (KindMetricValues) the requested ids the store
// has, in the requested order, others silently dropped.
func metricsAnswer(r *http.Request, m Metrics) (Kind, []byte, *restError) {
	get := getList(r)
	if get == nil {
		if e, ok := m.(encodedIDs); ok {
			return KindMetricList, e.idListBody(), nil
		}
		return KindMetricList, idListBody(m.IDs()), nil
	}
	b := make([]byte, 0, 64*len(get)+2)
	b = append(b, '[')
	for _, id := range get {
		n := len(b)
		if n > 1 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendJSONString(b, id)
		b = append(b, `,"value":"`...)
		var ok bool
		if b, ok = m.AppendValue(b, id); !ok {
			b = b[:n]
			continue
		}
		b = append(b, `"}`...)
	}
	return KindMetricValues, append(b, ']'), nil
}

// getList returns the ids of the get= parameter, nil without any (Flink
// lists the store's ids for an empty get= too).
func getList(r *http.Request) []string {
	var ids []string
	for _, v := range r.URL.Query()["get"] {
		for id := range strings.SplitSeq(v, ",") {
			if id != "" {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// watermarks answers …/watermarks: every subtask's task-scope
// currentInputWatermark, as "<subtask>.currentInputWatermark".
func watermarks(v Vertex) []byte {
	b := []byte{'['}
	for i := range v.Parallelism() {
		n := len(b)
		if n > 1 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendJSONString(b, SubtaskID(i, "currentInputWatermark"))
		b = append(b, `,"value":"`...)
		var ok bool
		if b, ok = v.Metrics(i).AppendValue(b, "currentInputWatermark"); !ok {
			b = b[:n]
			continue
		}
		b = append(b, `"}`...)
	}
	return append(b, ']')
}

// aggregate is AggregatingSubtasksMetricsHandler (…/subtasks/metrics):
// without get= the ids of the selected subtasks; with it, each requested
// id's aggregates over the selected subtasks (agg=, default all five). An
// id no selected subtask has empties the whole answer, as in Flink.
func aggregate(r *http.Request, v Vertex) (Kind, []byte, *restError) {
	q := r.URL.Query()
	sel := parseSubtasks(q.Get("subtasks"), v.Parallelism())
	stores := make([]Metrics, len(sel))
	for k, i := range sel {
		stores[k] = v.Metrics(i)
	}
	get := getList(r)
	if get == nil {
		var ids []string
		seen := map[string]bool{}
		for _, m := range stores {
			for _, id := range m.IDs() {
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
		return KindMetricList, idListBody(ids), nil
	}
	aggs := []string{"min", "max", "avg", "sum", "skew"}
	if a := q.Get("agg"); a != "" {
		aggs = nil
		for x := range strings.SplitSeq(strings.ToLower(a), ",") {
			if slices.Contains([]string{"min", "max", "avg", "sum", "skew"}, x) {
				aggs = append(aggs, x)
			}
		}
	}
	b := []byte{'['}
	var buf []byte
	for _, id := range get {
		var vs []float64
		found := false
		for _, m := range stores {
			var ok bool
			if buf, ok = m.AppendValue(buf[:0], id); !ok {
				continue
			}
			found = true
			if f, err := strconv.ParseFloat(string(buf), 64); err == nil {
				vs = append(vs, f)
			}
		}
		if !found {
			return KindMetricValues, []byte("[]"), nil
		}
		if len(vs) == 0 {
			continue
		}
		mn, mx, sum := vs[0], vs[0], 0.0
		for _, x := range vs {
			mn, mx, sum = min(mn, x), max(mx, x), sum+x
		}
		avg := sum / float64(len(vs))
		var mad float64
		for _, x := range vs {
			mad += math.Abs(x - avg)
		}
		mad /= float64(len(vs))
		skew := 0.0
		if avg != 0 {
			skew = min(100, mad/avg*100)
		}
		val := map[string]float64{"min": mn, "max": mx, "avg": avg, "sum": sum, "skew": skew}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendJSONString(b, id)
		for _, a := range aggs {
			b = append(b, `,"`...)
			b = append(b, a...)
			b = append(b, `":`...)
			b = appendJSONFloat(b, val[a])
		}
		b = append(b, '}')
	}
	return KindMetricValues, append(b, ']'), nil
}

// parseSubtasks parses "0-3,7"; empty or invalid means all.
func parseSubtasks(s string, n int) []int {
	var out []int
	if s != "" {
		for part := range strings.SplitSeq(s, ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if isRange {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil {
				continue
			}
			for i := max(a, 0); i <= b && i < n; i++ {
				out = append(out, i)
			}
		}
	}
	if len(out) == 0 {
		for i := range n {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (h *Handler) write(w http.ResponseWriter, r *http.Request, kind Kind, status int, body []byte) {
	switch {
	case status == http.StatusNotFound:
		kind = KindNotFound
	case status >= 400 && status < 500:
		kind = KindRejected
	}
	hd := w.Header()
	hd["Content-Type"] = []string{"application/json; charset=UTF-8"}
	hd["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
	h.stats.add(kind, len(body), r)
}

func errorBody(msg string) []byte {
	b := append([]byte(`{"errors":[`), appendJSONString(nil, msg)...)
	return append(b, "]}"...)
}

// Stats returns the counts since NewHandler or the last Reset.
func (h *Handler) Stats() Stats { return h.stats.snapshot() }

// Reset zeroes the counts.
func (h *Handler) Reset() { h.stats.reset() }

var _ http.Handler = (*Handler)(nil)

// appendJSONFloat appends a finite x as encoding/json writes a float64.
func appendJSONFloat(b []byte, x float64) []byte {
	f := byte('f')
	if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
		f = 'e'
	}
	b = strconv.AppendFloat(b, x, f, -1, 64)
	if n := len(b); f == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}
