package web

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/assign"
)

func newTestServer(t testing.TB) *Server {
	t.Helper()
	s, err := NewServer(Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	s.SetReady(true)
	return s
}

// do sends one request to s and returns status and body.
func do(t testing.TB, s http.Handler, method, target string, body io.Reader) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, target, body)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

func decode[T any](t testing.TB, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, b)
	}
	return v
}

func TestKeyGroupGet(t *testing.T) {
	s := newTestServer(t)
	aaKG := assign.KeyGroupForHash(2112, 128)
	tests := []struct {
		query string
		want  map[string]any
	}{
		// From assign/testdata/golden/key_to_operator.csv: "" at maxP 128 is key group 94.
		{"key=&maxParallelism=128&parallelism=4", map[string]any{
			"key": "", "type": "string", "javaHash": 0.0, "maxParallelism": 128.0,
			"maxParallelismDefaulted": false, "keyGroup": 94.0, "parallelism": 4.0, "subtask": 2.0}},
		// Default max parallelism for p=4 is 128; no parallelism means no subtask.
		{"key=" + url.QueryEscape("") + "&type=string", map[string]any{
			"key": "", "type": "string", "javaHash": 0.0, "maxParallelism": 128.0,
			"maxParallelismDefaulted": true, "keyGroup": 94.0}},
		// Java's "Aa".hashCode() is 2112; Flink puts it in key group
		// murmurHash(2112) % 128.
		{"key=Aa&parallelism=10", map[string]any{
			"key": "Aa", "type": "string", "javaHash": 2112.0, "maxParallelism": 128.0,
			"maxParallelismDefaulted": true, "keyGroup": float64(aaKG), "parallelism": 10.0, "subtask": float64(aaKG * 10 / 128)}},
		{"key=-1&type=long&maxParallelism=128", map[string]any{
			"key": "-1", "type": "long", "javaHash": 0.0, "maxParallelism": 128.0,
			"maxParallelismDefaulted": false, "keyGroup": 94.0}},
		{"key=" + url.QueryEscape(`["",0]`) + "&type=" + url.QueryEscape("tuple<string,int>") + "&maxParallelism=4096&parallelism=2&targetParallelism=3", map[string]any{
			"key": `["",0]`, "type": "tuple<string,int>", "javaHash": 0.0, "maxParallelism": 4096.0,
			"maxParallelismDefaulted": false, "keyGroup": 2526.0, "parallelism": 2.0, "subtask": 1.0,
			"targetParallelism": 3.0, "targetSubtask": 1.0}},
	}
	for _, tt := range tests {
		code, body := do(t, s, "GET", "/api/v1/keygroup?"+tt.query, nil)
		if code != 200 {
			t.Errorf("GET keygroup?%s = %d %s, want 200", tt.query, code, body)
			continue
		}
		got := decode[map[string]any](t, body)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("GET keygroup?%s mismatch (-want +got):\n%s", tt.query, diff)
		}
	}
}

func TestKeyGroupCollision(t *testing.T) {
	s := newTestServer(t)
	_, a := do(t, s, "GET", "/api/v1/keygroup?key=Aa&maxParallelism=128", nil)
	_, b := do(t, s, "GET", "/api/v1/keygroup?key=BB&maxParallelism=128", nil)
	ka, kb := decode[keyGroupResult](t, a), decode[keyGroupResult](t, b)
	if ka.JavaHash != kb.JavaHash || ka.KeyGroup != kb.KeyGroup {
		t.Errorf(`"Aa" = (%d, %d), "BB" = (%d, %d); Java hashes both to 2112`, ka.JavaHash, ka.KeyGroup, kb.JavaHash, kb.KeyGroup)
	}
}

