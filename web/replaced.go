package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a-h/templ"

	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

// Links that survive restores. A restore gives a Flink job a new id, so
// /jobs/{id}/... links in alerts go stale. /jobs/by-name/{job}[/vertices/
// {vertex}] redirect to the current run's page (the JSON twins answer its
// view), and a link to a replaced job says what replaced it: a banner while
// Flink still lists the old job, a page of its own once Flink forgot it;
// ?follow=1 goes straight to the current run.

// maxNameBytes bounds a job or vertex name read from a by-name path.
const maxNameBytes = 1024

// byName reads the job and vertex names of a by-name path. Names are
// arbitrary (spaces, slashes, quotes), so they are read from the escaped
// path, where an escaped slash is still one segment, and unescaped like a
// query value: '+' is a space, as alert templates (urlquery) write it, and
// a literal plus is %2B.
func (s *Server) byName(r *http.Request, api bool) (job, vertex string, err error) {
	base := s.prefix
	if api {
		base += "/api/v1"
	}
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), base+"/jobs/by-name/")
	if !ok {
		return "", "", badInput("job", "the path does not start with %s/jobs/by-name/", base)
	}
	segs := strings.Split(rest, "/")
	switch {
	case len(segs) == 1:
	case len(segs) == 3 && segs[1] == "vertices":
	default:
		return "", "", badInput("job", "want /jobs/by-name/JOB or /jobs/by-name/JOB/vertices/VERTEX, with / in a name written %%2F")
	}
	unescape := func(field, seg string) (string, error) {
		name, err := url.QueryUnescape(seg)
		switch {
		case err != nil:
			return "", badInput(field, "%s is not a path-escaped name: %v", quote.Clip(seg), err)
		case name == "":
			return "", badInput(field, "the name is empty")
		case len(name) > maxNameBytes:
			return "", badInput(field, "the name is %d bytes; at most %d", len(name), maxNameBytes)
		case !utf8.ValidString(name):
			return "", badInput(field, "%s is not UTF-8", quote.Clip(seg))
		}
		return name, nil
	}
	if job, err = unescape("job", segs[0]); err != nil {
		return "", "", err
	}
	if len(segs) == 3 {
		if vertex, err = unescape("vertex", segs[2]); err != nil {
			return "", "", err
		}
	}
	return job, vertex, nil
}

// withQuery is path under the route prefix with the query q (minus
// follow=, which is spent once followed).
func (s *Server) withQuery(path string, q url.Values) string {
	c := url.Values{}
	for k, v := range q {
		if k != "follow" {
			c[k] = v
		}
	}
	if enc := c.Encode(); enc != "" {
		return s.prefix + path + "?" + enc
	}
	return s.prefix + path
}

// resolveByName finds the job (and vertex) a by-name path names: the path
// of its current run's page and the run.
func (s *Server) resolveByName(r *http.Request, api bool) (path string, job live.JobRef, vertex live.VertexRef, err error) {
	st, err := s.liveState()
	if err != nil {
		return "", job, vertex, err
	}
	jobName, vertexName, err := s.byName(r, api)
	if err != nil {
		return "", job, vertex, err
	}
	endpoint := r.URL.Query().Get("endpoint")
	if vertexName == "" {
		job, err = st.CurrentRun(endpoint, jobName)
		return views.JobPath(job.ID), job, vertex, liveError(err)
	}
	vertex, err = st.VertexByName(endpoint, jobName, vertexName)
	return views.VertexPath(vertex.Job.ID, vertex.ID), vertex.Job, vertex, liveError(err)
}

// serveByName redirects a by-name link to the current run's page, keeping
// the query (history, color, highlight, embed, endpoint).
func (s *Server) serveByName(w http.ResponseWriter, r *http.Request) (int, templ.Component, error) {
	path, _, vertex, err := s.resolveByName(r, false)
	if err != nil {
		return 0, nil, err
	}
	target := s.withQuery(path, r.URL.Query())
	if vertex.ID != "" {
		target += highlightFragment(r.URL.Query())
	}
	http.Redirect(w, r, target, http.StatusFound)
	return 0, nil, nil
}

// highlightFragment is "#subtask-N" for an embedded page's link that
// highlights subtask N, so that the frame opens at its row even before the
// page's script runs; "" otherwise: a page of its own opens at its brief,
// which answers for the row on the first screen and links to it.
func highlightFragment(q url.Values) string {
	if q.Get("embed") == "" {
		return ""
	}
	n, ok := strings.CutPrefix(q.Get("highlight"), "subtask:")
	if _, err := strconv.Atoi(n); !ok || err != nil || strings.HasPrefix(n, "-") || strings.HasPrefix(n, "+") {
		return ""
	}
	return "#subtask-" + n
}

