package linkout

import (
	"net/url"
	"strings"
	"testing"
)

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		text, required string
		allowed        []string
		want           string
	}{
		{"https://ui.example.com/topics/{topik}", Topic, []string{Cluster, Topic}, "unknown placeholder {topik}: this link knows {cluster}, {topic}"},
		{"https://ui.example.com/topics/{topic", Topic, []string{Topic}, "a { without its }"},
		{"https://ui.example.com/topics/topic}", Topic, []string{Topic}, "a } without its {"},
		{"ftp://ui.example.com/{topic}", Topic, []string{Topic}, "want an absolute http or https URL"},
		{"/topics/{topic}", Topic, []string{Topic}, "want an absolute http or https URL"},
		{"https:///topics/{topic}", Topic, []string{Topic}, "with a host"},
		{"https://user:pw@ui.example.com/{topic}", Topic, []string{Topic}, "must not contain user info"},
		{"https://{cluster}.example.com/{topic}", Topic, []string{Cluster, Topic}, "not in the scheme or host"},
		{"https://ui.example.com/groups", Group, []string{Group}, "has no {group}"},
		{"https://ui.example.com/x/{vertex}", Subtask, []string{Job, Vertex, Subtask}, "has no {subtask}"},
	} {
		_, err := Parse(tc.text, tc.required, tc.allowed...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tc.text, err, tc.want)
		}
	}
}

// A hostile value stays in the path segment, query value or fragment
// segment its placeholder stands in: the URL parses back to the same
// segments with the value, decoded, in its place.
func TestExpandKeepsValuesInTheirSegment(t *testing.T) {
	hostile := []string{
		"a/b", "../../admin", "x#frag", "x?y=1", "with space", "ordres-é", "日本語",
		"\u202eevil\u202c", "\u05e9\u05dc\u05d5\u05dd-topic", "a&b=c", "100%", "a+b", "",
	}
	path, err := Parse("https://ui.example.com/ui/clusters/{cluster}/all-topics/{topic}/overview", Topic, Cluster, Topic)
	if err != nil {
		t.Fatal(err)
	}
	frag, err := Parse("https://flink.example.com/#/job/running/{job}/overview/{vertex}/detail", Vertex, Job, Vertex)
	if err != nil {
		t.Fatal(err)
	}
	query, err := Parse("https://grafana.example.com/d/x?var-group={group}&var-cluster={cluster}#top", Group, Cluster, Group)
	if err != nil {
		t.Fatal(err)
	}
	fragQuery, err := Parse("https://console.example.com/#/groups/{group}?topic={topic}&x=1", Group, Group, Topic)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range hostile {
		got := fragQuery.Expand(Values{Group: v, Topic: v})
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("Expand(%q) = %q: %v", v, got, err)
		}
		route, rawQuery, _ := strings.Cut(u.EscapedFragment(), "?")
		rs := strings.Split(route, "/")
		rq, err := url.ParseQuery(rawQuery)
		if len(rs) != 3 || err != nil || len(rq) != 2 || rq.Get("topic") != v || rq.Get("x") != "1" {
			t.Errorf("Expand(%q) = %q: fragment route %q, query %v (%v), want /groups/… and topic the value, x 1", v, got, route, rq, err)
		} else if s, _ := url.PathUnescape(rs[2]); s != v {
			t.Errorf("Expand(%q) = %q: group segment %q, want the value", v, got, s)
		}

		got = path.Expand(Values{Cluster: "prod/eu", Topic: v})
		u, err = url.Parse(got)
		if err != nil {
			t.Fatalf("Expand(%q) = %q: %v", v, got, err)
		}
		segs := strings.Split(u.EscapedPath(), "/")
		if len(segs) != 7 || segs[6] != "overview" {
			t.Errorf("Expand(%q) = %q: path %q, want 6 segments ending in overview", v, got, u.EscapedPath())
			continue
		}
		if s, _ := url.PathUnescape(segs[5]); s != v {
			t.Errorf("Expand(%q) = %q: topic segment %q, want the value", v, got, s)
		}
		if s, _ := url.PathUnescape(segs[3]); s != "prod/eu" {
			t.Errorf("Expand(%q) = %q: cluster segment %q, want prod/eu", v, got, s)
		}
		if u.RawQuery != "" || u.Fragment != "" || u.Host != "ui.example.com" {
			t.Errorf("Expand(%q) = %q: host %q, query %q, fragment %q, want ui.example.com and none", v, got, u.Host, u.RawQuery, u.Fragment)
		}

		got = frag.Expand(Values{Job: "j1", Vertex: v})
		u, err = url.Parse(got)
		if err != nil {
			t.Fatalf("Expand(%q) = %q: %v", v, got, err)
		}
		fs := strings.Split(u.EscapedFragment(), "/")
		if u.Path != "/" || len(fs) != 7 || fs[6] != "detail" || fs[3] != "j1" {
			t.Errorf("Expand(%q) = %q: path %q, fragment %q, want / and #/job/running/j1/overview/…/detail", v, got, u.Path, u.EscapedFragment())
			continue
		}
		if s, _ := url.PathUnescape(fs[5]); s != v {
			t.Errorf("Expand(%q) = %q: vertex segment %q, want the value", v, got, s)
		}

		got = query.Expand(Values{Cluster: "c", Group: v})
		u, err = url.Parse(got)
		if err != nil {
			t.Fatalf("Expand(%q) = %q: %v", v, got, err)
		}
		q := u.Query()
		if len(q) != 2 || q.Get("var-group") != v || q.Get("var-cluster") != "c" || u.Fragment != "top" {
			t.Errorf("Expand(%q) = %q: query %v, fragment %q, want var-group the value, var-cluster c, #top", v, got, q, u.Fragment)
		}
	}
}

