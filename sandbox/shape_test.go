package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/collectors/flink"
)

const recordings = "../collectors/testdata/flink/2.2.1"

// notServed lists recorded endpoints the sandbox deliberately does not serve
// (skewscope does not read them); the test checks they answer 404.
var notServed = map[string]bool{
	"/taskmanagers/{taskmanagerid}":         true,
	"/taskmanagers/{taskmanagerid}/metrics": true,
}

// freeFormObjects are objects whose keys are data, not schema: the job's own
// user configuration. Their keys are not compared.
var freeFormObjects = map[string]bool{
	".execution-config.user-config": true,
}

// The other allowed differences, applied everywhere:
//   - a null in the recording matches any value (nullable fields such as
//     savepointFormat and latest.savepoint);
//   - a non-finite number, which Jackson writes as the string "NaN", matches
//     a JSON number and the other way round.

type manifest struct {
	Recordings map[string]struct {
		Method string            `json:"method"`
		Path   string            `json:"path"`
		Status int               `json:"status"`
		Vars   map[string]string `json:"vars"`
	} `json:"recordings"`
}

func TestRESTShapesMatchRecordedFlink(t *testing.T) {
	sb := startSandbox(t, Options{checkpointEvery: 500 * time.Millisecond})
	c := newFlinkClient(t, sb)
	j := jobNamed(t, sb, "orders-enrichment")

	// Wait for a completed checkpoint and for offsets on every subtask.
	var cpID int64
	poll(t, 20*time.Second, func() error {
		cps, err := c.Checkpoints(t.Context(), j.ID)
		if err != nil {
			return err
		}
		if cps.Latest.Completed == nil {
			return fmt.Errorf("no completed checkpoint yet")
		}
		cpID = cps.Latest.Completed.ID
		_, obs, err := observed(t.Context(), c, j)
		if err != nil {
			return err
		}
		for _, st := range obs.States {
			if st.CommittedOffset < 0 && st.Topic == topicOrders {
				return fmt.Errorf("%s-%d not committed yet", st.Topic, st.Partition)
			}
		}
		return nil
	})

	raw, err := os.ReadFile(filepath.Join(recordings, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man manifest
	if err := json.Unmarshal(raw, &man); err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range man.Recordings {
			if !yield(k) {
				return
			}
		}
	})
	compared := 0
	for _, name := range names {
		rec := man.Recordings[name]
		t.Run(name, func(t *testing.T) {
			keyed := strings.Contains(name, "keyed")
			vid := j.SourceVertexID
			if keyed {
				vid = j.KeyedVertexID
			}
			pathOnly, query, _ := strings.Cut(rec.Path, "?")
			p := strings.NewReplacer(
				"{jobid}", j.ID, "{vertexid}", vid, "{checkpointid}", strconv.FormatInt(cpID, 10),
				"{subtaskindex}", "0", "{taskmanagerid}", "sandbox-tm",
			).Replace(pathOnly)
			if notServed[pathOnly] {
				if st, _ := fetch(t, sb.FlinkURL()+strings.TrimPrefix(p, "/")); st != http.StatusNotFound {
					t.Errorf("GET %s = %d, want 404 (listed as not served)", p, st)
				}
				return
			}
			if query != "" {
				q, err := url.ParseQuery(query)
				if err != nil {
					t.Fatal(err)
				}
				if get := q.Get("get"); get != "" && !strings.Contains(name, "missing-id") && !strings.Contains(p, "/subtasks/metrics") && !strings.HasSuffix(p, j.ID+"/metrics") {
					q.Set("get", strings.Join(adaptIDs(t, sb, p, strings.Split(get, ",")), ","))
				}
				p += "?" + q.Encode()
			}
			recBody, err := os.ReadFile(filepath.Join(recordings, name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			// Ids inside the recording (job id, vertex ids as map keys) are
			// replaced by ours.
			repl := []string{
				man.Recordings["job"].Vars["jobid"], j.ID,
				man.Recordings["vertex-source"].Vars["vertexid"], j.SourceVertexID,
				man.Recordings["vertex-keyed"].Vars["vertexid"], j.KeyedVertexID,
			}
			recBody = []byte(strings.NewReplacer(repl...).Replace(string(recBody)))
			var want any
			if err := json.Unmarshal(recBody, &want); err != nil {
				t.Fatal(err)
			}
			st, body := fetch(t, sb.FlinkURL()+strings.TrimPrefix(p, "/"))
			if st != rec.Status {
				t.Fatalf("GET %s = %d %s, want %d", p, st, body, rec.Status)
			}
			var got any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("GET %s: %v", p, err)
			}
			var diffs []string
			compareShape("", want, got, &diffs)
			if len(diffs) > 8 {
				diffs = append(diffs[:8], fmt.Sprintf("… %d more", len(diffs)-8))
			}
			if len(diffs) > 0 {
				t.Errorf("GET %s: shape differs from %s.json:\n  %s", p, name, strings.Join(diffs, "\n  "))
			}
			compared++
		})
	}
	t.Logf("compared %d endpoints with their recordings", compared)
	if compared < 25 {
		t.Errorf("compared %d endpoints, want ≥ 25", compared)
	}
}

// adaptIDs replaces recorded metric ids that name the recording's topics
// (orders, payments_v1) by ids of the same form that the sandbox has, so the
// same request returns the same kinds of values.
func adaptIDs(t *testing.T, sb *Sandbox, path string, ids []string) []string {
	t.Helper()
	st, body := fetch(t, sb.FlinkURL()+strings.TrimPrefix(path, "/"))
	if st != http.StatusOK {
		t.Fatalf("GET %s = %d", path, st)
	}
	var list []struct{ ID string }
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, m := range list {
		have[m.ID] = true
	}
	tpRe := regexp.MustCompile(`topic\.[^.]+\.partition\.\d+\.`)
	splitRe := regexp.MustCompile(`split\.[^.]+-\d+\.`)
	norm := func(id string) string {
		return splitRe.ReplaceAllString(tpRe.ReplaceAllString(id, "topic.T.partition.P."), "split.T-P.")
	}
	var out []string
	for _, id := range ids {
		if have[id] {
			out = append(out, id)
			continue
		}
		for _, m := range list {
			if norm(m.ID) == norm(id) {
				out = append(out, m.ID)
				break
			}
		}
	}
	return out
}

func fetch(t *testing.T, u string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func nonFinite(v any) bool {
	s, ok := v.(string)
	return ok && (s == "NaN" || s == "Infinity" || s == "-Infinity")
}

// compareShape appends to diffs every place where got's shape differs from
// want's: object keys, JSON types, and array element shapes (each element of
// got against the first of want).
func compareShape(path string, want, got any, diffs *[]string) {
	if want == nil {
		return
	}
	wt, gt := jsonType(want), jsonType(got)
	if wt != gt {
		if (wt == "number" && nonFinite(got)) || (gt == "number" && nonFinite(want)) {
			return
		}
		*diffs = append(*diffs, fmt.Sprintf("%s: type %s, want %s", orRoot(path), gt, wt))
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		if freeFormObjects[path] {
			return
		}
		for _, k := range slices.Sorted(mapKeys(w)) {
			gv, ok := g[k]
			if !ok {
				*diffs = append(*diffs, fmt.Sprintf("%s: missing key %q", orRoot(path), k))
				continue
			}
			compareShape(path+"."+k, w[k], gv, diffs)
		}
		for _, k := range slices.Sorted(mapKeys(g)) {
			if _, ok := w[k]; !ok {
				*diffs = append(*diffs, fmt.Sprintf("%s: extra key %q", orRoot(path), k))
			}
		}
	case []any:
		g := got.([]any)
		if len(w) == 0 {
			if len(g) != 0 {
				*diffs = append(*diffs, fmt.Sprintf("%s: %d elements, want an empty array", orRoot(path), len(g)))
			}
			return
		}
		if len(g) == 0 {
			*diffs = append(*diffs, fmt.Sprintf("%s: empty array, want elements like %v", orRoot(path), w[0]))
			return
		}
		for i, e := range g {
			compareShape(fmt.Sprintf("%s[%d]", path, i), w[min(i, len(w)-1)], e, diffs)
		}
	}
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func orRoot(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}

// TestMetricIDForms checks the sandbox's source metric ids against the
// recorded vertex metric list: every recorded form (with topic, partition
// and subtask abstracted) that skewscope reads exists in the sandbox.
func TestMetricIDForms(t *testing.T) {
	sb := startSandbox(t, Options{})
	c := newFlinkClient(t, sb)
	j := jobNamed(t, sb, "orders-enrichment")
	ids, err := c.VertexMetricIDs(t.Context(), j.ID, j.SourceVertexID)
	if err != nil {
		t.Fatal(err)
	}
	form := func(id string) string {
		id = regexp.MustCompile(`^\d+\.`).ReplaceAllString(id, "N.")
		id = regexp.MustCompile(`topic\.[^.]+\.partition\.\d+\.`).ReplaceAllString(id, "topic.T.partition.P.")
		return regexp.MustCompile(`split\.[^.]+-\d+\.`).ReplaceAllString(id, "split.T-P.")
	}
	have := map[string]bool{}
	for _, id := range ids {
		have[form(id)] = true
	}
	raw, err := os.ReadFile(filepath.Join(recordings, "vertex-source-metrics-list.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec []struct{ ID string }
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	read := regexp.MustCompile(`(busy|idle|backPressured)TimeMsPerSecond$|numRecords(In|Out)(PerSecond)?$|currentOffset$|committedOffset$|pendingRecords$|records-lag-max$|commitsSucceeded$|currentOutputWatermark$|watermark\.currentWatermark$`)
	for _, r := range rec {
		f := form(r.ID)
		if read.MatchString(f) && !have[f] {
			t.Errorf("recorded metric id form %q (from %q) missing in the sandbox", f, r.ID)
		}
	}
	obs := flink.ParseKafkaSourceMetricIDs(ids)
	if len(obs.States) == 0 {
		t.Errorf("ParseKafkaSourceMetricIDs found no Kafka partitions in %d ids", len(ids))
	}
}

func TestRESTErrors(t *testing.T) {
	sb := startSandbox(t, Options{})
	base := sb.FlinkURL()
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "nope", http.StatusNotFound},
		{"GET", "jobs/00000000000000000000000000000000", http.StatusNotFound},
		{"GET", "v1/overview", http.StatusOK},
		{"POST", "jobs/overview", http.StatusMethodNotAllowed},
		{"GET", "jobs/overview?get=" + strings.Repeat("x", 4100), http.StatusRequestEntityTooLarge},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.method, tc.path[:min(40, len(tc.path))], err)
		}
		var body struct{ Errors []string }
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path[:min(40, len(tc.path))], resp.StatusCode, tc.want)
		}
		if tc.want != http.StatusOK && len(body.Errors) == 0 {
			t.Errorf("%s %s: body has no errors array", tc.method, tc.path[:min(40, len(tc.path))])
		}
	}
}
