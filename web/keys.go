package web

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/a-h/templ"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/views"
)

const (
	maxLookupKeys  = MaxBulkKeys
	maxLookupBytes = 8 << 20
	maxKeysBody    = 12 << 20
	// shownKeys caps the rows of the bulk table; the CSV has them all.
	shownKeys = 500
	// maxHistogram caps the histogram rows.
	maxHistogram = 1024
)

var keyTypeSuggestions = []string{"sql", "string", "int", "long", "boolean", "short", "byte", "char", "float", "double", "tuple<string,int>", "tuple<string,long>", "tuple<string,string>"}

// keysForm is the key lookup input, parsed.
type keysForm struct {
	Keys, Type, Parallelism, Target, MaxParallelism string
	// Columns are a Flink SQL key's columns (type sql), as typed; Table
	// the table's CREATE TABLE statement or column list, which gives the
	// types of columns named alone.
	Columns, Table string

	// sql is set for type sql: the key is a Flink SQL key row of cols.
	sql  bool
	cols sqlKeyColumns

	keys    []string
	lineNo  []int // the line each key came from, 1-based
	skipped int
	typ     assign.KeyType
	p       int
	target  int
	maxP    int
	maxPDef bool
	Errors  map[string]string
}

func (f *keysForm) fail(field, format string, args ...any) {
	if f.Errors == nil {
		f.Errors = map[string]string{}
	}
	if _, dup := f.Errors[field]; !dup {
		f.Errors[field] = fmt.Sprintf(format, args...)
	}
}

// parseKeysForm reads the lookup input. upload is the content of an
// uploaded file, or nil.
func parseKeysForm(v url.Values, upload []byte) *keysForm {
	f := &keysForm{
		Keys: v.Get("keys"), Type: strings.TrimSpace(v.Get("type")),
		Parallelism: strings.TrimSpace(v.Get("parallelism")), Target: strings.TrimSpace(v.Get("target")),
		MaxParallelism: strings.TrimSpace(v.Get("maxParallelism")),
		Columns:        strings.TrimSpace(v.Get("columns")),
		Table:          strings.TrimSpace(v.Get("table")),
	}
	// The README and the API spell it targetParallelism; the form, target.
	if alt := strings.TrimSpace(v.Get("targetParallelism")); alt != "" {
		if f.Target != "" && f.Target != alt {
			f.fail("target", "target=%s and targetParallelism=%s disagree: give one", quote.Clip(f.Target), quote.Clip(alt))
		}
		f.Target = alt
	}
	if f.Keys == "" && v.Has("key") {
		f.Keys = v.Get("key")
	}
	if f.Type == "" && f.Columns != "" {
		f.Type = "sql"
	}
	if f.Type == "" {
		f.Type = "string"
	}
	if strings.EqualFold(f.Type, "sql") {
		f.Type, f.sql = "sql", true
		f.parseColumns()
	} else {
		t, err := assign.ParseKeyType(f.Type)
		if err != nil {
			f.fail("type", "%v", err)
		}
		f.typ = t
		if f.Columns != "" {
			f.fail("columns", "key columns are for a Flink SQL key (type sql); a %s key has none", f.Type)
		}
	}
	atoi := func(field, s, what string) int {
		if s == "" {
			return 0
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > assign.UpperBoundMaxParallelism {
			f.fail(field, "%s is not a %s: Flink accepts 1..%d", quote.Clip(s), what, assign.UpperBoundMaxParallelism)
			return 0
		}
		return n
	}
	f.p = atoi("parallelism", f.Parallelism, "parallelism")
	f.target = atoi("target", f.Target, "parallelism")
	f.maxP = atoi("maxParallelism", f.MaxParallelism, "max parallelism")
	if f.maxP == 0 && f.Errors["maxParallelism"] == "" {
		f.maxP, _ = assign.DefaultMaxParallelism(max(f.p, 1))
		f.maxPDef = true
	}
	switch {
	case f.p > f.maxP && f.maxP > 0:
		f.fail("maxParallelism", "%d is below the parallelism %d: Flink requires max parallelism ≥ parallelism", f.maxP, f.p)
	case f.target > f.maxP && f.maxP > 0:
		f.fail("target", "%d is above max parallelism %d: a restored job keeps its max parallelism", f.target, f.maxP)
	}
	text := f.Keys
	field := "keys"
	if upload != nil {
		text, field = string(upload), "file"
	}
	if len(text) > maxLookupBytes {
		f.fail(field, "%.1f MB; at most %d MB of keys", float64(len(text))/(1<<20), maxLookupBytes>>20)
		return f
	}
	lines := strings.Split(text, "\n")
	if n := len(lines); n > 1 && lines[n-1] == "" {
		lines = lines[:n-1] // the newline that ends the last line
	}
	single := len(lines) == 1 && upload == nil
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if l == "" && !single {
			f.skipped++
			continue
		}
		f.keys = append(f.keys, l)
		f.lineNo = append(f.lineNo, i+1)
		if len(f.keys) > maxLookupKeys {
			f.fail(field, "more than %d keys; split the list", maxLookupKeys)
			return f
		}
	}
	if single && text == "" && !v.Has("keys") && !v.Has("key") {
		f.keys, f.lineNo = nil, nil
	}
	return f
}

