package sqlplan

import (
	"html"
	"strings"
)

// Operator is one SQL operator in a vertex description.
type Operator struct {
	// Name as Flink writes it: "GroupAggregate", "GlobalGroupAggregate",
	// "LocalGroupAggregate", "IncrementalGroupAggregate", "Join",
	// "WindowAggregate", "LocalWindowAggregate", "GlobalWindowAggregate",
	// "Deduplicate", "Rank", "OverAggregate", "WindowJoin", "IntervalJoin",
	// "TemporalJoin", "Calc", "TableSourceScan", "Sink", ... A sink's writer
	// ("sink[7]: Writer") is "Sink" with Args "table" and "part"; text that
	// is not an operator call (a DataStream operator's name) is kept whole.
	Name string
	// ID is the planner's node id of the "[6]:" prefix, "" when absent.
	ID string
	// Keys are the key columns of each keyed input, one entry per input (a
	// join has two: left, right); nil when the operator is not keyed. The
	// names are as the user's table spells them, without backquotes. When
	// KeyNamed is false they are what Flink wrote ($f6, or an expression)
	// and are not columns of a table.
	Keys [][]string
	// KeyNamed is false when the operator is keyed but the description does
	// not name its key columns: the key is an expression, a generated
	// field, or a join condition that is not plain column equalities.
	KeyNamed bool
	// Global is true for an operator that would be keyed but has no key (a
	// GROUP BY of nothing, a Top-N or OVER without PARTITION BY, a join
	// without an equality): Flink sends all its records to one subtask.
	Global bool
	// Args are the raw bracketed arguments, e.g. "groupBy" -> "user_id, region_id".
	Args map[string]string
}

// ParseDescription splits a vertex description into its operators, in
// chain order (the first receives the vertex's input). It accepts the
// description as the plan's JSON holds it (HTML-escaped, lines joined by
// <br/>, the TREE mode's "+- " indents) and in the CASCADING mode's
// "A -> B -> C"; the "[3]:" node id prefixes may be there or not.
// Brackets, parentheses and quoted literals nest inside the arguments.
// It never fails: text it cannot read is kept as an operator's Name.
//
// The format is the one ExecNodeBase.getFormattedOperatorDescription and
// StreamingJobGraphGenerator.createChainedDescription (TREE and CASCADING
// VertexDescriptionMode) write, as JsonPlanGenerator.generatePlan escapes it.
func ParseDescription(desc string) []Operator {
	var ops []Operator
	for _, line := range splitTop(desc, "<br/>") {
		line = html.UnescapeString(line)
		line = trimTreeIndent(line)
		for _, part := range splitTop(line, " -> ") {
			part = trimTreeIndent(part)
			if part == "" {
				continue
			}
			ops = append(ops, parseOperator(part))
		}
	}
	return ops
}

// trimTreeIndent removes the TREE mode's indentation and branch marks
// ("   +- ", ":- ", "|  ") in front of an operator.
func trimTreeIndent(s string) string {
	for {
		t := strings.TrimLeft(s, " \t\r\n|")
		for _, p := range []string{"+- ", ":- "} {
			t = strings.TrimPrefix(t, p)
		}
		if t == s {
			return strings.TrimSpace(t)
		}
		s = t
	}
}

// parseOperator reads one "[id]:Name(args)" or other operator text.
func parseOperator(s string) Operator {
	op := Operator{}
	if strings.HasPrefix(s, "[") {
		if end := strings.Index(s, "]:"); end > 1 && allDigits(s[1:end]) {
			op.ID = s[1:end]
			s = s[end+2:]
		}
	}
	open := strings.IndexByte(s, '(')
	if open > 0 && isIdent(s[:open]) {
		op.Name = s[:open]
		inner, _ := matching(s, open)
		op.Args = parseArgs(inner)
		keysOf(&op)
		return op
	}
	// sink[7]: Writer, sink[7]: Committer
	if lb := strings.IndexByte(s, '['); lb > 0 {
		if rb := strings.Index(s[lb:], "]: "); rb > 1 && allDigits(s[lb+1:lb+rb]) {
			op.Name = "Sink"
			op.ID = s[lb+1 : lb+rb]
			op.Args = map[string]string{"table": s[:lb], "part": s[lb+rb+3:]}
			return op
		}
	}
	op.Name = s
	return op
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// matching returns the text between s[open] (a '(' or '[') and its closing
// bracket, and the index after that bracket (len(s) when unclosed).
func matching(s string, open int) (string, int) {
	depth := 0
	for i := open; i < len(s); {
		switch c := s[i]; c {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
			if depth == 0 {
				return s[open+1 : i], i + 1
			}
		case '\'', '"', '`':
			i = skipQuoted(s, i)
			continue
		}
		i++
	}
	return s[open+1:], len(s)
}

// skipQuoted returns the index after the quoted text starting at s[i]: a
// 'string' (” inside), "name" or `name` (doubled to escape). A quote
// that opens a Scala symbol ('w$ in a window aggregate's select) has no
// closing quote: it is read as one character.
func skipQuoted(s string, i int) int {
	q := s[i]
	if q == '\'' {
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] == '$' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if j > i+1 && (j == len(s) || s[j] == ')' || s[j] == ',') {
			return j
		}
	}
	for j := i + 1; j < len(s); j++ {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// splitTop splits s at each sep that is outside brackets and quotes.
func splitTop(s, sep string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '(', '[':
			depth++
		case ')', ']':
			if depth > 0 {
				depth--
			}
		case '\'', '"', '`':
			i = skipQuoted(s, i)
			continue
		default:
			if depth == 0 && strings.HasPrefix(s[i:], sep) {
				out = append(out, s[start:i])
				i += len(sep)
				start = i
				continue
			}
		}
		i++
	}
	return append(out, s[start:])
}

// parseArgs reads "groupBy=[a, b], select=[...]" into a map of each key to
// the text inside its brackets. An argument without brackets keeps its
// text; one without "=" is kept under its whole text with an empty value.
func parseArgs(s string) map[string]string {
	args := map[string]string{}
	for _, a := range splitTop(s, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		eq := strings.IndexByte(a, '=')
		if eq <= 0 || !isIdent(a[:eq]) {
			args[a] = ""
			continue
		}
		k, v := a[:eq], strings.TrimSpace(a[eq+1:])
		if strings.HasPrefix(v, "[") {
			inner, end := matching(v, 0)
			if end == len(v) {
				v = inner
			}
		}
		args[k] = v
	}
	return args
}

// columnList splits a bracketed list of columns ("user_id, `order`") into
// names, backquotes removed.
func columnList(s string) []string {
	var out []string
	for _, c := range splitTop(s, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		out = append(out, unquoteIdent(c))
	}
	return out
}

// unquoteIdent removes the backquotes of `a“b` (giving a`b).
func unquoteIdent(s string) string {
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		return strings.ReplaceAll(s[1:len(s)-1], "``", "`")
	}
	return s
}

// outputNames are the names of a select list's fields: "x AS y" is y.
func outputNames(sel string) []string {
	var out []string
	for _, item := range splitTop(sel, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		parts := splitTop(item, " AS ")
		out = append(out, unquoteIdent(strings.TrimSpace(parts[len(parts)-1])))
	}
	return out
}