func TestAPIBadInput(t *testing.T) {
	s := newTestServer(t)
	tests := []struct {
		method, target, body string
		status               int
		mention              string // the error must name this
	}{
		{"GET", "/api/v1/keygroup", "", 400, "key"},
		{"GET", "/api/v1/keygroup?key=a&parallelism=0", "", 400, "parallelism"},
		{"GET", "/api/v1/keygroup?key=a&parallelism=-3", "", 400, "1..32768"},
		{"GET", "/api/v1/keygroup?key=a&parallelism=32769", "", 400, "parallelism"},
		{"GET", "/api/v1/keygroup?key=a&parallelism=abc", "", 400, "parallelism"},
		{"GET", "/api/v1/keygroup?key=a&parallelism=4&parallelism=8", "", 400, "given 2 times"},
		{"GET", "/api/v1/keygroup?key=a&maxParallelism=32769", "", 400, "maxParallelism"},
		{"GET", "/api/v1/keygroup?key=a&maxParallelism=100&parallelism=200", "", 400, "maxParallelism"},
		{"GET", "/api/v1/keygroup?key=a&maxParallelism=128&targetParallelism=200", "", 400, "targetParallelism"},
		{"GET", "/api/v1/keygroup?key=abc&type=int", "", 400, "not an integer"},
		{"GET", "/api/v1/keygroup?key=99999999999&type=int", "", 400, "out of range"},
		{"GET", "/api/v1/keygroup?key=1&type=uuid", "", 400, "type"},
		{"GET", "/api/v1/keygroup?key=x&type=tuple%3Cstring%2Cint%3E", "", 400, "JSON array"},
		{"GET", "/api/v1/keygroups/ranges", "", 400, "parallelism"},
		{"GET", "/api/v1/keygroups/ranges?parallelism=256&maxParallelism=128", "", 400, "maxParallelism"},
		{"GET", "/api/v1/assignment?parallelism=4", "", 400, "topic"},
		{"GET", "/api/v1/assignment?topic=orders&parallelism=4", "", 400, "NAME:PARTITIONS"},
		{"GET", "/api/v1/assignment?topic=orders:0&parallelism=4", "", 400, "partition count"},
		{"GET", "/api/v1/assignment?topic=orders:4&topic=orders:5&parallelism=4", "", 400, "twice"},
		{"GET", "/api/v1/assignment?topic=orders:4", "", 400, "parallelism"},
		{"GET", "/api/v1/assignment?topic=orders:4&parallelism=4&strategy=magic", "", 400, "strategy"},
		{"GET", "/api/v1/assignment?topic=orders:4&parallelism=4&mode=replay", "", 400, "mode"},
		{"GET", "/api/v1/assignment?topic=orders:4&parallelism=4&mode=restore", "", 400, "from"},
		{"GET", "/api/v1/assignment?topic=orders:4&parallelism=4&from=2", "", 400, "from"},
		{"POST", "/api/v1/keygroup", `{}`, 400, "keys"},
		{"POST", "/api/v1/keygroup", `{"keys":["a"],"parallelism":0,"maxParallelism":40000}`, 400, "maxParallelism"},
		{"POST", "/api/v1/keygroup", `{"keys":["a"],"colour":"red"}`, 400, "colour"},
		{"POST", "/api/v1/keygroup", `{"keys":["a", null]}`, 400, "keys[1]"},
		{"POST", "/api/v1/keygroup", `{"type":"int","keys":[1, "x"]}`, 400, "keys[1]"},
		{"POST", "/api/v1/keygroup", `{"type":"string","keys":[1]}`, 400, "keys[0]"},
		{"POST", "/api/v1/keygroup", `not json`, 400, "body"},
		{"GET", "/api/v1/nothing", "", 404, "/api/v1/nothing"},
		{"DELETE", "/api/v1/keygroup", "", 405, "DELETE"},
	}
	for _, tt := range tests {
		var body io.Reader
		if tt.body != "" {
			body = strings.NewReader(tt.body)
		}
		code, b := do(t, s, tt.method, tt.target, body)
		if code != tt.status {
			t.Errorf("%s %s = %d %s, want %d", tt.method, tt.target, code, b, tt.status)
			continue
		}
		e := decode[apiErrorBody](t, b)
		if !strings.Contains(e.Error, tt.mention) {
			t.Errorf("%s %s error = %q, want it to mention %q", tt.method, tt.target, e.Error, tt.mention)
		}
	}
}