func (f *keysForm) canonicalQuery() url.Values {
	v := url.Values{}
	v.Set("keys", f.Keys)
	set := func(k, val, def string) {
		if val != "" && val != def {
			v.Set(k, val)
		}
	}
	set("type", f.Type, "string")
	set("columns", f.Columns, "")
	set("table", f.Table, "")
	set("parallelism", f.Parallelism, "")
	set("target", f.Target, "")
	set("maxParallelism", f.MaxParallelism, "")
	return v
}

// parseColumns reads a SQL key's columns; each must have a type.
func (f *keysForm) parseColumns() {
	if f.Columns == "" {
		f.fail("columns", "a Flink SQL key needs its columns in key order, such as user_id STRING, region_id BIGINT")
		return
	}
	c, err := parseSQLKeyColumns(f.Columns)
	if err != nil {
		f.fail("columns", "%v", err)
		return
	}
	if len(c.untyped) > 0 && f.Table != "" {
		if !f.typeFromTable(&c) {
			return
		}
	}
	if len(c.untyped) > 0 {
		names := make([]string, len(c.untyped))
		for i, u := range c.untyped {
			names[i] = c.names[u]
		}
		f.cols.untypedNames = names
		f.fail("columns", "give the SQL type of %s (the plan names a key's columns, not their types): such as %s STRING", strings.Join(names, ", "), sqlIdent(names[0]))
		return
	}
	f.cols = c
}

// readKeysRequest parses GET queries and POSTed forms (urlencoded or
// multipart, with an optional uploaded file).
func readKeysRequest(w http.ResponseWriter, r *http.Request) (*keysForm, bool, error) {
	if r.Method != http.MethodPost {
		return parseKeysForm(r.URL.Query(), nil), false, nil
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxKeysBody)
	var upload []byte
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				f := &keysForm{Type: "string"}
				f.fail("keys", "the upload is over %d MB; send at most %d MB of keys", maxKeysBody>>20, maxLookupBytes>>20)
				return f, true, nil
			}
			return nil, true, badInput("form", "%v", err)
		}
		if file, hdr, err := r.FormFile("file"); err == nil {
			defer file.Close()
			if hdr.Size > 0 {
				b, err := io.ReadAll(io.LimitReader(file, maxLookupBytes+1))
				if err != nil {
					return nil, true, badInput("file", "%v", err)
				}
				upload = b
			}
		}
	} else if err := r.ParseForm(); err != nil {
		return nil, true, badInput("form", "%v", err)
	}
	return parseKeysForm(r.PostForm, upload), upload != nil, nil
}

