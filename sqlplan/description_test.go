package sqlplan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDescription(t *testing.T) {
	for _, tc := range []struct {
		name, desc string
		want       []Operator
	}{
		{
			name: "tree, escaped, node ids",
			desc: "[6]:GroupAggregate(groupBy=[user_id], select=[user_id, COUNT(*) AS EXPR$1])<br/>+- [7]:Calc(select=[user_id, CASE((n &gt; 0), n, null:BIGINT) AS n])<br/>   +- sink[8]: Writer<br/>",
			want: []Operator{
				{Name: "GroupAggregate", ID: "6", Keys: [][]string{{"user_id"}}, KeyNamed: true,
					Args: map[string]string{"groupBy": "user_id", "select": "user_id, COUNT(*) AS EXPR$1"}},
				{Name: "Calc", ID: "7", Args: map[string]string{"select": "user_id, CASE((n > 0), n, null:BIGINT) AS n"}},
				{Name: "Sink", ID: "8", Args: map[string]string{"table": "sink", "part": "Writer"}},
			},
		},
		{
			name: "cascading, no ids",
			desc: "GroupAggregate(groupBy=[a, b], select=[a, b]) -&gt; Calc(select=[a]) -&gt; Sink(table=[default_catalog.default_database.out], fields=[a])",
			want: []Operator{
				{Name: "GroupAggregate", Keys: [][]string{{"a", "b"}}, KeyNamed: true, Args: map[string]string{"groupBy": "a, b", "select": "a, b"}},
				{Name: "Calc", Args: map[string]string{"select": "a"}},
				{Name: "Sink", Args: map[string]string{"table": "default_catalog.default_database.out", "fields": "a"}},
			},
		},
		{
			name: "nested brackets and literals in the select list",
			desc: "[3]:GroupAggregate(groupBy=[k], select=[k, MAX(CAST(x AS VARCHAR(10))) AS m, CONCAT_WS(_UTF-16LE',]) -> (', a, b) AS c])",
			want: []Operator{{Name: "GroupAggregate", ID: "3", Keys: [][]string{{"k"}}, KeyNamed: true,
				Args: map[string]string{"groupBy": "k", "select": "k, MAX(CAST(x AS VARCHAR(10))) AS m, CONCAT_WS(_UTF-16LE',]) -> (', a, b) AS c"}}},
		},
		{
			name: "backquoted key names",
			desc: "GroupAggregate(groupBy=[`a, b`, `c``d`, e])",
			want: []Operator{{Name: "GroupAggregate", Keys: [][]string{{"a, b", "c`d", "e"}}, KeyNamed: true,
				Args: map[string]string{"groupBy": "`a, b`, `c``d`, e"}}},
		},
		{
			name: "a window aggregate's Scala symbols",
			desc: "[9]:GlobalWindowAggregate(groupBy=[k], window=[TUMBLE(slice_end=[$slice_end], size=[1 min])], select=[k, start('w$) AS window_start, end('w$) AS window_end])",
			want: []Operator{{Name: "GlobalWindowAggregate", ID: "9", Keys: [][]string{{"k"}}, KeyNamed: true,
				Args: map[string]string{"groupBy": "k", "window": "TUMBLE(slice_end=[$slice_end], size=[1 min])",
					"select": "k, start('w$) AS window_start, end('w$) AS window_end"}}},
		},
		{
			name: "global Top-N",
			desc: "Rank(strategy=[AppendFastStrategy], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=3], partitionBy=[], orderBy=[amount DESC], select=[a])",
			want: []Operator{{Name: "Rank", Global: true, Args: map[string]string{"strategy": "AppendFastStrategy", "rankType": "ROW_NUMBER",
				"rankRange": "rankStart=1, rankEnd=3", "partitionBy": "", "orderBy": "amount DESC", "select": "a"}}},
		},
		{
			name: "DataStream operators",
			desc: "Source: Kafka Source<br/>+- Source Tagger<br/>:- Route Sink: Writer<br/>",
			want: []Operator{{Name: "Source: Kafka Source"}, {Name: "Source Tagger"}, {Name: "Route Sink: Writer"}},
		},
		{
			name: "unterminated",
			desc: "[1]:Deduplicate(keep=[FirstRow], key=[k",
			want: []Operator{{Name: "Deduplicate", ID: "1", Keys: [][]string{{"k"}}, KeyNamed: true, Args: map[string]string{"keep": "FirstRow", "key": "k"}}},
		},
		{name: "empty", desc: "", want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, ParseDescription(tc.desc)); d != "" {
				t.Errorf("ParseDescription(%q) (-want +got):\n%s", tc.desc, d)
			}
		})
	}
}

