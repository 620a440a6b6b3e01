package sqlplan

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skewscope/skewscope/assign"
)

// Table is what a CREATE TABLE statement says about a table's columns and
// connector.
type Table struct {
	// Name is the table's name as written, its parts joined by "." without
	// backquotes ("orders", "cat.db.orders").
	Name    string
	Columns []Column
	// PrimaryKey are the columns of the PRIMARY KEY clause (the key of an
	// upsert-kafka table), nil without one.
	PrimaryKey []string
	// Options are the WITH options; OptionKeys their keys in statement
	// order.
	Options    map[string]string
	OptionKeys []string
}

// Column is one column of a CREATE TABLE statement.
type Column struct {
	Name string
	// TypeText is the column's type as written ("DECIMAL(10, 2) NOT
	// NULL", "ROW<a INT, b STRING>"); "" for a computed column.
	TypeText string
	// Type is TypeText parsed; TypeErr the reason it could not be (an
	// unsupported type such as ARRAY or ROW is an
	// *assign.UnsupportedSQLTypeError): such a column cannot be a key
	// column, the statement is still read.
	Type    assign.SQLType
	TypeErr error
	// Computed is true for "c AS expr", with Expr the expression's text.
	Computed bool
	Expr     string
	// Metadata is true for "c TYPE METADATA [FROM 'key'] [VIRTUAL]";
	// MetadataKey is the FROM key ("" when the column's name is the key).
	Metadata    bool
	MetadataKey string
	Virtual     bool
	Comment     string
}

// Physical reports whether the column is read from the record's key or
// value (neither computed nor metadata).
func (c Column) Physical() bool { return !c.Computed && !c.Metadata }

// SyntaxError is a CREATE TABLE statement that does not parse: what was
// expected, and where (1-based line and column, in characters).
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("CREATE TABLE: %s at %d:%d", e.Msg, e.Line, e.Col)
}

// ParseCreateTable reads a Flink CREATE TABLE statement:
//
//	CREATE [TEMPORARY] TABLE [IF NOT EXISTS] [cat.][db.]name (
//	  col TYPE [NOT NULL] [PRIMARY KEY NOT ENFORCED] [COMMENT '...'],
//	  col AS expr [COMMENT '...'],
//	  col TYPE METADATA [FROM 'key'] [VIRTUAL] [COMMENT '...'],
//	  WATERMARK FOR col AS expr,
//	  [CONSTRAINT name] PRIMARY KEY (col, ...) NOT ENFORCED
//	) [COMMENT '...'] [PARTITIONED BY (...)] [DISTRIBUTED BY ...]
//	  [WITH ('key' = 'value', ...)] [LIKE ...] [;]
//
// with -- and /* */ comments, `backquoted` identifiers ( “ inside) and
// 'string' literals (” inside). A column type is kept as written and
// parsed with assign.ParseSQLType; a type that cannot be a key (ARRAY<...>,
// ROW<...>, MAP<...>) is kept with its error in the column. The grammar is
// that of Flink's SqlCreateTable (flink-sql-parser's parserImpls.ftl,
// SqlCreateTable and TableCreationContext), for the parts skewscope reads.
func ParseCreateTable(stmt string) (Table, error) {
	p := &ddlParser{toks: lexDDL(stmt), src: stmt}
	if err := p.lexErr(); err != nil {
		return Table{}, err
	}
	return p.createTable()
}

// ddlToken kinds.
const (
	tkEOF = iota
	tkIdent
	tkQuoted // `name`
	tkString // 'text'
	tkNumber
	tkPunct
	tkError
)

type ddlToken struct {
	kind      int
	text      string // the value: identifier, unquoted name or string
	start     int    // byte offsets in the statement
	end       int
	line, col int
}