// serveKeys answers GET and POST /keys.
func (s *Server) serveKeys(w http.ResponseWriter, r *http.Request) (int, templ.Component, error) {
	f, uploaded, err := readKeysRequest(w, r)
	if err != nil {
		return 0, nil, err
	}
	l := s.layout(r, "Key lookup", "keys")
	page := views.KeysPage{Layout: l, Form: newKeysFormView(l, f)}
	if len(f.Errors) > 0 {
		// A link from a SQL vertex fills in the key columns the plan
		// names; before any key is asked for, the types it asks for are
		// the next step, not a bad request.
		if _, only := f.Errors["columns"]; only && len(f.Errors) == 1 && len(f.cols.untypedNames) > 0 && len(f.keys) == 0 && r.Method == http.MethodGet {
			return http.StatusOK, views.Keys(page), nil
		}
		return http.StatusBadRequest, views.Keys(page), nil
	}
	if r.Method == http.MethodPost && !uploaded {
		if q := f.canonicalQuery().Encode(); len(q) <= maxRedirectQuery {
			http.Redirect(w, r, s.prefix+"/keys?"+q, http.StatusSeeOther)
			return 0, nil, nil
		}
	}
	results, err := lookupAll(f)
	if err != nil {
		page.Form.Errors = map[string]string{"keys": err.Error()}
		return http.StatusBadRequest, views.Keys(page), nil
	}
	switch {
	case len(results) == 1 && !uploaded:
		k := newKeyResult(f, results[0])
		page.Single = &k
	case len(results) > 0:
		b := newBulkKeys(l, f, results, uploaded)
		page.Bulk = &b
	}
	return http.StatusOK, views.Keys(page), nil
}

