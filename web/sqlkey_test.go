package web

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/sqlplan"
)

// sqlKeyStore holds one running job whose keyed vertex runs the Flink SQL
// operator k.
func sqlKeyStore(t *testing.T, k *flink.SQLKey) *live.Store {
	t.Helper()
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	st := live.New(live.Options{Now: func() time.Time { return now }})
	keyed := flink.VertexSnapshot{ID: tKeyed, Name: "GroupAggregate[4] -> Sink: totals[5]", Parallelism: 3, MaxParallelism: 128, Keyed: true,
		Inputs: []string{tSource}, SQL: k, Freshness: flink.Freshness{UpdatedAt: now}}
	src := flink.VertexSnapshot{ID: tSource, Name: "Source: payments[1] -> Calc[2]", Parallelism: 2, MaxParallelism: 128, Source: true,
		Freshness: flink.Freshness{UpdatedAt: now}}
	for i := range 3 {
		keyed.Subtasks = append(keyed.Subtasks, flink.SubtaskSnapshot{Index: i, Status: "RUNNING", StateSize: -1})
	}
	for i := range 2 {
		src.Subtasks = append(src.Subtasks, flink.SubtaskSnapshot{Index: i, Status: "RUNNING", StateSize: -1})
	}
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: now, FlinkVersion: "2.2.1",
		Jobs: []flink.JobSnapshot{{ID: tJob, Name: "totals", State: "RUNNING", StartTime: now.Add(-time.Hour), Vertices: []flink.VertexSnapshot{src, keyed}}}})
	return st
}

// A keyed vertex that runs a SQL GROUP BY names its key columns and opens
// the key lookup in SQL mode with them; one whose key the plan does not
// name says so and links nowhere.
func TestVertexPageNamesTheSQLKey(t *testing.T) {
	for _, tt := range []struct {
		name    string
		key     *flink.SQLKey
		want    []string
		columns string
	}{
		{"group by", &flink.SQLKey{Operator: "GroupAggregate", Columns: [][]string{{"account_id", "region"}}, Named: true},
			[]string{"Keyed by account_id, region (SQL, GroupAggregate).", "murmurHash(BinaryRowData.hashCode())"}, "account_id, region"},
		{"two-phase", &flink.SQLKey{Operator: "GlobalGroupAggregate", Columns: [][]string{{"user_id"}}, Named: true, Phase: "global", LocalInput: true},
			[]string{"Keyed by user_id (SQL, GlobalGroupAggregate).", "LocalGroupAggregate combines each key's records of a mini-batch"}, "user_id"},
		{"join", &flink.SQLKey{Operator: "Join", Columns: [][]string{{"id"}, {"order_id"}}, Named: true},
			[]string{"Keyed by id (left input) and order_id (right input) (SQL, Join)."}, "id"},
		{"a column named like a type", &flink.SQLKey{Operator: "Deduplicate", Columns: [][]string{{"date"}}, Named: true},
			[]string{"Keyed by `date` (SQL, Deduplicate)."}, "`date`"},
		{"renamed by a subquery", &flink.SQLKey{Operator: "GroupAggregate", Columns: [][]string{{"uid"}}, Named: true,
			Sources: [][]sqlplan.Source{{{Vertex: tSource, Table: "clicks", Column: "user_id"}}}},
			[]string{"Keyed by uid (uid is user_id of clicks) (SQL, GroupAggregate).", "murmurHash(BinaryRowData.hashCode())"}, "uid"},
		{"computed alias", &flink.SQLKey{Operator: "GroupAggregate", Columns: [][]string{{"k"}}, Named: true,
			Sources: [][]sqlplan.Source{{{Vertex: tSource, Expr: "LOWER(user_id)"}}}},
			[]string{"Keyed by k (k computed upstream as LOWER(user_id)) (SQL, GroupAggregate).", "a sample of the topic cannot route them"}, "k"},
		{"join on differently named columns", &flink.SQLKey{Operator: "Join", Columns: [][]string{{"user_id"}, {"name"}}, Named: true,
			Sources: [][]sqlplan.Source{{{Vertex: "l", Table: "clicks", Column: "user_id"}}, {{Vertex: "r", Table: "users", Column: "name"}}}},
			[]string{"Keyed by user_id (left input) and name (right input) (SQL, Join)."}, "user_id"},
		{"unnamed", &flink.SQLKey{Operator: "Join", Named: false},
			[]string{"Keyed by a Flink SQL Join whose key the job plan does not name.", "give them in the key lookup"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newLiveServer(t, sqlKeyStore(t, tt.key), nil)
			doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tKeyed, 200)
			note := strings.Join(strings.Fields(doc.Find(`[data-testid="sql-key"]`).Text()), " ")
			for _, w := range tt.want {
				if !strings.Contains(note, w) {
					t.Errorf("SQL key note %q lacks %q", note, w)
				}
			}
			href, ok := doc.Find(`[data-testid="sql-key-lookup"]`).Attr("href")
			if tt.columns == "" {
				if ok {
					t.Errorf("a key the plan does not name links to the lookup: %s", href)
				}
				return
			}
			u, err := url.Parse(href)
			if err != nil || u.Path != "/keys" {
				t.Fatalf("lookup link %q", href)
			}
			q := u.Query()
			if q.Get("type") != "sql" || q.Get("columns") != tt.columns || q.Get("parallelism") != "3" || q.Get("maxParallelism") != "128" {
				t.Errorf("lookup link %q: want type sql, columns %q, parallelism 3, maxParallelism 128", href, tt.columns)
			}
			// The inline lookup routes a SQL key, with the plan's columns.
			if typ, _ := doc.Find(`[data-testid="key-lookup"] input[name="type"]`).Attr("value"); typ != "sql" {
				t.Errorf("the inline key lookup's type %q, want sql", typ)
			}
			if cols, _ := doc.Find(`[data-testid="lookup-columns"]`).Attr("value"); cols != tt.columns {
				t.Errorf("the inline key lookup's columns %q, want %q", cols, tt.columns)
			}
			// The lookup asks for the types the plan does not give.
			keys := getDoc(t, ts.URL+href, 200)
			if msg := keys.Find(`[data-error-for="columns"]`).Text(); !strings.Contains(msg, "give the SQL type of") {
				t.Errorf("key lookup from the vertex page: columns message %q", msg)
			}
		})
	}
}

