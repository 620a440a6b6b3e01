// Package linkout writes the links from skewscope's pages to the tools
// people open beside it: the Flink Web UI of a job, a vertex or a subtask,
// and a Kafka UI (kafka-ui, AKHQ, Redpanda Console...) of a topic or a
// consumer group. Each link is a URL template with placeholders ({job},
// {vertex}, {subtask}, {endpoint}, {cluster}, {topic}, {group}) checked once
// at start-up by [Parse]; [Template.Expand] escapes every value so that it
// stays inside the path segment (or query value) it is put in, whatever a
// topic or group name holds.
package linkout

import (
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
)

// The placeholders a template may hold.
const (
	Endpoint = "endpoint" // the Flink endpoint's name in skewscope
	Job      = "job"      // a Flink job id
	Vertex   = "vertex"   // a Flink job vertex id
	Subtask  = "subtask"  // a subtask index
	Cluster  = "cluster"  // the Kafka cluster's name in skewscope
	Topic    = "topic"    // a Kafka topic
	Group    = "group"    // a Kafka consumer group id
)

// Values are what a template's placeholders stand for.
type Values struct {
	Endpoint, Job, Vertex, Subtask string
	Cluster, Topic, Group          string
}

func (v Values) get(name string) string {
	switch name {
	case Endpoint:
		return v.Endpoint
	case Job:
		return v.Job
	case Vertex:
		return v.Vertex
	case Subtask:
		return v.Subtask
	case Cluster:
		return v.Cluster
	case Topic:
		return v.Topic
	case Group:
		return v.Group
	}
	return ""
}

// part is a literal text, or a placeholder when name is set; query marks
// a placeholder in the URL's query, whose value is query-escaped.
type part struct {
	text, name string
	query      bool
}

// Template is a checked URL template. The zero Template is no link:
// Expand returns "".
type Template struct {
	text  string
	parts []part
}

// IsZero reports whether t is no link.
func (t Template) IsZero() bool { return t.text == "" }

// Parse checks a URL template: an absolute http or https URL whose
// placeholders are among allowed and stand in its path, query or fragment
// (not its scheme or host), with required among them. "" is no link.
func Parse(text, required string, allowed ...string) (Template, error) {
	if strings.TrimSpace(text) == "" {
		return Template{}, nil
	}
	known := func() string {
		names := make([]string, len(allowed))
		for i, a := range allowed {
			names[i] = "{" + a + "}"
		}
		return strings.Join(names, ", ")
	}
	t := Template{text: text}
	// The query runs from the first "?" to the first "#", and a route's
	// query in the fragment (#/route?a=b) from the fragment's first "?":
	// their placeholders are query-escaped.
	queryAt, fragAt := strings.IndexByte(text, '?'), strings.IndexByte(text, '#')
	if fragAt < 0 {
		fragAt = len(text)
	}
	fragQueryAt := len(text)
	if i := strings.IndexByte(text[fragAt:], '?'); i >= 0 {
		fragQueryAt = fragAt + i
	}
	inQuery := func(pos int) bool {
		return (queryAt >= 0 && queryAt < pos && pos < fragAt) || pos > fragQueryAt
	}
	sample := make([]byte, 0, len(text))
	hasRequired := false
	for rest, at := text, 0; rest != ""; {
		open, closing := strings.IndexByte(rest, '{'), strings.IndexByte(rest, '}')
		if closing >= 0 && (open < 0 || closing < open) {
			return Template{}, fmt.Errorf("%q: a } without its {: placeholders are written {name}, one of %s", text, known())
		}
		if open < 0 {
			t.parts = append(t.parts, part{text: rest})
			sample = append(sample, rest...)
			break
		}
		if open > 0 {
			t.parts = append(t.parts, part{text: rest[:open]})
			sample = append(sample, rest[:open]...)
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return Template{}, fmt.Errorf("%q: a { without its }: placeholders are written {name}, one of %s", text, known())
		}
		name := rest[open+1 : open+end]
		ok := false
		for _, a := range allowed {
			ok = ok || a == name
		}
		if !ok {
			return Template{}, fmt.Errorf("%q: unknown placeholder {%s}: this link knows %s", text, name, known())
		}
		hasRequired = hasRequired || name == required
		pos := at + open
		t.parts = append(t.parts, part{name: name, query: inQuery(pos)})
		sample = append(sample, 'x')
		rest, at = rest[open+end+1:], at+open+end+1
	}
	u, err := url.Parse(string(sample))
	switch {
	case err != nil:
		return Template{}, fmt.Errorf("%q: not a URL: want an absolute http or https URL", text)
	case u.Scheme != "http" && u.Scheme != "https":
		return Template{}, fmt.Errorf("%q: want an absolute http or https URL", text)
	case u.Host == "":
		return Template{}, fmt.Errorf("%q: want an absolute URL with a host (scheme://host[:port]/…)", text)
	case u.User != nil:
		return Template{}, fmt.Errorf("%q: must not contain user info (user:password@): every page would show it", text)
	}
	// The authority ends at the first "/", "?" or "#" after "//".
	authEnd := strings.Index(text, "//") + 2
	if i := strings.IndexAny(text[authEnd:], "/?#"); i >= 0 {
		authEnd += i
	} else {
		authEnd = len(text)
	}
	if strings.ContainsAny(text[:authEnd], "{}") {
		return Template{}, fmt.Errorf("%q: placeholders go in the path, query or fragment, not in the scheme or host", text)
	}
	if required != "" && !hasRequired {
		return Template{}, fmt.Errorf("%q: has no {%s}: every %s would get the same link", text, required, required)
	}
	return t, nil
}