// serveKeysCSV answers GET and POST /keys.csv with one row per key.
func (s *Server) serveKeysCSV(w http.ResponseWriter, r *http.Request) error {
	f, _, err := readKeysRequest(w, r)
	if err != nil {
		return err
	}
	for field, msg := range f.Errors {
		return badInput(field, "%s", msg)
	}
	results, err := lookupAll(f)
	if err != nil {
		return badInput("keys", "%v", err)
	}
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	header := []string{"key", "type", "java_hash", "max_parallelism", "key_group"}
	typ := f.typ.String()
	if f.sql {
		header[2], typ = "row_hash", "sql:"+f.cols.String()
	}
	if f.p > 0 {
		header = append(header, "parallelism", "subtask")
	}
	if f.target > 0 {
		header = append(header, "target_parallelism", "target_subtask")
	}
	cw.Write(header)
	for _, res := range results {
		row := []string{csvSafe(res.key), typ, strconv.Itoa(int(res.hash)), strconv.Itoa(f.maxP), strconv.Itoa(res.kg)}
		if f.p > 0 {
			row = append(row, strconv.Itoa(f.p), strconv.Itoa(res.subtask))
		}
		if f.target > 0 {
			row = append(row, strconv.Itoa(f.target), strconv.Itoa(res.targetSubtask))
		}
		cw.Write(row)
	}
	cw.Flush()
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="skewscope-keys.csv"`)
	w.Write(buf.Bytes())
	return nil
}

// csvSafe defuses keys that a spreadsheet would run as a formula: those
// starting with =, +, - or @ (unless the whole key is a plain number), or
// with tab or carriage return, get a leading apostrophe. Spreadsheets also
// skip leading spaces (NBSP and other Unicode spaces, a byte order mark)
// and read the fullwidth and small forms of those characters, and U+2212
// minus, as the ASCII ones, so those count too.
func csvSafe(s string) string {
	if s == "" {
		return s
	}
	if strings.ContainsRune("=+-@", rune(s[0])) {
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return s
		}
		return "'" + s
	}
	if s[0] == '\t' || s[0] == '\r' {
		return "'" + s
	}
	rest := strings.TrimLeftFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' || r == '\u200B' })
	if r, _ := utf8.DecodeRuneInString(rest); rest != "" && isFormulaStart(r) {
		return "'" + s
	}
	return s
}

// isFormulaStart reports =, +, - and @ in their ASCII, fullwidth and small
// forms, and the minus sign.
func isFormulaStart(r rune) bool {
	switch r {
	case '=', '+', '-', '@', '\t', '\r',
		'\uFF1D', '\uFF0B', '\uFF0D', '\uFF20', // fullwidth = + - @
		'\uFE66', '\uFE62', '\uFE63', '\uFE6B', // small = + - @
		'\u2212': // minus sign
		return true
	}
	return false
}

type keyLookup struct {
	key                        string
	hash                       int32
	kg, subtask, targetSubtask int
}

// lookupAll routes the form's keys in one bulk call (over every core for a
// long list); a key its type refuses is named by its line, or alone when it
// is the only key.
func lookupAll(f *keysForm) ([]keyLookup, error) {
	n := len(f.keys)
	routes := assign.Routes{Hashes: make([]int32, n), KeyGroups: make([]int32, n)}
	if f.p > 0 {
		routes.Subtasks = make([]int32, n)
	}
	route := func() error { return assign.RouteKeys(f.typ, f.keys, f.maxP, f.p, routes) }
	if f.sql {
		route = func() error { return assign.RouteKeyRows(f.cols.types, f.keys, f.maxP, f.p, routes) }
	}
	if err := route(); err != nil {
		var ke *assign.KeyError
		switch {
		case !errors.As(err, &ke):
			return nil, err
		case n == 1:
			return nil, ke.Err
		}
		return nil, fmt.Errorf("line %d: %v", f.lineNo[ke.Index], ke.Err)
	}
	out := make([]keyLookup, n)
	for i, k := range f.keys {
		kl := keyLookup{key: k, hash: routes.Hashes[i], kg: int(routes.KeyGroups[i])}
		if f.p > 0 {
			kl.subtask = int(routes.Subtasks[i])
		}
		if f.target > 0 {
			kl.targetSubtask = assign.OperatorIndex(f.maxP, f.target, kl.kg)
		}
		out[i] = kl
	}
	return out, nil
}

func newKeysFormView(l views.Layout, f *keysForm) views.KeysForm {
	kf := views.KeysForm{
		Action: l.URL("/keys"), CSVAction: l.URL("/keys.csv"),
		Keys: f.Keys, Type: f.Type, Parallelism: f.Parallelism, Target: f.Target, MaxParallelism: f.MaxParallelism,
		Types: keyTypeSuggestions, Errors: f.Errors, Columns: f.Columns, Table: f.Table, SQL: f.sql,
	}
	if f.p > 0 {
		d, _ := assign.DefaultMaxParallelism(f.p)
		kf.MaxPHint = strconv.Itoa(d)
	} else {
		kf.MaxPHint = "128"
	}
	return kf
}

func newKeyResult(f *keysForm, k keyLookup) views.KeyResult {
	m := assign.MurmurHash(k.hash)
	r := views.KeyResult{
		Key: k.key, Type: f.typ.String(), JavaHash: strconv.Itoa(int(k.hash)), HashLabel: "Java hashCode",
		KeyGroup: strconv.Itoa(k.kg), MaxParallelism: strconv.Itoa(f.maxP),
	}
	if f.maxPDef {
		r.MaxPNote = " (Flink's default)"
	}
	if f.sql {
		r.Type, r.HashLabel = "Flink SQL key ("+f.cols.String()+")", "BinaryRowData.hashCode"
		e, _ := assign.NewKeyRowEncoder(f.cols.types...) // lookupAll wrote this key already
		_ = e.SetKeyText(k.key)
		row, _ := e.Bytes()
		names := make([]string, len(f.cols.types))
		for i := range names {
			names[i] = f.cols.label(i) + " (" + f.cols.types[i].Text() + ")"
		}
		r.Row = assign.FormatKeyRow(row, len(names), names)
		r.Steps = []string{
			fmt.Sprintf("the key row: %d bytes, as the planner's key projection writes them (KeySelectorUtil.getRowDataSelector, BinaryRowWriter), shown above", len(row)),
			fmt.Sprintf("BinaryRowData.hashCode() = MurmurHash3_x86_32 of the row by 4-byte words, seed 42 = %d", k.hash),
		}
	} else {
		r.Steps = []string{fmt.Sprintf("%s.hashCode() = %d", javaLiteral(f.typ, k.key), k.hash)}
	}
	r.Steps = append(r.Steps,
		fmt.Sprintf("MathUtils.murmurHash(%d) = %d", k.hash, m),
		fmt.Sprintf("key group = %d mod %d = %d   (KeyGroupRangeAssignment.computeKeyGroupForKeyHash)", m, f.maxP, k.kg),
	)
	if f.p > 0 {
		kr, _ := assign.KeyGroupRangeFor(f.maxP, f.p, k.subtask)
		r.Parallelism, r.Subtask, r.Range = strconv.Itoa(f.p), strconv.Itoa(k.subtask), fmt.Sprintf("%d–%d", kr.Start, kr.End)
		r.Steps = append(r.Steps, fmt.Sprintf("subtask = %d · %d / %d = %d   (computeOperatorIndexForKeyGroup)", k.kg, f.p, f.maxP, k.subtask))
	}
	if f.target > 0 {
		kr, _ := assign.KeyGroupRangeFor(f.maxP, f.target, k.targetSubtask)
		r.Target, r.TargetSubtask, r.TargetRange = strconv.Itoa(f.target), strconv.Itoa(k.targetSubtask), fmt.Sprintf("%d–%d", kr.Start, kr.End)
		r.Moves = f.p > 0 && k.targetSubtask != k.subtask
		r.Steps = append(r.Steps, fmt.Sprintf("after rescaling to %d: %d · %d / %d = %d", f.target, k.kg, f.target, f.maxP, k.targetSubtask))
	}
	return r
}

// javaLiteral writes the key the way Java source would, for the steps.
func javaLiteral(t assign.KeyType, key string) string {
	switch t.Kind {
	case assign.KindString:
		return strconv.Quote(key)
	case assign.KindLong:
		return key + "L"
	case assign.KindTuple:
		return "Tuple" + strconv.Itoa(len(t.Fields)) + ".of" + key
	}
	return "(" + t.String() + ") " + key
}

func newBulkKeys(l views.Layout, f *keysForm, res []keyLookup, uploaded bool) views.BulkKeys {
	b := views.BulkKeys{Count: len(res), MaxParallelism: strconv.Itoa(f.maxP), HasTarget: f.target > 0, HashLabel: "Java hash"}
	if f.sql {
		b.HashLabel, b.Columns = "row hash", f.cols.String()
	}
	if f.skipped > 0 {
		b.Skipped = fmt.Sprintf("%d blank lines were skipped (an empty string is a valid key: look it up on its own).", f.skipped)
	}
	for i, k := range res {
		if i == shownKeys {
			b.More = fmt.Sprintf("Showing %d of %d keys; download the CSV for all of them.", shownKeys, len(res))
			break
		}
		row := views.KeyRow{Key: k.key, JavaHash: strconv.Itoa(int(k.hash)), KeyGroup: strconv.Itoa(k.kg)}
		if f.p > 0 {
			row.Subtask = strconv.Itoa(k.subtask)
		}
		if f.target > 0 {
			row.TargetSubtask = strconv.Itoa(k.targetSubtask)
			row.Moves = f.p > 0 && k.targetSubtask != k.subtask
		}
		b.Rows = append(b.Rows, row)
	}
	n := max(f.p, f.target)
	if n == 0 {
		b.Skew = "give a parallelism to see how the keys spread over subtasks"
	} else {
		now := make([]float64, max(f.p, 1))
		then := make([]float64, max(f.target, 1))
		for _, k := range res {
			if f.p > 0 {
				now[k.subtask]++
			}
			if f.target > 0 {
				then[k.targetSubtask]++
			}
		}
		desc := func(v []float64) string {
			sk := assign.MeasureSkew(v)
			return fmt.Sprintf("skew %s · max/mean %s · %d subtasks with no key", format.Percent(sk.FlinkPercent), format.Factor(sk.MaxOverMean), sk.Idle)
		}
		if f.p > 0 {
			b.Skew = desc(now)
		} else {
			b.Skew = "no current parallelism given"
		}
		if f.target > 0 {
			b.TSkew = desc(then)
		}
		mx := 1.0
		for _, x := range append(append([]float64{}, now...), then...) {
			mx = max(mx, x)
		}
		for i := range min(n, maxHistogram) {
			h := views.HistRow{Subtask: i, Max: int(mx)}
			if i < f.p {
				h.HasNow, h.Now, h.NowText = true, int(now[i]), strconv.Itoa(int(now[i]))
			}
			if i < f.target {
				h.HasThen, h.Then, h.ThenText = true, int(then[i]), strconv.Itoa(int(then[i]))
			}
			b.Histogram = append(b.Histogram, h)
		}
	}
	if !uploaded {
		if q := f.canonicalQuery().Encode(); len(q) <= maxRedirectQuery {
			b.CSVURL = l.URL("/keys.csv?" + q)
		}
	}
	return b
}
