package flink

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skewscope/skewscope/sqlplan"
)

// Bounds on what a plan's descriptions may say of a SQL key: a plan is a
// backend's answer, and what is out of bounds is left unnamed rather than
// shown.
const (
	maxDescription   = 64 << 10 // bytes of one vertex description read
	maxSQLKeyColumns = 64       // key columns per keyed input
	maxSQLColumnName = 256      // bytes of one column name
)

// SQLKeys reads the Flink SQL key of each keyed vertex of the plan (a HASH
// input) from the operator descriptions the planner writes into the job
// graph (ExecNodeBase's descriptions, as JsonPlanGenerator puts them in
// /jobs/:jobid/plan): the keyed operator, its key columns per input, and
// whether an input runs the local half of a two-phase aggregation. Only
// vertices whose keyed operator carries the planner's "[id]:" prefix count
// as SQL, so that a DataStream operator named like one is not taken for
// it. The result is by vertex id.
func SQLKeys(p *Plan) map[string]*SQLKey {
	if p == nil {
		return nil
	}
	keyed := map[string]bool{}
	for _, id := range KeyedVertices(p) {
		keyed[id] = true
	}
	if len(keyed) == 0 {
		return nil
	}
	nodes := make([]sqlplan.Node, 0, len(p.Nodes))
	planned := map[string]bool{}
	for _, n := range p.Nodes {
		desc := n.Description
		if len(desc) > maxDescription {
			desc = desc[:maxDescription]
		}
		ins := slices.Clone(n.Inputs)
		slices.SortStableFunc(ins, func(a, b PlanInput) int { return cmp.Compare(a.Num, b.Num) })
		node := sqlplan.Node{ID: n.ID, Description: desc}
		for _, in := range ins {
			node.Inputs = append(node.Inputs, in.ID)
		}
		nodes = append(nodes, node)
		if keyed[n.ID] {
			for _, op := range sqlplan.ParseDescription(desc) {
				if op.ID != "" && op.Keys != nil {
					planned[n.ID] = true
					break
				}
			}
		}
	}
	out := map[string]*SQLKey{}
	for id, k := range sqlplan.VertexKeys(nodes) {
		if !keyed[id] || !planned[id] || k.Global {
			continue
		}
		sk := &SQLKey{Operator: cleanName(k.Operator), Named: k.Named, Phase: k.Phase}
		if sk.Phase == "local" {
			sk.Phase = ""
		}
		if k.Named {
			for _, cols := range k.Columns {
				if len(cols) == 0 || len(cols) > maxSQLKeyColumns {
					sk.Named = false
					break
				}
				clean := make([]string, len(cols))
				for i, c := range cols {
					clean[i] = cleanName(c)
					if clean[i] == "" || clean[i] != c {
						sk.Named = false
					}
				}
				sk.Columns = append(sk.Columns, clean)
			}
		}
		if !sk.Named {
			sk.Columns = nil
		}
		out[id] = sk
	}
	for _, ph := range sqlplan.Phases(nodes) {
		if sk := out[ph.Global]; sk != nil && ph.Local != "" {
			sk.LocalInput = true
		}
	}
	return out
}

// cleanName is a name from a plan as skewscope shows it: valid UTF-8
// without control characters, at most maxSQLColumnName bytes; "" when it
// is not one.
func cleanName(s string) string {
	if len(s) > maxSQLColumnName || !utf8.ValidString(s) || strings.TrimSpace(s) == "" {
		return ""
	}
	if strings.ContainsFunc(s, unicode.IsControl) {
		return ""
	}
	return s
}
