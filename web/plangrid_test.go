package web

import (
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/plan"
	"github.com/skewscope/skewscope/views"
)

// TestGridKeyCoversEveryField: the planner script keeps a grid whose key a
// new rendering repeats, so a change to anything a grid shows must change
// its key. Every field of views.PlanGrid, GridRow and Cell is changed in
// turn.
func TestGridKeyCoversEveryField(t *testing.T) {
	base := func() views.PlanGrid {
		return views.PlanGrid{
			ID: "now", Title: "Now", Parallelism: 2, Mode: "fresh start", Unit: "partitions", Footer: "f",
			Topics: []string{"a"}, MaxParallelism: 128, MaxRate: 1, LoadMax: 2, LoadLow: 1, LoadHigh: 1.5,
			Rows: []views.GridRow{{Subtask: 0, LoadText: "1", KeyGroups: "0–63", Codes: "0:1",
				Cells: []views.Cell{{Label: "1", Class: "c t0", Title: "a-1"}}}},
		}
	}
	want := gridKey(base())
	if want != gridKey(base()) {
		t.Fatal("gridKey is not deterministic")
	}
	var change func(v reflect.Value, path string, apply func(func(views.PlanGrid) views.PlanGrid))
	change = func(v reflect.Value, path string, apply func(func(views.PlanGrid) views.PlanGrid)) {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if path == "" && (f.Name == "Key" || f.Name == "Kept") {
				continue // the key itself, and whether it is sent
			}
			name := path + f.Name
			switch f.Type.Kind() {
			case reflect.String, reflect.Int, reflect.Float64, reflect.Bool:
			case reflect.Slice:
				if f.Type.Elem().Kind() == reflect.Struct {
					change(reflect.New(f.Type.Elem()).Elem(), name+"[0].", apply)
					continue
				}
			default:
				t.Fatalf("%s: a %s field; teach this test and gridKey about it", name, f.Type)
			}
			apply(func(g views.PlanGrid) views.PlanGrid {
				rv := reflect.ValueOf(&g).Elem()
				target := fieldAt(rv, name)
				switch target.Kind() {
				case reflect.String:
					target.SetString(target.String() + "x")
				case reflect.Int:
					target.SetInt(target.Int() + 1)
				case reflect.Float64:
					target.SetFloat(target.Float() + 1)
				case reflect.Bool:
					target.SetBool(!target.Bool())
				case reflect.Slice:
					target.Set(reflect.Append(target, reflect.ValueOf("y")))
				}
				if got := gridKey(g); got == want {
					t.Errorf("changing %s leaves gridKey at %s", name, got)
				}
				return g
			})
		}
	}
	change(reflect.ValueOf(base()), "", func(mod func(views.PlanGrid) views.PlanGrid) { mod(base()) })
}

// fieldAt finds a field by a path like "Rows[0].Cells[0].Label".
func fieldAt(v reflect.Value, path string) reflect.Value {
	for _, part := range strings.Split(path, ".") {
		name, idx, _ := strings.Cut(part, "[")
		v = v.FieldByName(name)
		if idx != "" {
			n, _ := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			v = v.Index(n)
		}
	}
	return v
}

// TestPlannerCompactGrid: a plan of more than compactCells partitions draws
// each row's cells as codes, one per partition, naming the topic by its
// index, the rate band and the marks; small plans keep a cell element per
// partition.
func TestPlannerCompactGrid(t *testing.T) {
	s := newTestServer(t)
	q := url.Values{"topic": {"orders:1500", "payments:1500"}, "parallelism": {"4"}, "target": {"6"},
		"rates": {"orders,0,900\npayments,7,100"}, "highlight": {"partition:payments:7"}}
	rec, doc := get(t, s, "/plan?"+q.Encode())
	if rec.Code != 200 {
		t.Fatalf("GET /plan = %d", rec.Code)
	}
	for _, id := range []string{"grid-now", "grid-target"} {
		g := doc.Find(testid(id))
		if n := g.Find("td.parts i").Length(); n != 0 {
			t.Errorf("%s: %d cell elements, want none in a compact grid", id, n)
		}
		if topics, _ := g.Find("table.compact").Attr("data-topics"); topics != `["orders","payments"]` {
			t.Errorf("%s: data-topics = %s", id, topics)
		}
		total, hl := 0, 0
		for _, td := range g.Find("td[data-cells]").EachIter() {
			codes, _ := td.Attr("data-cells")
			for c := range strings.FieldsSeq(codes) {
				total++
				f := strings.Split(c, ":")
				if c == "0:0:9" || c == "0:0:9:m" {
					continue // orders-0 at 900/s: the top band
				}
				if len(f) == 4 && strings.Contains(f[3], "h") {
					hl++
					if f[0] != "1" || f[1] != "7" || f[2] != "1" {
						t.Errorf("%s: the highlighted cell is %q, want payments-7 (1:7) in band 1", id, c)
					}
				}
			}
		}
		if total != 3000 || hl != 1 {
			t.Errorf("%s: %d codes (%d highlighted), want 3000 (1)", id, total, hl)
		}
		if n := g.Find("tbody tr.hl").Length(); n != 1 {
			t.Errorf("%s: %d highlighted rows, want 1", id, n)
		}
	}
	_, small := get(t, s, "/plan?topic=orders:12&parallelism=4&target=6")
	if n := small.Find(testid("grid-target") + " td.parts i").Length(); n != 12 {
		t.Errorf("small plan: %d cell elements, want 12", n)
	}
}