func lexDDL(s string) []ddlToken {
	var toks []ddlToken
	line, col := 1, 1
	i := 0
	advance := func(to int) {
		for i < to {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
			i += n
		}
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			advance(i + 1)
			continue
		case strings.HasPrefix(s[i:], "--"):
			end := strings.IndexByte(s[i:], '\n')
			if end < 0 {
				end = len(s) - i
			}
			advance(i + end)
			continue
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return append(toks, ddlToken{kind: tkError, text: "unclosed /* comment", line: line, col: col})
			}
			advance(i + 2 + end + 2)
			continue
		}
		t := ddlToken{start: i, line: line, col: col}
		switch {
		case c == '`' || c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						b.WriteByte(c)
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				b.WriteByte(s[j])
				j++
			}
			if !closed {
				what := map[byte]string{'`': "identifier", '\'': "string", '"': "identifier"}[c]
				return append(toks, ddlToken{kind: tkError, text: "unclosed " + string(c) + " " + what, line: line, col: col})
			}
			t.kind, t.text = tkQuoted, b.String()
			if c == '\'' {
				t.kind = tkString
			}
			advance(j)
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			t.kind, t.text = tkNumber, s[i:j]
			advance(j)
		case c == '_' || c == '$' || c >= 0x80 || unicode.IsLetter(rune(c)):
			j := i
			for j < len(s) {
				r, n := utf8.DecodeRuneInString(s[j:])
				if r != '_' && r != '$' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				j += n
			}
			if j == i { // a byte that is not a letter
				_, n := utf8.DecodeRuneInString(s[i:])
				j = i + n
				t.kind = tkPunct
			} else {
				t.kind = tkIdent
			}
			t.text = s[i:j]
			advance(j)
		default:
			t.kind, t.text = tkPunct, s[i:i+1]
			advance(i + 1)
		}
		t.end = i
		toks = append(toks, t)
	}
	return append(toks, ddlToken{kind: tkEOF, start: len(s), end: len(s), line: line, col: col})
}

type ddlParser struct {
	toks []ddlToken
	pos  int
	src  string
	// after names the last column list item read, for errors.
	after string
	names map[string]bool // the columns read so far
}

func (p *ddlParser) lexErr() error {
	if last := p.toks[len(p.toks)-1]; last.kind == tkError {
		return &SyntaxError{Line: last.line, Col: last.col, Msg: last.text}
	}
	return nil
}

func (p *ddlParser) peek() ddlToken { return p.toks[p.pos] }

func (p *ddlParser) next() ddlToken {
	t := p.toks[p.pos]
	if t.kind != tkEOF {
		p.pos++
	}
	return t
}

// isKeyword reports whether t is the (case-insensitive) keyword kw.
func isKeyword(t ddlToken, kw string) bool {
	return t.kind == tkIdent && strings.EqualFold(t.text, kw)
}

func (p *ddlParser) accept(kw string) bool {
	if isKeyword(p.peek(), kw) {
		p.pos++
		return true
	}
	return false
}

func (p *ddlParser) acceptPunct(c string) bool {
	if t := p.peek(); t.kind == tkPunct && t.text == c {
		p.pos++
		return true
	}
	return false
}

// errorf is a SyntaxError at the next token: "expected X after Y".
func (p *ddlParser) errorf(format string, a ...any) error {
	t := p.peek()
	msg := fmt.Sprintf(format, a...)
	if t.kind == tkEOF {
		msg += ", found the end"
	} else {
		msg += ", found " + describeToken(t)
	}
	return &SyntaxError{Line: t.line, Col: t.col, Msg: msg}
}

func describeToken(t ddlToken) string {
	switch t.kind {
	case tkString:
		return "string " + quoteClip(t.text)
	case tkQuoted:
		return "`" + clip(t.text) + "`"
	}
	return quoteClip(t.text)
}

func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	cut := 40
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func quoteClip(s string) string { return "'" + clip(s) + "'" }

func (p *ddlParser) expectKeyword(kw, after string) error {
	if !p.accept(kw) {
		return p.errorf("expected %s%s", kw, after)
	}
	return nil
}

