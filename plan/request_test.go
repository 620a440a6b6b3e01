package plan

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/strategy"
)

func TestFromQuery(t *testing.T) {
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
			name:   "state per subtask in mixed units",
			query:  "topic=o:4&parallelism=2&state=" + url.QueryEscape("1 KiB, 2kb"),
			topics: []assign.Topic{{Name: "o", Partitions: 4}}, cur: 2, tgt: 2, mode: assign.StartFresh,
			state: []int64{1024, 2000},
		},
		{
			name:      "every field wrong at once",
			query:     "topics=x&parallelism=0&target=99999&maxParallelism=-1&mode=replay&strategy=magic&state=1XB",
			errFields: []string{"maxParallelism", "mode", "parallelism", "state", "strategy", "target", "topics"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, _ := url.ParseQuery(tt.query)
			r, errs := FromQuery(v)
			var errFields []string
			for k := range errs {
				errFields = append(errFields, k)
			}
			slices.Sort(errFields)
			if diff := cmp.Diff(tt.errFields, errFields); diff != "" {
				t.Fatalf("FromQuery(%s) error fields (-want +got):\n%s\n%v", tt.query, diff, errs)
			}
			if tt.errFields != nil {
				return
			}
			if diff := cmp.Diff(tt.topics, r.Topics); diff != "" {
				t.Errorf("topics (-want +got):\n%s", diff)
			}
			if r.Parallelism != tt.cur || r.Target != tt.tgt || r.MaxParallelism != tt.maxP || r.Mode != tt.mode {
				t.Errorf("FromQuery(%s) = current %d target %d maxP %d mode %s, want %d %d %d %s", tt.query, r.Parallelism, r.Target, r.MaxParallelism, r.Mode, tt.cur, tt.tgt, tt.maxP, tt.mode)
			}
			if diff := cmp.Diff(tt.rates, r.Rates); diff != "" {
				t.Errorf("rates (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.state, r.State); diff != "" {
				t.Errorf("state bytes (-want +got):\n%s", diff)
			}
			// The canonical query reads back to the same request.
			g, errs := FromQuery(r.Query())
			if diff := cmp.Diff(r, g); errs != nil || diff != "" {
				t.Errorf("query %s does not reproduce the request: %v (-from query +read back):\n%s", r.Query().Encode(), errs, diff)
			}
		})
	}
}

// TestFromQueryMessages pins messages that name the field and what was
// wrong with it.
func TestFromQueryMessages(t *testing.T) {
	for _, tc := range []struct{ query, field, want string }{
		{"parallelism=4", "topics", "required: one topic per line as NAME:PARTITIONS"},
		{"topic=a:4", "parallelism", "required: the current parallelism, an integer in 1..32768"},
		{"topic=a:4&parallelism=4&target=x", "target", `"x" is not a parallelism: Flink accepts 1..32768`},
		{"topic=a:4&parallelism=8000&target=300", "parallelism", "parallelism + target is 8300 subtasks"},
		{"topic=a:4&parallelism=4&maxParallelism=2", "maxParallelism", "2 is below the current parallelism 4"},
		{"topic=a:4&parallelism=2&busy=0.5", "busy", "1 values for 2 current subtasks"},
		{"topic=a:4&parallelism=2&busy=0.5,150%25&rates=a,0,1", "busy", "a busy ratio is at most 1 (100%)"},
		{"topic=a:4&parallelism=2&observed=1,2", "busy", "records/s per subtask are given without busy ratios"},
		{"topic=a:4&parallelism=2&busy=0.5,0.5", "rates", "busy ratios need partition rates"},
		{"topic=a:4&parallelism=2&rates=b,0,1", "rates", `line 1: topic "b" is not in the topic list`},
		{"topic=a:4&parallelism=2&retention=a,x", "retention", `line 1: retention.ms "x" is not a number`},
		{"topic=a:4&parallelism=2&utilization=120", "utilization", `"120" is not a target utilisation`},
		{"topic=a:4&parallelism=2&observedAt=yesterday", "observedAt", `"yesterday" is not a time`},
		{"topic=a:4&parallelism=2&strategy=kafka-range&mode=restore", "mode", "modelled for Flink's KafkaSource only"},
		{"topic=a:4&parallelism=2&history=1,x", "history", ""},
		{"topic=a:4&parallelism=2&job=" + strings.Repeat("j", 257), "job", "a job name of 257 bytes; at most 256"},
	} {
		v, err := url.ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		_, errs := FromQuery(v)
		if msg, ok := errs[tc.field]; !ok || !strings.Contains(msg, tc.want) {
			t.Errorf("FromQuery(%.80s): %s = %q, want it to contain %q (all: %v)", tc.query, tc.field, msg, tc.want, errs)
		}
	}
}