func TestNewFlinkDefaults(t *testing.T) {
	for _, tc := range []struct {
		rest                         string
		tm                           FlinkTemplates
		job, jobEnded, vertex, subtk string
	}{
		{
			rest: "http://jobmanager:8081",
			job:  "http://jobmanager:8081/#/job/running/abc/overview", jobEnded: "http://jobmanager:8081/#/job/completed/abc/overview",
			vertex: "http://jobmanager:8081/#/job/running/abc/overview/v1/detail",
		},
		{
			// An ingress path prefix: the Web UI is served under it too.
			rest: "https://flink.example.com/flink/orders/",
			job:  "https://flink.example.com/flink/orders/#/job/running/abc/overview", jobEnded: "https://flink.example.com/flink/orders/#/job/completed/abc/overview",
			vertex: "https://flink.example.com/flink/orders/#/job/running/abc/overview/v1/detail",
		},
		{
			rest: "http://jobmanager:8081", tm: FlinkTemplates{Base: "https://flink-ui.example.com/orders"},
			job: "https://flink-ui.example.com/orders/#/job/running/abc/overview", jobEnded: "https://flink-ui.example.com/orders/#/job/completed/abc/overview",
			vertex: "https://flink-ui.example.com/orders/#/job/running/abc/overview/v1/detail",
		},
		{
			rest: "http://jobmanager:8081",
			tm: FlinkTemplates{
				Job:     "https://portal.example.com/flink/{endpoint}/jobs/{job}",
				Subtask: "https://flink.example.com/#/job/running/{job}/overview/{vertex}/subtasks?subtask={subtask}",
			},
			job: "https://portal.example.com/flink/orders/jobs/abc", jobEnded: "https://portal.example.com/flink/orders/jobs/abc",
			vertex: "http://jobmanager:8081/#/job/running/abc/overview/v1/detail",
			subtk:  "https://flink.example.com/#/job/running/abc/overview/v1/subtasks?subtask=3",
		},
	} {
		f, errs := NewFlink(tc.rest, tc.tm)
		if errs != nil {
			t.Fatalf("NewFlink(%q, %+v) = %v", tc.rest, tc.tm, errs)
		}
		if got := f.JobURL("orders", "abc", false); got != tc.job {
			t.Errorf("NewFlink(%q, %+v).JobURL(running) = %q, want %q", tc.rest, tc.tm, got, tc.job)
		}
		if got := f.JobURL("orders", "abc", true); got != tc.jobEnded {
			t.Errorf("NewFlink(%q, %+v).JobURL(ended) = %q, want %q", tc.rest, tc.tm, got, tc.jobEnded)
		}
		if got := f.VertexURL("orders", "abc", "v1", false); got != tc.vertex {
			t.Errorf("NewFlink(%q, %+v).VertexURL = %q, want %q", tc.rest, tc.tm, got, tc.vertex)
		}
		if got := f.SubtaskURL("orders", "abc", "v1", 3, false); got != tc.subtk {
			t.Errorf("NewFlink(%q, %+v).SubtaskURL = %q, want %q", tc.rest, tc.tm, got, tc.subtk)
		}
	}
	var zero Flink
	if got := zero.JobURL("e", "j", false) + zero.VertexURL("e", "j", "v", true); got != "" {
		t.Errorf("Flink{} links = %q, want none", got)
	}
}

func TestNewFlinkErrorsNameTheirKey(t *testing.T) {
	_, errs := NewFlink("http://jm:8081", FlinkTemplates{
		Base: "https://flink.example.com/?x=1", Job: "https://flink.example.com/#/job/running/{vertex}", Subtask: "https://flink.example.com/{job}",
	})
	var keys []string
	for _, e := range errs {
		keys = append(keys, e.Key)
	}
	if got := strings.Join(keys, ","); got != "base,job,subtask" {
		t.Errorf("NewFlink(bad base, job, subtask) errors at %q (%v), want base,job,subtask", got, errs)
	}
}

func TestNewKafka(t *testing.T) {
	k, errs := NewKafka("https://akhq.example.com/ui/{cluster}/topic/{topic}", "https://akhq.example.com/ui/{cluster}/group/{group}")
	if errs != nil {
		t.Fatal(errs)
	}
	if got, want := k.TopicURL("prod", "orders v2"), "https://akhq.example.com/ui/prod/topic/orders%20v2"; got != want {
		t.Errorf("TopicURL = %q, want %q", got, want)
	}
	if got, want := k.GroupURL("prod", "flink/orders"), "https://akhq.example.com/ui/prod/group/flink%2Forders"; got != want {
		t.Errorf("GroupURL = %q, want %q", got, want)
	}
	if _, errs := NewKafka("https://ui/{group}", "https://ui/{topic}"); len(errs) != 2 || errs[0].Key != "topic" || errs[1].Key != "group" {
		t.Errorf("NewKafka(swapped) = %v, want a topic and a group error", errs)
	}
	var none Kafka
	if none.TopicURL("c", "t") != "" || none.GroupURL("c", "g") != "" {
		t.Error("Kafka{} has links, want none")
	}
}