func (p *ddlParser) expectPunct(c, after string) error {
	if !p.acceptPunct(c) {
		return p.errorf("expected '%s'%s", c, after)
	}
	return nil
}

// ident reads an identifier (plain or backquoted); what names it in the
// error.
func (p *ddlParser) ident(what string) (string, error) {
	t := p.peek()
	if t.kind == tkIdent || t.kind == tkQuoted {
		p.pos++
		return t.text, nil
	}
	return "", p.errorf("expected %s", what)
}

func (p *ddlParser) createTable() (Table, error) {
	var tb Table
	if err := p.expectKeyword("CREATE", " at the start"); err != nil {
		return tb, err
	}
	p.accept("TEMPORARY")
	if err := p.expectKeyword("TABLE", " after CREATE"); err != nil {
		return tb, err
	}
	if p.accept("IF") {
		if err := p.expectKeyword("NOT", " after IF"); err != nil {
			return tb, err
		}
		if err := p.expectKeyword("EXISTS", " after IF NOT"); err != nil {
			return tb, err
		}
	}
	name, err := p.ident("the table name after CREATE TABLE")
	if err != nil {
		return tb, err
	}
	for p.acceptPunct(".") {
		part, err := p.ident("a name after '.' in the table name")
		if err != nil {
			return tb, err
		}
		name += "." + part
	}
	tb.Name = name
	if p.acceptPunct("(") {
		if err := p.tableElements(&tb); err != nil {
			return tb, err
		}
	}
	for {
		switch {
		case p.accept("COMMENT"):
			if t := p.next(); t.kind != tkString {
				p.pos--
				return tb, p.errorf("expected a string after COMMENT")
			}
		case p.accept("PARTITIONED"), p.accept("DISTRIBUTED"):
			// PARTITIONED BY (a, b); DISTRIBUTED BY [HASH](a) [INTO n BUCKETS]
			// or DISTRIBUTED INTO n BUCKETS: not read, skipped whole.
			for {
				t := p.peek()
				if t.kind == tkEOF || isKeyword(t, "WITH") || isKeyword(t, "LIKE") || isKeyword(t, "PARTITIONED") ||
					isKeyword(t, "DISTRIBUTED") || (t.kind == tkPunct && t.text == ";") {
					break
				}
				if t.kind == tkPunct && t.text == "(" {
					if err := p.skipGroup(); err != nil {
						return tb, err
					}
					continue
				}
				p.pos++
			}
		case p.accept("WITH"):
			if err := p.options(&tb); err != nil {
				return tb, err
			}
		case p.accept("LIKE"), p.accept("AS"):
			// LIKE source (options) / AS SELECT ...: the rest is not read.
			return tb, nil
		default:
			p.acceptPunct(";")
			if t := p.peek(); t.kind != tkEOF {
				return tb, p.errorf("expected WITH, COMMENT, PARTITIONED BY, LIKE or the end of the statement")
			}
			return tb, nil
		}
	}
}

// skipGroup skips a parenthesised group, the next token being its '('.
func (p *ddlParser) skipGroup() error {
	open := p.next()
	depth := 1
	for depth > 0 {
		t := p.next()
		switch {
		case t.kind == tkEOF:
			return &SyntaxError{Line: open.line, Col: open.col, Msg: "'(' is never closed"}
		case t.kind == tkPunct && t.text == "(":
			depth++
		case t.kind == tkPunct && t.text == ")":
			depth--
		}
	}
	return nil
}

func (p *ddlParser) tableElements(tb *Table) error {
	if p.acceptPunct(")") {
		return nil
	}
	for {
		if err := p.tableElement(tb); err != nil {
			return err
		}
		if p.acceptPunct(",") {
			continue
		}
		if p.acceptPunct(")") {
			return nil
		}
		if p.peek().kind == tkEOF {
			return p.errorf("expected ')' after column list")
		}
		return p.errorf("expected ',' or ')' after %s", p.after)
	}
}

