package web

import (
	"bytes"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestKeysPageSQL looks up Flink SQL keys, values of key_row.csv written by
// Flink's own key projection: (BIGINT, STRING) 42 "customer-42" has row hash
// -1473615028, key group 70 of 128 and subtask 2 at p = 4 (1 at p = 6 of
// 256); "a" as a STRING has 943281246, key group 4, subtask 0.
func TestKeysPageSQL(t *testing.T) {
	s := newTestServer(t)
	q := url.Values{"type": {"sql"}, "columns": {"customer_id BIGINT, name STRING"}, "keys": {`[42, "customer-42"]`},
		"maxParallelism": {"128"}, "parallelism": {"4"}, "target": {"6"}}
	rec, doc := get(t, s, "/keys?"+q.Encode())
	if rec.Code != 200 {
		t.Fatalf("GET /keys (sql) = %d: %s", rec.Code, doc.Find(".field-error").Text())
	}
	for id, want := range map[string]string{"java-hash": "-1473615028", "key-group": "70", "subtask": "2"} {
		if got := doc.Find(testid(id)).Text(); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	row := doc.Find(testid("key-row")).Text()
	for _, want := range []string{
		"   8  2a 00 00 00 00 00 00 00  customer_id (BIGINT)",
		"  16  0b 00 00 00 18 00 00 00  name (STRING)",
		"  24  63 75 73 74 6f 6d 65 72  variable part",
	} {
		if !strings.Contains(row, want+"\n") {
			t.Errorf("key row bytes lack the line %q:\n%s", want, row)
		}
	}
	if got := doc.Find(".fig-label").First().Text(); !strings.Contains(got, "BinaryRowData.hashCode") {
		t.Errorf("hash label = %q, want BinaryRowData.hashCode", got)
	}

	// The type follows from the columns; a list routes in bulk.
	q = url.Values{"columns": {"STRING"}, "keys": {"a\n[null]\nabcdef"}, "maxParallelism": {"128"}, "parallelism": {"4"}}
	rec, doc = get(t, s, "/keys?"+q.Encode())
	rows := doc.Find(testid("bulk-rows") + " tbody tr")
	if rec.Code != 200 || rows.Length() != 3 {
		t.Fatalf("bulk SQL lookup = %d with %d rows: %s", rec.Code, rows.Length(), doc.Find(".field-error").Text())
	}
	if got := rows.First().Find("td").Eq(1).Text(); got != "943281246" {
		t.Errorf(`row hash of "a" = %q, want 943281246`, got)
	}

	code, body := do(t, s, "GET", "/keys.csv?"+q.Encode(), nil)
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	if code != 200 || len(lines) != 4 || lines[0] != "key,type,row_hash,max_parallelism,key_group,parallelism,subtask" {
		t.Fatalf("SQL CSV = %d %q", code, body)
	}
	if lines[1] != "a,sql:STRING,943281246,128,4,4,0" {
		t.Errorf("SQL CSV row = %q, want a,sql:STRING,943281246,128,4,4,0 (key group 4, subtask 0 at p = 4)", lines[1])
	}
}

// TestKeysPageSQLRefuses: each bad SQL input is named inline.
func TestKeysPageSQLRefuses(t *testing.T) {
	s := newTestServer(t)
	for _, c := range []struct {
		q           url.Values
		field, want string
	}{
		{url.Values{"type": {"sql"}, "keys": {"1"}}, "columns", "needs its columns in key order"},
		{url.Values{"type": {"sql"}, "columns": {"user_id, region BIGINT"}, "keys": {"1"}}, "columns", "give the SQL type of user_id"},
		{url.Values{"type": {"sql"}, "columns": {"tags ARRAY<INT>"}, "keys": {"1"}}, "columns", "ARRAY"},
		{url.Values{"type": {"sql"}, "columns": {"a INT, A STRING"}, "keys": {"1"}}, "columns", "is column 0 already"},
		{url.Values{"type": {"sql"}, "columns": {"amount DECIMAL(10, 2"}, "keys": {"1"}}, "columns", "not closed"},
		{url.Values{"type": {"string"}, "columns": {"a INT"}, "keys": {"1"}}, "columns", "for a Flink SQL key"},
		{url.Values{"type": {"sql"}, "columns": {"id BIGINT, name STRING"}, "keys": {"42"}}, "keys", "JSON array of 2 values"},
		{url.Values{"type": {"sql"}, "columns": {"id BIGINT, name STRING"}, "keys": {"[1, \"a\"]\n[\"x\", \"b\"]"}}, "keys", "line 2: key column 0 (BIGINT)"},
	} {
		rec, doc := get(t, s, "/keys?"+c.q.Encode())
		if got := doc.Find(testid("err-" + c.field)).Text(); rec.Code != 400 || !strings.Contains(got, c.want) {
			t.Errorf("%s: %d, %s says %q; want 400 and %q", c.q.Encode(), rec.Code, c.field, got, c.want)
		}
	}
}

// The key lookup takes the types of columns named alone (as a SQL
// vertex's page names them) from the table's CREATE TABLE statement or
// column list.
func TestKeysSQLTypesFromTable(t *testing.T) {
	s := newTestServer(t)
	want := func(key string) string {
		q := url.Values{"type": {"sql"}, "columns": {"account_id BIGINT, region STRING"}, "keys": {key}, "parallelism": {"4"}}
		code, body := do(t, s, "GET", "/keys?"+q.Encode(), nil)
		if code != 200 {
			t.Fatalf("typed lookup = %d", code)
		}
		return keyRowOf(t, body)
	}
	for _, table := range []string{
		"CREATE TABLE payments (\n  account_id BIGINT,\n  region STRING,\n  tags ARRAY<STRING>\n) WITH ('connector' = 'kafka', 'format' = 'json')",
		"region STRING, account_id BIGINT, amount DOUBLE",
	} {
		q := url.Values{"type": {"sql"}, "columns": {"account_id, region"}, "table": {table}, "keys": {`[7, "eu-west"]`}, "parallelism": {"4"}}
		code, body := do(t, s, "GET", "/keys?"+q.Encode(), nil)
		if code != 200 {
			t.Errorf("lookup with table %q = %d", table, code)
			continue
		}
		if got, w := keyRowOf(t, body), want(`[7, "eu-west"]`); got != w || got == "" {
			t.Errorf("key row with the table's types %q, with the types typed %q", got, w)
		}
	}
	for _, tt := range []struct{ columns, table, field, want string }{
		{"nope", "a INT", "columns", "nope is not a column of the table"},
		{"tags", "tags ARRAY<STRING>", "columns", "ARRAY"},
		{"a", "CREATE TABLE t (\n  a INT\n  b INT\n)", "table", "at 3:"},
		{"a", "a INT\n b", "table", "at 2:"},
	} {
		q := url.Values{"type": {"sql"}, "columns": {tt.columns}, "table": {tt.table}, "keys": {"1"}}
		code, body := do(t, s, "GET", "/keys?"+q.Encode(), nil)
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if msg := doc.Find(`[data-error-for="` + tt.field + `"]`).Text(); code != 400 || !strings.Contains(msg, tt.want) {
			t.Errorf("columns %q, table %q: %d, %s message %q, want 400 naming %q", tt.columns, tt.table, code, tt.field, msg, tt.want)
		}
	}
}

// keyRowOf is the key row a single key lookup shows.
func keyRowOf(t *testing.T, body []byte) string {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(doc.Find(`[data-testid="key-row"]`).Text())
}
