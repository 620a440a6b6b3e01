package web

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/plan"
	"github.com/skewscope/skewscope/strategy"
)

// TestParsePlanForm checks what the form adds to plan.FromQuery (whose
// own tests cover the fields): a candidate's apply button as the target,
// the colouring and its error beside the request's, the texts echoed as
// typed, and a canonical query that reads back to the same plan.
func TestParsePlanForm(t *testing.T) {
	tests := []struct {
		name      string
		query     string
		tgt       int
		color     string
		errFields []string
	}{
		{name: "target defaults to current", query: "topic=o:4&parallelism=2", tgt: 2, color: "topic"},
		{name: "apply from a candidate button wins over target", query: "topic=o:4&parallelism=2&target=3&apply=4", tgt: 4, color: "topic"},
		{name: "colour by rate", query: "topic=o:4&parallelism=2&color=rate&rates=" + url.QueryEscape("o,0,5\n"), tgt: 2, color: "rate"},
		{
			name:      "every field wrong at once",
			query:     "topics=x&parallelism=0&target=99999&maxParallelism=-1&mode=replay&strategy=magic&color=pink&state=1XB",
			errFields: []string{"color", "maxParallelism", "mode", "parallelism", "state", "strategy", "target", "topics"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, _ := url.ParseQuery(tt.query)
			f := parsePlanForm(v)
			var errFields []string
			for k := range f.Errors {
				errFields = append(errFields, k)
			}
			if diff := gocmp.Diff(tt.errFields, errFields, sortStrings); diff != "" {
				t.Fatalf("parsePlanForm(%s) error fields (-want +got):\n%s\n%v", tt.query, diff, f.Errors)
			}
			// The form shows the texts as typed, the mode and strategy
			// defaulted.
			want := plan.TextsOf(v)
			want.Mode, want.Strategy = cmp.Or(want.Mode, "fresh"), cmp.Or(want.Strategy, strategy.Default)
			if tt.errFields == nil && v.Get("apply") == "" && f.Texts != want {
				t.Errorf("form texts %+v, want the query's %+v", f.Texts, want)
			}
			if tt.errFields != nil {
				return
			}
			if f.req.Target != tt.tgt || f.Target != strconv.Itoa(tt.tgt) || f.Color != tt.color {
				t.Errorf("parsePlanForm(%s) = target %d (text %q) colour %q, want %d, %q", tt.query, f.req.Target, f.Target, f.Color, tt.tgt, tt.color)
			}
			// The canonical query parses back to the same plan.
			g := parsePlanForm(f.canonicalQuery())
			if len(g.Errors) > 0 || !gocmp.Equal(g.req.Topics, f.req.Topics) || g.req.Target != f.req.Target || !gocmp.Equal(g.req.Rates, f.req.Rates) || g.Color != f.Color {
				t.Errorf("canonical query %s does not reproduce the form: %v", f.canonicalQuery().Encode(), g.Errors)
			}
		})
	}
}

var sortStrings = gocmp.Transformer("sort", func(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return out
})

func TestNewKeyResultSteps(t *testing.T) {
	v, _ := url.ParseQuery("keys=orders&parallelism=4&target=6")
	f := parseKeysForm(v, nil)
	res, err := lookupAll(f)
	if err != nil || len(res) != 1 {
		t.Fatalf("lookupAll = %v, %v", res, err)
	}
	got := newKeyResult(f, res[0])
	h := assign.StringHashCode("orders")
	m := assign.MurmurHash(h)
	kg := int(m % 128)
	want := []string{
		`"orders".hashCode() = -1008770331`,
		"MathUtils.murmurHash(-1008770331) = " + strconv.Itoa(int(m)),
		"key group = " + strconv.Itoa(int(m)) + " mod 128 = " + strconv.Itoa(kg) + "   (KeyGroupRangeAssignment.computeKeyGroupForKeyHash)",
		"subtask = " + strconv.Itoa(kg) + " · 4 / 128 = " + strconv.Itoa(kg*4/128) + "   (computeOperatorIndexForKeyGroup)",
		"after rescaling to 6: " + strconv.Itoa(kg) + " · 6 / 128 = " + strconv.Itoa(kg*6/128),
	}
	if diff := gocmp.Diff(want, got.Steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

// TestLookupAllLongList: a pasted list long enough to be routed on every
// core gives each key what the one-key functions give it, and a refused
// key is named by its line (blank lines counted, as the page numbers them).
func TestLookupAllLongList(t *testing.T) {
	var b strings.Builder
	for i := range 50_000 {
		if i == 7 {
			b.WriteString("\n") // a blank line: skipped, but counted
		}
		fmt.Fprintf(&b, "%d\n", i*7919-100_000)
	}
	text := b.String()
	for _, typ := range []string{"string", "int", "long"} {
		v := url.Values{"keys": {text}, "type": {typ}, "parallelism": {"6"}, "target": {"9"}, "maxParallelism": {"720"}}
		f := parseKeysForm(v, nil)
		if len(f.Errors) > 0 {
			t.Fatalf("%s: %v", typ, f.Errors)
		}
		res, err := lookupAll(f)
		if err != nil || len(res) != 50_000 {
			t.Fatalf("%s: lookupAll = %d results, %v", typ, len(res), err)
		}
		for i, r := range res {
			h, err := assign.HashKey(f.typ, f.keys[i])
			kg := assign.KeyGroupForHash(h, 720)
			if err != nil || r.key != f.keys[i] || r.hash != h || r.kg != kg ||
				r.subtask != assign.OperatorIndex(720, 6, kg) || r.targetSubtask != assign.OperatorIndex(720, 9, kg) {
				t.Fatalf("%s: key %d %q = %+v, want hash %d (%v), key group %d", typ, i, f.keys[i], r, h, err, kg)
			}
		}
	}
	bad := strings.Replace(text, "\n"+strconv.Itoa(30_000*7919-100_000)+"\n", "\nx30000\n", 1)
	bad = strings.Replace(bad, "\n"+strconv.Itoa(40_000*7919-100_000)+"\n", "\nx40000\n", 1)
	f := parseKeysForm(url.Values{"keys": {bad}, "type": {"int"}}, nil)
	_, err := lookupAll(f)
	if want := "line 30002: int key \"x30000\": not an integer"; err == nil || err.Error() != want {
		t.Errorf("lookupAll with bad keys on lines 30002 and 40002 = %v, want %q", err, want)
	}
}