func TestKeyOfJoins(t *testing.T) {
	for _, tc := range []struct {
		name, desc string
		want       VertexKey
		ok         bool
	}{
		{
			name: "right name made unique",
			desc: "Join(joinType=[InnerJoin], where=[(k = k0)], select=[k, v, k0, w], leftInputSpec=[NoUniqueKey], rightInputSpec=[NoUniqueKey])",
			want: VertexKey{Operator: "Join", Columns: [][]string{{"k"}, {"k"}}, Named: true}, ok: true,
		},
		{
			name: "right side written first",
			desc: "Join(joinType=[LeftOuterJoin], where=[((b0 = b) AND (a = a0))], select=[a, b, x, a0, b0])",
			want: VertexKey{Operator: "Join", Columns: [][]string{{"b", "a"}, {"b", "a"}}, Named: true}, ok: true,
		},
		{
			name: "a right column that really ends in a digit",
			desc: "Join(joinType=[InnerJoin], where=[(id = uid2)], select=[id, v, uid2, w])",
			want: VertexKey{Operator: "Join", Columns: [][]string{{"id"}, {"uid2"}}, Named: true}, ok: true,
		},
		{
			// b may be a left field (then b0 is the right b) or a right one
			// (then b0 is a column of its own): the description cannot say.
			name: "stem not certainly on the left",
			desc: "Join(joinType=[InnerJoin], where=[(a = b0)], select=[a, b, c, b0, d])",
			want: VertexKey{Operator: "Join", Columns: [][]string{{"a"}, {"b0"}}, Named: false}, ok: true,
		},
		{
			name: "expression operands",
			desc: "Join(joinType=[InnerJoin], where=[(LOWER(a) = b)], select=[a, b])",
			want: VertexKey{Operator: "Join", Columns: [][]string{{"LOWER(a)"}, {"b"}}, Named: false}, ok: true,
		},
		{
			name: "filters beside the equality, null-safe equality",
			desc: "IntervalJoin(joinType=[InnerJoin], where=[((a IS NOT DISTINCT FROM a0) AND (ts &gt;= (ts0 - 60000:INTERVAL MINUTE)))], select=[a, ts, a0, ts0])",
			want: VertexKey{Operator: "IntervalJoin", Columns: [][]string{{"a"}, {"a"}}, Named: true}, ok: true,
		},
		{
			name: "temporal join",
			desc: "[5]:TemporalJoin(joinType=[InnerJoin], where=[((currency = currency0) AND __TEMPORAL_JOIN_CONDITION(ts, ts0, __TEMPORAL_JOIN_CONDITION_PRIMARY_KEY(currency0), __TEMPORAL_JOIN_LEFT_KEY(currency), __TEMPORAL_JOIN_RIGHT_KEY(currency0)))], select=[amount, currency, ts, currency0, rate, ts0])",
			want: VertexKey{Operator: "TemporalJoin", Columns: [][]string{{"currency"}, {"currency"}}, Named: true}, ok: true,
		},
		{
			name: "prefix call form",
			desc: "Join(joinType=[InnerJoin], where=[AND(=(a, a0), =(b, b0))], select=[a, b, a0, b0])",
			want: VertexKey{Operator: "Join", Columns: [][]string{{"a", "b"}, {"a", "b"}}, Named: true}, ok: true,
		},
		{
			name: "leftKeys and rightKeys",
			desc: "Join(joinType=[InnerJoin], leftKeys=[a, b], rightKeys=[x, y], select=[a, b, x, y])",
			want: VertexKey{Operator: "Join", Columns: [][]string{{"a", "b"}, {"x", "y"}}, Named: true}, ok: true,
		},
		{
			name: "no equality: one subtask",
			desc: "Join(joinType=[InnerJoin], where=[(a &lt; b)], select=[a, b])",
			want: VertexKey{Operator: "Join", Global: true},
		},
		{
			name: "local aggregate is not keyed",
			desc: "[1]:TableSourceScan(table=[[c, d, t]], fields=[a])<br/>+- [2]:LocalGroupAggregate(groupBy=[a], select=[a, COUNT(*) AS count1$0])<br/>",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := KeyOf(tc.desc)
			if ok != tc.ok {
				t.Errorf("KeyOf(%q) ok = %v, want %v", tc.desc, ok, tc.ok)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("KeyOf(%q) (-want +got):\n%s", tc.desc, d)
			}
		})
	}
}