// A sample started from a SQL vertex reads the topic's records through its
// table: its key columns are the table columns the plan traces the key to,
// on the side of the keyed input the topic's source vertex feeds.
func TestSQLSampleKeyColumns(t *testing.T) {
	join := &live.SQLKeyView{Operator: "Join", Named: true, Columns: [][]string{{"user_id"}, {"name"}},
		Sources: [][]live.SQLKeySource{{{Vertex: "l", Table: "clicks", Column: "user_id"}}, {{Vertex: "r", Table: "users", Column: "name"}}}}
	renamed := &live.SQLKeyView{Operator: "GroupAggregate", Named: true, Columns: [][]string{{"uid", "region"}},
		Sources: [][]live.SQLKeySource{{{Vertex: "s", Table: "clicks", Column: "user_id"}, {Vertex: "s", Table: "clicks", Column: "region"}}}}
	computed := &live.SQLKeyView{Operator: "GroupAggregate", Named: true, Columns: [][]string{{"k"}},
		Sources: [][]live.SQLKeySource{{{Vertex: "s", Expr: "LOWER(user_id)"}}}}
	untraced := &live.SQLKeyView{Operator: "Join", Named: true, Columns: [][]string{{"id"}, {"id"}}}
	for _, c := range []struct {
		k         *live.SQLKeyView
		src, want string
	}{
		{join, "l", "user_id"},
		{join, "r", "name"},
		{join, "other", ""},
		{renamed, "s", "user_id, region"},
		{computed, "s", ""},
		{untraced, "s", "id"},
		{nil, "s", ""},
	} {
		if got := sqlSampleKey(c.k, c.src); got != c.want {
			t.Errorf("sqlSampleKey(%+v, %q) = %q, want %q", c.k, c.src, got, c.want)
		}
	}
}
