//go:build browser

// Browser tests of the key lookup page (/keys): keys from the golden file
// land on the key group and subtask that Flink computed, and hostile keys
// are shown as text.

package web_test

import (
	"encoding/csv"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/skewscope/skewscope/internal/browsertest"
)

// goldenDirs are the golden sets to check: assign/testdata/golden (part of
// the repository, must be there) and, when it exists, an extra set from
// $SKEWSCOPE_GOLDEN_DIR or else ../shared/golden beside the repository.
func goldenDirs(t *testing.T) map[string]string {
	t.Helper()
	repo := filepath.Join("..", "assign", "testdata", "golden")
	if _, err := os.Stat(filepath.Join(repo, "key_to_operator.csv")); err != nil {
		t.Fatalf("golden vectors missing from the repository: %v", err)
	}
	dirs := map[string]string{"repo": repo}
	extra := os.Getenv("SKEWSCOPE_GOLDEN_DIR")
	if extra == "" {
		extra = filepath.Join("..", "..", "shared", "golden")
	}
	if _, err := os.Stat(filepath.Join(extra, "key_to_operator.csv")); err == nil {
		dirs["extra"] = extra
	}
	return dirs
}

// keyRow is one row of key_to_operator.csv.
type keyRow struct {
	Line                                       int
	Key, MaxParallelism, Parallelism, KeyGroup string
	Operator                                   string
}

// readKeyToOperator reads key_to_operator.csv exactly: RFC 4180 quoting,
// whitespace kept. It fails (never skips) when the file is missing.
func readKeyToOperator(t *testing.T, dir string) []keyRow {
	t.Helper()
	path := filepath.Join(dir, "key_to_operator.csv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("golden file: %v", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = 5
	header, err := r.Read()
	if err != nil {
		t.Fatalf("%s: header: %v", path, err)
	}
	if strings.Join(header, ",") != "key,max_parallelism,parallelism,key_group,operator_index" {
		t.Fatalf("%s: header is %q, want key,max_parallelism,parallelism,key_group,operator_index", path, header)
	}
	var rows []keyRow
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		line, _ := r.FieldPos(0)
		rows = append(rows, keyRow{Line: line, Key: rec[0], MaxParallelism: rec[1], Parallelism: rec[2], KeyGroup: rec[3], Operator: rec[4]})
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no rows", path)
	}
	return rows
}

// unusualKey reports whether a key tests more than plain ASCII letters:
// empty, non-ASCII, whitespace, or characters that need escaping in a URL,
// CSV or HTML.
func unusualKey(k string) bool {
	if k == "" {
		return true
	}
	for _, r := range k {
		if r > unicode.MaxASCII || unicode.IsSpace(r) || strings.ContainsRune(`"',\/:<>&%+#?=`, r) {
			return true
		}
	}
	return false
}

func nonASCII(k string) bool {
	for _, r := range k {
		if r > unicode.MaxASCII {
			return true
		}
	}
	return false
}

// pickKeyRows chooses one row per key (rotating through the file's max
// parallelism/parallelism pairs) for every unusual key and every eighth
// other key.
func pickKeyRows(rows []keyRow) []keyRow {
	var out []keyRow
	seen := map[string]int{} // key → index of the key among distinct keys
	rowsOfKey := map[string]int{}
	for _, r := range rows {
		if _, ok := seen[r.Key]; !ok {
			seen[r.Key] = len(seen)
		}
		n := seen[r.Key]
		i := rowsOfKey[r.Key]
		rowsOfKey[r.Key]++
		if i != n%6 {
			continue
		}
		if unusualKey(r.Key) || n%8 == 0 {
			out = append(out, r)
		}
	}
	return out
}

// keyPage is what /keys shows for a single key.
type keyPage struct {
	Key      string            `json:"key"`
	HasKey   bool              `json:"hasKey"`
	KeyGroup string            `json:"keyGroup"`
	Subtask  string            `json:"subtask"`
	Errors   map[string]string `json:"errors"`
	Scripts  int               `json:"scripts"`
	Imgs     int               `json:"imgs"`
	Input    string            `json:"input"`
}

func readKeyPage(t testing.TB, b *browsertest.Browser) keyPage {
	t.Helper()
	return browsertest.Eval[keyPage](t, b, `(() => {
		const text = id => { const el = document.querySelector('[data-testid="' + id + '"]'); return el ? el.textContent.trim() : ""; };
		const key = document.querySelector('[data-testid="key-text"]');
		const errors = {};
		for (const el of document.querySelectorAll('[data-testid^="err-"]')) {
			const s = el.textContent.trim();
			if (s) errors[el.dataset.testid] = s;
		}
		const res = document.getElementById("keys-results");
		const input = document.querySelector('[data-testid="in-keys"]');
		return {
			key: key ? key.textContent : "", hasKey: !!key,
			keyGroup: text("key-group"), subtask: text("subtask"), errors,
			scripts: res ? res.querySelectorAll("script").length : -1,
			imgs: res ? res.querySelectorAll("img").length : -1,
			input: input ? input.value : "",
		};
	})()`)
}

func keysURL(base string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return base + "/keys?" + q.Encode()
}