func TestVertexKeysResolvesJoinSides(t *testing.T) {
	nodes := []Node{
		{ID: "j", Description: "[9]:Join(joinType=[InnerJoin], where=[(a = b0)], select=[a, b, c, b0, d])", Inputs: []string{"l", "r"}},
		{ID: "l", Description: "[1]:TableSourceScan(table=[[c, d, l]], fields=[a, b, c])<br/>+- [2]:WatermarkAssigner(rowtime=[c], watermark=[c])<br/>"},
		{ID: "r", Description: "[3]:TableSourceScan(table=[[c, d, r]], fields=[x, y])<br/>+- [4]:Calc(select=[x AS b, y AS d])<br/>"},
	}
	// The right key b is x of table r, renamed by the Calc.
	want := map[string]VertexKey{"j": {Operator: "Join", Columns: [][]string{{"a"}, {"b"}}, Named: true,
		Sources: [][]Source{{{Table: "l", Column: "a", Vertex: "l"}}, {{Table: "r", Column: "x", Vertex: "r"}}}}}
	if d := cmp.Diff(want, VertexKeys(nodes)); d != "" {
		t.Errorf("VertexKeys (-want +got):\n%s", d)
	}
	// An input whose fields are unknown leaves the description's reading.
	nodes[2].Description = "Source: custom"
	want["j"] = VertexKey{Operator: "Join", Columns: [][]string{{"a"}, {"b0"}}, Named: false,
		Sources: [][]Source{{{Table: "l", Column: "a", Vertex: "l"}}, {{}}}}
	if d := cmp.Diff(want, VertexKeys(nodes)); d != "" {
		t.Errorf("VertexKeys, right input unknown (-want +got):\n%s", d)
	}
}

func TestStripParens(t *testing.T) {
	for in, want := range map[string]string{
		"(a = b)":       "a = b",
		"((a = b))":     "a = b",
		"( ( a ) )":     "a",
		"(a) AND (b)":   "(a) AND (b)",
		"(a = ')')":     "a = ')'",
		"((a) = (b))":   "(a) = (b)",
		"(unclosed":     "(unclosed",
		"a":             "a",
		"":              "",
		"(())":          "",
		"(a)) AND ((b)": "(a)) AND ((b)",
	} {
		if got := stripParens(in); got != want {
			t.Errorf("stripParens(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseDescription(f *testing.F) {
	for _, s := range []string{
		"[6]:GroupAggregate(groupBy=[user_id], select=[user_id, COUNT(*) AS EXPR$1])<br/>+- sink[7]: Writer<br/>",
		"Join(joinType=[InnerJoin], where=[((b0 = b) AND (a = a0))], select=[a, b, x, a0, b0])",
		"GlobalWindowAggregate(groupBy=[k], select=[start('w$) AS ws])",
		"GroupAggregate(groupBy=[`a, b`]) -&gt; Calc(select=[a])",
		"((((((", "'", "`", "[1]:", "sink[: Writer",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, desc string) {
		ops := ParseDescription(desc)
		for _, op := range ops {
			if op.Keys != nil && op.Global {
				t.Errorf("ParseDescription(%q): %s both keyed and global", desc, op.Name)
			}
			for _, k := range op.Keys {
				if len(k) == 0 {
					t.Errorf("ParseDescription(%q): %s has an input keyed by no column", desc, op.Name)
				}
			}
		}
		k, ok := KeyOf(desc)
		if ok && len(k.Columns) == 0 {
			t.Errorf("KeyOf(%q) = %+v, true with no columns", desc, k)
		}
		VertexKeys([]Node{{ID: "a", Description: desc, Inputs: []string{"a", "a"}}})
		Phases([]Node{{ID: "a", Description: desc, Inputs: []string{"a"}}})
	})
}
