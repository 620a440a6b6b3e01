package web

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/bidi"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/keysample"
	"github.com/skewscope/skewscope/sqlplan"
	"github.com/skewscope/skewscope/views"
)

// A key sample of a Flink SQL job's topic reads each record as the job's
// table does (its format, its columns) and keys it by the key row of the
// key columns the plan names. The form takes the table as its CREATE
// TABLE statement, which says which part of the record and which format,
// or as a column list, with the record part and format from the form.

// maxTableText bounds the table field: a CREATE TABLE statement with its
// options, not a file.
const maxTableText = 32 << 10

// sqlKeySpec reads the SQL fields of a sample form (type sql) into a key
// spec; each wrong field gets its message.
func (f *sampleForm) sqlKeySpec() (keysample.KeySpec, bool) {
	key, err := sqlKeyNames(f.KeyColumns)
	if err != nil {
		f.fail("keyColumns", "%v", err)
		return keysample.KeySpec{}, false
	}
	if f.Format == "string" {
		// The form's default is no SQL format; a SQL table's usual one is.
		f.Format = "json"
	}
	table := strings.TrimSpace(f.Table)
	switch {
	case table == "":
		f.fail("table", "give the table's CREATE TABLE statement, or its columns with their SQL types in order (such as user_id STRING, region STRING, amount DOUBLE): the plan names the key columns, not their types")
		return keysample.KeySpec{}, false
	case len(table) > maxTableText:
		f.fail("table", "%d bytes; at most %d", len(table), maxTableText)
		return keysample.KeySpec{}, false
	}
	tb, err := parseTableText(table)
	if err != nil {
		f.fail("table", "%v", err)
		return keysample.KeySpec{}, false
	}
	var o keysample.SQLKeyOptions
	if statement(table) {
		if o, err = keysample.SQLTableKey(tb, key); err != nil {
			f.fail("keyColumns", "%v", err)
			return keysample.KeySpec{}, false
		}
		// The statement says which part and format; the form shows them.
		f.From, f.Format = o.From, o.Format
	} else {
		o = keysample.SQLKeyOptions{From: f.From, Format: f.Format, Key: key}
		for _, c := range tb.Columns {
			if c.Physical() {
				o.Columns = append(o.Columns, keysample.SQLColumn{Name: c.Name, Type: c.TypeText})
			}
		}
	}
	o.AvroSchema = strings.TrimSpace(f.Schema)
	if o.Format == "avro-confluent" && o.AvroSchema == "" {
		// Each record names its writer schema by id: the cluster's
		// registry has them.
		o.Registry = f.registry
	}
	spec, err := keysample.ParseSQLKeySpec(o)
	if err != nil {
		// The message names what is wrong; it goes by the field that
		// holds it.
		field := "format"
		switch msg := err.Error(); {
		case strings.HasPrefix(msg, "key column"):
			field = "keyColumns"
		case strings.HasPrefix(msg, "column"):
			field = "table"
		}
		f.fail(field, "%v", err)
		return keysample.KeySpec{}, false
	}
	return spec, true
}

// parseTableText reads a table field: a CREATE TABLE statement, or a
// column list read as the body of one, its errors placed in the list as
// typed.
func parseTableText(text string) (sqlplan.Table, error) {
	if statement(text) {
		return sqlplan.ParseCreateTable(text)
	}
	tb, err := sqlplan.ParseCreateTable("CREATE TABLE t (\n" + text + "\n)")
	if err != nil {
		var se *sqlplan.SyntaxError
		if errors.As(err, &se) && se.Line > 1 {
			return tb, fmt.Errorf("columns: %s at %d:%d", se.Msg, se.Line-1, se.Col)
		}
		return tb, fmt.Errorf("columns: %v", err)
	}
	return tb, nil
}

// statement reports whether a table field holds a CREATE statement rather
// than a column list.
func statement(s string) bool {
	for len(s) > 0 {
		switch {
		case strings.HasPrefix(s, "--"):
			_, s, _ = strings.Cut(s, "\n")
		case strings.HasPrefix(s, "/*"):
			_, s, _ = strings.Cut(s, "*/")
		default:
			w, _, _ := strings.Cut(s, " ")
			return strings.EqualFold(strings.TrimSpace(w), "create")
		}
		s = strings.TrimSpace(s)
	}
	return false
}

