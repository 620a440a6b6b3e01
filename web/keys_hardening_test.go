package web

import (
	"encoding/csv"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
)

func TestCSVSafe(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"=1+1", "'=1+1"},
		{"+cmd", "'+cmd"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"-2+3", "'-2+3"},
		{"-42", "-42"}, // a number stays a number
		{"+1.5", "+1.5"},
		{" =1+1", "' =1+1"},
		{"\u00a0=1+1", "'\u00a0=1+1"},
		{"\uff1d1+1", "'\uff1d1+1"}, // fullwidth =
		{"\uff0bcmd", "'\uff0bcmd"}, // fullwidth +
		{"\uff0dcmd", "'\uff0dcmd"}, // fullwidth -
		{"\uff20cmd", "'\uff20cmd"}, // fullwidth @
		{"\u3000=x", "'\u3000=x"},   // ideographic space
		{"\u2212x", "'\u2212x"},     // minus sign
		{" 12", " 12"},              // whitespace before a plain character is harmless
		{"\u00a0x", "\u00a0x"},
		{"\ufeff=x", "'\ufeff=x"}, // byte order mark
		{"\ufe66x", "'\ufe66x"},   // small equals sign
		{"\tx", "'\tx"},
		{"orders", "orders"},
		{"", ""},
		{"a=b", "a=b"},
	} {
		if got := csvSafe(tc.in); got != tc.want {
			t.Errorf("csvSafe(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestKeysCSVTargetParallelism: the README's targetParallelism= works as
// target= does.
func TestKeysCSVTargetParallelism(t *testing.T) {
	s := newTestServer(t)
	for _, q := range []string{"keys=a&parallelism=2&targetParallelism=4", "keys=a&parallelism=2&target=4"} {
		code, b := do(t, s, "GET", "/keys.csv?"+q, nil)
		rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
		if code != 200 || err != nil || len(rows) != 2 || !strings.Contains(strings.Join(rows[0], ","), "target_subtask") || rows[1][7] != "4" {
			t.Errorf("GET /keys.csv?%s = %d %q, want a target_parallelism column of 4", q, code, b)
		}
	}
	if code, b := do(t, s, "GET", "/keys.csv?keys=a&target=4&targetParallelism=5", nil); code != 400 || !strings.Contains(string(b), "target") {
		t.Errorf("GET /keys.csv with target=4&targetParallelism=5 = %d %s, want 400 naming target", code, b)
	}
}

// TestOpenAPIAgreesOnRejectedInputs: what the server rejects, the schema
// does not allow.
func TestOpenAPIAgreesOnRejectedInputs(t *testing.T) {
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name   string
				Schema struct {
					Items struct {
						MinLength int
						Pattern   string
					}
				}
			}
			RequestBody struct {
				Content map[string]struct {
					Schema struct {
						Properties map[string]struct {
							Items struct {
								Type any
							}
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	items := doc.Paths["/api/v1/keygroup"]["post"].RequestBody.Content["application/json"].Schema.Properties["keys"].Items
	if ts, _ := json.Marshal(items.Type); items.Type == nil || strings.Contains(string(ts), "null") {
		t.Errorf("POST /api/v1/keygroup keys items type = %s: allows null, which the server answers with 400", ts)
	}
	for _, p := range doc.Paths["/api/v1/assignment"]["get"].Parameters {
		if p.Name == "topic" && p.Schema.Items.Pattern == "" && p.Schema.Items.MinLength == 0 {
			t.Errorf("assignment topic items have no pattern or minLength: topic= is allowed, and answered 400")
		}
	}
	s := newTestServer(t)
	for _, tc := range []struct {
		body string
		code int
	}{{`{"keys":[null]}`, 400}, {`{"keys":["a"]}`, 200}, {`{"type":"long","keys":[1,"2"]}`, 200}, {`{"type":"boolean","keys":[true]}`, 200}, {`{"type":"tuple<string,int>","keys":[["a",1]]}`, 200}} {
		if code, got := do(t, s, "POST", "/api/v1/keygroup", strings.NewReader(tc.body)); code != tc.code {
			t.Errorf("POST keygroup %s = %d %s, want %d", tc.body, code, got, tc.code)
		}
	}
	if code, _ := do(t, s, "GET", "/api/v1/assignment?parallelism=2&topic=", nil); code != 400 {
		t.Errorf("GET assignment topic= = %d, want 400", code)
	}
	if code, _ := do(t, s, "GET", "/api/v1/assignment?parallelism=2&topic="+url.QueryEscape("a:b:3"), nil); code != 200 {
		t.Errorf("GET assignment topic=a:b:3 = %d, want 200 (the name is before the last colon)", code)
	}
}
