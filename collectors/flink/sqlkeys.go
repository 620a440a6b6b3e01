package flink

import (
	"cmp"
	"slices"
	"strconv"
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
	vertices := map[string]bool{}
	for _, n := range p.Nodes {
		vertices[n.ID] = true
		desc := n.Description
		if len(desc) > maxDescription {
			desc = desc[:maxDescription]
		}
		ins := slices.Clone(n.Inputs)
		slices.SortStableFunc(ins, func(a, b PlanInput) int { return cmp.Compare(a.Num, b.Num) })
		// Each description is parsed once, here, for every use below.
		node := sqlplan.Node{ID: n.ID, Description: desc, Ops: sqlplan.ParseDescription(desc)}
		if node.Ops == nil {
			node.Ops = []sqlplan.Operator{}
		}
		for _, in := range ins {
			node.Inputs = append(node.Inputs, in.ID)
		}
		nodes = append(nodes, node)
		if keyed[n.ID] {
			for _, op := range node.Ops {
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
		sk.Sources = cleanSources(k.Sources, vertices)
		if in := inputOf(p, id); in != nil && in.Parallelism > 0 && in.Parallelism <= 32768 {
			sk.InputParallelism = in.Parallelism
		}
		out[id] = sk
	}
	for _, ph := range sqlplan.Phases(nodes) {
		sk := out[ph.Global]
		if sk == nil || ph.Local == "" {
			continue
		}
		sk.LocalInput = true
		for _, n := range nodes {
			if n.ID != ph.Local {
				continue
			}
			for _, op := range n.Ops {
				if op.Name == "MiniBatchAssigner" {
					sk.MiniBatchMs = miniBatchMs(op.Args["interval"])
				}
			}
		}
	}
	return out
}

// miniBatchMs reads MiniBatchAssigner's interval ("1000ms"), 0 when it is
// not one (StreamExecMiniBatchAssigner's MiniBatchInterval description).
func miniBatchMs(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(s), "ms"), 10, 64)
	if err != nil || n <= 0 || n > 24*3600*1000 || !strings.HasSuffix(strings.TrimSpace(s), "ms") {
		return 0
	}
	return n
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

// cleanSources keeps the traced sources of a key's columns that the plan
// gave in bounds: names and expressions of at most maxSQLColumnName bytes
// of valid UTF-8 without control characters, from one of the plan's
// vertices;
// a source out of bounds is kept as not known. Too many columns, nil.
func cleanSources(sides [][]sqlplan.Source, vertices map[string]bool) [][]sqlplan.Source {
	var out [][]sqlplan.Source
	for _, side := range sides {
		if len(side) == 0 || len(side) > maxSQLKeyColumns {
			return nil
		}
		row := make([]sqlplan.Source, len(side))
		for i, src := range side {
			c := sqlplan.Source{Vertex: src.Vertex, Table: cleanName(src.Table), Column: cleanName(src.Column), Expr: cleanName(src.Expr)}
			if !vertices[c.Vertex] || c.Expr == "" && (c.Table == "" || c.Column == "") {
				c = sqlplan.Source{}
			}
			row[i] = c
		}
		out = append(out, row)
	}
	return out
}

// inputOf is the plan node of the first input of vertex id, nil when none.
func inputOf(p *Plan, id string) *PlanNode {
	for _, n := range p.Nodes {
		if n.ID != id || len(n.Inputs) == 0 {
			continue
		}
		first := n.Inputs[0]
		for _, in := range n.Inputs[1:] {
			if in.Num < first.Num {
				first = in
			}
		}
		for i := range p.Nodes {
			if p.Nodes[i].ID == first.ID {
				return &p.Nodes[i]
			}
		}
	}
	return nil
}