// sqlKeyNames reads a list of key column names ("user_id, `order`"), as
// a SQL vertex's page names them.
func sqlKeyNames(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("name the key columns in key order, as the keyed vertex's page names them (its GROUP BY, join, PARTITION BY or deduplication columns), such as user_id")
	}
	parts, err := splitTopLevel(s)
	if err != nil {
		return nil, err
	}
	if len(parts) > maxSQLKeyColumns {
		return nil, errors.New("too many key columns")
	}
	names := make([]string, 0, len(parts))
	for _, p := range parts {
		name, rest, err := cutSQLIdent(strings.TrimSpace(p))
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(rest) != "" {
			return nil, errors.New("key columns are names alone (" + strings.TrimSpace(p) + " has more): their types come from the table")
		}
		names = append(names, name)
	}
	return names, nil
}

// sqlPhaseLines say what a SQL aggregation's phases do to the sample's
// heaviest key: under a two-phase aggregation, what the local half
// absorbs and what still reaches the key's subtask; under a single-phase
// GROUP BY, what Flink's local-global and split distinct options would
// change. The bound per mini-batch is computed from the plan (the local
// half's parallelism and interval); what it absorbs at the key's rate is
// estimated from a live sample's rate.
func sqlPhaseLines(snap sampleSnapshot) []views.KindLine {
	f := snap.Form
	k := f.sqlVertex
	if k == nil || snap.Now == nil || snap.Records == 0 {
		return nil
	}
	// The key said is the heaviest of the busiest subtask's.
	var hot *keysample.HeavyKey
	for i := range snap.Top {
		if assign.OperatorIndex(f.maxP, f.p, snap.Top[i].KeyGroup) == snap.Now.Busiest {
			hot = &snap.Top[i]
			break
		}
	}
	if hot == nil {
		return nil
	}
	key := bidi.Escape(quote.Clip(hot.Text))
	sub := snap.Now.Busiest
	share := format.Percent(100 * float64(hot.Count) / float64(snap.Records))
	// rate is the key's records per second in a live sample, 0 otherwise.
	var rate float64
	if f.req.Mode == "live" && snap.Progress.Elapsed > 0 {
		rate = float64(hot.Count) / snap.Progress.Elapsed.Seconds()
	}
	up := k.InputParallelism
	var out []views.KindLine
	switch {
	case k.TwoPhase:
		batch := "a mini-batch"
		if k.MiniBatchMs > 0 {
			batch = fmt.Sprintf("a mini-batch (%s ms)", format.Int(k.MiniBatchMs))
		}
		ups := "each upstream subtask"
		if up > 0 {
			ups = fmt.Sprintf("each of the %d upstream subtasks", up)
		}
		out = append(out, views.KindLine{Kind: "computed", Text: fmt.Sprintf(
			"The plan aggregates in two phases (LocalGroupAggregate → %s): %s folds the records of %s in %s into one before the exchange, so subtask %d receives at most one record of %s per mini-batch from each, not its %s of the records; the counts above are records before the local phase.",
			k.Operator, ups, key, batch, sub, key, share)})
		if rate > 0 && up > 0 && k.MiniBatchMs > 0 {
			reach := float64(up) * 1000 / float64(k.MiniBatchMs)
			absorbed := 1 - math.Min(1, reach/rate)
			out = append(out, views.KindLine{Kind: "estimated", Text: fmt.Sprintf(
				"At the sampled %s of %s, the local phase absorbs about %s of its records: at most %s still reach subtask %d.",
				format.Rate(rate), key, format.Percent(100*absorbed), format.Rate(math.Min(reach, rate)), sub)})
		}
	case k.Operator == "GroupAggregate":
		ups := "every upstream subtask"
		bound := ""
		if up > 0 {
			ups = fmt.Sprintf("each of the %d upstream subtasks", up)
			bound = fmt.Sprintf(": with a 1 s mini-batch at most %d records of %s per second would reach subtask %d", up, key, sub)
			if rate > 0 {
				bound += fmt.Sprintf(" instead of the sampled %s (about %s fewer)", format.Rate(rate), format.Percent(100*(1-math.Min(1, float64(up)/rate))))
			}
		}
		out = append(out,
			views.KindLine{Kind: "computed", Text: fmt.Sprintf(
				"Subtask %d aggregates key %s (%s of the records) alone: a single-phase GroupAggregate. Flink's local-global aggregation (table.exec.mini-batch.enabled = true with allow-latency and size, and table.optimizer.agg-phase-strategy = TWO_PHASE, or AUTO) would make %s fold its records of %s per mini-batch into one before the exchange%s.",
				sub, key, share, ups, key, bound)},
			views.KindLine{Kind: "computed", Text: fmt.Sprintf(
				"Split distinct (table.optimizer.distinct-agg.split.enabled = true) changes only COUNT(DISTINCT …)-like aggregates: it spreads each key over buckets of the distinct value (1024 by default), so the distinct counting of %s would be shared by the subtasks its buckets land on, and its final stage still receives %s on subtask %d, one record per bucket update.",
				key, key, sub)})
	}
	return out
}