func (p *ddlParser) tableElement(tb *Table) error {
	t := p.peek()
	switch {
	case isKeyword(t, "WATERMARK") && !p.isColumnStart():
		p.pos++
		if err := p.expectKeyword("FOR", " after WATERMARK"); err != nil {
			return err
		}
		if _, err := p.ident("the rowtime column after WATERMARK FOR"); err != nil {
			return err
		}
		if err := p.expectKeyword("AS", " after WATERMARK FOR column"); err != nil {
			return err
		}
		p.after = "the WATERMARK clause"
		_, err := p.expression("the watermark expression")
		return err
	case (isKeyword(t, "CONSTRAINT") || isKeyword(t, "PRIMARY")) && !p.isColumnStart():
		if p.accept("CONSTRAINT") {
			if _, err := p.ident("the constraint name after CONSTRAINT"); err != nil {
				return err
			}
		}
		if err := p.expectKeyword("PRIMARY", " after CONSTRAINT name"); err != nil {
			return err
		}
		if err := p.expectKeyword("KEY", " after PRIMARY"); err != nil {
			return err
		}
		if err := p.expectPunct("(", " after PRIMARY KEY"); err != nil {
			return err
		}
		var cols []string
		for {
			c, err := p.ident("a column name in PRIMARY KEY (...)")
			if err != nil {
				return err
			}
			cols = append(cols, c)
			if p.acceptPunct(",") {
				continue
			}
			if err := p.expectPunct(")", " after the PRIMARY KEY columns"); err != nil {
				return err
			}
			break
		}
		tb.PrimaryKey = cols
		p.after = "the PRIMARY KEY clause"
		return p.notEnforced()
	}
	return p.column(tb)
}

// isColumnStart reports whether the element at the cursor is a column
// whose name happens to be a keyword (`watermark` INT is backquoted, but
// watermark INT is a column too): a keyword followed by a type or AS.
func (p *ddlParser) isColumnStart() bool {
	if p.pos+1 >= len(p.toks) {
		return false
	}
	n := p.toks[p.pos+1]
	first := p.toks[p.pos]
	switch {
	case isKeyword(first, "WATERMARK"):
		return !isKeyword(n, "FOR")
	case isKeyword(first, "PRIMARY"):
		return !isKeyword(n, "KEY")
	case isKeyword(first, "CONSTRAINT"):
		// CONSTRAINT name PRIMARY ...
		return !(p.pos+2 < len(p.toks) && isKeyword(p.toks[p.pos+2], "PRIMARY"))
	}
	return false
}

func (p *ddlParser) notEnforced() error {
	if err := p.expectKeyword("NOT", " (PRIMARY KEY ... NOT ENFORCED)"); err != nil {
		return err
	}
	return p.expectKeyword("ENFORCED", " after PRIMARY KEY ... NOT")
}

// typeWords are the words that follow a type's name in Flink's type
// grammar (LogicalTypeParser; the DDL's SqlDataTypeSpec).
var typeWords = map[string]bool{
	"NOT": true, "NULL": true, "WITH": true, "WITHOUT": true, "LOCAL": true, "TIME": true, "ZONE": true,
	"PRECISION": true, "VARYING": true, "YEAR": true, "MONTH": true, "DAY": true, "HOUR": true,
	"MINUTE": true, "SECOND": true, "TO": true,
}

