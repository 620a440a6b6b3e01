package views

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type testRow struct {
	Name  string // not live
	Lag   Text
	Busy  Meter
	Cells []GridCell
	Spark Spark
}

type testPage struct {
	Live
	Bar      LiveBar
	Rows     []testRow
	Optional *Text
	Absent   *Text
	hidden   Text
}

func TestUpdateOfGathersTheModelsLiveFigures(t *testing.T) {
	opt := Text{Key: "opt", Text: "on"}
	p := testPage{
		Live: Live{Topic: "vertex:a/b", Shape: "s1", Stale: true},
		Bar:  LiveBar{Flink: LiveAge{Key: "age", At: 1700000000000, Text: "4 s ago"}, Kafka: &LiveAge{Key: "age:kafka", At: 0, Text: "never"}},
		Rows: []testRow{
			{Name: "0", Lag: Text{"s/0/lag", "1,200"}, Busy: Meter{"s/0/meter", "0.500"}, Spark: Spark{"s/0/spark", []float64{1, -1, 3}, 1200, "lag, last 4 min"},
				Cells: []GridCell{{Label: "o0", Live: LiveCell{Key: "c0.0", Level: 2, Text: "1.2k", State: "st-ok", Title: "o-0 · ok"}}}},
			{Name: "1", Lag: Text{"s/1/lag", "–"}, Busy: Meter{"s/1/meter", "0"}},
		},
		Optional: &opt,
		hidden:   Text{Key: "hidden", Text: "x"},
	}
	u, err := UpdateOf(p)
	if err != nil {
		t.Fatal(err)
	}
	want := Update{
		Shape: "s1", Stale: true,
		T:     []Entry[string]{{"s/0/lag", "1,200"}, {"s/1/lag", "–"}, {"opt", "on"}},
		C:     []Entry[LiveCell]{{"c0.0", LiveCell{Key: "c0.0", Level: 2, Text: "1.2k", State: "st-ok", Title: "o-0 · ok"}}},
		M:     []Entry[string]{{"s/0/meter", "0.500"}, {"s/1/meter", "0"}},
		Ages:  []Entry[int64]{{"age", 1700000000000}, {"age:kafka", 0}},
		Spark: []Entry[Spark]{{"s/0/spark", Spark{"s/0/spark", []float64{1, -1, 3}, 1200, "lag, last 4 min"}}},
	}
	if diff := cmp.Diff(want, u); diff != "" {
		t.Errorf("UpdateOf (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{"shape":"s1","stale":true,"t":{"s/0/lag":"1,200","s/1/lag":"–","opt":"on"},"c":{"k":"60f97d18","st":["st-ok"],"ti":["o-0 · ok"],"kd":[[2,0,0]],"x":"0","tx":"1.2k"},` +
		`"m":{"s/0/meter":"0.500","s/1/meter":"0"},"ages":{"age":1700000000000,"age:kafka":0},"spark":{"s/0/spark":[[1,-1,3],1200,"lag, last 4 min"]}}`
	if string(b) != wantJSON {
		t.Errorf("JSON\n%s\nwant\n%s", b, wantJSON)
	}
}

// Cells are many and their states and readings repeat: the update names
// each distinct state and reading once, and sends the cells in the order
// of their keys, with a hash of those keys in place of the keys; a sorted
// grid's order on the page does not matter.
func TestUpdateJSONSendsEachCellTextOnce(t *testing.T) {
	reading := "stalled · catch up: – (estimated)"
	u := Update{Shape: "s", C: []Entry[LiveCell]{
		{"c1.0", LiveCell{Key: "c1.0", Level: 3, Text: "1.2M", State: "st-stalled", Title: reading}},
		{"c0.0", LiveCell{Key: "c0.0", Level: 1, Text: "31k", State: "st-stalled", Title: reading}},
		{"c0.1", LiveCell{Key: "c0.1", Level: 0, Text: "0", State: "st-ok"}},
	}}
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"shape":"s","stale":false,"t":{},"c":{"k":"cca9dd04","st":["st-stalled","st-ok"],"ti":["stalled · catch up: – (estimated)",""],` +
		`"kd":[[1,0,0],[0,1,1],[3,0,0]],"x":"012","tx":"31k|0|1.2M"}}`
	if string(b) != want {
		t.Errorf("JSON\n%s\nwant\n%s", b, want)
	}
	if n := strings.Count(string(b), "stalled · catch up"); n != 1 {
		t.Errorf("the reading is written %d times, want once", n)
	}
}

// Cells whose texts the compact form cannot join, or whose (level, state,
// reading) triples outnumber its codes, go four values a cell.
func TestUpdateJSONCellsFallBackToValues(t *testing.T) {
	piped := Update{Shape: "s", C: []Entry[LiveCell]{
		{"c0.0", LiveCell{Key: "c0.0", Level: 1, Text: "a|b", State: "st-ok"}},
		{"c0.1", LiveCell{Key: "c0.1", Level: 0, Text: "0", State: "st-ok"}},
	}}
	b, err := json.Marshal(piped)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"st":["st-ok"],"ti":[""],"v":[1,"a|b",0,0,0,"0",0,0]}`; !strings.Contains(string(b), want) {
		t.Errorf("JSON\n%s\nwant cells %s", b, want)
	}
	many := Update{Shape: "s"}
	for i := range len(cellCodes) + 1 {
		k := fmt.Sprintf("c0.%03d", i)
		many.C = append(many.C, Entry[LiveCell]{k, LiveCell{Key: k, Text: "1", State: "st-ok", Title: fmt.Sprint("reading ", i)}})
	}
	b, err = json.Marshal(many)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"x":`) || !strings.Contains(string(b), `"v":[0,"1",0,0,0,"1",0,1,`) {
		t.Errorf("%d distinct cells: JSON\n%s\nwant four values a cell", len(many.C), b)
	}
	many.C = many.C[:len(cellCodes)]
	if b, _ = json.Marshal(many); !strings.Contains(string(b), `"x":"0123`) || !strings.HasSuffix(string(b), `-_","tx":"`+strings.Repeat("1|", len(cellCodes)-1)+`1"}}`) {
		t.Errorf("%d distinct cells: JSON\n%s\nwant the compact form", len(many.C), b)
	}
}

func TestUpdateJSONEscapesTexts(t *testing.T) {
	for _, s := range []string{`a"b`, `back\slash`, "<script>&", "tab\there", "ü → 4", "\u2028", ""} {
		b, err := json.Marshal(Update{T: []Entry[string]{{Key: s, Value: s}}})
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			T map[string]string `json:"t"`
		}
		if err := json.Unmarshal(b, &got); err != nil || got.T[s] != s {
			t.Errorf("%q: %s decodes to %v, %v", s, b, got.T, err)
		}
		if strings.ContainsAny(string(b), "<>&") {
			t.Errorf("%q: %s has unescaped HTML characters", s, b)
		}
	}
	// An empty update still carries its texts object, which the page reads.
	if b, _ := json.Marshal(Update{Shape: "x"}); string(b) != `{"shape":"x","stale":false,"t":{}}` {
		t.Errorf("empty update %s", b)
	}
}

