package flink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// jsonMetrics decodes a metric values answer the plain way, with
// encoding/json, as the reference for the hand-written decoder: the body
// as []struct{ID *string; Value json.RawMessage}, each element converted
// as the collector always has (strings through encoding/json).
func jsonMetrics(body []byte) ([]Metric, error) {
	var ws []struct {
		ID    *string         `json:"id"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(body, &ws); err != nil {
		return nil, err
	}
	if ws == nil {
		return nil, nil
	}
	out := make([]Metric, 0, len(ws))
	for _, w := range ws {
		if w.ID == nil {
			return nil, errNoID
		}
		m := Metric{ID: *w.ID, Value: math.NaN()}
		switch {
		case len(w.Value) == 0 || string(w.Value) == "null":
		case w.Value[0] == '"':
			if err := json.Unmarshal(w.Value, &m.Raw); err != nil {
				return nil, err
			}
			if v, err := parseMetricFloat(m.Raw); err == nil {
				m.Value = v
			}
		case w.Value[0] == '-' || '0' <= w.Value[0] && w.Value[0] <= '9':
			m.Raw = string(w.Value)
			v, err := strconv.ParseFloat(m.Raw, 64)
			if err != nil {
				return nil, err
			}
			m.Value = v
		default:
			return nil, fmt.Errorf("value %s", w.Value)
		}
		out = append(out, m)
	}
	return out, nil
}

var errNoID = errors.New("metric without id")

func sameMetric(a, b Metric) bool {
	return a.ID == b.ID && a.Raw == b.Raw && (a.Value == b.Value || math.IsNaN(a.Value) && math.IsNaN(b.Value))
}

// sameAsJSON fails t unless decodeMetrics and jsonMetrics agree on body:
// both fail, or both give the same metrics.
func sameAsJSON(t *testing.T, name string, body []byte) {
	t.Helper()
	got, err := decodeMetrics(body)
	want, wantErr := jsonMetrics(body)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s %q: decodeMetrics err %v, encoding/json err %v", name, truncate(body, 200), err, wantErr)
	}
	if err != nil {
		return
	}
	if len(got) != len(want) || (got == nil) != (want == nil) {
		t.Fatalf("%s %q: %d metrics (nil %v), want %d (nil %v)", name, truncate(body, 200), len(got), got == nil, len(want), want == nil)
	}
	for i := range got {
		if !sameMetric(got[i], want[i]) {
			t.Fatalf("%s %q: metric %d = %+v, want %+v", name, truncate(body, 200), i, got[i], want[i])
		}
	}
}

var decodeSeeds = []string{
	`[{"id":"0.busyTimeMsPerSecond","value":"250.0"}]`,
	`[{"id":"a","value":"NaN"},{"id":"b","value":12},{"id":"c","value":null},{"id":"d"}]`,
	`[{"id":"e","value":"\u0031\u0032"},{"id":"f","value":"caf\u00e9 \"q\""},{"id":"g","value":"` + "\xff\xfe" + `"}]`,
	`[{"id":"h","value":"-9223372036854775808"},{"id":"i","value":"1e309"}]`,
	`[{"value":"1"}]`, `[{"id":"j","value":true}]`, `[]`, `{}`, `null`, ` [ ] `, `[null]`, `[1]`,
	`[{"ID":"k","Value":"2"}]`, `[{"i\u0064":"l","VALUE":"3","value":"4"}]`, `[{"id":"m","id":null,"value":"1"}]`,
	`[{"id":5,"value":"1"}]`, `[{"id":"n","value":{"a":[1,2,{"b":null}]}}]`, `[{"id":"o","extra":[true,false,-0.5e+3],"value":"1"}]`,
	`[{"id":"p","value":"1"},]`, `[{"id":"q","value":01}]`, `[{"id":"r","value":"\ud83d\ude00 \ud800 \udc00x"}]`,
	`[{"id":"s","value":"\x01"}]`, `[{"id":"t","value":"\q"}]`, `[{"id":"u","value":"1"}] x`, `[{"id":"v","value":1.}]`,
	`[{"id":"w","value":-}]`, `[{"id":"x","value":1e}]`, `[{"id":"y","value":nul}]`, `[{"id":"z","value":" 7 "}]`,
	`[{"id":"\u0130d","value":"1"}]`, `[{"ıd":"a","value":"1"}]`, `[{"id":"a","value":"Infinity"},{"id":"b","value":"-Infinity"}]`,
	`[{"id":"a"  ,  "value" : "1" } , {"id":"b","value":"2"}]`, `[{"id":"a","value":"1"}`, `[{"id":"a","value":"1`,
	`[{"id":"a","value":1E+2},{"id":"b","value":-0},{"id":"c","value":123456789012345678901234567890}]`,
}

// FuzzDecodeMetrics: the hand-written decoder accepts what encoding/json
// accepts and gives what it gives, escapes, invalid UTF-8, repeated and
// differently cased fields included.
func FuzzDecodeMetrics(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { sameAsJSON(t, "fuzz", body) })
}

func TestDecodeMetricsSeeds(t *testing.T) {
	for _, s := range decodeSeeds {
		sameAsJSON(t, "seed", []byte(s))
	}
	deep := strings.Repeat("[", maxNesting+5) + strings.Repeat("]", maxNesting+5)
	sameAsJSON(t, "deep", []byte(`[{"id":"a","x":`+deep+`,"value":"1"}]`))
}

// recordedMetricAnswers returns every recorded metric values answer under
// ../testdata/flink: the JSON arrays whose elements have an id and a value.
func recordedMetricAnswers(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	err := filepath.WalkDir("../testdata/flink", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var elems []map[string]json.RawMessage
		if json.Unmarshal(b, &elems) != nil || len(elems) == 0 {
			return nil
		}
		if _, ok := elems[0]["value"]; ok {
			out[path] = b
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("found %d recorded metric values answers, want the recordings' dozens", len(out))
	}
	return out
}

// TestDecodeMetricsRecorded: on every recorded answer, and on each cut
// short at every few bytes (an answer truncated by a proxy), the decoder
// and encoding/json agree.
func TestDecodeMetricsRecorded(t *testing.T) {
	for path, b := range recordedMetricAnswers(t) {
		sameAsJSON(t, path, b)
		ms, err := decodeMetrics(b)
		if err != nil || len(ms) == 0 {
			t.Fatalf("%s: %d metrics, %v", path, len(ms), err)
		}
		for n := 0; n < len(b); n += 1 + len(b)/64 {
			sameAsJSON(t, path+" cut", b[:n])
		}
	}
}

// TestDecodeMetricsErrors: a malformed answer is an error that says where
// and what, and the client's error names the endpoint.
func TestDecodeMetricsErrors(t *testing.T) {
	for body, want := range map[string]string{
		`{"id":"a"}`:                             "want an array of metrics",
		`[{"id":"a","value":"1"},{"value":"2"}]`: "metric 1: metric without id",
		`[{"id":"a","value":true}]`:              `metric 0: metric "a": value must be a string or number, got true`,
		`[{"id":7}]`:                             "metric 0: at byte 7: id must be a string, got 7",
		`[{"id":"a","value":"1"}`:                "want ',' or ']', got the end of the body",
		`[{"id":"a","value":"1"}]]`:              "at byte 24: data after the JSON value",
		`[{"id":"a","value":"1e999"}]`:           "",
		`[{"id":"a","value":1e999}]`:             `metric "a": value: strconv.ParseFloat: parsing "1e999": value out of range`,
	} {
		_, err := decodeMetrics([]byte(body))
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", body, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", body, err, want)
		}
	}
}

// BenchmarkDecodeMetrics times the hand-written decoder beside
// encoding/json on the largest recorded answer and on a vertex answer of a
// 64-subtask source (the shape cmd/jmload polls), per response.
func BenchmarkDecodeMetrics(b *testing.B) {
	var largest []byte
	for _, body := range recordedMetricAnswers(b) {
		if len(body) > len(largest) {
			largest = body
		}
	}
	var synth bytes.Buffer
	synth.WriteByte('[')
	for i := range 64 {
		for _, m := range []string{metricBusy, metricBackPressured, metricIdle, metricRecordsIn, metricRecordsOut} {
			fmt.Fprintf(&synth, `{"id":"%d.%s","value":"%d.25"},`, i, m, 100+i)
		}
		for p := range 4 {
			fmt.Fprintf(&synth, `{"id":"%d.Source__Kafka_Source.KafkaSourceReader.topic.orders.partition.%d.currentOffset","value":"%d"},`, i, i*4+p, 1<<40+i)
		}
	}
	synth.Truncate(synth.Len() - 1)
	synth.WriteByte(']')
	for _, c := range []struct {
		name string
		body []byte
	}{{"recorded", largest}, {"p64", synth.Bytes()}} {
		n, err := decodeMetrics(c.body)
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range []struct {
			name string
			fn   func([]byte) ([]Metric, error)
		}{{"hand", decodeMetrics}, {"encoding-json", jsonMetrics}} {
			b.Run(c.name+"/"+d.name, func(b *testing.B) {
				b.SetBytes(int64(len(c.body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := d.fn(c.body); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(n)), "metrics/op")
			})
		}
	}
}