func TestKeyGroupBulk(t *testing.T) {
	s := newTestServer(t)
	body := `{"type":"long","maxParallelism":128,"parallelism":4,"keys":[-1, "-1", 42]}`
	code, b := do(t, s, "POST", "/api/v1/keygroup", strings.NewReader(body))
	if code != 200 {
		t.Fatalf("POST keygroup = %d %s", code, b)
	}
	got := decode[struct{ Results []keyGroupResult }](t, b)
	if len(got.Results) != 3 {
		t.Fatalf("got %d results, want 3", len(got.Results))
	}
	for i, r := range got.Results[:2] {
		if r.JavaHash != 0 || r.KeyGroup != 94 || r.Subtask == nil || *r.Subtask != 2 {
			t.Errorf("result %d = %+v, want javaHash 0, keyGroup 94, subtask 2 (Long -1 hashes to 0)", i, r)
		}
	}
}

func TestKeyGroupBulkLimits(t *testing.T) {
	s := newTestServer(t)
	keys := make([]string, MaxBulkKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("customer-%d", i)
	}
	b, _ := json.Marshal(map[string]any{"keys": keys, "parallelism": 7})
	code, resp := do(t, s, "POST", "/api/v1/keygroup", bytes.NewReader(b))
	if code != 200 {
		t.Fatalf("POST %d keys = %d %.200s, want 200", len(keys), code, resp)
	}
	if n := len(decode[struct{ Results []keyGroupResult }](t, resp).Results); n != MaxBulkKeys {
		t.Errorf("got %d results, want %d", n, MaxBulkKeys)
	}

	b, _ = json.Marshal(map[string]any{"keys": append(keys, "one-too-many")})
	if code, resp := do(t, s, "POST", "/api/v1/keygroup", bytes.NewReader(b)); code != 413 {
		t.Errorf("POST %d keys = %d %.200s, want 413", MaxBulkKeys+1, code, resp)
	}

	huge := `{"keys":["` + strings.Repeat("x", MaxBulkBody) + `"]}`
	if code, resp := do(t, s, "POST", "/api/v1/keygroup", strings.NewReader(huge)); code != 413 {
		t.Errorf("POST %d-byte body = %d %.200s, want 413", len(huge), code, resp)
	}
}

func TestRanges(t *testing.T) {
	s := newTestServer(t)
	code, b := do(t, s, "GET", "/api/v1/keygroups/ranges?parallelism=3", nil)
	if code != 200 {
		t.Fatalf("GET ranges = %d %s", code, b)
	}
	got := decode[rangesResponse](t, b)
	want := []rangeEntry{{0, 0, 42, 43}, {1, 43, 85, 43}, {2, 86, 127, 42}}
	if got.MaxParallelism != 128 || !got.MaxParallelismDefaulted {
		t.Errorf("maxParallelism = %d (defaulted %v), want 128 (defaulted)", got.MaxParallelism, got.MaxParallelismDefaulted)
	}
	if diff := cmp.Diff(want, got.Ranges); diff != "" {
		t.Errorf("ranges for M=128 p=3 (-want +got):\n%s", diff)
	}
}

func TestAssignmentFlinkFresh(t *testing.T) {
	s := newTestServer(t)
	// Four topics × 3 partitions at n = 8: orders and payments start at
	// subtask 3, clicks and user-events at 5 (getSplitOwner).
	q := "topic=orders:3&topic=payments:3&topic=clicks:3&topic=user-events:3&parallelism=8"
	code, b := do(t, s, "GET", "/api/v1/assignment?"+q, nil)
	if code != 200 {
		t.Fatalf("GET assignment = %d %s", code, b)
	}
	got := decode[assignmentResponse](t, b)
	want := map[string][]int{"orders": {3, 4, 5}, "payments": {3, 4, 5}, "clicks": {5, 6, 7}, "user-events": {5, 6, 7}}
	for _, p := range got.Partitions {
		if w := want[p.Topic][p.Partition]; p.Subtask != w {
			t.Errorf("%s-%d on subtask %d, want %d", p.Topic, p.Partition, p.Subtask, w)
		}
	}
	counts := make([]int, len(got.Subtasks))
	for i, st := range got.Subtasks {
		counts[i] = st.Count
	}
	if diff := cmp.Diff([]int{0, 0, 0, 2, 2, 4, 2, 2}, counts); diff != "" {
		t.Errorf("partitions per subtask (-want +got):\n%s", diff)
	}
	if got.Strategy != "flink" || !got.Exact || got.Comparison || got.Mode != "fresh" {
		t.Errorf("strategy %q exact %v comparison %v mode %q, want flink, exact, not a comparison, fresh", got.Strategy, got.Exact, got.Comparison, got.Mode)
	}
	if got.Skew.FlinkPercent != 75 || got.Skew.Idle != 3 {
		t.Errorf("skew = %+v, want 75%% and 3 idle", got.Skew)
	}
}

