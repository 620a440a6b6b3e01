package web

import (
	"errors"
	"strings"

	"github.com/skewscope/skewscope/keysample"
	"github.com/skewscope/skewscope/sqlplan"
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
	var o keysample.SQLKeyOptions
	if statement(table) {
		tb, err := sqlplan.ParseCreateTable(table)
		if err != nil {
			f.fail("table", "%v", err)
			return keysample.KeySpec{}, false
		}
		if o, err = keysample.SQLTableKey(tb, key); err != nil {
			f.fail("keyColumns", "%v", err)
			return keysample.KeySpec{}, false
		}
		// The statement says which part and format; the form shows them.
		f.From, f.Format = o.From, o.Format
	} else {
		// A column list is read as the body of a CREATE TABLE statement,
		// its errors placed in the list as typed.
		tb, err := sqlplan.ParseCreateTable("CREATE TABLE t (\n" + table + "\n)")
		if err != nil {
			var se *sqlplan.SyntaxError
			if errors.As(err, &se) && se.Line > 1 {
				f.fail("table", "columns: %s at %d:%d", se.Msg, se.Line-1, se.Col)
			} else {
				f.fail("table", "columns: %v", err)
			}
			return keysample.KeySpec{}, false
		}
		o = keysample.SQLKeyOptions{From: f.From, Format: f.Format, Key: key}
		for _, c := range tb.Columns {
			if c.Physical() {
				o.Columns = append(o.Columns, keysample.SQLColumn{Name: c.Name, Type: c.TypeText})
			}
		}
	}
	o.AvroSchema = strings.TrimSpace(f.Schema)
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