// serveJobByNameJSON answers the current run's job view.
func (s *Server) serveJobByNameJSON(w http.ResponseWriter, r *http.Request) error {
	_, job, _, err := s.resolveByName(r, true)
	if err != nil {
		return err
	}
	jv, err := s.live.State().Job(job.Endpoint, job.ID)
	if err != nil {
		return liveError(err)
	}
	return writeJSON(w, http.StatusOK, jv)
}

// serveVertexByNameJSON answers the current run's vertex view.
func (s *Server) serveVertexByNameJSON(w http.ResponseWriter, r *http.Request) error {
	_, job, vertex, err := s.resolveByName(r, true)
	if err != nil {
		return err
	}
	vq, err := vertexQuery(r.URL.Query())
	if err != nil {
		return err
	}
	vq.Endpoint = job.Endpoint
	vv, err := s.live.State().Vertex(job.ID, vertex.ID, vq)
	if err != nil {
		return liveError(err)
	}
	return writeJSON(w, http.StatusOK, vv)
}

// forgotten returns the replacement of the job (and vertex) a /jobs/{jobID}
// path names when Flink no longer lists the job but the store saw it
// replaced.
func (s *Server) forgotten(r *http.Request, withVertex bool) (live.Replacement, bool) {
	if s.live == nil {
		return live.Replacement{}, false
	}
	id, err := pathID(r, "jobID")
	if err != nil {
		return live.Replacement{}, false
	}
	endpoint := r.URL.Query().Get("endpoint")
	for _, j := range s.live.State().JobRefs() {
		if j.ID == id && (endpoint == "" || endpoint == j.Endpoint) {
			return live.Replacement{}, false // listed: the error was about something else
		}
	}
	if !withVertex {
		return s.live.State().Successor(endpoint, id)
	}
	vid, err := pathID(r, "vertexID")
	if err != nil {
		return live.Replacement{}, false
	}
	rep, ok := s.live.State().SuccessorVertex(endpoint, id, vid)
	return rep, ok
}

// followPath is the path of the current run's page for a replaced job:
// the vertex of the same name when the link was to a vertex and the
// current run has one, else its job page.
func (s *Server) followPath(rep live.Replacement) string {
	if rep.VertexName != "" {
		if v, err := s.live.State().VertexByName(rep.Endpoint, rep.Name, rep.VertexName); err == nil {
			return views.VertexPath(v.Job.ID, v.ID)
		}
	}
	return views.JobPath(rep.Current)
}

// explainUnknown adds to a 404 for an id skewscope does not know what it
// does know: for a vertex id of a job that was replaced, the job's
// successor and the link by name that follows it; for a job id it never
// saw, that it never saw it. Other errors are returned as they are.
func (s *Server) explainUnknown(r *http.Request, err error, withVertex bool) error {
	var ie *inputError
	if s.live == nil || !errors.As(err, &ie) || ie.Status != http.StatusNotFound {
		return err
	}
	id, perr := pathID(r, "jobID")
	if perr != nil {
		return err
	}
	endpoint := r.URL.Query().Get("endpoint")
	listed := false
	for _, j := range s.live.State().JobRefs() {
		if j.ID == id && (endpoint == "" || endpoint == j.Endpoint) {
			listed = true
			break
		}
	}
	msg := ie.Msg
	switch rep, ok := s.live.State().Successor(endpoint, id); {
	case ok && withVertex:
		msg += fmt.Sprintf(": skewscope never saw that vertex id in job %s, which was replaced by %s (%s) at %s; the current run is %s, and %s names a vertex of it by its name",
			rep.OldID, rep.NewID, quote.Clip(rep.Name), rep.At.UTC().Format(time.RFC3339), rep.Current, s.prefix+"/jobs/by-name/"+url.PathEscape(rep.Name)+"/vertices/NAME")
	case ok:
		msg += fmt.Sprintf(": job %s was replaced by %s (%s); the current run is %s", rep.OldID, rep.NewID, quote.Clip(rep.Name), rep.Current)
	case !listed:
		msg += ": Flink does not list that id, and skewscope has never seen a job replace it (links by name, /jobs/by-name/JOB, outlive restores)"
	default:
		return err
	}
	return &inputError{Status: http.StatusNotFound, Msg: msg}
}

func following(r *http.Request) bool { return r.URL.Query().Get("follow") == "1" }

// checkFollow refuses a follow= other than 1 (or empty), so that a link
// that meant to follow a replaced job and mistyped it is told so instead
// of silently showing the old run.
func checkFollow(q url.Values) error {
	if f := q.Get("follow"); f != "" && f != "1" {
		return badInput("follow", "%s: want 1 (go to the current run of a replaced job) or leave it out", quote.Clip(f))
	}
	return nil
}