func (p *ddlParser) column(tb *Table) error {
	name, err := p.ident("a column name, WATERMARK or PRIMARY KEY in the column list")
	if err != nil {
		return err
	}
	if p.names == nil {
		p.names = map[string]bool{}
	}
	if p.names[name] {
		p.pos--
		return p.errorf("column %s given twice", name)
	}
	p.names[name] = true
	col := Column{Name: name}
	p.after = "column " + name
	if p.accept("AS") {
		col.Computed = true
		if col.Expr, err = p.expression("the expression of computed column " + name); err != nil {
			return err
		}
	} else {
		start := p.peek()
		if start.kind != tkIdent {
			return p.errorf("expected a type or AS after column %s", name)
		}
		// The type is its name, then the words a type has (TIMESTAMP(3)
		// WITH LOCAL TIME ZONE, DOUBLE PRECISION, NOT NULL) and bracketed
		// groups; anything else ends it.
		end := p.next()
		depth := 0
		for {
			t := p.peek()
			if t.kind == tkEOF {
				if depth > 0 {
					return p.errorf("expected the rest of column %s's type", name)
				}
				break
			}
			if t.kind == tkPunct {
				switch t.text {
				case "(", "<":
					depth++
				case ")", ">":
					if depth == 0 {
						goto typed
					}
					depth--
				case ",":
					if depth == 0 {
						goto typed
					}
				default:
					if depth == 0 {
						goto typed
					}
				}
			} else if depth == 0 && !(t.kind == tkIdent && typeWords[strings.ToUpper(t.text)]) {
				break
			}
			end = p.next()
		}
	typed:
		col.TypeText = p.text(start, end)
		col.Type, col.TypeErr = assign.ParseSQLType(col.TypeText)
		if col.TypeErr != nil {
			col.TypeErr = fmt.Errorf("column %s: %w", name, col.TypeErr)
		}
		if p.accept("METADATA") {
			col.Metadata = true
			if p.accept("FROM") {
				t := p.next()
				if t.kind != tkString {
					p.pos--
					return p.errorf("expected a string after METADATA FROM")
				}
				col.MetadataKey = t.text
			}
			col.Virtual = p.accept("VIRTUAL")
		}
	}
	if p.accept("CONSTRAINT") {
		if _, err := p.ident("the constraint name after CONSTRAINT"); err != nil {
			return err
		}
		if !isKeyword(p.peek(), "PRIMARY") {
			return p.errorf("expected PRIMARY KEY after CONSTRAINT name")
		}
	}
	if p.accept("PRIMARY") {
		if err := p.expectKeyword("KEY", " after PRIMARY"); err != nil {
			return err
		}
		tb.PrimaryKey = []string{name}
		if err := p.notEnforced(); err != nil {
			return err
		}
	}
	if p.accept("COMMENT") {
		t := p.next()
		if t.kind != tkString {
			p.pos--
			return p.errorf("expected a string after COMMENT")
		}
		col.Comment = t.text
	}
	tb.Columns = append(tb.Columns, col)
	return nil
}

// text is the statement's text from token a to token b, as written.
func (p *ddlParser) text(a, b ddlToken) string {
	if p.src == "" || b.end < a.start {
		return ""
	}
	return p.src[a.start:b.end]
}

// expression skips an expression up to a ',' or ')' outside its brackets
// (or COMMENT), and returns its text.
func (p *ddlParser) expression(what string) (string, error) {
	start := p.peek()
	depth := 0
	var last ddlToken
	n := 0
	for {
		t := p.peek()
		if t.kind == tkEOF {
			return "", p.errorf("expected ')' after column list")
		}
		if t.kind == tkPunct {
			switch t.text {
			case "(":
				depth++
			case ")":
				if depth == 0 {
					goto done
				}
				depth--
			case ",":
				if depth == 0 {
					goto done
				}
			}
		}
		if depth == 0 && isKeyword(t, "COMMENT") {
			goto done
		}
		last = p.next()
		n++
	}
done:
	if n == 0 {
		return "", p.errorf("expected %s", what)
	}
	return p.text(start, last), nil
}