func TestUpdateOfRejectsAKeyUsedTwice(t *testing.T) {
	p := testPage{Rows: []testRow{{Lag: Text{"s/0/lag", "1"}}, {Lag: Text{"s/0/lag", "2"}}}}
	if _, err := UpdateOf(p); err == nil || !strings.Contains(err.Error(), `"s/0/lag" is used twice`) {
		t.Errorf("UpdateOf with a duplicate key: %v", err)
	}
	q := testPage{Rows: []testRow{{Lag: Text{"k", "1"}, Busy: Meter{"k", "0"}}}}
	if _, err := UpdateOf(q); err == nil {
		t.Error("a key shared by a text and a meter is accepted")
	}
}

// An update after another carries only the texts and meters that moved
// and the sparklines' new samples, with the time they follow; one that
// does not continue the last is sent whole.
func TestChangeSince(t *testing.T) {
	text := "1"
	up := func(times, lag []float64) Update {
		return Update{Shape: "s", T: []Entry[string]{{"x", "1"}, {"y", text}}, M: []Entry[string]{{"m", text}}, Spark: []Entry[Spark]{
			{"t", Spark{Key: "t", Values: times}},
			{"s/0/lag", Spark{Key: "s/0/lag", Values: lag, Max: 9, Label: "lag"}},
		}}
	}
	prev := up([]float64{10, 12.5, 15}, []float64{1, 2, 3})
	text = "2"
	cur := up([]float64{12.5, 15, 17.5, 20}, []float64{2, 3, 4, 5})
	got, ok := ChangeSince(prev, cur, "t")
	if !ok {
		t.Fatal("an update one window on is not sent as appends")
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"shape":"s","stale":false,"t":{"y":"2"},"m":{"m":"2"},"after":15,"keep":4,"spark":{"t":[[17.5,20],0,""],"s/0/lag":[[4,5],9,"lag"]}}`
	if string(b) != want {
		t.Errorf("JSON\n%s\nwant\n%s", b, want)
	}
	for name, c := range map[string]Update{
		"last time gone":             up([]float64{16, 17.5}, []float64{4, 5}),
		"an older sample changed":    up([]float64{12.5, 15, 17.5}, []float64{2, 9, 4}),
		"a row longer than its axis": up([]float64{15, 17.5}, []float64{3, 4, 5}),
		"a new row":                  {Spark: append(cur.Spark, Entry[Spark]{"s/1/lag", Spark{Key: "s/1/lag", Values: []float64{1, 2, 3, 4}}})},
	} {
		if _, ok := ChangeSince(prev, c, "t"); ok {
			t.Errorf("%s: sent as appends", name)
		}
	}
	if _, ok := ChangeSince(Update{}, cur, "t"); ok {
		t.Error("the first update is sent as appends")
	}
}