// 7. Keys from Flink's own golden vectors: the page shows the key group
// and the subtask that Flink computed.
func TestBrowserKeysGolden(t *testing.T) {
	dirs := goldenDirs(t)
	for _, name := range []string{"repo", "extra"} {
		if dir, ok := dirs[name]; ok {
			t.Run(name, func(t *testing.T) { checkBrowserKeysGolden(t, dir) })
		}
	}
}

func checkBrowserKeysGolden(t *testing.T, dir string) {
	rows := readKeyToOperator(t, dir)
	picked := pickKeyRows(rows)
	if len(picked) < 5 {
		t.Fatalf("picked %d golden rows, want at least 5", len(picked))
	}
	hasNonASCII, pickedNonASCII := false, false
	for _, r := range rows {
		hasNonASCII = hasNonASCII || nonASCII(r.Key)
	}
	for _, r := range picked {
		pickedNonASCII = pickedNonASCII || nonASCII(r.Key)
	}
	if hasNonASCII && !pickedNonASCII {
		t.Fatalf("the golden file has non-ASCII keys but none was picked")
	}

	base := startPages(t)
	b := browsertest.New(t, browsertest.WithTimeout(3*time.Minute))
	for _, r := range picked {
		u := keysURL(base, "keys", r.Key, "maxParallelism", r.MaxParallelism, "parallelism", r.Parallelism)
		status := b.Navigate(t, u)
		p := readKeyPage(t, b)
		where := "key_to_operator.csv line " + strconv.Itoa(r.Line) + " (key " + quote(r.Key) + ", maxParallelism " + r.MaxParallelism + ", parallelism " + r.Parallelism + ")"
		if status != http.StatusOK {
			t.Errorf("%s: GET %s answered %d, want 200; field errors: %v", where, u, status, p.Errors)
			continue
		}
		if !p.HasKey || p.Key != r.Key {
			t.Errorf("%s: key-text shows %s (present: %v), want the key exactly", where, quote(p.Key), p.HasKey)
		}
		if p.KeyGroup != r.KeyGroup || p.Subtask != r.Operator {
			t.Errorf("%s: the page shows key group %q and subtask %q; Flink computed key group %s and operator index %s",
				where, p.KeyGroup, p.Subtask, r.KeyGroup, r.Operator)
		}
		if p.Input != r.Key {
			t.Errorf("%s: the keys box holds %s, want the key exactly", where, quote(p.Input))
		}
	}
	keys := make([]string, len(picked))
	for i, r := range picked {
		keys[i] = quote(r.Key)
	}
	t.Logf("checked %d of %d golden rows, keys %s", len(picked), len(rows), strings.Join(keys, " "))
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}

// 5 (keys). Hostile keys are shown as text: one key, and a list.
func TestBrowserKeysHostile(t *testing.T) {
	base := startPages(t)
	b := browsertest.New(t)

	for _, key := range []string{
		`<script>alert(1)</script>`,
		`"><img src=x onerror=alert(2)>`,
		"user\u202Egpj.exe",
	} {
		u := keysURL(base, "keys", key, "parallelism", "4")
		if status := b.Navigate(t, u); status != http.StatusOK {
			t.Errorf("GET %s answered %d, want 200", u, status)
			continue
		}
		if d, ok := b.WaitDialog(500 * time.Millisecond); ok {
			t.Errorf("key %s opened a dialog: %v", quote(key), d)
		}
		p := readKeyPage(t, b)
		if p.Key != key {
			t.Errorf("key-text shows %s, want the key as text: %s", quote(p.Key), quote(key))
		}
		if p.Scripts != 0 || p.Imgs != 0 {
			t.Errorf("key %s: #keys-results holds %d script and %d img elements, want none", quote(key), p.Scripts, p.Imgs)
		}
		if p.KeyGroup == "" || p.Subtask == "" {
			t.Errorf("key %s: no key group (%q) or subtask (%q) shown", quote(key), p.KeyGroup, p.Subtask)
		}
	}

	// Many keys at once go through the bulk table.
	keys := []string{`<script>alert(3)</script>`, `"><img src=x onerror=alert(4)>`, "<svg onload=alert(5)>"}
	u := keysURL(base, "keys", strings.Join(keys, "\n"), "parallelism", "4", "target", "6")
	if status := b.Navigate(t, u); status != http.StatusOK {
		t.Fatalf("GET %s answered %d, want 200", u, status)
	}
	if d, ok := b.WaitDialog(500 * time.Millisecond); ok {
		t.Errorf("the bulk list opened a dialog: %v", d)
	}
	type bulk struct {
		Keys     []string `json:"keys"`
		Elements int      `json:"elements"`
	}
	got := browsertest.Eval[bulk](t, b, `(() => {
		const res = document.getElementById("keys-results");
		return {
			keys: [...document.querySelectorAll('[data-testid="bulk-rows"] code.key')].map(c => c.textContent),
			elements: res ? res.querySelectorAll("script, img, svg").length : -1,
		};
	})()`)
	if strings.Join(got.Keys, "\n") != strings.Join(keys, "\n") {
		t.Errorf("the bulk table shows keys %q, want %q as text", got.Keys, keys)
	}
	if got.Elements != 0 {
		t.Errorf("#keys-results holds %d script/img/svg elements, want none", got.Elements)
	}
	b.NoDialogs(t)
	b.NoConsoleErrors(t)
}

func quote(s string) string { return strconv.Quote(s) }
