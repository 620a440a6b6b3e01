package sqlplan

import (
	"strings"
)

// keyArgs are the arguments that name the key of each single-input keyed
// operator, as the planner's StreamPhysical* nodes explain them
// (explainTerms): groupBy for the aggregates, key for Deduplicate,
// partitionBy for Rank and OverAggregate, partialAggGrouping for
// IncrementalGroupAggregate (its hash exchange is on the local phase's
// grouping, StreamExecIncrementalGroupAggregate's key selector).
var keyArgs = map[string]string{
	"GroupAggregate":             "groupBy",
	"GlobalGroupAggregate":       "groupBy",
	"IncrementalGroupAggregate":  "partialAggGrouping",
	"WindowAggregate":            "groupBy",
	"GlobalWindowAggregate":      "groupBy",
	"GroupWindowAggregate":       "groupBy",
	"GroupTableAggregate":        "groupBy",
	"PythonGroupAggregate":       "groupBy",
	"PythonGroupWindowAggregate": "groupBy",
	"Deduplicate":                "key",
	"ChangelogNormalize":         "key",
	"WindowDeduplicate":          "partitionKeys",
	"Rank":                       "partitionBy",
	"WindowRank":                 "partitionBy",
	"OverAggregate":              "partitionBy",
	"PythonOverAggregate":        "partitionBy",
}

// joins are the two-input keyed operators; their keys come from where=[...]
// (or leftKeys/rightKeys where a version writes them).
var joins = map[string]bool{
	"Join":         true,
	"IntervalJoin": true,
	"WindowJoin":   true,
	"TemporalJoin": true,
}

// phaseOf is the aggregation phase an operator's name says.
func phaseOf(name string) string {
	switch {
	case strings.HasPrefix(name, "Local"):
		return "local"
	case strings.HasPrefix(name, "Global"):
		return "global"
	case strings.HasPrefix(name, "Incremental"):
		return "incremental"
	}
	return ""
}

// keysOf fills op.Keys, op.KeyNamed and op.Global from its arguments.
func keysOf(op *Operator) {
	if arg, ok := keyArgs[op.Name]; ok {
		v, has := op.Args[arg]
		cols := columnList(v)
		if !has || len(cols) == 0 {
			// ChangelogNormalize always has a key; the others without one
			// are global.
			op.Global = op.Name != "ChangelogNormalize"
			return
		}
		op.Keys = [][]string{cols}
		op.KeyNamed = allNamed(cols)
		return
	}
	if joins[op.Name] {
		joinKeys(op)
	}
}

// allNamed reports whether every name is a column a user could have
// written: not a field the planner generated ($f2, EXPR$0, count1$0,
// $slice_end: Flink's generated names all hold a '$') and not an
// expression.
func allNamed(cols []string) bool {
	for _, c := range cols {
		if c == "" || strings.Contains(c, "$") || strings.ContainsAny(c, "()") {
			return false
		}
	}
	return true
}

// joinKeys reads a join's keys. Flink explains a join's condition over its
// output row: the left input's fields, then the right input's, names made
// unique by Calcite (SqlValidatorUtil.uniquify appends 0, 1, ... to a right
// name that the left already has: user_id0). The equalities of the
// condition's top-level AND are the keys (JoinInfo.of: an equality between
// a left and a right field); of each, the operand that comes first in the
// select list is the left one. A right name is mapped back to the name
// before uniquify when its stem is certainly a left field (at or before
// the last left key); otherwise it is ambiguous from the description
// alone and the key is not named (VertexKeys, which sees the inputs,
// resolves it).
func joinKeys(op *Operator) {
	if l, r := op.Args["leftKeys"], op.Args["rightKeys"]; l != "" && r != "" {
		left, right := columnList(l), columnList(r)
		op.Keys = [][]string{left, right}
		op.KeyNamed = len(left) == len(right) && allNamed(left) && allNamed(right)
		return
	}
	eqs := equalities(op.Args["where"])
	if len(eqs) == 0 {
		op.Global = true
		return
	}
	sel := outputNames(op.Args["select"])
	index := map[string]int{}
	for i, n := range sel {
		if _, dup := index[n]; !dup {
			index[n] = i
		}
	}
	named := true
	var left, right []string
	var li, ri []int
	for _, e := range eqs {
		a, b := e[0], e[1]
		ia, okA := index[a]
		ib, okB := index[b]
		if !okA || !okB {
			// An operand that is not a field of the output row is an
			// expression; the written order is all there is.
			named = false
			left, right = append(left, a), append(right, b)
			li, ri = append(li, -1), append(ri, -1)
			continue
		}
		if ib < ia {
			a, b, ia, ib = b, a, ib, ia
		}
		left, right = append(left, a), append(right, b)
		li, ri = append(li, ia), append(ri, ib)
	}
	maxLeft := -1
	for _, i := range li {
		maxLeft = max(maxLeft, i)
	}
	for k, r := range right {
		if ri[k] < 0 {
			continue
		}
		if stem, ok := uniquifiedStem(r); ok {
			if i, found := index[stem]; found && i <= maxLeft {
				right[k] = stem
			} else if found {
				named = false
			}
		}
	}
	op.Keys = [][]string{left, right}
	op.KeyNamed = named && allNamed(left) && allNamed(right)
}

