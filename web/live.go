package web

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/plan"
	"github.com/skewscope/skewscope/views"
)

// SandboxControl is the built-in sandbox's control, set only when the
// sandbox runs: it is the only thing skewscope ever changes.
type SandboxControl interface {
	// Restore stops the named job with a savepoint and restarts it at
	// parallelism p, as Flink does.
	Restore(job string, p int) error
}

var (
	jobIDRE = regexp.MustCompile(`^[0-9a-fA-F]{1,64}$`)
	nameRE  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,249}$`)
)

// liveState returns the live store's latest State, which one request reads
// all it shows from.
func (s *Server) liveState() (*live.State, error) {
	if s.live == nil {
		return nil, &inputError{Status: http.StatusNotFound, Msg: "no live data: configure a Kafka cluster or a Flink endpoint (or run the sandbox)"}
	}
	return s.live.State(), nil
}

func notFound(err error) error { return liveError(err) }

// pathID reads a job or vertex id from the path.
func pathID(r *http.Request, name string) (string, error) {
	id := chi.URLParam(r, name)
	if !jobIDRE.MatchString(id) {
		return "", badInput(name, "%s is not a Flink id (hexadecimal)", quote.Clip(id))
	}
	return strings.ToLower(id), nil
}

func (s *Server) serveOverview(w http.ResponseWriter, r *http.Request) (int, templ.Component, error) {
	if s.live == nil {
		return http.StatusOK, views.Home(s.layout(r, "Overview", "home")), nil
	}
	l := s.layout(r, "Overview", "home")
	return http.StatusOK, views.Overview(l, newOverviewPage(s.pageLinks(l), s.live.State().Overview())), nil
}

func (s *Server) serveOverviewJSON(w http.ResponseWriter, r *http.Request) error {
	st, err := s.liveState()
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, st.Overview())
}

func (s *Server) serveJobsJSON(w http.ResponseWriter, r *http.Request) error {
	st, err := s.liveState()
	if err != nil {
		return err
	}
	jobs := st.Overview().Jobs
	if jobs == nil {
		jobs = []live.JobSummary{}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"jobs": jobs})
}

func (s *Server) jobView(r *http.Request) (live.JobView, error) {
	st, err := s.liveState()
	if err != nil {
		return live.JobView{}, err
	}
	id, err := pathID(r, "jobID")
	if err != nil {
		return live.JobView{}, err
	}
	if err := checkFollow(r.URL.Query()); err != nil {
		return live.JobView{}, err
	}
	jv, err := st.Job(r.URL.Query().Get("endpoint"), id)
	return jv, notFound(err)
}

func (s *Server) serveJob(w http.ResponseWriter, r *http.Request) (int, templ.Component, error) {
	jv, err := s.jobView(r)
	if err != nil {
		if rep, ok := s.forgotten(r, false); ok {
			return s.serveForgotten(w, r, rep)
		}
		return 0, nil, s.explainUnknown(r, err, false)
	}
	if jv.ReplacedBy != nil && following(r) {
		http.Redirect(w, r, s.withQuery(s.followPath(*jv.ReplacedBy), r.URL.Query()), http.StatusFound)
		return 0, nil, nil
	}
	l := s.layout(r, jv.Name, "")
	return http.StatusOK, views.Job(l, newJobPage(s.pageLinks(l), jv, replacedBanner(l, jv.ReplacedBy, s.now(), false))), nil
}

func (s *Server) serveJobJSON(w http.ResponseWriter, r *http.Request) error {
	jv, err := s.jobView(r)
	if err != nil {
		if rep, ok := s.forgotten(r, false); ok {
			return s.serveForgottenJSON(w, r, rep)
		}
		return s.explainUnknown(r, err, false)
	}
	if jv.ReplacedBy != nil && following(r) {
		http.Redirect(w, r, s.withQuery("/api/v1"+s.followPath(*jv.ReplacedBy), r.URL.Query()), http.StatusFound)
		return nil
	}
	return writeJSON(w, http.StatusOK, jv)
}

// vertexQuery reads the vertex page's query: color, history, highlight.
func vertexQuery(q url.Values) (live.VertexQuery, error) {
	vq := live.VertexQuery{Endpoint: q.Get("endpoint"), Highlight: -1}
	if err := checkFollow(q); err != nil {
		return vq, err
	}
	switch c := q.Get("color"); c {
	case "", "lag":
		vq.Color = "lag"
	case "rate", "watermark":
		vq.Color = c
	default:
		return vq, badInput("color", "%s: colour partitions by lag, rate or watermark (event-time lag)", quote.Clip(c))
	}
	if h := q.Get("history"); h != "" {
		hist, err := assign.ParseHistory(h)
		if err != nil {
			return vq, badInput("history", "%v", err)
		}
		vq.History = hist
	}
	if h := q.Get("highlight"); h != "" {
		kind, rest, _ := strings.Cut(h, ":")
		switch kind {
		case "subtask":
			n, err := strconv.Atoi(rest)
			if err != nil || n < 0 {
				return vq, badInput("highlight", "%s: want subtask:N or partition:TOPIC:N", quote.Clip(h))
			}
			vq.Highlight = n
		case "partition":
			i := strings.LastIndexByte(rest, ':')
			n, err := strconv.Atoi(rest[i+1:])
			if i <= 0 || err != nil || n < 0 {
				return vq, badInput("highlight", "%s: want subtask:N or partition:TOPIC:N", quote.Clip(h))
			}
			vq.HighlightTopic, vq.HighlightPartition = rest[:i], int32(n)
		default:
			return vq, badInput("highlight", "%s: want subtask:N or partition:TOPIC:N", quote.Clip(h))
		}
	}
	return vq, nil
}

func (s *Server) vertexView(r *http.Request) (*live.State, live.VertexView, live.VertexQuery, error) {
	st, err := s.liveState()
	if err != nil {
		return nil, live.VertexView{}, live.VertexQuery{}, err
	}
	job, err := pathID(r, "jobID")
	if err != nil {
		return nil, live.VertexView{}, live.VertexQuery{}, err
	}
	vertex, err := pathID(r, "vertexID")
	if err != nil {
		return nil, live.VertexView{}, live.VertexQuery{}, err
	}
	vq, err := vertexQuery(r.URL.Query())
	if err != nil {
		return nil, live.VertexView{}, vq, err
	}
	vv, err := st.Vertex(job, vertex, vq)
	return st, vv, vq, notFound(err)
}

func (s *Server) serveVertex(w http.ResponseWriter, r *http.Request) (int, templ.Component, error) {
	l := s.layout(r, "", "")
	parts, err := parseParts(query{r.URL.Query()}, l.Embed)
	if err != nil {
		return 0, nil, err
	}
	grid, err := parseGridQuery(r.URL.Query())
	if err != nil {
		return 0, nil, err
	}
	st, vv, vq, err := s.vertexView(r)
	if err != nil {
		if rep, ok := s.forgotten(r, true); ok {
			return s.serveForgotten(w, r, rep)
		}
		return 0, nil, s.explainUnknown(r, err, true)
	}
	if vv.ReplacedBy != nil && following(r) {
		http.Redirect(w, r, s.withQuery(s.followPath(*vv.ReplacedBy), r.URL.Query()), http.StatusFound)
		return 0, nil, nil
	}
	l.Title = vv.Name
	l.Part = strings.Join(parts.names(), ",")
	l.ChartCSS = s.prefix + "/static/" + s.assets.Hashed("vendor/uplot/uPlot.min.css")
	return http.StatusOK, views.Vertex(l, newVertexPage(s.vertexPageInput(st, r, l, vv, vq, parts, grid), vv)), nil
}

func (s *Server) serveVertexJSON(w http.ResponseWriter, r *http.Request) error {
	_, vv, _, err := s.vertexView(r)
	if err != nil {
		if rep, ok := s.forgotten(r, true); ok {
			return s.serveForgottenJSON(w, r, rep)
		}
		return s.explainUnknown(r, err, true)
	}
	if vv.ReplacedBy != nil && following(r) {
		http.Redirect(w, r, s.withQuery("/api/v1"+s.followPath(*vv.ReplacedBy), r.URL.Query()), http.StatusFound)
		return nil
	}
	return writeJSON(w, http.StatusOK, vv)
}

// vertexPageInput is what the vertex page shows beside the view: its topic,
// its links (which keep the request's query), the job's other vertices and
// its replaced banner.
func (s *Server) vertexPageInput(st *live.State, r *http.Request, l views.Layout, vv live.VertexView, vq live.VertexQuery, parts vertexParts, grid gridQuery) vertexPageInput {
	base := s.prefix + views.VertexPath(vv.JobID, vv.ID)
	q := r.URL.Query()
	keyed := s.keyedBehind(st, vv, vq)
	with := func(kv ...string) string {
		c := url.Values{}
		for key, vals := range q {
			c[key] = vals
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				c.Del(kv[i])
			} else {
				c.Set(kv[i], kv[i+1])
			}
		}
		if enc := c.Encode(); enc != "" {
			return base + "?" + enc
		}
		return base
	}
	pl := s.pageLinks(l)
	in := vertexPageInput{
		links: pl,
		parts: parts,
		peers: s.peerLinks(st, l, vv, vq),
		topic: vertexTopic(vv.JobID, vv.ID, vv.Color, vq.History, parts, grid),
		grid:  grid, gridURL: with, query: q, at: s.now(), keyed: keyed,
		hrefs: views.VertexLinks{
			JSON:           s.prefix + "/api/v1" + views.VertexPath(vv.JobID, vv.ID),
			ColorLag:       with("color", ""),
			ColorRate:      with("color", "rate"),
			ColorWatermark: with("color", "watermark"),
			Highlight:      q.Get("highlight"),
			Planner:        s.plannerLink(vv, keyed),
			FlinkUI:        pl.flinkVertex(vv.Endpoint, vv.JobID, vv.ID, vv.JobState),
		},
	}
	if vv.Keyed && s.samples != nil {
		in.hrefs.Samples = s.sampleLinks(st, vv, vq)
	}
	if vv.Kafka || vv.Keyed {
		in.hrefs.PlanRescale = s.prefix + views.VertexPath(vv.JobID, vv.ID) + "/plan"
		if vq.Endpoint != "" {
			in.hrefs.PlanRescale += "?endpoint=" + url.QueryEscape(vq.Endpoint)
		}
	}
	if l.Embed {
		in.topic += embedOption
		in.hrefs.Full = with("embed", "", "parts", "", "target", "")
	} else {
		in.hrefs.Embed = with("embed", "1")
	}
	if vq.HighlightTopic != "" {
		in.cell = &cellRef{topic: vq.HighlightTopic, partition: vq.HighlightPartition}
	}
	if in.highlightNote = highlightNote(vv, vq); in.highlightNote != "" {
		in.hrefs.Highlight = "" // nothing is highlighted: the note says why
	} else if vq.Highlight >= 0 {
		in.hrefs.FlinkSubtask = pl.flinkSubtask(vv.Endpoint, vv.JobID, vv.ID, vq.Highlight, vv.JobState)
	}
	if s.sandbox != nil {
		in.sandboxRestore = s.prefix + "/sandbox/restore"
	}
	in.replaced = replacedBanner(l, vv.ReplacedBy, s.now(), true)
	return in
}

// keyedBehind is the keyed vertex of a Kafka source's job (the first the
// job lists), nil for other vertices or when the job has none.
func (s *Server) keyedBehind(st *live.State, vv live.VertexView, vq live.VertexQuery) *live.VertexView {
	if !vv.Kafka || s.live == nil {
		return nil
	}
	for _, v := range st.JobVertices(vv.Endpoint, vv.JobID) {
		if v.Keyed {
			if x, err := st.Vertex(vv.JobID, v.ID, vq); err == nil {
				return &x
			}
		}
	}
	return nil
}

// peerLinks link a Kafka source's page to the job's keyed vertices and a
// keyed vertex's page to the job's Kafka sources, keeping the highlighted
// subtask and the endpoint (an embedded page shows none: its head is one
// line).
func (s *Server) peerLinks(st *live.State, l views.Layout, vv live.VertexView, vq live.VertexQuery) []views.PeerLink {
	if !vv.Kafka && !vv.Keyed {
		return nil
	}
	hl := -1
	for _, r := range vv.Subtasks {
		if r.Highlight {
			hl = r.Subtask
			break
		}
	}
	var out []views.PeerLink
	for _, v := range st.JobVertices(vv.Endpoint, vv.JobID) {
		// The highlighted subtask goes along where the peer has it.
		q := url.Values{}
		if hl >= 0 && hl < v.Parallelism {
			q.Set("highlight", "subtask:"+strconv.Itoa(hl))
		}
		if vq.Endpoint != "" {
			q.Set("endpoint", vq.Endpoint)
		}
		query := ""
		if len(q) > 0 {
			query = "?" + q.Encode()
		}
		kind := ""
		switch {
		case v.ID == vv.ID:
		case vv.Kafka && v.Keyed:
			kind = "keyed vertex"
		case vv.Keyed && v.Kafka:
			kind = "source"
		}
		if kind != "" {
			out = append(out, views.PeerLink{Kind: kind, Name: v.Name, URL: s.prefix + views.VertexPath(vv.JobID, v.ID) + query})
		}
	}
	return out
}

// plannerLink opens the planner on this source with the figures "plan a
// rescale" fills in, at the current parallelism.
func (s *Server) plannerLink(vv live.VertexView, keyed *live.VertexView) string {
	return plannerURL(s.prefix, vv, keyed, vv.Parallelism, s.now())
}

// maxPageLinkQuery is the longest planner query a live page puts into a
// link; a longer one links the live route, which fills in the same values
// when followed.
const maxPageLinkQuery = 24 << 10

// plannerURL opens the planner under prefix on a Kafka source at target
// parallelism, with what "plan a rescale" fills in (livePlanRequest: a
// restore from a savepoint continuing the source's history, its measured
// rates, busy ratios and records/s, and the keyed vertex's figures when
// keyed is not nil), so that the planner opens on the question the page
// asked; "" for other vertices. now dates figures whose poll time is not
// known.
func plannerURL(prefix string, src live.VertexView, keyed *live.VertexView, target int, now time.Time) string {
	if !src.Kafka || src.Parallelism <= 0 {
		return ""
	}
	pr := livePlanRequest(src, keyed, now)
	pr.Target = target
	return plannerLinkOf(prefix, src, pr)
}

// freshPlannerURL is plannerURL for a fresh start at target: no source
// state, the current layout still the restored one.
func freshPlannerURL(prefix string, src live.VertexView, keyed *live.VertexView, target int, now time.Time) string {
	if !src.Kafka || src.Parallelism <= 0 {
		return ""
	}
	pr := livePlanRequest(src, keyed, now)
	pr.Target, pr.Mode = target, assign.StartFresh
	return plannerLinkOf(prefix, src, pr)
}

// plannerLinkOf is the planner link for pr, or the live route's for a pr
// too long for a link.
func plannerLinkOf(prefix string, src live.VertexView, pr plan.Request) string {
	if enc := pr.Query().Encode(); len(enc) <= maxPageLinkQuery {
		return prefix + "/plan?" + enc
	}
	lq := url.Values{"target": {strconv.Itoa(pr.Target)}}
	if pr.Mode == assign.StartFresh {
		lq.Set("mode", "fresh")
	}
	if src.Endpoint != "" {
		lq.Set("endpoint", src.Endpoint)
	}
	return prefix + views.VertexPath(src.JobID, src.ID) + "/plan?" + lq.Encode()
}

func (s *Server) topicView(r *http.Request) (live.TopicView, error) {
	st, err := s.liveState()
	if err != nil {
		return live.TopicView{}, err
	}
	cluster, topic := chi.URLParam(r, "cluster"), chi.URLParam(r, "topic")
	if !nameRE.MatchString(cluster) {
		return live.TopicView{}, badInput("cluster", "%s is not a cluster name (letters, digits, . _ -)", quote.Clip(cluster))
	}
	if !nameRE.MatchString(topic) {
		return live.TopicView{}, badInput("topic", "%s is not a Kafka topic name (letters, digits, . _ -, at most 249)", quote.Clip(topic))
	}
	tv, err := st.Topic(cluster, topic)
	return tv, notFound(err)
}

func (s *Server) serveTopic(w http.ResponseWriter, r *http.Request) (int, templ.Component, error) {
	tv, err := s.topicView(r)
	if err != nil {
		return 0, nil, err
	}
	l := s.layout(r, tv.Name, "")
	p := newTopicPage(s.pageLinks(l), tv)
	if s.samples != nil && s.samples.has(tv.Cluster) {
		p.SampleURL = sampleURL(s.prefix, tv.Cluster, tv.Name, 0, 0, "", "")
	}
	return http.StatusOK, views.Topic(l, p), nil
}

// sampleLinks open the key sampler from a keyed vertex on each topic its
// job's Kafka sources read, with the vertex's parallelism filled in.
func (s *Server) sampleLinks(st *live.State, vv live.VertexView, vq live.VertexQuery) []views.Anchor {
	var out []views.Anchor
	for _, v := range st.JobVertices(vv.Endpoint, vv.JobID) {
		if !v.Kafka {
			continue
		}
		src, err := st.Vertex(vv.JobID, v.ID, live.VertexQuery{Endpoint: vq.Endpoint, Highlight: -1})
		if err != nil || !s.samples.has(src.Cluster) {
			continue
		}
		for _, t := range src.Topics {
			out = append(out, views.Anchor{Text: "sample keys of " + t, URL: sampleURL(s.prefix, src.Cluster, t, vv.Parallelism, vv.MaxParallelism, vv.JobID, vv.ID, sqlSampleKey(vv.SQL, v.ID))})
		}
	}
	return out
}

func (s *Server) serveTopicJSON(w http.ResponseWriter, r *http.Request) error {
	tv, err := s.topicView(r)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, tv)
}

// serveSandboxRestore restarts a sandbox job at another parallelism and
// goes back to the page the form was on.
func (s *Server) serveSandboxRestore(w http.ResponseWriter, r *http.Request) (int, templ.Component, error) {
	if s.sandbox == nil {
		return 0, nil, &inputError{Status: http.StatusNotFound, Msg: "the sandbox is not running; skewscope never changes a real Flink job"}
	}
	if err := r.ParseForm(); err != nil {
		return 0, nil, badInput("form", "%v", err)
	}
	p, err := strconv.Atoi(strings.TrimSpace(r.PostForm.Get("parallelism")))
	if err != nil || p < 1 || p > 64 {
		return 0, nil, badInput("parallelism", "%s: the sandbox restores at a parallelism from 1 to 64", quote.Clip(r.PostForm.Get("parallelism")))
	}
	if err := s.sandbox.Restore(r.PostForm.Get("job"), p); err != nil {
		return 0, nil, badInput("job", "%v", err)
	}
	// The restored job has a new id: go to the overview, whose job list
	// links to it.
	http.Redirect(w, r, s.prefix+"/", http.StatusSeeOther)
	return 0, nil, nil
}