// Expand is the template's URL with each placeholder replaced by its
// value, path-escaped (url.PathEscape: "/", "?", "#", spaces and
// non-ASCII letters are percent-encoded) so that it stays one path
// segment, in the fragment too; a placeholder in the query, or in a
// route's query in the fragment, is query-escaped instead ("&" and "="
// too). "" for the zero Template.
func (t Template) Expand(v Values) string {
	if t.IsZero() {
		return ""
	}
	var b strings.Builder
	for _, p := range t.parts {
		switch {
		case p.name == "":
			b.WriteString(p.text)
		case p.query:
			b.WriteString(url.QueryEscape(v.get(p.name)))
		default:
			b.WriteString(url.PathEscape(v.get(p.name)))
		}
	}
	return b.String()
}

// The Flink Web UI's routes (flink-runtime-web's Angular router, hash
// routing, as in Flink 1.20 and 2.x): a job's overview and a vertex's
// detail drawer, under #/job/running/ for a job that has not ended and
// #/job/completed/ for one that has (FINISHED, FAILED or CANCELED). The
// Web UI has no page per subtask: its subtasks tab lists them all.
const (
	FlinkJobRoute    = "#/job/running/{job}/overview"
	FlinkVertexRoute = "#/job/running/{job}/overview/{vertex}/detail"
	runningRoute     = "/job/running/"
	completedRoute   = "/job/completed/"
)

// Flink are the links into one Flink endpoint's Web UI. The zero Flink
// has none.
type Flink struct {
	// job, vertex and subtask are each [running, ended]: the ended one has
	// #/job/completed/ where the running one's fragment has #/job/running/.
	job, vertex, subtask [2]Template
}

// FlinkTemplates are the texts of an endpoint's Web UI links as
// configured; "" for a link not configured.
type FlinkTemplates struct {
	// Base is the Web UI's URL when it is not the endpoint's REST URL;
	// the default routes are put after it.
	Base                 string
	Job, Vertex, Subtask string
}

// KeyError is a problem with one template of an endpoint or a cluster:
// Key is "base", "job", "vertex" or "subtask" (Flink), "topic" or "group"
// (Kafka).
type KeyError struct {
	Key string
	Err error
}

// NewFlink checks an endpoint's Web UI templates. A job or vertex link
// not configured is the default route after Base, or after restURL (the
// endpoint's REST URL, where a JobManager also serves its Web UI) when no
// Base is given; a subtask link only exists when configured. The errors
// name each template's key.
func NewFlink(restURL string, t FlinkTemplates) (Flink, []KeyError) {
	var f Flink
	var errs []KeyError
	base := restURL
	if t.Base != "" {
		if err := checkBase(t.Base); err != nil {
			errs = append(errs, KeyError{"base", err})
		}
		base = t.Base
	}
	base = baseOf(base)
	for _, l := range []struct {
		key, text, route, required string
		allowed                    []string
		into                       *[2]Template
	}{
		{"job", t.Job, FlinkJobRoute, Job, []string{Endpoint, Job}, &f.job},
		{"vertex", t.Vertex, FlinkVertexRoute, Vertex, []string{Endpoint, Job, Vertex}, &f.vertex},
		{"subtask", t.Subtask, "", Subtask, []string{Endpoint, Job, Vertex, Subtask}, &f.subtask},
	} {
		text := l.text
		if text == "" && l.route != "" && base != "" {
			text = base + l.route
		}
		tm, err := Parse(text, l.required, l.allowed...)
		if err != nil {
			errs = append(errs, KeyError{l.key, err})
			continue
		}
		ended, _ := Parse(completed(text), l.required, l.allowed...)
		*l.into = [2]Template{tm, ended}
	}
	if len(errs) > 0 {
		return Flink{}, errs
	}
	return f, nil
}

