package sqlplan

// Node is one vertex of a job plan: its id, its description and the ids of
// its inputs in the order of their "num" (a join's left input first).
type Node struct {
	ID          string
	Description string
	Inputs      []string
	// Ops, when not nil, is ParseDescription(Description), parsed once by
	// a caller that reads the operators too; VertexKeys and Phases then
	// use it instead of parsing the description again.
	Ops []Operator
}

// operators returns the node's operators, parsed unless Ops holds them.
func (n Node) operators() []Operator {
	if n.Ops != nil {
		return n.Ops
	}
	return ParseDescription(n.Description)
}

// passThrough are the operators whose output row is their input row.
var passThrough = map[string]bool{
	"WatermarkAssigner":  true,
	"MiniBatchAssigner":  true,
	"Exchange":           true,
	"DropUpdateBefore":   true,
	"ChangelogNormalize": true,
	"Deduplicate":        true,
	"Union":              true,
}

// outputFields returns the names of the fields a vertex emits: the select
// list (or a scan's fields) of the last operator of its chain that says
// them, looking through operators that pass their rows on unchanged.
func outputFields(ops []Operator) ([]string, bool) {
	for i := len(ops) - 1; i >= 0; i-- {
		op := ops[i]
		if sel, ok := op.Args["select"]; ok {
			return outputNames(sel), true
		}
		if f, ok := op.Args["fields"]; ok && op.Name == "TableSourceScan" {
			return outputNames(f), true
		}
		if !passThrough[op.Name] {
			return nil, false
		}
	}
	return nil, false
}

// VertexKeys returns the key of every keyed vertex of a plan, by vertex
// id, as KeyOf reads it from the description, except that a join's key
// columns are read against its inputs: the join's select list is the left
// input's fields then the right input's, so each key field's position
// says its side and the name its input gives it (user_id, where the join
// writes user_id0). A key field that an input computed ($f6 = LOWER(...))
// stays unnamed. Each key column is traced upstream to the table column
// or the expression it comes from (VertexKey.Sources). Vertices whose
// keyed operator has no key (Global) are included; those with no keyed
// operator are not.
func VertexKeys(nodes []Node) map[string]VertexKey {
	byID := make(map[string][]Operator, len(nodes))
	l := lineage{ops: byID, inputs: make(map[string][]string, len(nodes))}
	for _, n := range nodes {
		byID[n.ID] = n.operators()
		l.inputs[n.ID] = n.Inputs
	}
	out := map[string]VertexKey{}
	for _, n := range nodes {
		ops := byID[n.ID]
		k, ok := keyOfOps(ops)
		if !ok && !k.Global {
			continue
		}
		if joins[k.Operator] && len(n.Inputs) == 2 {
			if cols, named, ok := resolveJoin(ops, byID[n.Inputs[0]], byID[n.Inputs[1]]); ok {
				k.Columns, k.Named = cols, named
			}
		}
		if len(k.Columns) == len(n.Inputs) {
			for i, cols := range k.Columns {
				k.Sources = append(k.Sources, l.sources(n.Inputs[i], cols))
			}
		}
		out[n.ID] = k
	}
	return out
}

// resolveJoin maps the first join of ops to its inputs' field names.
func resolveJoin(ops, leftIn, rightIn []Operator) ([][]string, bool, bool) {
	var join *Operator
	for i := range ops {
		if joins[ops[i].Name] {
			join = &ops[i]
			break
		}
	}
	if join == nil || join.Args["where"] == "" {
		return nil, false, false
	}
	lf, okL := outputFields(leftIn)
	rf, okR := outputFields(rightIn)
	sel := outputNames(join.Args["select"])
	if !okL || !okR || len(lf)+len(rf) != len(sel) {
		return nil, false, false
	}
	index := map[string]int{}
	for i, n := range sel {
		if _, dup := index[n]; !dup {
			index[n] = i
		}
	}
	var left, right []string
	for _, e := range equalities(join.Args["where"]) {
		ia, okA := index[e[0]]
		ib, okB := index[e[1]]
		if !okA || !okB {
			return nil, false, false
		}
		if ib < ia {
			ia, ib = ib, ia
		}
		if ia >= len(lf) || ib < len(lf) {
			// Both operands on one side: not a key equality.
			continue
		}
		left, right = append(left, lf[ia]), append(right, rf[ib-len(lf)])
	}
	if len(left) == 0 {
		return nil, false, false
	}
	return [][]string{left, right}, allNamed(left) && allNamed(right), true
}

// Phase is one aggregation split in phases across the plan: a local
// pre-aggregation chained before the hash exchange, an optional
// incremental one (split distinct), and the global aggregation.
type Phase struct {
	// Local is the vertex whose chain holds the Local* aggregate, Global
	// the vertex keyed by the Global* aggregate, Incremental the vertex of
	// an IncrementalGroupAggregate between them ("" when there is none).
	Local, Incremental, Global string
	// Operator is the global operator's name: GlobalGroupAggregate or
	// GlobalWindowAggregate.
	Operator string
	// LocalGroupBy is the local aggregate's groupBy; GlobalKey the global
	// aggregate's key.
	LocalGroupBy, GlobalKey []string
}

// Phases finds the two-phase aggregations of a plan: a vertex keyed by a
// Global*Aggregate whose input vertex chains a Local*Aggregate, directly
// or through an IncrementalGroupAggregate vertex. These are the plans of
// table.optimizer.agg-phase-strategy TWO_PHASE (or AUTO with mini-batch
// for GROUP BY; always possible for window TVF aggregates), the planner's
// TwoStageOptimizedAggregateRule, TwoStageOptimizedWindowAggregateRule and
// IncrementalAggregateRule.
func Phases(nodes []Node) []Phase {
	byID := make(map[string][]Operator, len(nodes))
	inputs := make(map[string][]string, len(nodes))
	for _, n := range nodes {
		byID[n.ID] = n.operators()
		inputs[n.ID] = n.Inputs
	}
	localOf := func(id string) (Operator, bool) {
		for _, op := range byID[id] {
			if op.Name == "LocalGroupAggregate" || op.Name == "LocalWindowAggregate" {
				return op, true
			}
		}
		return Operator{}, false
	}
	var out []Phase
	for _, n := range nodes {
		ops := byID[n.ID]
		if len(ops) == 0 || (ops[0].Name != "GlobalGroupAggregate" && ops[0].Name != "GlobalWindowAggregate") || len(n.Inputs) != 1 {
			continue
		}
		p := Phase{Global: n.ID, Operator: ops[0].Name, GlobalKey: columnList(ops[0].Args["groupBy"])}
		in := n.Inputs[0]
		if up := byID[in]; len(up) > 0 && up[0].Name == "IncrementalGroupAggregate" && len(inputs[in]) == 1 {
			p.Incremental = in
			in = inputs[in][0]
		}
		local, ok := localOf(in)
		if !ok {
			continue
		}
		p.Local = in
		p.LocalGroupBy = columnList(local.Args["groupBy"])
		out = append(out, p)
	}
	return out
}
