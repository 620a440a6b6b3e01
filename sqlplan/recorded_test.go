package sqlplan

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recordedPlan is the part of GET /jobs/:id/plan the tests read.
type recordedPlan struct {
	Plan struct {
		Nodes []struct {
			ID          string `json:"id"`
			Parallelism int    `json:"parallelism"`
			Description string `json:"description"`
			Inputs      []struct {
				Num          int    `json:"num"`
				ID           string `json:"id"`
				ShipStrategy string `json:"ship_strategy"`
			} `json:"inputs"`
		} `json:"nodes"`
	} `json:"plan"`
}

type manifest struct {
	Flink  string `json:"flink"`
	Shapes []struct {
		Shape string `json:"shape"`
		File  string `json:"file"`
		SQL   string `json:"sql"`
	} `json:"shapes"`
}

// keyString renders a vertex key for comparison: operator, phase, columns
// per input, and whether they are named or the operator is global.
func keyString(k VertexKey) string {
	s := k.Operator
	if k.Phase != "" {
		s += "/" + k.Phase
	}
	if k.Global {
		return s + " global"
	}
	for _, c := range k.Columns {
		s += " [" + strings.Join(c, ", ") + "]"
	}
	if !k.Named {
		s += " unnamed"
	}
	return s
}

// recordedKeys are the keys each recorded shape's plan must give, the same
// on every Flink line: one entry per vertex with a keyed operator.
var recordedKeys = map[string][]string{
	"group_string":             {"GroupAggregate [user_id]"},
	"group_bigint_string":      {"GroupAggregate [region_id, user_id]"},
	"group_quoted":             {"GroupAggregate [user name, order]"},
	"group_expr":               {"GroupAggregate [EXPR$0] unnamed"},
	"group_cascading":          {"GroupAggregate [user_id]"},
	"group_renamed":            {"GroupAggregate [uid]"},
	"group_computed_alias":     {"GroupAggregate [k]"},
	"join_renamed_keys":        {"Join [user_id] [name]"},
	"join_inner":               {"Join [user_id] [user_id]"},
	"join_two_keys":            {"Join [region_id, user_id] [region_id, user_id]"},
	"join_expr_keys":           {"Join [$f6, $f7] [$f4, region_id] unnamed"},
	"minibatch_two_phase":      {"GlobalGroupAggregate/global [user_id]"},
	"split_distinct":           {"GlobalGroupAggregate/global [user_id]", "IncrementalGroupAggregate/incremental [user_id, $f2] unnamed"},
	"split_distinct_one_phase": {"GroupAggregate [user_id, $f2] unnamed", "GroupAggregate [user_id]"},
	"dedup":                    {"Deduplicate [user_id]"},
	"topn":                     {"Rank [region_id]"},
	"over_range":               {"OverAggregate [user_id]"},
	"window_tvf":               {"GlobalWindowAggregate/global [user_id]"},
	"window_tvf_one_phase":     {"WindowAggregate [user_id]"},
	"global_agg":               {"GroupAggregate global"},
	"interval_join":            {"IntervalJoin [user_id] [user_id]"},
	"window_join":              {"WindowJoin [user_id] [user_id]"},
	"join_no_equality":         {"Join global"},
	"topn_global":              {"Rank global"},
}

// recordedSources are where each shape's key columns come from, per keyed
// vertex (sorted) and input: table.column, =expression computed upstream,
// or ? where the plan does not say.
var recordedSources = map[string][]string{
	"group_string":             {"[clicks.user_id]"},
	"group_bigint_string":      {"[clicks.region_id clicks.user_id]"},
	"group_quoted":             {"[quoted.user name quoted.order]"},
	"group_expr":               {"[=LOWER(user_id)]"},
	"group_cascading":          {"[clicks.user_id]"},
	"group_renamed":            {"[clicks.user_id]"},
	"group_computed_alias":     {"[=LOWER(user_id)]"},
	"join_inner":               {"[clicks.user_id] [users.user_id]"},
	"join_two_keys":            {"[clicks.region_id clicks.user_id] [users.region_id users.user_id]"},
	"join_expr_keys":           {"[=LOWER(user_id) =(region_id + 1)] [=UPPER(name) users.region_id]"},
	"join_renamed_keys":        {"[clicks.user_id] [users.name]"},
	"minibatch_two_phase":      {"[clicks.user_id]"},
	"split_distinct":           {"[?]", "[clicks.user_id =MOD(HASH_CODE(item), 1024)]"},
	"split_distinct_one_phase": {"[clicks.user_id =MOD(HASH_CODE(item), 1024)]", "[clicks.user_id]"},
	"dedup":                    {"[clicks.user_id]"},
	"topn":                     {"[clicks.region_id]"},
	"over_range":               {"[clicks.user_id]"},
	"window_tvf":               {"[clicks.user_id]"},
	"window_tvf_one_phase":     {"[clicks.user_id]"},
	"interval_join":            {"[clicks.user_id] [users.user_id]"},
	"window_join":              {"[?] [?]"},
}

