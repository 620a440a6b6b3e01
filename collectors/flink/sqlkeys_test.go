package flink

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/sqlplan"
)

// TestSQLKeysOfRecordedPlans reads the job plans Flink's own planner wrote
// for each SQL shape on every recorded Flink line (sqlplan/testdata) as
// the collector decodes /jobs/:jobid/plan, and checks the key it gives
// each keyed vertex.
func TestSQLKeysOfRecordedPlans(t *testing.T) {
	type key struct {
		Operator   string
		Columns    [][]string
		Named      bool
		Phase      string
		LocalInput bool
	}
	want := map[string][]key{
		"group_string":             {{"GroupAggregate", [][]string{{"user_id"}}, true, "", false}},
		"group_bigint_string":      {{"GroupAggregate", [][]string{{"region_id", "user_id"}}, true, "", false}},
		"group_quoted":             {{"GroupAggregate", [][]string{{"user name", "order"}}, true, "", false}},
		"group_cascading":          {{"GroupAggregate", [][]string{{"user_id"}}, true, "", false}},
		"group_expr":               {{"GroupAggregate", nil, false, "", false}},
		"join_inner":               {{"Join", [][]string{{"user_id"}, {"user_id"}}, true, "", false}},
		"join_expr_keys":           {{"Join", nil, false, "", false}},
		"minibatch_two_phase":      {{"GlobalGroupAggregate", [][]string{{"user_id"}}, true, "global", true}},
		"dedup":                    {{"Deduplicate", [][]string{{"user_id"}}, true, "", false}},
		"topn":                     {{"Rank", [][]string{{"region_id"}}, true, "", false}},
		"over_range":               {{"OverAggregate", [][]string{{"user_id"}}, true, "", false}},
		"window_tvf":               {{"GlobalWindowAggregate", [][]string{{"user_id"}}, true, "global", true}},
		"window_tvf_one_phase":     {{"WindowAggregate", [][]string{{"user_id"}}, true, "", false}},
		"global_agg":               nil, // one subtask, no HASH input: not keyed
		"split_distinct_one_phase": nil, // checked below: two keyed vertices
	}
	lines, _ := filepath.Glob("../../sqlplan/testdata/*.*.*")
	if len(lines) < 3 {
		t.Fatalf("recorded plans for %d Flink lines, want 3", len(lines))
	}
	for _, dir := range lines {
		line := filepath.Base(dir)
		for shape, w := range want {
			b, err := os.ReadFile(filepath.Join(dir, shape+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var jp struct{ Plan Plan }
			if err := json.Unmarshal(b, &jp); err != nil {
				t.Fatalf("%s %s: %v", line, shape, err)
			}
			keys := SQLKeys(&jp.Plan)
			var got []key
			for _, id := range KeyedVertices(&jp.Plan) {
				if k := keys[id]; k != nil {
					got = append(got, key{k.Operator, k.Columns, k.Named, k.Phase, k.LocalInput})
				}
			}
			if shape == "split_distinct_one_phase" {
				// The partial aggregate keyed by (user_id, bucket), the
				// final one by user_id.
				if len(got) != 2 {
					t.Errorf("Flink %s, %s: keys %+v, want two keyed vertices", line, shape, got)
				}
				continue
			}
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("Flink %s, %s (-want +got):\n%s", line, shape, diff)
			}
			if shape == "minibatch_two_phase" {
				for _, k := range keys {
					if k.MiniBatchMs != 1000 || k.InputParallelism != 4 {
						t.Errorf("Flink %s, %s: mini-batch %d ms at local parallelism %d, want 1000 ms at 4", line, shape, k.MiniBatchMs, k.InputParallelism)
					}
				}
			}
		}
	}
}

// A DataStream job's keyed vertex is not taken for SQL, whatever its
// name; names a plan should not hold leave the key unnamed.
func TestSQLKeysRefuses(t *testing.T) {
	plan := func(desc string) *Plan {
		return &Plan{Nodes: []PlanNode{
			{ID: "k", Description: desc, Inputs: []PlanInput{{ID: "s", ShipStrategy: "HASH"}}},
			{ID: "s", Description: "Source: Kafka Source<br/>"},
		}}
	}
	if k := SQLKeys(plan("GroupAggregate(groupBy=[user_id])<br/>")); k["k"] != nil {
		t.Errorf("an operator without the planner's id prefix taken for SQL: %+v", k["k"])
	}
	if k := SQLKeys(plan("Enrich Orders<br/>")); k["k"] != nil {
		t.Errorf("a DataStream vertex taken for SQL: %+v", k["k"])
	}
	for _, bad := range []string{"a\x01b", strings.Repeat("x", maxSQLColumnName+1), "\xff"} {
		k := SQLKeys(plan("[4]:GroupAggregate(groupBy=[" + bad + "], select=[COUNT(*) AS c])<br/>"))["k"]
		if k == nil || k.Named || k.Columns != nil {
			t.Errorf("key column %q: %+v, want the key left unnamed", bad, k)
		}
	}
	cols := make([]string, maxSQLKeyColumns+1)
	for i := range cols {
		cols[i] = "c" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
	}
	if k := SQLKeys(plan("[4]:GroupAggregate(groupBy=[" + strings.Join(cols, ", ") + "])<br/>"))["k"]; k == nil || k.Named {
		t.Errorf("%d key columns: %+v, want the key left unnamed", len(cols), k)
	}
	if k := SQLKeys(plan("[4]:GroupAggregate(groupBy=[user_id], select=[user_id])<br/>"))["k"]; k == nil || !k.Named || k.Columns[0][0] != "user_id" {
		t.Errorf("a plain GROUP BY: %+v", k)
	}
}

// tracedSources renders where k says each key column comes from, one
// "[...]" per keyed input: table.column for a table's column, =expr for a
// computed one. It fails t for a source that is not a vertex of plan
// without inputs (a source vertex), naming what in the message.
func tracedSources(t *testing.T, what string, plan *Plan, k *SQLKey) string {
	t.Helper()
	scans := map[string]bool{}
	for _, n := range plan.Nodes {
		if len(n.Inputs) == 0 {
			scans[n.ID] = true
		}
	}
	var sides []string
	for _, side := range k.Sources {
		var cols []string
		for _, s := range side {
			if !scans[s.Vertex] {
				t.Errorf("%s: source %+v is not from a source vertex", what, s)
			}
			if s.Computed() {
				cols = append(cols, "="+s.Expr)
			} else {
				cols = append(cols, s.Table+"."+s.Column)
			}
		}
		sides = append(sides, "["+strings.Join(cols, " ")+"]")
	}
	return strings.Join(sides, " ")
}

// TestSQLKeysTraceSources checks where the collector says each key column
// comes from, on the recorded plans of every line: a column renamed by a
// subquery is the table's column, a computed alias its expression, and
// each side of a join on differently named columns its own table's column,
// from the vertex that scans it.
func TestSQLKeysTraceSources(t *testing.T) {
	want := map[string]string{
		"group_renamed":        "[clicks.user_id]",
		"group_computed_alias": "[=LOWER(user_id)]",
		"join_renamed_keys":    "[clicks.user_id] [users.name]",
		"join_inner":           "[clicks.user_id] [users.user_id]",
	}
	lines, _ := filepath.Glob("../../sqlplan/testdata/*.*.*")
	if len(lines) < 3 {
		t.Fatalf("recorded plans for %d Flink lines, want 3", len(lines))
	}
	for _, dir := range lines {
		for shape, w := range want {
			b, err := os.ReadFile(filepath.Join(dir, shape+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var jp struct{ Plan Plan }
			if err := json.Unmarshal(b, &jp); err != nil {
				t.Fatal(err)
			}
			keys := SQLKeys(&jp.Plan)
			var got []string
			for _, id := range KeyedVertices(&jp.Plan) {
				if k := keys[id]; k != nil {
					got = append(got, tracedSources(t, filepath.Base(dir)+" "+shape, &jp.Plan, k))
				}
			}
			if len(got) != 1 || got[0] != w {
				t.Errorf("%s %s: sources %q, want %q", filepath.Base(dir), shape, got, w)
			}
		}
	}
	// A traced name out of bounds is kept as not known.
	bad := cleanSources([][]sqlplan.Source{{{Vertex: "v", Table: "t", Column: "a\x00b"}, {Vertex: "w", Table: "t", Column: "c"}}}, map[string]bool{"v": true})
	if d := cmp.Diff([][]sqlplan.Source{{{}, {}}}, bad); d != "" {
		t.Errorf("cleanSources of a control character and an unknown vertex (-want +got):\n%s", d)
	}
}