// checkBase reports a Web UI base that is not an absolute http or https
// URL without user info, query or fragment.
func checkBase(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("%q: not a URL: want the web UI's absolute http or https URL, e.g. https://flink.example.com/", s)
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("%q: want the web UI's absolute http or https URL, e.g. https://flink.example.com/", s)
	case u.User != nil:
		return fmt.Errorf("%q: must not contain user info (user:password@): every page would show it", s)
	case u.RawQuery != "" || u.ForceQuery || strings.Contains(s, "#"):
		return fmt.Errorf("%q: must not have a query or fragment: the web UI's routes follow it", s)
	case strings.ContainsAny(s, "{}"):
		return fmt.Errorf("%q: takes no placeholders: give job, vertex or subtask templates for that", s)
	}
	return nil
}

// baseOf is the URL the default routes follow: the URL without query or
// fragment, ending in "/"; "" when it is not a URL.
func baseOf(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return ""
	}
	u.RawQuery, u.Fragment, u.RawFragment, u.ForceQuery = "", "", "", false
	out := u.String()
	if !strings.HasSuffix(out, "/") {
		out += "/"
	}
	return out
}

// completed is a template text for an ended job: #/job/running/ in its
// fragment becomes #/job/completed/, as the Web UI routes ended jobs.
func completed(text string) string {
	i := strings.IndexByte(text, '#')
	if i < 0 {
		return text
	}
	return text[:i] + strings.Replace(text[i:], runningRoute, completedRoute, 1)
}

// LogValue is f's job, vertex and subtask templates (for a job that has
// not ended), for the effective configuration's log line; templates hold
// no secrets, as user info is refused.
func (f Flink) LogValue() slog.Value {
	return slog.GroupValue(slog.String("job", f.job[0].text), slog.String("vertex", f.vertex[0].text), slog.String("subtask", f.subtask[0].text))
}

// IsZero reports whether f has no link.
func (f Flink) IsZero() bool {
	return f.job[0].IsZero() && f.vertex[0].IsZero() && f.subtask[0].IsZero()
}

func pick(t [2]Template, ended bool) Template {
	if ended {
		return t[1]
	}
	return t[0]
}

// JobURL is the Web UI's page of a job, "" when there is none; ended is
// whether the job has ended (FINISHED, FAILED or CANCELED).
func (f Flink) JobURL(endpoint, job string, ended bool) string {
	return pick(f.job, ended).Expand(Values{Endpoint: endpoint, Job: job})
}

// VertexURL is the Web UI's page of a vertex, "" when there is none.
func (f Flink) VertexURL(endpoint, job, vertex string, ended bool) string {
	return pick(f.vertex, ended).Expand(Values{Endpoint: endpoint, Job: job, Vertex: vertex})
}

// SubtaskURL is the configured page of a subtask, "" when there is none.
func (f Flink) SubtaskURL(endpoint, job, vertex string, subtask int, ended bool) string {
	return pick(f.subtask, ended).Expand(Values{Endpoint: endpoint, Job: job, Vertex: vertex, Subtask: strconv.Itoa(subtask)})
}

// Kafka are the links into a Kafka UI for one cluster. The zero Kafka has
// none.
type Kafka struct{ topic, group Template }

// NewKafka checks a cluster's UI templates ("" for a link not
// configured: there is no default). The errors name each template's key.
func NewKafka(topic, group string) (Kafka, []KeyError) {
	var k Kafka
	var errs []KeyError
	var err error
	if k.topic, err = Parse(topic, Topic, Cluster, Topic); err != nil {
		errs = append(errs, KeyError{"topic", err})
	}
	if k.group, err = Parse(group, Group, Cluster, Group); err != nil {
		errs = append(errs, KeyError{"group", err})
	}
	if len(errs) > 0 {
		return Kafka{}, errs
	}
	return k, nil
}

// LogValue is k's topic and group templates, for the effective
// configuration's log line.
func (k Kafka) LogValue() slog.Value {
	return slog.GroupValue(slog.String("topic", k.topic.text), slog.String("group", k.group.text))
}

// IsZero reports whether k has no link.
func (k Kafka) IsZero() bool { return k.topic.IsZero() && k.group.IsZero() }

// TopicURL is the UI's page of a topic, "" when there is none.
func (k Kafka) TopicURL(cluster, topic string) string {
	return k.topic.Expand(Values{Cluster: cluster, Topic: topic})
}

// GroupURL is the UI's page of a consumer group, "" when there is none.
func (k Kafka) GroupURL(cluster, group string) string {
	return k.group.Expand(Values{Cluster: cluster, Group: group})
}
