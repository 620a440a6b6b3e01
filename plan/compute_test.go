package plan

import (
	"errors"
	"net/url"
	"testing"

	"github.com/skewscope/skewscope/assign"
)

func mustRequest(t *testing.T, query string) Request {
	t.Helper()
	v, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	r, errs := FromQuery(v)
	if errs != nil {
		t.Fatalf("FromQuery(%s): %v", query, errs)
	}
	return r
}

func TestComputeCapacity(t *testing.T) {
	for _, tc := range []struct {
		name, query       string
		source, keyed     string // capacity kinds
		sourceRates       string
		perSubtask        float64
		scalers           int
		keyGroupLoadKnown bool
	}{
		{"nothing given", "topic=a:4&parallelism=2", "unknown", "unknown", "", 0, 0, false},
		{"a capacity given", "topic=a:4&parallelism=2&capacity=500", "given", "unknown", "", 500, 0, false},
		{"busy ratios over the partitions' rates", "topic=a:4&parallelism=2&busy=0.5,0.5&rates=" + url.QueryEscape("a,0,50\na,1,50\na,2,50\na,3,50\n"),
			"observed", "unknown", "estimated", 200, 1, false},
		{"busy ratios over observed rates, and the keyed vertex", "topic=a:4&parallelism=2&busy=0.5,0.5&observed=100,100&keyedIn=40,40&keyedBusy=0.4,0.4",
			"observed", "observed", "observed", 200, 1, true}, // the source's needs produced rates
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := mustRequest(t, tc.query).Compute(nil)
			if err != nil {
				t.Fatal(err)
			}
			c := res.Capacity
			if c.Source.Kind != tc.source || c.Keyed.Kind != tc.keyed || c.SourceRates != tc.sourceRates || c.Source.PerSubtask != tc.perSubtask ||
				len(c.Scaler) != tc.scalers || (c.KeyGroupLoad != nil) != tc.keyGroupLoadKnown {
				t.Errorf("capacity = source %s %g (%q rates), keyed %s, %d scalers, key-group load %v; want %s %g (%q), %s, %d, %v",
					c.Source.Kind, c.Source.PerSubtask, c.SourceRates, c.Keyed.Kind, len(c.Scaler), c.KeyGroupLoad != nil,
					tc.source, tc.perSubtask, tc.sourceRates, tc.keyed, tc.scalers, tc.keyGroupLoadKnown)
			}
		})
	}
}

func TestComputeSample(t *testing.T) {
	r := mustRequest(t, "topic=a:4&parallelism=2&maxParallelism=4&keyedIn=30,10")
	res, err := r.Compute(&Sample{ID: "s1", Records: 4, KG: []int64{3, 1, 0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Capacity.KeyGroupLoad; len(got) != 4 || got[0] != 30 || got[1] != 10 || res.Capacity.Sampled == nil {
		t.Errorf("key-group load %v, want the sample's shares of 40 records/s: 30, 10, 0, 0", got)
	}
	// A sample over other key groups does not fit the plan: the keyed
	// inputs are what to change.
	_, err = r.Compute(&Sample{ID: "s2", Records: 4, KG: []int64{4, 0}})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "keyedIn" {
		t.Errorf("Compute with a sample of 2 key groups = %v, want a keyedIn field error", err)
	}
}

func TestComputeLayouts(t *testing.T) {
	res, err := mustRequest(t, "topic=a:4&parallelism=2&target=3&mode=restore&history=1,2").Compute(nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan.Start != assign.StartRestore || res.NowRestore == nil || res.Plan.Target.Parallelism != 3 || res.Upper < 3 {
		t.Errorf("plan start %s, now restored %v, target p=%d, swept to %d; want a restore to 3 from a restored layout", res.Plan.Start, res.NowRestore != nil, res.Plan.Target.Parallelism, res.Upper)
	}
	res, err = mustRequest(t, "topic=a:4&parallelism=2&target=3&strategy=kafka-range").Compute(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Strategy.Comparison || res.Plan.Restore != nil {
		t.Errorf("strategy %s comparison %v, restore modelled %v; want a comparison strategy without a restore model", res.Strategy.Name, res.Strategy.Comparison, res.Plan.Restore != nil)
	}
}