func TestAssignmentRestore(t *testing.T) {
	s := newTestServer(t)
	// Orders × 8 at n = 4 restored at n = 3 gives contiguous chunks of 3, 3
	// and 2 splits (RoundRobinOperatorStateRepartitioner).
	code, b := do(t, s, "GET", "/api/v1/assignment?topic=orders:8&parallelism=3&mode=restore&from=4", nil)
	if code != 200 {
		t.Fatalf("GET restore = %d %s", code, b)
	}
	got := decode[assignmentResponse](t, b)
	var counts []int
	for _, st := range got.Subtasks {
		counts = append(counts, st.Count)
	}
	if diff := cmp.Diff([]int{3, 3, 2}, counts); diff != "" {
		t.Errorf("restore 4→3 chunk sizes (-want +got):\n%s", diff)
	}
	if !got.Exact || got.FromParallelism != 4 || !cmp.Equal(got.History, []int{4, 3}) || got.Mode != "restore" {
		t.Errorf("restore response = exact %v from %d history %v mode %s, want exact, 4, [4 3], restore", got.Exact, got.FromParallelism, got.History, got.Mode)
	}
	// The same through the engine: the API adds nothing of its own.
	rr, err := assign.RestoreAssignment([]assign.Topic{{Name: "orders", Partitions: 8}}, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range got.Subtasks {
		if !cmp.Equal(st.Partitions, rr.Assignment.Subtasks[i]) {
			t.Errorf("subtask %d = %v, engine says %v", i, st.Partitions, rr.Assignment.Subtasks[i])
		}
	}

	// A history with an unknown order: latest offsets leave owners open.
	code, b = do(t, s, "GET", "/api/v1/assignment?topic=orders:12&parallelism=5&mode=restore&from=1&startingOffsets=latest", nil)
	if code != 200 {
		t.Fatalf("GET restore latest = %d %s", code, b)
	}
	if got := decode[assignmentResponse](t, b); got.Exact || len(got.Uncertain) == 0 {
		t.Errorf("restore 1→5 from latest offsets: exact %v, %d uncertain; want inexact with uncertain partitions", got.Exact, len(got.Uncertain))
	}
	for _, bad := range []struct{ q, field string }{
		{"from=4,x", "from"}, {"from=4&startingOffsets=newest", "startingOffsets"}, {"from=4&connector=6", "connector"},
	} {
		code, b := do(t, s, "GET", "/api/v1/assignment?topic=orders:8&parallelism=3&mode=restore&"+bad.q, nil)
		if e := decode[apiErrorBody](t, b); code != 400 || !strings.HasPrefix(e.Error, bad.field+":") {
			t.Errorf("GET restore %s = %d %q, want 400 naming %s", bad.q, code, e.Error, bad.field)
		}
	}
}

func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	s := newTestServer(t)
	code, b := do(t, s, "GET", "/api/v1/openapi.json", nil)
	if code != 200 {
		t.Fatalf("GET openapi.json = %d", code)
	}
	spec := decode[struct {
		Paths map[string]map[string]any `json:"paths"`
	}](t, b)
	err := chi.Walk(s.handler.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if !strings.HasPrefix(route, "/api/v1/") {
			return nil
		}
		if _, ok := spec.Paths[route][strings.ToLower(method)]; !ok {
			t.Errorf("route %s %s is not in openapi.json", method, route)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestHealthAndReady(t *testing.T) {
	s, err := NewServer(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := do(t, s, "GET", "/healthz", nil); code != 200 {
		t.Errorf("GET /healthz = %d, want 200", code)
	}
	if code, _ := do(t, s, "GET", "/readyz", nil); code != 503 {
		t.Errorf("GET /readyz before SetReady = %d, want 503", code)
	}
	s.SetReady(true)
	if code, _ := do(t, s, "GET", "/readyz", nil); code != 200 {
		t.Errorf("GET /readyz after SetReady = %d, want 200", code)
	}
}

// FuzzAPIQuery feeds arbitrary query strings to every GET endpoint: each
// answers 200 or 400 with a JSON body, never a panic or a 500.
func FuzzAPIQuery(f *testing.F) {
	for _, seed := range []string{
		"key=a&parallelism=4", "key=&type=tuple<string,int>", "topic=a:3&parallelism=2&mode=restore&from=5",
		"parallelism=32768&maxParallelism=32768", "topic=::&parallelism=1", "key=%ff&type=char",
		"topic=a:1000000&topic=b:1&parallelism=7&strategy=kafka-range",
	} {
		f.Add(seed)
	}
	s := newTestServer(f)
	f.Fuzz(func(t *testing.T, rawQuery string) {
		if len(rawQuery) > 4096 {
			return
		}
		for _, path := range []string{"/api/v1/keygroup", "/api/v1/keygroups/ranges", "/api/v1/assignment"} {
			req := httptest.NewRequest("GET", path, nil)
			req.URL.RawQuery = rawQuery
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != 200 && rec.Code != 400 {
				t.Fatalf("GET %s?%s = %d %s", path, rawQuery, rec.Code, rec.Body)
			}
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("GET %s?%s body is not JSON: %s", path, rawQuery, rec.Body)
			}
		}
	})
}

// TestKeyGroupBulkLoneSurrogates: a key that reaches a Flink job as JSON
// keeps an escaped lone surrogate as one char (Jackson), so "\ud800" hashes
// as the JDK's "\uD800".hashCode() = 55296, not as U+FFFD (65533).
func TestKeyGroupBulkLoneSurrogates(t *testing.T) {
	s := newTestServer(t)
	for _, tc := range []struct {
		body     string
		want     []int32
		wantEcho string
	}{
		{`{"type":"string","keys":["\ud800","a\udc00b","\ud83d\ude00"]}`, []int32{55296, 97*31*31 + 56320*31 + 98, 55357*31 + 56832}, `"\ud800"`},
		{`{"type":"char","keys":["\ud800","\uDFFF","x"]}`, []int32{55296, 57343, 120}, `"\ud800"`},
		// Tuple2.hashCode = 31 * f0.hashCode() + f1.hashCode().
		{`{"type":"tuple<string,int>","keys":[["\ud800", 1]]}`, []int32{31*55296 + 1}, `["\ud800",1]`},
	} {
		code, b := do(t, s, "POST", "/api/v1/keygroup", strings.NewReader(tc.body))
		if code != 200 {
			t.Fatalf("POST keygroup %s = %d %s", tc.body, code, b)
		}
		got := decode[struct {
			Results []struct {
				Key      json.RawMessage
				JavaHash int32
			}
		}](t, b)
		for i, r := range got.Results {
			if r.JavaHash != tc.want[i] {
				t.Errorf("POST keygroup %s: result %d javaHash = %d, want %d (JDK)", tc.body, i, r.JavaHash, tc.want[i])
			}
		}
		if echo := string(got.Results[0].Key); echo != tc.wantEcho {
			t.Errorf("POST keygroup %s: key echoed as %s, want %s", tc.body, echo, tc.wantEcho)
		}
	}
	// GET takes the key as text, not JSON, except for tuples.
	code, b := do(t, s, "GET", "/api/v1/keygroup?type="+url.QueryEscape("tuple<string,int>")+"&key="+url.QueryEscape(`["\ud800",1]`), nil)
	if r := decode[keyGroupResult](t, b); code != 200 || r.JavaHash != 31*55296+1 {
		t.Errorf("GET keygroup tuple [\"\\ud800\",1] = %d %s, want javaHash %d", code, b, 31*55296+1)
	}
}

// TestAPIMethodNotAllowedSaysAllow: a 405 names the methods the path takes
// (RFC 9110 §15.5.6).
func TestAPIMethodNotAllowedSaysAllow(t *testing.T) {
	s := newTestServer(t)
	for _, tc := range []struct{ method, target, want string }{
		{"DELETE", "/api/v1/keygroup?key=a", "GET, HEAD, POST"},
		{"POST", "/api/v1/keygroups/ranges", "GET, HEAD"},
		{"PUT", "/api/v1/kafka/c/topics/t", "GET, HEAD"},
	} {
		req := httptest.NewRequest(tc.method, tc.target, nil)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != tc.want {
			t.Errorf("%s %s = %d, Allow %q, want 405 with Allow %q", tc.method, tc.target, rec.Code, rec.Header().Get("Allow"), tc.want)
		}
	}
}

// What a schema-checked client may send and the server refuses is named:
// restore-only inputs in a fresh query, and a blank topic name.
func TestAssignmentRefusesInputsItWouldIgnore(t *testing.T) {
	s := newTestServer(t)
	for _, c := range []struct{ query, field, text string }{
		{"topic=a:4&parallelism=2&connector=null", "connector", "only used with mode=restore"},
		{"topic=a:4&parallelism=2&startingOffsets=latest", "startingOffsets", "only used with mode=restore"},
		{"topic=a:4&parallelism=2&mode=fresh&from=2", "from", "only used with mode=restore"},
		{"topic=a:4&topic=+:1&parallelism=2", "topic", "the topic name is blank"},
		{"topic=a:4&topic=a+:1&parallelism=2", "topic", "given twice"},
	} {
		code, body := do(t, s, "GET", "/api/v1/assignment?"+c.query, nil)
		if code != http.StatusBadRequest || !strings.Contains(string(body), c.field+": ") || !strings.Contains(string(body), c.text) {
			t.Errorf("GET /api/v1/assignment?%s = %d %s, want 400 naming %s: %s", c.query, code, body, c.field, c.text)
		}
	}
	if code, body := do(t, s, "GET", "/api/v1/assignment?topic=+a+:4&parallelism=2&connector=", nil); code != http.StatusOK || !strings.Contains(string(body), `"topic":"a"`) {
		t.Errorf("a name with spaces around it and an empty connector = %d %s, want 200 for topic a", code, body)
	}
}

// TestKeyGroupSQL routes every golden key row that has a text form (rows
// from Flink's own key projection and BinaryRowData.hashCode) through
// GET and POST /api/v1/keygroup with type sql and compares the key row's
// bytes, its hash, key group and subtask.
func TestKeyGroupSQL(t *testing.T) {
	s := newTestServer(t)
	f, err := os.Open("../assign/testdata/golden/key_row.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	byCols := map[string][][]string{}
	checked := 0
	for _, r := range rows[1:] {
		var types []string
		var values []json.RawMessage
		var texts []*string
		for _, f := range []struct {
			name string
			to   any
		}{{"types", &types}, {"values", &values}, {"text", &texts}} {
			if err := json.Unmarshal([]byte(r[col[f.name]]), f.to); err != nil {
				t.Fatalf("%s: %s: %v", r[0], f.name, err)
			}
		}
		// The key as one line: a JSON array of the values' texts (a string
		// column's value as its JSON literal, lone surrogates kept), null
		// for a null; rows where a value has no text form are left out.
		parts := make([]string, len(types))
		for i, typ := range types {
			switch {
			case string(values[i]) == "null":
				parts[i] = "null"
			case strings.HasPrefix(typ, "VARCHAR") || strings.HasPrefix(typ, "CHAR"):
				parts[i] = string(values[i])
			case texts[i] == nil:
				parts = nil
			default:
				b, _ := json.Marshal(*texts[i])
				parts[i] = string(b)
			}
			if parts == nil {
				break
			}
		}
		if parts == nil {
			continue
		}
		line := "[" + strings.Join(parts, ",") + "]"
		r = append(r, line)
		cols := strings.Join(types, ", ")
		byCols[cols] = append(byCols[cols], r)
		q := url.Values{"type": {"sql"}, "columns": {cols}, "key": {line}, "maxParallelism": {"128"}, "parallelism": {"4"}}
		code, body := do(t, s, "GET", "/api/v1/keygroup?"+q.Encode(), nil)
		if code != 200 {
			t.Errorf("%s: GET = %d %s", r[0], code, body)
			continue
		}
		var got map[string]any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"keyRow": r[col["row_hex"]], "javaHash": r[col["hash_code"]], "keyGroup": r[col["key_group_128"]], "subtask": r[col["subtask_128_4"]]}
		for k, w := range want {
			if g := fmt.Sprint(got[k]); g != w {
				t.Errorf("%s: GET %s = %s, want %s", r[0], k, g, w)
			}
		}
		checked++
	}
	if checked < 200 {
		t.Fatalf("only %d golden key rows with a text form", checked)
	}
	for cols, rs := range byCols {
		keys := make([]json.RawMessage, len(rs))
		for i, r := range rs {
			keys[i] = json.RawMessage(r[len(r)-1])
		}
		req, _ := json.Marshal(map[string]any{"type": "sql", "columns": cols, "maxParallelism": 128, "parallelism": 4, "keys": keys})
		code, body := do(t, s, "POST", "/api/v1/keygroup", bytes.NewReader(req))
		if code != 200 {
			t.Errorf("POST %s = %d %s", cols, code, body)
			continue
		}
		got := decode[struct {
			Results []struct {
				KeyRow   string
				JavaHash int32
				KeyGroup int
				Subtask  int
				Type     string
			}
		}](t, body)
		for i, r := range rs {
			g := got.Results[i]
			if g.KeyRow != r[col["row_hex"]] || fmt.Sprint(g.JavaHash) != r[col["hash_code"]] || fmt.Sprint(g.KeyGroup) != r[col["key_group_128"]] || fmt.Sprint(g.Subtask) != r[col["subtask_128_4"]] {
				t.Errorf("%s: POST gave %+v", r[0], g)
			}
			if !strings.HasPrefix(g.Type, "sql:") {
				t.Errorf("%s: type %q", r[0], g.Type)
			}
		}
	}
}

// TestKeyGroupSQLErrors: each refusal names what was wrong.
func TestKeyGroupSQLErrors(t *testing.T) {
	s := newTestServer(t)
	for _, tt := range []struct{ query, want string }{
		{"type=sql&key=a", "columns"},
		{"type=sql&columns=user_id&key=a", "give the SQL type of user_id"},
		{"type=sql&columns=" + url.QueryEscape("a ARRAY<INT>") + "&key=a", "ARRAY"},
		{"type=sql&columns=" + url.QueryEscape("a BIGINT, b STRING") + "&key=a", "JSON array"},
		{"type=sql&columns=" + url.QueryEscape("a BIGINT") + "&key=x1", "BIGINT"},
		{"type=string&columns=a&key=a", "type sql"},
	} {
		code, body := do(t, s, "GET", "/api/v1/keygroup?"+tt.query, nil)
		if code != 400 || !strings.Contains(string(body), tt.want) {
			t.Errorf("GET keygroup?%s = %d %s, want 400 naming %q", tt.query, code, body, tt.want)
		}
	}
	code, body := do(t, s, "POST", "/api/v1/keygroup", strings.NewReader(`{"type":"sql","columns":"a BIGINT, b STRING","keys":[[1,"x"],[2]]}`))
	if code != 400 || !strings.Contains(string(body), "keys[1]") {
		t.Errorf("POST with a short key row = %d %s, want 400 naming keys[1]", code, body)
	}
	code, body = do(t, s, "POST", "/api/v1/keygroup", strings.NewReader(`{"type":"sql","columns":"a STRING","keys":["x",null,"\ud800"]}`))
	if code != 200 {
		t.Errorf("POST one-column keys with a null and a lone surrogate = %d %s, want 200", code, body)
	}
}
