package sqlplan

import "strings"

// Source is where the values of a key column come from, as the plan says:
// a column of a table the job scans (Table and Column), or an expression
// that an upstream Calc computes (Expr). Both are empty when the plan does
// not say (the column comes out of an aggregate, a join, a union or an
// operator that is not SQL).
type Source struct {
	// Table is the scanned table's name, the last part of the scan's
	// table=[[catalog, database, name]] (or, on Flink 2.3, of the Kafka
	// source's name, KafkaSource-catalog.database.name).
	Table string
	// Column is the table's column, as its CREATE TABLE names it: the key
	// column itself, or the one a subquery renamed (user_id AS uid).
	Column string
	// Expr is the expression that computes the key column upstream, as
	// Flink writes it (LOWER(user_id)), when it is not a column.
	Expr string
	// Vertex is the id of the vertex that scans Table, or computes Expr.
	Vertex string
}

// Computed reports whether the key column is an expression computed
// upstream: a sample of the table's records cannot read it.
func (s Source) Computed() bool { return s.Expr != "" }

// Known reports whether the plan says where the column comes from.
func (s Source) Known() bool { return s.Column != "" || s.Expr != "" }

// lineage traces key columns back through the plan's vertices.
type lineage struct {
	ops    map[string][]Operator // by vertex id
	inputs map[string][]string
}

// sources returns the Source of each of cols, the fields the vertex vid
// emits.
func (l lineage) sources(vid string, cols []string) []Source {
	out := make([]Source, len(cols))
	for i, c := range cols {
		out[i] = l.trace(vid, c)
	}
	return out
}

// trace follows the field name out of vertex vid upstream: through the
// vertex's chain from its last operator to its first, then into its one
// input vertex, until a scan names the table or a Calc computes the field.
// Each Calc maps its output names to its select list's expressions
// ("user_id AS uid" renames, "LOWER(user_id) AS k" computes); operators
// that pass their input rows on unchanged are looked through; any other
// operator ends the trace with nothing known.
func (l lineage) trace(vid, name string) Source {
	for hops := 0; hops < 64 && vid != ""; hops++ {
		ops := l.ops[vid]
		for i := len(ops) - 1; i >= 0; i-- {
			op := &ops[i]
			switch {
			case op.Name == "TableSourceScan":
				for _, f := range outputNames(op.Args["fields"]) {
					if f == name {
						return Source{Table: scannedTable(op.Args["table"]), Column: name, Vertex: vid}
					}
				}
				return Source{}
			case strings.HasPrefix(op.Name, kafkaSourcePrefix):
				// Flink 2.3 names a Kafka table's source vertex after the
				// connector's source instead of the planner's scan: every
				// name that reaches it unchanged is a column of that table.
				if t := kafkaSourceTable(op.Name); t != "" {
					return Source{Table: t, Column: name, Vertex: vid}
				}
				return Source{}
			case op.Name == "Calc":
				expr, ok := selectExpr(op.Args["select"], name)
				if !ok {
					return Source{}
				}
				if isIdent(expr) || isQuotedIdent(expr) {
					name = unquoteIdent(expr)
					continue
				}
				return Source{Expr: expr, Vertex: vid}
			case passThrough[op.Name] && op.Name != "Union":
				continue
			case groupsBy(op, name):
				// A grouping column leaves an aggregate as it came in
				// (the local half of a two-phase aggregation, or an
				// aggregate below another).
				continue
			default:
				return Source{}
			}
		}
		in := l.inputs[vid]
		if len(in) != 1 {
			return Source{}
		}
		vid = in[0]
	}
	return Source{}
}

// kafkaSourcePrefix starts the name of a Kafka table's source operator
// when the vertex description is the operator's name rather than the
// planner's TableSourceScan (Flink 2.3): KafkaDynamicSource names its
// DataStream source "KafkaSource-" and the table's identifier, and Flink
// prefixes a source's name with "Source: ".
const kafkaSourcePrefix = "Source: KafkaSource-"

// kafkaSourceTable is the table's own name in such a source's name, whose
// identifier is ObjectIdentifier.asSummaryString: catalog, database and
// table joined by dots, unquoted. A name with more or fewer than two dots
// could be split more than one way, and gives "".
func kafkaSourceTable(opName string) string {
	parts := strings.Split(strings.TrimPrefix(opName, kafkaSourcePrefix), ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return ""
	}
	return parts[2]
}

// selectExpr returns the expression of the select list's field named name:
// "x" for "x AS name", name itself for a bare "name".
func selectExpr(sel, name string) (string, bool) {
	for _, item := range splitTop(sel, ",") {
		parts := splitTop(strings.TrimSpace(item), " AS ")
		out := unquoteIdent(strings.TrimSpace(parts[len(parts)-1]))
		if out != name {
			continue
		}
		if len(parts) == 1 {
			return strings.TrimSpace(parts[0]), true
		}
		return strings.TrimSpace(strings.Join(parts[:len(parts)-1], " AS ")), true
	}
	return "", false
}

// scannedTable is the table's own name in a scan's table=[[catalog,
// database, name]] (a source's hints or projections after it dropped).
func scannedTable(arg string) string {
	arg = strings.TrimSpace(arg)
	arg = strings.TrimPrefix(arg, "[")
	if i := strings.Index(arg, "]"); i >= 0 {
		arg = arg[:i]
	}
	parts := splitTop(arg, ",")
	if len(parts) == 0 {
		return ""
	}
	return unquoteIdent(strings.TrimSpace(parts[len(parts)-1]))
}

// isQuotedIdent reports whether s is one backquoted identifier (`user
// name`, a backquote inside doubled).
func isQuotedIdent(s string) bool {
	return len(s) >= 3 && s[0] == '`' && s[len(s)-1] == '`' &&
		!strings.Contains(strings.ReplaceAll(s[1:len(s)-1], "``", ""), "`")
}

// groupsBy reports whether op is an aggregate that groups by the column
// name and emits it as it is: its groupBy=[...] holds name and its select
// list has it bare.
func groupsBy(op *Operator, name string) bool {
	g, ok := op.Args["groupBy"]
	if !ok || !strings.Contains(op.Name, "Aggregate") {
		return false
	}
	found := false
	for _, c := range columnList(g) {
		found = found || c == name
	}
	if !found {
		return false
	}
	expr, ok := selectExpr(op.Args["select"], name)
	return ok && unquoteIdent(expr) == name
}
