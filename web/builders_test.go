package web

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
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
