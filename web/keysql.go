package web

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/quote"
)

// A Flink SQL key (a GROUP BY, a join, an OVER window, a deduplication or a
// Top-N) is a key row of the key columns, not a Java object: the key lookup
// and the sampler take its columns as a column list.

// sqlKeyColumns is a SQL key's columns in key order, parsed from a list
// such as "user_id STRING, region_id BIGINT", "BIGINT, STRING" (types
// alone) or "user_id, region_id" (names alone, whose types must then come
// from elsewhere).
type sqlKeyColumns struct {
	names []string // "" for a column given by its type alone
	types []assign.SQLType
	// untyped are the indexes of the columns given by name alone.
	untyped []int
	// untypedNames are their names, set on a form whose columns lack
	// types (keysForm.parseColumns).
	untypedNames []string
}

// String is the list in canonical form: "user_id STRING, region_id BIGINT".
func (c sqlKeyColumns) String() string {
	parts := make([]string, len(c.types))
	for i, t := range c.types {
		ts := t.Text()
		switch {
		case c.names[i] == "":
			parts[i] = ts
		case c.isUntyped(i):
			parts[i] = c.names[i]
		default:
			parts[i] = sqlIdent(c.names[i]) + " " + ts
		}
	}
	return strings.Join(parts, ", ")
}

func (c sqlKeyColumns) isUntyped(i int) bool {
	for _, u := range c.untyped {
		if u == i {
			return true
		}
	}
	return false
}

// label names column i for messages and for the row's slots.
func (c sqlKeyColumns) label(i int) string {
	if c.names[i] != "" {
		return c.names[i]
	}
	return "column " + strconv.Itoa(i)
}

// sqlIdent quotes a column name with backticks when Flink SQL would need
// them.
func sqlIdent(name string) string {
	plain := name != ""
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		// A name that reads as a type (a column called date or time) is
		// quoted, so that a column list keeps it a name.
		if _, err := assign.ParseSQLType(name); err != nil {
			return name
		}
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// maxSQLKeyColumns bounds a key's columns: Flink sets no bound, a key of
// more than a few is rare, and the row grows by 8 bytes a column.
const maxSQLKeyColumns = 1024

// parseSQLKeyColumns reads a key's column list. Commas inside parentheses
// or angle brackets belong to their type; a name may be quoted with
// backticks (“ inside for one). A part that is a type is a column given by
// its type alone; otherwise its first word is the name and the rest, if
// any, its type.
func parseSQLKeyColumns(text string) (sqlKeyColumns, error) {
	var c sqlKeyColumns
	parts, err := splitTopLevel(text)
	if err != nil {
		return c, err
	}
	if len(parts) > maxSQLKeyColumns {
		return c, fmt.Errorf("%d key columns; at most %d", len(parts), maxSQLKeyColumns)
	}
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			return c, fmt.Errorf("key column %d is empty: give a name and a type, such as user_id STRING", i)
		}
		if t, err := assign.ParseSQLType(p); err == nil && !strings.HasPrefix(p, "`") {
			c.names, c.types = append(c.names, ""), append(c.types, t)
			continue
		}
		name, rest, err := cutSQLIdent(p)
		if err != nil {
			return c, fmt.Errorf("key column %d: %v", i, err)
		}
		for j, n := range c.names {
			if n != "" && strings.EqualFold(n, name) {
				return c, fmt.Errorf("key column %d: %s is column %d already", i, quote.Clip(name), j)
			}
		}
		c.names = append(c.names, name)
		if strings.TrimSpace(rest) == "" {
			c.types = append(c.types, assign.SQLType{})
			c.untyped = append(c.untyped, i)
			continue
		}
		t, err := assign.ParseSQLType(rest)
		if err != nil {
			return c, fmt.Errorf("key column %s: %w", quote.Clip(name), err)
		}
		c.types = append(c.types, t)
	}
	return c, nil
}

// splitTopLevel splits at the commas outside parentheses, angle brackets
// and backticks.
func splitTopLevel(s string) ([]string, error) {
	var parts []string
	depth, start, tick := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '`':
			tick = !tick
		case tick:
		case c == '(' || c == '<':
			depth++
		case c == ')' || c == '>':
			if depth == 0 {
				return nil, fmt.Errorf("%s: a %q closes nothing", quote.Clip(s), c)
			}
			depth--
		case c == ',' && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	if tick {
		return nil, fmt.Errorf("%s: a backtick is not closed", quote.Clip(s))
	}
	if depth > 0 {
		return nil, fmt.Errorf("%s: a parenthesis or angle bracket is not closed", quote.Clip(s))
	}
	return append(parts, s[start:]), nil
}

// cutSQLIdent reads the identifier that starts p (plain, or quoted with
// backticks) and returns it and the rest.
func cutSQLIdent(p string) (name, rest string, err error) {
	if strings.HasPrefix(p, "`") {
		var b strings.Builder
		for i := 1; i < len(p); i++ {
			if p[i] != '`' {
				b.WriteByte(p[i])
				continue
			}
			if i+1 < len(p) && p[i+1] == '`' {
				b.WriteByte('`')
				i++
				continue
			}
			if b.Len() == 0 {
				return "", "", fmt.Errorf("an empty name")
			}
			return b.String(), p[i+1:], nil
		}
		return "", "", fmt.Errorf("%s: a backtick is not closed", quote.Clip(p))
	}
	end := strings.IndexAny(p, " \t\r\n")
	if end < 0 {
		end = len(p)
	}
	name = p[:end]
	for i, r := range name {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9' || r > 0x7f) {
			return "", "", fmt.Errorf("%s is not a column name (quote it with backticks) nor a type", quote.Clip(p))
		}
	}
	return name, p[end:], nil
}

// typeFromTable gives the columns of c named alone their types from the
// form's table (its CREATE TABLE statement or column list), as the table
// declares them; a column the table lacks or cannot key by fails the form.
func (f *keysForm) typeFromTable(c *sqlKeyColumns) bool {
	if len(f.Table) > maxTableText {
		f.fail("table", "%d bytes; at most %d", len(f.Table), maxTableText)
		return false
	}
	tb, err := parseTableText(f.Table)
	if err != nil {
		f.fail("table", "%v", err)
		return false
	}
	for _, u := range c.untyped {
		col, ok := tb.Column(c.names[u])
		switch {
		case !ok:
			f.fail("columns", "%s is not a column of the table", c.names[u])
			return false
		case col.Computed || col.TypeErr != nil && col.TypeText == "":
			f.fail("columns", "%s is a computed column (AS %s): give its type", c.names[u], col.Expr)
			return false
		case col.TypeErr != nil:
			f.fail("columns", "%s: %v", c.names[u], col.TypeErr)
			return false
		}
		c.types[u] = col.Type
	}
	c.untyped = nil
	return true
}