func (p *ddlParser) options(tb *Table) error {
	if err := p.expectPunct("(", " after WITH"); err != nil {
		return err
	}
	if tb.Options == nil {
		tb.Options = map[string]string{}
	}
	if p.acceptPunct(")") {
		return nil
	}
	for {
		k := p.next()
		if k.kind != tkString {
			p.pos--
			return p.errorf("expected an option key in single quotes in WITH (...)")
		}
		if err := p.expectPunct("=", " after option key '"+clip(k.text)+"'"); err != nil {
			return err
		}
		v := p.next()
		if v.kind != tkString {
			p.pos--
			return p.errorf("expected the value of option '%s' in single quotes", clip(k.text))
		}
		if _, dup := tb.Options[k.text]; dup {
			return &SyntaxError{Line: k.line, Col: k.col, Msg: "option '" + clip(k.text) + "' given twice"}
		}
		tb.Options[k.text] = v.text
		tb.OptionKeys = append(tb.OptionKeys, k.text)
		if p.acceptPunct(",") {
			continue
		}
		return p.expectPunct(")", " after WITH options")
	}
}

// Column returns the column of that name.
func (t Table) Column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// Connector is the 'connector' option ("kafka", "upsert-kafka", ...).
func (t Table) Connector() string { return t.Options["connector"] }

// ValueFormat is the format of the record value: 'value.format', or
// 'format' (the Kafka connector takes either; KafkaConnectorOptionsUtil
// .getValueDecodingFormat).
func (t Table) ValueFormat() string {
	if f := t.Options["value.format"]; f != "" {
		return f
	}
	return t.Options["format"]
}

// KeyFormat is the 'key.format' option, "" when the record key is not read.
func (t Table) KeyFormat() string { return t.Options["key.format"] }

// KeyFieldsPrefix is the 'key.fields-prefix' option.
func (t Table) KeyFieldsPrefix() string { return t.Options["key.fields-prefix"] }

// KeyFields are the table columns read from the record key: the
// 'key.fields' option (names separated by ';'), or for upsert-kafka the
// PRIMARY KEY columns. Mirrors KafkaConnectorOptionsUtil
// .createKeyFormatProjection.
func (t Table) KeyFields() []string {
	if v, ok := t.Options["key.fields"]; ok {
		var out []string
		for _, f := range strings.Split(v, ";") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out
	}
	if t.Connector() == "upsert-kafka" {
		return t.PrimaryKey
	}
	return nil
}

// KeyFormatFields are the field names of the key format's records: the
// key fields without the 'key.fields-prefix' (a key column k_id with
// prefix k_ is field id of the key). It fails naming a key field that is
// not a physical column or lacks the prefix, as Flink's validation does.
func (t Table) KeyFormatFields() ([]string, error) {
	prefix := t.KeyFieldsPrefix()
	var out []string
	for _, f := range t.KeyFields() {
		c, ok := t.Column(f)
		if !ok || !c.Physical() {
			return nil, fmt.Errorf("key field %s is not a physical column of table %s", f, t.Name)
		}
		if !strings.HasPrefix(f, prefix) {
			return nil, fmt.Errorf("key field %s does not start with key.fields-prefix %q", f, prefix)
		}
		out = append(out, strings.TrimPrefix(f, prefix))
	}
	return out, nil
}

// ValueFieldsInclude is the 'value.fields-include' option: "ALL" (the
// default: the value holds every physical column) or "EXCEPT_KEY".
func (t Table) ValueFieldsInclude() string {
	if v := t.Options["value.fields-include"]; v != "" {
		return strings.ToUpper(v)
	}
	return "ALL"
}

// ValueFields are the physical columns that the record value holds:
// all of them, or those that are not key fields under EXCEPT_KEY.
// Mirrors KafkaConnectorOptionsUtil.createValueFormatProjection.
func (t Table) ValueFields() []string {
	except := map[string]bool{}
	if t.ValueFieldsInclude() == "EXCEPT_KEY" {
		for _, f := range t.KeyFields() {
			except[f] = true
		}
	}
	var out []string
	for _, c := range t.Columns {
		if c.Physical() && !except[c.Name] {
			out = append(out, c.Name)
		}
	}
	return out
}
