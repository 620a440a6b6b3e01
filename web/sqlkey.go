package web

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

// sqlKeyNoteOf is the vertex page's line on a Flink SQL vertex's key, nil
// when the vertex runs no keyed SQL operator. lookup opens the key lookup
// (its path prefixed as the page's links are).
func sqlKeyNoteOf(vv live.VertexView, lookup func(path string) string) *views.SQLKeyNote {
	k := vv.SQL
	if k == nil {
		return nil
	}
	n := &views.SQLKeyNote{Operator: k.Operator}
	if !k.Named || len(k.Columns) == 0 {
		n.Note = "Its records are hashed by a key row (BinaryRowData) of the key columns; give them in the key lookup, with their SQL types, to route a key."
		return n
	}
	for _, cols := range k.Columns {
		n.Columns = append(n.Columns, sqlColumnList(cols))
	}
	if len(n.Columns) == 2 {
		n.Inputs = []string{"left input", "right input"}
		if n.Columns[0] == n.Columns[1] {
			n.Columns, n.Inputs = n.Columns[:1], []string{"both inputs"}
		}
	}
	computed := sqlKeyOrigins(n, k)
	switch {
	case computed:
		n.Note = "Its key row holds values computed upstream, not columns of the table: a sample of the topic cannot route them, give the computed values to the key lookup, by the SQL type of the expression."
	case k.TwoPhase:
		n.Note = "A two-phase aggregation: the upstream LocalGroupAggregate combines each key's records of a mini-batch in every upstream subtask, so a hot key reaches its subtask here once per batch and upstream subtask, not once per record; its key group and subtask are those of the key row below."
	case k.Phase == "incremental":
		n.Note = "The second stage of a split distinct aggregation: records reach it keyed by the group columns alone, after the first stage spread each key over buckets."
	default:
		n.Note = "Each record goes to the subtask of murmurHash(BinaryRowData.hashCode()) of its key row, not of a Java object: route keys as type sql."
	}
	q := url.Values{"type": {"sql"}, "columns": {n.Columns[0]}}
	if vv.Parallelism > 0 {
		q.Set("parallelism", strconv.Itoa(vv.Parallelism))
	}
	if vv.MaxParallelism > 0 {
		q.Set("maxParallelism", strconv.Itoa(vv.MaxParallelism))
	}
	n.Lookup = lookup("/keys?" + q.Encode())
	return n
}

// sqlKeyOrigins fills n.Origins from the traced sources of k's columns,
// for the columns that are not their table's own of the same name, and
// reports whether a column is computed upstream.
func sqlKeyOrigins(n *views.SQLKeyNote, k *live.SQLKeyView) (computed bool) {
	if len(k.Sources) != len(k.Columns) {
		return false
	}
	origins := make([]string, len(n.Columns))
	some := false
	for side, srcs := range k.Sources {
		if side >= len(origins) || len(srcs) != len(k.Columns[side]) {
			return false
		}
		var parts []string
		for i, src := range srcs {
			col := k.Columns[side][i]
			switch {
			case src.Expr != "":
				computed = true
				parts = append(parts, col+" computed upstream as "+src.Expr)
			case src.Column != "" && src.Column != col:
				parts = append(parts, col+" is "+sqlIdent(src.Column)+" of "+src.Table)
			}
		}
		if len(parts) > 0 {
			origins[side] = strings.Join(parts, "; ")
			some = true
		}
	}
	if some {
		n.Origins = origins
	}
	return computed
}

// sqlColumnList writes key columns as a column list, each quoted with
// backticks when Flink SQL would need it.
func sqlColumnList(cols []string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = sqlIdent(c)
	}
	return strings.Join(parts, ", ")
}

// sqlSampleKey is the key columns a sample of a topic that the source
// vertex src reads starts with: the table columns the plan traces the key
// to, those of the keyed input that src feeds (a join's two sides may
// name theirs differently, and a subquery may have renamed them). A key
// computed upstream, or traced to another vertex, leaves them to fill in.
// Without traced sources, the key columns the plan names, when every keyed
// input has the same ones.
func sqlSampleKey(k *live.SQLKeyView, src string) string {
	if k == nil || !k.Named || len(k.Columns) == 0 {
		return ""
	}
	if len(k.Sources) > 0 {
	sides:
		for _, srcs := range k.Sources {
			cols := make([]string, len(srcs))
			for i, s := range srcs {
				if s.Vertex != src || s.Expr != "" || s.Column == "" {
					continue sides
				}
				cols[i] = s.Column
			}
			if len(cols) > 0 {
				return sqlColumnList(cols)
			}
		}
		return ""
	}
	first := sqlColumnList(k.Columns[0])
	for _, cols := range k.Columns[1:] {
		if sqlColumnList(cols) != first {
			return ""
		}
	}
	return first
}