// sourcesString renders a vertex key's Sources for recordedSources.
func sourcesString(k VertexKey) string {
	var sides []string
	for _, side := range k.Sources {
		var cols []string
		for _, src := range side {
			switch {
			case src.Computed():
				cols = append(cols, "="+src.Expr)
			case src.Known():
				cols = append(cols, src.Table+"."+src.Column)
			default:
				cols = append(cols, "?")
			}
		}
		sides = append(sides, "["+strings.Join(cols, " ")+"]")
	}
	return strings.Join(sides, " ")
}

// recordedPhases are the two-phase aggregations of each shape, as
// "Operator local-groupBy -> global-key (incremental)".
var recordedPhases = map[string][]string{
	"minibatch_two_phase": {"GlobalGroupAggregate [user_id] -> [user_id]"},
	"split_distinct":      {"GlobalGroupAggregate [user_id $f2] -> [user_id] incremental"},
	"window_tvf":          {"GlobalWindowAggregate [user_id] -> [user_id]"},
}

func loadRecorded(t *testing.T) map[string]map[string]recordedPlan {
	t.Helper()
	manifests, err := filepath.Glob("testdata/*/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(manifests) < 3 {
		t.Fatalf("recorded plans: %d Flink lines in testdata, want 1.20, 2.2 and 2.3 (make sqlplans)", len(manifests))
	}
	out := map[string]map[string]recordedPlan{}
	for _, mf := range manifests {
		b, err := os.ReadFile(mf)
		if err != nil {
			t.Fatal(err)
		}
		var m manifest
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", mf, err)
		}
		if filepath.Base(filepath.Dir(mf)) != m.Flink {
			t.Errorf("%s names Flink %s", mf, m.Flink)
		}
		plans := map[string]recordedPlan{}
		for _, s := range m.Shapes {
			b, err := os.ReadFile(filepath.Join(filepath.Dir(mf), s.File))
			if err != nil {
				t.Fatal(err)
			}
			var p recordedPlan
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatalf("%s: %v", s.File, err)
			}
			plans[s.Shape] = p
		}
		out[m.Flink] = plans
	}
	return out
}

func nodesOf(p recordedPlan) []Node {
	var nodes []Node
	for _, n := range p.Plan.Nodes {
		in := slices.Clone(n.Inputs)
		slices.SortFunc(in, func(a, b struct {
			Num          int    `json:"num"`
			ID           string `json:"id"`
			ShipStrategy string `json:"ship_strategy"`
		}) int {
			return a.Num - b.Num
		})
		node := Node{ID: n.ID, Description: n.Description}
		for _, i := range in {
			node.Inputs = append(node.Inputs, i.ID)
		}
		nodes = append(nodes, node)
	}
	return nodes
}

func TestRecordedPlans(t *testing.T) {
	for line, plans := range loadRecorded(t) {
		for shape, want := range recordedKeys {
			p, ok := plans[shape]
			if !ok {
				t.Errorf("Flink %s: no recorded plan %s", line, shape)
				continue
			}
			t.Run(line+"/"+shape, func(t *testing.T) {
				nodes := nodesOf(p)
				var got, sources []string
				for _, k := range VertexKeys(nodes) {
					got = append(got, keyString(k))
					if !k.Global {
						sources = append(sources, sourcesString(k))
					}
				}
				slices.Sort(got)
				slices.Sort(sources)
				if d := cmp.Diff(recordedSources[shape], sources); d != "" {
					t.Errorf("VertexKeys' sources (-want +got):\n%s", d)
				}
				w := slices.Sorted(slices.Values(want))
				if d := cmp.Diff(w, got); d != "" {
					t.Errorf("VertexKeys (-want +got):\n%s", d)
				}
				// KeyOf, from each description alone, agrees with the plan
				// reading for every shape recorded (their joins' right
				// names have a stem the left side certainly has).
				var alone []string
				for _, n := range nodes {
					if k, ok := KeyOf(n.Description); ok || k.Global {
						alone = append(alone, keyString(k))
					}
				}
				slices.Sort(alone)
				if d := cmp.Diff(w, alone); d != "" {
					t.Errorf("KeyOf per description (-want +got):\n%s", d)
				}
				var phases []string
				for _, ph := range Phases(nodes) {
					s := fmt.Sprintf("%s %v -> %v", ph.Operator, ph.LocalGroupBy, ph.GlobalKey)
					if ph.Incremental != "" {
						s += " incremental"
					}
					if ph.Local == "" || ph.Global == "" || ph.Local == ph.Global {
						t.Errorf("Phases: %+v: local and global vertices", ph)
					}
					phases = append(phases, s)
				}
				if d := cmp.Diff(recordedPhases[shape], phases); d != "" {
					t.Errorf("Phases (-want +got):\n%s", d)
				}
			})
		}
		for shape := range plans {
			if _, ok := recordedKeys[shape]; !ok {
				t.Errorf("Flink %s: recorded plan %s has no expectation here", line, shape)
			}
		}
	}
}