// uniquifiedStem returns name without the digits Calcite's uniquify
// appended ("user_id0" -> "user_id"), and whether it had any.
func uniquifiedStem(name string) (string, bool) {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == len(name) || i == 0 {
		return name, false
	}
	return name[:i], true
}

// equalities returns the operand pairs of the equalities (=, IS NOT
// DISTINCT FROM) in the top-level AND of a join condition such as
// "((region_id0 = region_id) AND (user_id = user_id0) AND (ts >= ts0))".
// The other conjuncts are the join's filters, not its keys.
func equalities(cond string) [][2]string {
	cond = stripParens(strings.TrimSpace(cond))
	if cond == "" {
		return nil
	}
	var conj []string
	if strings.HasPrefix(cond, "AND(") && strings.HasSuffix(cond, ")") {
		conj = splitTop(cond[4:len(cond)-1], ",")
	} else {
		conj = splitTop(cond, " AND ")
	}
	var out [][2]string
	for _, c := range conj {
		c = stripParens(strings.TrimSpace(c))
		var parts []string
		for _, op := range []string{" = ", " IS NOT DISTINCT FROM "} {
			if p := splitTop(c, op); len(p) == 2 {
				parts = p
				break
			}
		}
		if parts == nil {
			for _, fn := range []string{"=(", "IS NOT DISTINCT FROM("} {
				if strings.HasPrefix(c, fn) && strings.HasSuffix(c, ")") {
					if p := splitTop(c[len(fn):len(c)-1], ","); len(p) == 2 {
						parts = p
					}
				}
			}
		}
		if parts == nil {
			continue
		}
		a := unquoteIdent(stripParens(strings.TrimSpace(parts[0])))
		b := unquoteIdent(stripParens(strings.TrimSpace(parts[1])))
		out = append(out, [2]string{a, b})
	}
	return out
}

// stripParens removes parentheses that wrap the whole of s, in one pass
// however deep they nest.
func stripParens(s string) string {
	s = strings.TrimSpace(s)
	// opens are the positions of the leading '(', spaces between them.
	var opens []int
	for i := 0; i < len(s) && (s[i] == '(' || s[i] == ' '); i++ {
		if s[i] == '(' {
			opens = append(opens, i)
		}
	}
	if len(opens) == 0 {
		return s
	}
	closeOf := make([]int, len(opens)) // the ')' matching each of opens
	var stack []int                    // indexes into opens, or -1
	next := 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '(':
			if next < len(opens) && opens[next] == i {
				stack = append(stack, next)
				next++
			} else {
				stack = append(stack, -1)
			}
		case ')':
			if len(stack) == 0 {
				return s
			}
			if o := stack[len(stack)-1]; o >= 0 {
				closeOf[o] = i
			}
			stack = stack[:len(stack)-1]
		case '\'', '"', '`':
			i = skipQuoted(s, i)
			continue
		}
		i++
	}
	if len(stack) != 0 {
		return s
	}
	lo, hi := 0, len(s)
	for k, o := range opens {
		for hi > lo && s[hi-1] == ' ' {
			hi--
		}
		if closeOf[k] != hi-1 {
			break
		}
		lo, hi = o+1, hi-1
	}
	return strings.TrimSpace(s[lo:hi])
}

// VertexKey is what a vertex is keyed by.
type VertexKey struct {
	// Operator is the keyed operator that receives this vertex's hash
	// exchange.
	Operator string
	// Columns are the key columns per keyed input (a join has two).
	Columns [][]string
	// Named is false when the columns are not ones of the user's tables
	// (see Operator.KeyNamed).
	Named bool
	// Phase is "", "local", "global" or "incremental".
	Phase string
	// Global is true when the vertex's operator has no key at all (see
	// Operator.Global); KeyOf then returns false.
	Global bool
	// Sources says, per keyed input and key column, where the column's
	// values come from: the table column a scan reads (renamed or not on
	// the way), or the expression an upstream Calc computes. VertexKeys
	// fills it from the plan; KeyOf, which sees one description, leaves it
	// nil.
	Sources [][]Source
}

// KeyOf returns the key of the vertex with this description: that of its
// first keyed operator, the one its hash exchange feeds. It returns false
// when the vertex has no keyed operator; for a global aggregate, Top-N,
// OVER or join (no key: one subtask) it still fills Operator and Global.
func KeyOf(desc string) (VertexKey, bool) {
	return keyOfOps(ParseDescription(desc))
}

func keyOfOps(ops []Operator) (VertexKey, bool) {
	for _, op := range ops {
		if op.Keys != nil {
			return VertexKey{Operator: op.Name, Columns: op.Keys, Named: op.KeyNamed, Phase: phaseOf(op.Name)}, true
		}
		if op.Global {
			return VertexKey{Operator: op.Name, Phase: phaseOf(op.Name), Global: true}, false
		}
	}
	return VertexKey{}, false
}