// serveForgotten answers a link to a job Flink forgot: ?follow=1 redirects
// to the current run, otherwise a page names the successor (200, not 404:
// the link was good, the job moved on).
func (s *Server) serveForgotten(w http.ResponseWriter, r *http.Request, rep live.Replacement) (int, templ.Component, error) {
	if following(r) {
		http.Redirect(w, r, s.withQuery(s.followPath(rep), r.URL.Query()), http.StatusFound)
		return 0, nil, nil
	}
	l := s.layout(r, "Job replaced", "")
	return http.StatusOK, views.Replaced(l, newReplaced(l, rep, s.now(), rep.VertexName != "")), nil
}

// serveForgottenJSON is serveForgotten for the JSON twins: a 404 whose body
// carries replacedBy, or with ?follow=1 a redirect to the current run's
// JSON.
func (s *Server) serveForgottenJSON(w http.ResponseWriter, r *http.Request, rep live.Replacement) error {
	if following(r) {
		http.Redirect(w, r, s.withQuery("/api/v1"+s.followPath(rep), r.URL.Query()), http.StatusFound)
		return nil
	}
	msg := fmt.Sprintf("job %s is no longer listed by Flink: it was replaced by %s (%s) at %s; the current run is %s (add ?follow=1 to be redirected)",
		rep.OldID, rep.NewID, quote.Clip(rep.Name), rep.At.UTC().Format(time.RFC3339), rep.Current)
	return writeJSON(w, http.StatusNotFound, replacedErrorBody{Error: msg, ReplacedBy: &rep})
}

type replacedErrorBody struct {
	Error      string            `json:"error"`
	ReplacedBy *live.Replacement `json:"replacedBy"`
}

// newReplaced builds the replaced-job banner or page. vertex says the link
// was to a vertex (rep.VertexName, "" when the old job had no such vertex
// id as far as skewscope saw).
func newReplaced(l views.Layout, rep live.Replacement, now time.Time, vertex bool) views.ReplacedPage {
	// An embedded page's links open outside its frame: to pages of their
	// own.
	q := url.Values{}
	link := func(path string, q url.Values) string {
		if enc := q.Encode(); enc != "" {
			return l.URL(path) + "?" + enc
		}
		return l.URL(path)
	}
	r := views.ReplacedPage{
		OldID: rep.OldID, Name: rep.Name, NewID: rep.NewID,
		AtText: rep.At.UTC().Format("2006-01-02 15:04:05 UTC"), AtISO: rep.At.UTC().Format(time.RFC3339),
		Age:      replacedAge(rep.At, now),
		NewURL:   link(views.JobPath(rep.NewID), q),
		OpenText: "Open job " + rep.NewID,
	}
	stable, stableText := views.JobByNamePath(rep.Name), "/jobs/by-name/"+rep.Name
	if vertex && rep.VertexName != "" {
		stable = views.VertexByNamePath(rep.Name, rep.VertexName)
		stableText += "/vertices/" + rep.VertexName
	}
	if vertex {
		r.OldVertex = rep.VertexName
		switch {
		case rep.VertexName == "":
			r.VertexNote = "skewscope did not see that vertex id in the old job; the links open the new job's page."
		case rep.VertexID != "":
			r.NewURL = link(views.VertexPath(rep.NewID, rep.VertexID), q)
			r.OpenText = "Open " + rep.VertexName + " in job " + rep.NewID
		default:
			r.VertexNote = "Job " + rep.NewID + " has no vertex named " + quote.Clip(rep.VertexName) + " (its job graph changed); the link opens its job page."
		}
	}
	sq := url.Values{"endpoint": {rep.Endpoint}}
	r.StableURL, r.StableText = link(stable, sq), l.URL(stableText)
	if rep.Current != rep.NewID {
		r.CurrentID = rep.Current
		r.CurrentURL = link(views.JobPath(rep.Current), q)
		if vertex && rep.VertexName != "" {
			r.CurrentURL = r.StableURL
		}
	}
	return r
}

// replacedBanner is the banner of a job page (or, vertex true, a vertex
// page) whose job was replaced, nil when it was not.
func replacedBanner(l views.Layout, rep *live.Replacement, now time.Time, vertex bool) *views.ReplacedPage {
	if rep == nil {
		return nil
	}
	b := newReplaced(l, *rep, now, vertex)
	return &b
}

// liveError maps the store's errors to statuses: an unknown name or id is
// 404, a name that matches several jobs or vertices 400 (the message says
// what to add).
func liveError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, live.ErrNotFound):
		return &inputError{Status: http.StatusNotFound, Msg: err.Error()}
	case errors.Is(err, live.ErrAmbiguous):
		return &inputError{Status: http.StatusBadRequest, Msg: err.Error()}
	}
	return err
}