// TestQueryRoundTrip: every representative request, the why panel's and
// "plan a rescale"'s among them, reads back from its own query.
func TestQueryRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 10, 0, time.UTC)
	orders := []assign.Topic{{Name: "orders", Partitions: 6}, {Name: "payments.v1", Partitions: 3}}
	tp := func(topic string, p int32) assign.TopicPartition {
		return assign.TopicPartition{Topic: topic, Partition: p}
	}
	for _, tc := range []struct {
		name string
		r    Request
	}{
		{"fresh start", Request{Topics: orders, Parallelism: 4, Target: 6, Mode: assign.StartFresh, Strategy: strategy.Default}},
		{"why link: restore with rates, busy, observed and backlog", Request{
			Topics: []assign.Topic{{Name: "orders", Partitions: 6}}, Parallelism: 4, Target: 4, Mode: assign.StartRestore, Strategy: strategy.Default,
			Rates: map[assign.TopicPartition]float64{tp("orders", 5): 2}, Busy: []float64{0, 0, 0, 0}, Observed: []float64{0, 0, 0, 0},
			Backlog: map[assign.TopicPartition]float64{tp("orders", 5): 0},
		}},
		{"plan a rescale: history, keyed figures, state, retention, dated", Request{
			Topics: orders, Parallelism: 4, Target: 7, MaxParallelism: 128, Mode: assign.StartRestore, Strategy: strategy.Default,
			History: []int{2, 4}, Rates: map[assign.TopicPartition]float64{tp("orders", 0): 200, tp("payments.v1", 2): 0.25},
			Busy: []float64{0.2, 0.4, 0.6, 0.8}, Observed: []float64{10, 20, 30, 40}, KeyedIn: []float64{1, 2, 3, 4.5}, KeyedBusy: []float64{0.125, 0.5, 0.5, 1},
			State: []int64{1 << 30, 0, 5, 7}, Backlog: map[assign.TopicPartition]float64{tp("orders", 1): 4500, tp("orders", 0): 0},
			Retention:  map[string]time.Duration{"orders": 2 * time.Minute, "payments.v1": 7 * 24 * time.Hour},
			ObservedAt: at, Job: "orders <enrichment>", Sample: "s1",
		}},
		{"why link: a fresh start at a target", Request{Topics: orders, Parallelism: 4, Target: 3, Mode: assign.StartFresh, Strategy: strategy.Default,
			Rates: map[assign.TopicPartition]float64{tp("orders", 3): 12.5}, ObservedAt: at, Job: "j"}},
		{"given capacities, utilisation and a state total", Request{Topics: orders, Parallelism: 3, Target: 5, Mode: assign.StartFresh, Strategy: "kafka-range",
			Capacity: 1500.5, KeyedIn: []float64{1, 1, 1}, KeyedCapacity: 80, Utilization: 70, State: []int64{1, 1, 1}, StateTotal: true}},
		{"an empty backlog is known to be empty", Request{Topics: orders, Parallelism: 2, Target: 2, Mode: assign.StartFresh, Strategy: strategy.Default,
			Backlog: map[assign.TopicPartition]float64{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if errs := tc.r.Validate(); errs != nil {
				t.Fatalf("Validate() = %v", errs)
			}
			got, errs := FromQuery(tc.r.Query())
			if errs != nil {
				t.Fatalf("FromQuery(%s): %v", tc.r.Query().Encode(), errs)
			}
			if diff := cmp.Diff(tc.r, got); diff != "" {
				t.Errorf("FromQuery(%s) (-want +got):\n%s", tc.r.Query().Encode(), diff)
			}
		})
	}
}

func TestQueryText(t *testing.T) {
	r := Request{
		Topics: []assign.Topic{{Name: "orders", Partitions: 6}}, Parallelism: 4, Target: 4, Mode: assign.StartRestore,
		Rates:   map[assign.TopicPartition]float64{{Topic: "orders", Partition: 5}: 2},
		Busy:    []float64{0, 0.25, 0, 0},
		Backlog: map[assign.TopicPartition]float64{{Topic: "orders", Partition: 5}: 0},
	}
	if got, want := r.Query().Encode(), "backlog=orders%2C5%2C0%0A&busy=0%2C0.25%2C0%2C0&mode=restore&parallelism=4&rates=orders%2C5%2C2%0A&target=4&topic=orders%3A6"; got != want {
		t.Errorf("Query() = %s, want %s", got, want)
	}
}

func TestQueryState(t *testing.T) {
	for _, tc := range []struct {
		state []int64
		total bool
		want  string
	}{
		{[]int64{1 << 31, 1 << 31}, true, "4GiB"},
		{[]int64{1_500_000_000, 1_500_000_000}, true, "3GB"},
		{[]int64{1024, 2000, 7, 0}, false, "1KiB,2KB,7,0"},
	} {
		r := Request{Topics: []assign.Topic{{Name: "o", Partitions: 4}}, Parallelism: len(tc.state), State: tc.state, StateTotal: tc.total}
		if got := r.Query().Get("state"); got != tc.want {
			t.Errorf("Query() state = %q, want %q", got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	r := Request{Topics: []assign.Topic{{Name: "orders", Partitions: 6}}, Parallelism: 4, Target: 9000, Busy: []float64{1, 0.5}}
	errs := r.Validate()
	if !strings.Contains(errs["target"], "parallelism + target is 9004 subtasks") || !strings.Contains(errs["busy"], "2 values for 4 current subtasks") {
		t.Errorf("Validate() = %v, want the subtasks bound on target and the busy count", errs)
	}
}