// TestPlannerKeepsUnchangedGrids: a request that names the grids it shows
// (X-Skewscope-Grids) gets only the place of those whose key is the same.
func TestPlannerKeepsUnchangedGrids(t *testing.T) {
	s := newTestServer(t)
	_, doc := get(t, s, "/plan?topic=orders:12&parallelism=4&target=6")
	keys := map[string]string{}
	for _, id := range []string{"now", "target"} {
		keys[id], _ = doc.Find("#grid-" + id).Attr("data-grid-key")
		if keys[id] == "" {
			t.Fatalf("grid-%s has no data-grid-key", id)
		}
	}
	if keys["now"] == keys["target"] {
		t.Errorf("the now and target grids have the same key %s", keys["now"])
	}
	req := httptest.NewRequest("GET", "/plan?topic=orders:12&parallelism=4&target=8", nil)
	req.Header.Set(gridsHeader, "now="+keys["now"]+",target="+keys["target"])
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	if now := doc.Find("#grid-now"); now.Length() != 1 || now.Find("tr").Length() != 0 || now.AttrOr("data-kept", "-") != "" || now.AttrOr("data-grid-key", "") != keys["now"] {
		t.Errorf("the unchanged now grid is sent as %d elements with %d rows, data-kept=%q", now.Length(), now.Find("tr").Length(), now.AttrOr("data-kept", "(none)"))
	}
	if rows := doc.Find(testid("grid-target") + " tbody tr").Length(); rows != 8 {
		t.Errorf("the changed target grid has %d rows, want 8", rows)
	}
}

// TestCompactCellsMarks: a compact row's codes carry the rate band and the
// moved, uncertain and highlighted marks of each partition.
func TestCompactCellsMarks(t *testing.T) {
	a0, a1, b2 := assign.TopicPartition{Topic: "a", Partition: 0}, assign.TopicPartition{Topic: "a", Partition: 1}, assign.TopicPartition{Topic: "b", Partition: 2}
	f := &planForm{req: plan.Request{Topics: []assign.Topic{{Name: "a", Partitions: 2}, {Name: "b", Partitions: 3}}, Rates: map[assign.TopicPartition]float64{a0: 90, b2: 10}}}
	for _, tc := range []struct {
		name     string
		hasRates bool
		want     string
	}{
		{"without rates", false, "0:0:0:m 0:1:0:uh 1:2"},
		{"with rates", true, "0:0:9:m 0:1:0:uh 1:2:1"},
	} {
		gc := gridContext{f: f, topicIdx: map[string]int{"a": 0, "b": 1}, maxRate: 90, hasRates: tc.hasRates,
			highlight: highlight{subtask: -1, partition: &a1}}
		var sb strings.Builder
		codes, hl := gc.compactCells(&sb, []assign.TopicPartition{a0, a1, b2},
			map[assign.TopicPartition]bool{a0: true}, map[assign.TopicPartition]bool{a1: true}, false)
		if codes != tc.want || !hl {
			t.Errorf("%s: compactCells = %q, highlighted %v; want %q, true", tc.name, codes, hl, tc.want)
		}
	}
}

// TestPlannerScriptAnswerLeavesOutRates: the planner script keeps its form,
// so an answer to it (X-Skewscope-Grids, even empty) does not echo the
// pasted rates; a page does.
func TestPlannerScriptAnswerLeavesOutRates(t *testing.T) {
	s := newTestServer(t)
	target := "/plan?topic=orders:12&parallelism=4&target=6&rates=orders,0,920"
	for _, tc := range []struct {
		header bool
		want   string
	}{{false, "orders,0,920"}, {true, ""}} {
		req := httptest.NewRequest("GET", target, nil)
		if tc.header {
			req.Header.Set(gridsHeader, "")
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		doc, err := goquery.NewDocumentFromReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		if got := doc.Find("#f-rates").Text(); got != tc.want {
			t.Errorf("header sent %v: the rates box holds %q, want %q", tc.header, got, tc.want)
		}
		if n := doc.Find(testid("grid-target") + " tbody tr").Length(); n != 6 {
			t.Errorf("header sent %v: the target grid has %d rows, want 6", tc.header, n)
		}
	}
}
