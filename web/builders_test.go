package web

import (
	"net/url"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/assign"
)

func TestParsePlanForm(t *testing.T) {
	tests := []struct {
		name      string
		query     string
		topics    []assign.Topic
		cur, tgt  int
		maxP      int
		mode      assign.StartMode
		rates     map[assign.TopicPartition]float64
		state     []int64
		errFields []string
	}{
		{
			name:   "repeated topics, target defaults to current",
			query:  "topic=orders:12&topic=payments:6&parallelism=4",
			topics: []assign.Topic{{Name: "orders", Partitions: 12}, {Name: "payments", Partitions: 6}},
			cur:    4, tgt: 4, mode: assign.StartFresh,
		},
		{
			name:   "topics text with CRLF, names with colons, rates with header, state total",
			query:  "topics=" + url.QueryEscape("a:b:3\r\nc:1\r\n") + "&parallelism=2&target=3&mode=restore&maxParallelism=256&rates=" + url.QueryEscape("topic,partition,rate\na:b,0,5\n\"c\",0,1.5\n") + "&state=3GB",
			topics: []assign.Topic{{Name: "a:b", Partitions: 3}, {Name: "c", Partitions: 1}},
			cur:    2, tgt: 3, maxP: 256, mode: assign.StartRestore,
			rates: map[assign.TopicPartition]float64{{Topic: "a:b", Partition: 0}: 5, {Topic: "c", Partition: 0}: 1.5},
			state: []int64{1_500_000_000, 1_500_000_000},
		},
		{
			name:   "apply from a candidate button wins over target",
			query:  "topic=o:4&parallelism=2&target=3&apply=4",
			topics: []assign.Topic{{Name: "o", Partitions: 4}}, cur: 2, tgt: 4, mode: assign.StartFresh,
		},
		{
			name:   "state per subtask in mixed units",
			query:  "topic=o:4&parallelism=2&state=" + url.QueryEscape("1 KiB, 2kb"),
			topics: []assign.Topic{{Name: "o", Partitions: 4}}, cur: 2, tgt: 2, mode: assign.StartFresh,
			state: []int64{1024, 2000},
		},
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
			if diff := cmp.Diff(tt.errFields, errFields, sortStrings); diff != "" {
				t.Fatalf("parsePlanForm(%s) error fields (-want +got):\n%s\n%v", tt.query, diff, f.Errors)
			}
			if tt.errFields != nil {
				return
			}
			if diff := cmp.Diff(tt.topics, f.req.Topics); diff != "" {
				t.Errorf("topics (-want +got):\n%s", diff)
			}
			if f.req.Parallelism != tt.cur || f.req.Target != tt.tgt || f.req.MaxParallelism != tt.maxP || f.req.Mode != tt.mode {
				t.Errorf("parsePlanForm(%s) = current %d target %d maxP %d mode %s, want %d %d %d %s", tt.query, f.req.Parallelism, f.req.Target, f.req.MaxParallelism, f.req.Mode, tt.cur, tt.tgt, tt.maxP, tt.mode)
			}
			if diff := cmp.Diff(tt.rates, f.req.Rates); diff != "" {
				t.Errorf("rates (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.state, f.req.State); diff != "" {
				t.Errorf("state bytes (-want +got):\n%s", diff)
			}
			// The canonical query parses back to the same plan.
			g := parsePlanForm(f.canonicalQuery())
			if len(g.Errors) > 0 || !cmp.Equal(g.req.Topics, f.req.Topics) || g.req.Target != f.req.Target || !cmp.Equal(g.req.Rates, f.req.Rates) {
				t.Errorf("canonical query %s does not reproduce the form: %v", f.canonicalQuery().Encode(), g.Errors)
			}
		})
	}
}

var sortStrings = cmp.Transformer("sort", func(in []string) []string {
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
	if diff := cmp.Diff(want, got.Steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}
