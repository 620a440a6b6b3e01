package flink

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
)

// slowMetric decodes one metric the plain way, as the reference for the
// one-pass decoder: the value string through encoding/json.
func slowMetric(b []byte) (Metric, error) {
	var w struct {
		ID    *string         `json:"id"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return Metric{}, err
	}
	if w.ID == nil {
		return Metric{}, errNoID
	}
	m := Metric{ID: *w.ID, Value: math.NaN()}
	if len(w.Value) > 0 && w.Value[0] == '"' {
		if err := json.Unmarshal(w.Value, &m.Raw); err != nil {
			return Metric{}, err
		}
		if v, err := parseMetricFloat(m.Raw); err == nil {
			m.Value = v
		}
		return m, nil
	}
	var one Metric
	if err := one.UnmarshalJSON(b); err != nil {
		return Metric{}, err
	}
	return one, nil
}

var errNoID = errors.New("metric without id")

func sameMetric(a, b Metric) bool {
	return a.ID == b.ID && a.Raw == b.Raw && (a.Value == b.Value || math.IsNaN(a.Value) && math.IsNaN(b.Value))
}

// FuzzDecodeMetrics: the one-pass decoder gives what decoding each element
// with encoding/json gives, escapes and invalid UTF-8 included.
func FuzzDecodeMetrics(f *testing.F) {
	for _, s := range []string{
		`[{"id":"0.busyTimeMsPerSecond","value":"250.0"}]`,
		`[{"id":"a","value":"NaN"},{"id":"b","value":12},{"id":"c","value":null},{"id":"d"}]`,
		`[{"id":"e","value":"\u0031\u0032"},{"id":"f","value":"caf\u00e9 \"q\""},{"id":"g","value":"` + "\xff\xfe" + `"}]`,
		`[{"id":"h","value":"-9223372036854775808"},{"id":"i","value":"1e309"}]`,
		`[{"value":"1"}]`, `[{"id":"j","value":true}]`, `[]`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := decodeMetrics(body)
		var elems []json.RawMessage
		if json.Unmarshal(body, &elems) != nil {
			if err == nil {
				t.Fatalf("decodeMetrics accepted %q, which is not a JSON array", body)
			}
			return
		}
		var want []Metric
		var wantErr error
		for _, e := range elems {
			m, err := slowMetric(e)
			if err != nil {
				wantErr = err
				break
			}
			want = append(want, m)
		}
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: decodeMetrics err %v, element by element err %v", body, err, wantErr)
		}
		if err != nil {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d metrics, want %d", body, len(got), len(want))
		}
		for i := range got {
			if !sameMetric(got[i], want[i]) {
				t.Fatalf("%q: metric %d = %+v, want %+v", body, i, got[i], want[i])
			}
		}
	})
}