// TestRecordedExchanges checks the keys against the plan's own exchanges:
// every vertex fed by a HASH exchange has a keyed operator, every one fed
// by GLOBAL an operator with no key (and parallelism 1), and no other
// vertex has either.
func TestRecordedExchanges(t *testing.T) {
	for line, plans := range loadRecorded(t) {
		for shape, p := range plans {
			for _, n := range p.Plan.Nodes {
				strategy := ""
				for _, in := range n.Inputs {
					strategy = in.ShipStrategy
				}
				k, ok := KeyOf(n.Description)
				switch {
				case strategy == "HASH" && !ok:
					t.Errorf("Flink %s %s: vertex %s has a HASH input, KeyOf(%q) = %+v, false", line, shape, n.ID, n.Description, k)
				case strategy == "GLOBAL" && (!k.Global || n.Parallelism != 1):
					t.Errorf("Flink %s %s: vertex %s (parallelism %d) has a GLOBAL input, KeyOf = %+v", line, shape, n.ID, n.Parallelism, k)
				case strategy != "HASH" && strategy != "GLOBAL" && (ok || k.Global):
					t.Errorf("Flink %s %s: vertex %s has a %q input, KeyOf = %+v", line, shape, n.ID, strategy, k)
				}
			}
		}
	}
}

// TestRecordedDescriptions checks the operators ParseDescription reads from
// every recorded description: each has an operator name Flink uses, the
// first operator of a keyed vertex is the keyed one, and the sink writers
// are read as Sink.
func TestRecordedDescriptions(t *testing.T) {
	known := map[string]bool{"Calc": true, "TableSourceScan": true, "WatermarkAssigner": true, "MiniBatchAssigner": true,
		"LocalGroupAggregate": true, "LocalWindowAggregate": true, "WindowTableFunction": true, "Sink": true}
	for k := range keyArgs {
		known[k] = true
	}
	for k := range joins {
		known[k] = true
	}
	for line, plans := range loadRecorded(t) {
		for shape, p := range plans {
			sinks := 0
			for _, n := range p.Plan.Nodes {
				ops := ParseDescription(n.Description)
				if len(ops) == 0 {
					t.Errorf("Flink %s %s: ParseDescription(%q) = no operators", line, shape, n.Description)
				}
				for i, op := range ops {
					if !known[op.Name] {
						t.Errorf("Flink %s %s: operator %q in %q", line, shape, op.Name, n.Description)
					}
					if op.ID == "" {
						t.Errorf("Flink %s %s: operator %s has no node id", line, shape, op.Name)
					}
					if op.Keys != nil && i != 0 {
						t.Errorf("Flink %s %s: keyed %s is operator %d of its vertex", line, shape, op.Name, i)
					}
					if op.Name == "Sink" {
						sinks++
						if op.Args["table"] != "sink" || op.Args["part"] != "Writer" {
							t.Errorf("Flink %s %s: sink %+v", line, shape, op)
						}
					}
				}
			}
			if sinks != 1 {
				t.Errorf("Flink %s %s: %d sinks, want 1", line, shape, sinks)
			}
		}
	}
}

// TestRecordedPlansParsedOnce: nodes that carry their parsed operators
// (Node.Ops, as the collector passes them) give the keys and phases that
// parsing the descriptions gives.
func TestRecordedPlansParsedOnce(t *testing.T) {
	n := 0
	for _, plans := range loadRecorded(t) {
		for name, p := range plans {
			nodes := nodesOf(p)
			parsed := make([]Node, len(nodes))
			for i, nd := range nodes {
				nd.Ops = ParseDescription(nd.Description)
				parsed[i] = nd
			}
			if got, want := VertexKeys(parsed), VertexKeys(nodes); !cmp.Equal(got, want) {
				t.Errorf("%s: VertexKeys with Ops %v, want %v", name, got, want)
			}
			if got, want := Phases(parsed), Phases(nodes); !cmp.Equal(got, want) {
				t.Errorf("%s: Phases with Ops %v, want %v", name, got, want)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no recorded plans")
	}
}
