package assign

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// goldenKeyLine is the key of a key_row.csv case as one line of the key
// lookup: a JSON array whose strings are the values' texts (a CHAR or
// VARCHAR value as its exact JSON literal, escaped lone surrogates kept),
// or "" when a value has no text form.
func goldenKeyLine(t *testing.T, c keyRowCase) string {
	t.Helper()
	parts := make([]string, len(c.types))
	for i, typ := range c.types {
		switch {
		case string(c.values[i]) == "null":
			parts[i] = "null"
		case typ.Root == SQLChar || typ.Root == SQLVarChar:
			parts[i] = string(c.values[i])
		case c.texts[i] == nil:
			return ""
		default:
			b, err := json.Marshal(*c.texts[i])
			if err != nil {
				t.Fatal(err)
			}
			parts[i] = string(b)
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// TestSetKeyTextGolden writes every key of key_row.csv that has a text form
// from one line, as the key lookup takes it, and compares the row and hash
// with Flink's; then routes all of them per list of types in one
// RouteKeyRows call and compares each key group and subtask.
func TestSetKeyTextGolden(t *testing.T) {
	dir := filepath.Join("testdata", "golden")
	header := readGoldenHeader(t, dir, "key_row.csv")
	shapes := keyRowShapes(t, header)
	type group struct {
		types []SQLType
		lines []string
		cases []keyRowCase
	}
	groups := map[string]*group{}
	var order []string
	checked := 0
	for _, r := range readGolden(t, dir, "key_row.csv", header...) {
		c := decodeKeyRowCase(t, r, shapes)
		line := goldenKeyLine(t, c)
		if line == "" {
			continue
		}
		e, err := NewKeyRowEncoder(c.types...)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.SetKeyText(line); err != nil {
			t.Errorf("%s: SetKeyText(%s): %v", c.label, line, err)
			continue
		}
		row, _ := e.Bytes()
		h, _ := e.HashCode()
		if !bytes.Equal(row, c.row) || h != c.hash {
			t.Errorf("%s: SetKeyText(%s) wrote % x (hash %d), Flink % x (hash %d)", c.label, line, row, h, c.row, c.hash)
		}
		checked++
		g := groups[r[1]]
		if g == nil {
			g = &group{types: c.types}
			groups[r[1]] = g
			order = append(order, r[1])
		}
		g.lines = append(g.lines, line)
		g.cases = append(g.cases, c)
	}
	if checked < 250 {
		t.Errorf("only %d golden keys had a text form, want at least 250", checked)
	}
	for _, sig := range order {
		g := groups[sig]
		for si, s := range shapes {
			n := len(g.lines)
			out := Routes{Hashes: make([]int32, n), KeyGroups: make([]int32, n), Subtasks: make([]int32, n)}
			if err := RouteKeyRows(g.types, g.lines, s.maxP, s.p, out); err != nil {
				t.Fatalf("RouteKeyRows(%s, maxP %d, p %d): %v", sig, s.maxP, s.p, err)
			}
			for i, c := range g.cases {
				if out.Hashes[i] != c.hash || int(out.KeyGroups[i]) != c.routes[si][0] || int(out.Subtasks[i]) != c.routes[si][1] {
					t.Errorf("%s at maxP %d, p %d: hash %d key group %d subtask %d, Flink %d %d %d", c.label, s.maxP, s.p,
						out.Hashes[i], out.KeyGroups[i], out.Subtasks[i], c.hash, c.routes[si][0], c.routes[si][1])
				}
			}
		}
	}
	t.Logf("%d golden keys from one line each, in %d lists of types", checked, len(order))
}

// TestRouteKeyRowsBulk routes more keys than one chunk, so the work is
// spread over goroutines, and compares each with the one-key path; a bad
// key is named by its index, the first one when there are several.
func TestRouteKeyRowsBulk(t *testing.T) {
	types, err := ParseSQLTypes("BIGINT, STRING")
	if err != nil {
		t.Fatal(err)
	}
	n := 5*routeInline + 17
	keys := make([]string, n)
	for i := range keys {
		keys[i] = `[` + strconv.Itoa(i*7919-n) + `, "user-` + strconv.Itoa(i%1013) + `"]`
	}
	out := Routes{Hashes: make([]int32, n), KeyGroups: make([]int32, n), Subtasks: make([]int32, n)}
	if err := RouteKeyRows(types, keys, 300, 7, out); err != nil {
		t.Fatal(err)
	}
	e, _ := NewKeyRowEncoder(types...)
	for i, k := range keys {
		if err := e.SetKeyText(k); err != nil {
			t.Fatal(err)
		}
		kg, sub, err := e.Route(300, 7)
		h, _ := e.HashCode()
		if err != nil || out.Hashes[i] != h || int(out.KeyGroups[i]) != kg || int(out.Subtasks[i]) != sub {
			t.Fatalf("key %d %s: bulk %d/%d/%d, one key %d/%d/%d (%v)", i, k, out.Hashes[i], out.KeyGroups[i], out.Subtasks[i], h, kg, sub, err)
		}
	}
	keys[3*routeChunk+5] = `[1, 2, 3]`
	keys[4*routeInline] = `["x", "y"]`
	err = RouteKeyRows(types, keys, 300, 7, out)
	var ke *KeyError
	if !errors.As(err, &ke) || ke.Index != 3*routeChunk+5 || !strings.Contains(ke.Err.Error(), "3 values for a key of 2 columns") {
		t.Errorf("two bad keys: %v, want key %d named for its 3 values", err, 3*routeChunk+5)
	}
}

// TestSetKeyTextRefuses checks the messages of keys that do not fit.
func TestSetKeyTextRefuses(t *testing.T) {
	for _, c := range []struct{ types, key, want string }{
		{"BIGINT, STRING", `42`, `a key of 2 columns is a JSON array of 2 values, such as [1, "a"]`},
		{"BIGINT, STRING", `[42, "a"`, "not a JSON array of values"},
		{"BIGINT, STRING", `[42, "a"] x`, "not a JSON array of values"},
		{"BIGINT, STRING", `[42, {"a": 1}]`, "value 2 is a JSON object"},
		{"BIGINT, STRING", `[42]`, "1 values for a key of 2 columns"},
		{"BIGINT, STRING", `["x", "a"]`, "key column 0 (BIGINT)"},
		{"BIGINT NOT NULL, STRING", `[null, "a"]`, "key column 0 (BIGINT NOT NULL)"},
		{"INT", `2147483648`, "key column 0 (INT)"},
		{"INT", `[[1]]`, "value 1 is a JSON array"},
		{"DATE, BOOLEAN", `["2026-02-30", true]`, "key column 0 (DATE)"},
	} {
		types, err := ParseSQLTypes(c.types)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := NewKeyRowEncoder(types...)
		err = e.SetKeyText(c.key)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("(%s) %s: %v, want it to say %q", c.types, c.key, err, c.want)
		}
	}
	// One column: the text itself, or an array, the one way to a null.
	types, _ := ParseSQLTypes("STRING")
	e, _ := NewKeyRowEncoder(types...)
	for _, c := range []struct {
		key  string
		null bool
	}{{"null", false}, {"[null]", true}, {`["null"]`, false}} {
		if err := e.SetKeyText(c.key); err != nil {
			t.Fatal(err)
		}
		row, _ := e.Bytes()
		if got := row[1]&1 == 1; got != c.null {
			t.Errorf("STRING key %s: null bit %v, want %v", c.key, got, c.null)
		}
	}
}

// TestFormatKeyRow names each 8 bytes of a row.
func TestFormatKeyRow(t *testing.T) {
	types, _ := ParseSQLTypes("BIGINT, STRING")
	e, _ := NewKeyRowEncoder(types...)
	if err := e.SetKeyText(`[7, "a string of 20 b."]`); err != nil {
		t.Fatal(err)
	}
	row, _ := e.Bytes()
	got := FormatKeyRow(row, 2, []string{"id", "name"})
	want := []string{
		"   0  00 00 00 00 00 00 00 00  header and null bits",
		"   8  07 00 00 00 00 00 00 00  id",
		"  16  11 00 00 00 18 00 00 00  name",
		"  24  61 20 73 74 72 69 6e 67  variable part",
		"  32  20 6f 66 20 32 30 20 62  variable part",
		"  40  2e 00 00 00 00 00 00 00  variable part",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("FormatKeyRow:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
