package assign

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/internal/quote"
)

// SQLTypeRoot is the root of a Flink SQL logical type that a key column can
// have, as org.apache.flink.table.types.logical.LogicalTypeRoot names it.
type SQLTypeRoot uint8

// The type roots a key row can hold. Every other root of Flink's
// LogicalTypeRoot is refused by name (see ParseSQLType).
const (
	SQLBoolean      SQLTypeRoot = iota + 1 // BOOLEAN
	SQLTinyInt                             // TINYINT
	SQLSmallInt                            // SMALLINT
	SQLInt                                 // INTEGER
	SQLBigInt                              // BIGINT
	SQLFloat                               // FLOAT (4 bytes)
	SQLDouble                              // DOUBLE
	SQLChar                                // CHAR(n)
	SQLVarChar                             // VARCHAR(n); STRING is VARCHAR(2147483647)
	SQLBinary                              // BINARY(n)
	SQLVarBinary                           // VARBINARY(n); BYTES is VARBINARY(2147483647)
	SQLDate                                // DATE
	SQLTime                                // TIME(p) WITHOUT TIME ZONE
	SQLTimestamp                           // TIMESTAMP(p) WITHOUT TIME ZONE
	SQLTimestampLTZ                        // TIMESTAMP(p) WITH LOCAL TIME ZONE, TIMESTAMP_LTZ(p)
	SQLDecimal                             // DECIMAL(p, s)
)

// Bounds of Flink's logical types (CharType, VarCharType, BinaryType,
// VarBinaryType, TimeType, TimestampType, DecimalType).
const (
	// SQLMaxLength is the largest CHAR/VARCHAR/BINARY/VARBINARY length,
	// Integer.MAX_VALUE; STRING and BYTES have it.
	SQLMaxLength = 1<<31 - 1
	// SQLMaxDecimalPrecision is DecimalType.MAX_PRECISION.
	SQLMaxDecimalPrecision = 38
	// SQLMaxTimePrecision is TimestampType.MAX_PRECISION and TimeType.MAX_PRECISION.
	SQLMaxTimePrecision = 9
)

// SQLType is a Flink SQL logical type of a key column.
type SQLType struct {
	Root SQLTypeRoot
	// Length of CHAR, VARCHAR, BINARY and VARBINARY. It does not change how
	// a value is written.
	Length int
	// Precision of TIME, TIMESTAMP, TIMESTAMP_LTZ (fractional digits of the
	// second) and DECIMAL (digits).
	Precision int
	// Scale of DECIMAL.
	Scale int
	// NotNull is true for a NOT NULL column, which refuses a null.
	NotNull bool
}

// Text writes the type the way people type it: STRING and BYTES for the
// unbounded VARCHAR and VARBINARY, the others as String does.
func (t SQLType) Text() string {
	nn := ""
	if t.NotNull {
		nn = " NOT NULL"
	}
	switch {
	case t.Root == SQLVarChar && t.Length == SQLMaxLength:
		return "STRING" + nn
	case t.Root == SQLVarBinary && t.Length == SQLMaxLength:
		return "BYTES" + nn
	}
	return t.String()
}

// String returns the type as Flink's LogicalType.asSerializableString
// writes it: "VARCHAR(2147483647)" for STRING, "DECIMAL(10, 2)",
// "TIMESTAMP(3) WITH LOCAL TIME ZONE", "INT NOT NULL". ParseSQLType reads it
// back.
func (t SQLType) String() string {
	var s string
	switch t.Root {
	case SQLBoolean:
		s = "BOOLEAN"
	case SQLTinyInt:
		s = "TINYINT"
	case SQLSmallInt:
		s = "SMALLINT"
	case SQLInt:
		s = "INT"
	case SQLBigInt:
		s = "BIGINT"
	case SQLFloat:
		s = "FLOAT"
	case SQLDouble:
		s = "DOUBLE"
	case SQLChar:
		s = "CHAR(" + strconv.Itoa(t.Length) + ")"
	case SQLVarChar:
		s = "VARCHAR(" + strconv.Itoa(t.Length) + ")"
	case SQLBinary:
		s = "BINARY(" + strconv.Itoa(t.Length) + ")"
	case SQLVarBinary:
		s = "VARBINARY(" + strconv.Itoa(t.Length) + ")"
	case SQLDate:
		s = "DATE"
	case SQLTime:
		s = "TIME(" + strconv.Itoa(t.Precision) + ")"
	case SQLTimestamp:
		s = "TIMESTAMP(" + strconv.Itoa(t.Precision) + ")"
	case SQLTimestampLTZ:
		s = "TIMESTAMP(" + strconv.Itoa(t.Precision) + ") WITH LOCAL TIME ZONE"
	case SQLDecimal:
		s = "DECIMAL(" + strconv.Itoa(t.Precision) + ", " + strconv.Itoa(t.Scale) + ")"
	default:
		return fmt.Sprintf("SQLType(%d)", t.Root)
	}
	if t.NotNull {
		s += " NOT NULL"
	}
	return s
}

// compact reports whether a value of t lives in its 8-byte slot alone:
// everything but strings, bytes, DECIMAL(p > 18) and TIMESTAMP(p > 3).
//
// Mirrors BinaryRowData.isInFixedLengthPart (DecimalData.isCompact,
// TimestampData.isCompact).
func (t SQLType) compact() bool {
	switch t.Root {
	case SQLChar, SQLVarChar, SQLBinary, SQLVarBinary:
		return false
	case SQLDecimal:
		return t.Precision <= maxCompactDecimalPrecision
	case SQLTimestamp, SQLTimestampLTZ:
		return t.Precision <= maxCompactTimestampPrecision
	}
	return true
}

const (
	// maxCompactDecimalPrecision is DecimalData.MAX_COMPACT_PRECISION.
	maxCompactDecimalPrecision = 18
	// maxCompactTimestampPrecision is the bound of TimestampData.isCompact.
	maxCompactTimestampPrecision = 3
)

// UnsupportedSQLTypeError is the error for a SQL type that skewscope does
// not write into key rows (ARRAY, MAP, ROW, MULTISET, RAW, VARIANT,
// INTERVAL, TIMESTAMP WITH TIME ZONE, ...). Name is the type as given.
type UnsupportedSQLTypeError struct {
	Name string
}

func (e *UnsupportedSQLTypeError) Error() string {
	return fmt.Sprintf("SQL type %s is not supported in a key: skewscope writes key rows of %s", e.Name, supportedSQLTypes)
}

const supportedSQLTypes = "BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, CHAR, VARCHAR/STRING, " +
	"BINARY, VARBINARY/BYTES, DATE, TIME, TIMESTAMP(p), TIMESTAMP_LTZ(p) and DECIMAL(p, s)"

// unsupportedSQLTypes are the leading words of Flink SQL types that are
// refused by name rather than reported as unknown.
var unsupportedSQLTypes = []string{
	"ARRAY", "MAP", "MULTISET", "ROW", "RAW", "VARIANT", "INTERVAL", "BITMAP",
	"DESCRIPTOR", "NULL", "SYMBOL", "STRUCTURED", "DISTINCT",
}

// ParseSQLType parses a Flink SQL type as a DDL column or Flink's
// asSerializableString writes it, case-insensitively:
//
//	BOOLEAN  TINYINT  SMALLINT  INT | INTEGER  BIGINT  FLOAT  DOUBLE [PRECISION]
//	CHAR | CHARACTER [(n)]  VARCHAR | CHARACTER VARYING [(n)]  STRING
//	BINARY[(n)]  VARBINARY | BINARY VARYING [(n)]  BYTES
//	DATE  TIME[(p)] [WITHOUT TIME ZONE]
//	TIMESTAMP[(p)] [WITHOUT TIME ZONE]
//	TIMESTAMP[(p)] WITH LOCAL TIME ZONE | TIMESTAMP_LTZ[(p)]
//	DECIMAL | DEC | NUMERIC [(p[, s])]
//
// each optionally followed by NOT NULL (or NULL). The defaults are Flink's:
// CHAR(1), VARCHAR(1), BINARY(1), VARBINARY(1), TIME(0), TIMESTAMP(6),
// TIMESTAMP_LTZ(6), DECIMAL(10, 0). Other Flink types (ARRAY, MAP, ROW,
// MULTISET, RAW, VARIANT, INTERVAL, TIMESTAMP WITH TIME ZONE, ...) are
// refused with an *UnsupportedSQLTypeError.
//
// Mirrors the type grammar of org.apache.flink.table.types.logical.utils
// .LogicalTypeParser for these types.
func ParseSQLType(s string) (SQLType, error) {
	words := sqlTypeWords(s)
	if len(words) == 0 {
		return SQLType{}, fmt.Errorf("empty SQL type")
	}
	t := SQLType{}
	// NOT NULL / NULL at the end.
	if n := len(words); n >= 2 && words[n-2] == "NOT" && words[n-1] == "NULL" {
		t.NotNull = true
		words = words[:n-2]
	} else if n >= 2 && words[n-1] == "NULL" {
		words = words[:n-1]
	}
	if len(words) == 0 {
		return SQLType{}, fmt.Errorf("SQL type %s names no type", quote.Clip(s))
	}
	for _, u := range unsupportedSQLTypes {
		if words[0] == u || strings.HasPrefix(words[0], u+"<") {
			return SQLType{}, &UnsupportedSQLTypeError{Name: strings.TrimSpace(s)}
		}
	}
	if len(words) >= 2 && words[1] == "VARYING" {
		switch words[0] {
		case "CHARACTER", "CHAR":
			words = append([]string{"VARCHAR"}, words[2:]...)
		case "BINARY":
			words = append([]string{"VARBINARY"}, words[2:]...)
		}
	}
	name, args, rest, err := splitTypeArgs(words)
	if err != nil {
		return SQLType{}, fmt.Errorf("SQL type %s: %v", quote.Clip(s), err)
	}
	bad := func(format string, a ...any) (SQLType, error) {
		return SQLType{}, fmt.Errorf("SQL type %s: %s", quote.Clip(s), fmt.Sprintf(format, a...))
	}
	noRest := func() bool { return len(rest) == 0 }
	switch name {
	case "BOOLEAN", "TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DATE", "STRING", "BYTES":
		if args != nil {
			return bad("%s takes no arguments", name)
		}
		if name == "DOUBLE" && len(rest) == 1 && rest[0] == "PRECISION" {
			rest = nil
		}
		if !noRest() {
			return bad("unexpected %q after %s", strings.Join(rest, " "), name)
		}
		t.Root = map[string]SQLTypeRoot{
			"BOOLEAN": SQLBoolean, "TINYINT": SQLTinyInt, "SMALLINT": SQLSmallInt, "INT": SQLInt,
			"INTEGER": SQLInt, "BIGINT": SQLBigInt, "FLOAT": SQLFloat, "DOUBLE": SQLDouble,
			"DATE": SQLDate, "STRING": SQLVarChar, "BYTES": SQLVarBinary,
		}[name]
		if name == "STRING" || name == "BYTES" {
			t.Length = SQLMaxLength
		}
		return t, nil
	case "CHAR", "CHARACTER", "VARCHAR", "BINARY", "VARBINARY":
		if name == "CHARACTER" {
			name = "CHAR"
		}
		if !noRest() {
			return bad("unexpected %q after %s", strings.Join(rest, " "), name)
		}
		t.Root = map[string]SQLTypeRoot{"CHAR": SQLChar, "VARCHAR": SQLVarChar, "BINARY": SQLBinary, "VARBINARY": SQLVarBinary}[name]
		t.Length = 1
		if args != nil {
			if len(args) != 1 {
				return bad("%s takes one length", name)
			}
			if args[0] < 1 || args[0] > SQLMaxLength {
				return bad("length %d out of range 1..%d", args[0], SQLMaxLength)
			}
			t.Length = args[0]
		}
		return t, nil
	case "TIME", "TIMESTAMP", "TIMESTAMP_LTZ":
		t.Root = map[string]SQLTypeRoot{"TIME": SQLTime, "TIMESTAMP": SQLTimestamp, "TIMESTAMP_LTZ": SQLTimestampLTZ}[name]
		t.Precision = 6
		if name == "TIME" {
			t.Precision = 0
		}
		if args != nil {
			if len(args) != 1 {
				return bad("%s takes one precision", name)
			}
			if args[0] < 0 || args[0] > SQLMaxTimePrecision {
				return bad("precision %d out of range 0..%d", args[0], SQLMaxTimePrecision)
			}
			t.Precision = args[0]
		}
		switch strings.Join(rest, " ") {
		case "":
		case "WITHOUT TIME ZONE":
			if name == "TIMESTAMP_LTZ" {
				return bad("TIMESTAMP_LTZ WITHOUT TIME ZONE")
			}
		case "WITH LOCAL TIME ZONE":
			if name != "TIMESTAMP" {
				return bad("%s WITH LOCAL TIME ZONE", name)
			}
			t.Root = SQLTimestampLTZ
		case "WITH TIME ZONE":
			return SQLType{}, &UnsupportedSQLTypeError{Name: strings.TrimSpace(s)}
		default:
			return bad("unexpected %q after %s", strings.Join(rest, " "), name)
		}
		return t, nil
	case "DECIMAL", "DEC", "NUMERIC":
		if !noRest() {
			return bad("unexpected %q after %s", strings.Join(rest, " "), name)
		}
		t.Root = SQLDecimal
		t.Precision, t.Scale = 10, 0
		switch len(args) {
		case 0:
			if args != nil {
				return bad("DECIMAL() needs a precision")
			}
		case 1:
			t.Precision = args[0]
		case 2:
			t.Precision, t.Scale = args[0], args[1]
		default:
			return bad("DECIMAL takes a precision and a scale")
		}
		if t.Precision < 1 || t.Precision > SQLMaxDecimalPrecision {
			return bad("precision %d out of range 1..%d", t.Precision, SQLMaxDecimalPrecision)
		}
		if t.Scale < 0 || t.Scale > t.Precision {
			return bad("scale %d out of range 0..%d", t.Scale, t.Precision)
		}
		return t, nil
	}
	return SQLType{}, fmt.Errorf("unknown SQL type %s: want %s", quote.Clip(s), supportedSQLTypes)
}

// ParseSQLTypes parses a comma-separated list of SQL types, such as
// "BIGINT, STRING, DECIMAL(10, 2)": commas inside parentheses or angle
// brackets belong to their type.
func ParseSQLTypes(s string) ([]SQLType, error) {
	var out []SQLType
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '(', '<':
				depth++
				continue
			case ')', '>':
				depth--
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		t, err := ParseSQLType(s[start:i])
		if err != nil {
			return nil, fmt.Errorf("key column %d: %w", len(out), err)
		}
		out = append(out, t)
		start = i + 1
	}
	return out, nil
}

// sqlTypeWords splits a type into upper-case words, keeping a parenthesised
// argument list or an angle-bracketed one as its own word.
func sqlTypeWords(s string) []string {
	var words []string
	s = strings.TrimSpace(s)
	for len(s) > 0 {
		switch c := s[0]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			s = s[1:]
		case c == '(' || c == '<':
			closer := byte(')')
			if c == '<' {
				closer = '>'
			}
			end := strings.LastIndexByte(s, closer)
			if c == '(' {
				end = strings.IndexByte(s, closer)
			}
			if end < 0 {
				end = len(s) - 1
			}
			if c == '<' && len(words) > 0 {
				// ARRAY<INT> stays one word, so it is refused by name.
				words[len(words)-1] += strings.ToUpper(s[:end+1])
			} else {
				words = append(words, strings.ToUpper(s[:end+1]))
			}
			s = s[end+1:]
		default:
			i := strings.IndexAny(s, " \t\n\r(<")
			if i < 0 {
				i = len(s)
			}
			words = append(words, strings.ToUpper(s[:i]))
			s = s[i:]
		}
	}
	return words
}

// splitTypeArgs returns the type name, its integer arguments (nil when it
// has no parenthesised list) and the words after them.
func splitTypeArgs(words []string) (name string, args []int, rest []string, err error) {
	name, rest = words[0], words[1:]
	if len(rest) == 0 || !strings.HasPrefix(rest[0], "(") {
		return name, nil, rest, nil
	}
	list := rest[0]
	rest = rest[1:]
	if !strings.HasSuffix(list, ")") {
		return "", nil, nil, fmt.Errorf("unclosed parenthesis")
	}
	inner := strings.TrimSpace(list[1 : len(list)-1])
	args = []int{}
	if inner == "" {
		return name, args, rest, nil
	}
	for _, a := range strings.Split(inner, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(a))
		if err != nil {
			return "", nil, nil, fmt.Errorf("argument %q is not an integer", strings.TrimSpace(a))
		}
		args = append(args, v)
	}
	return name, args, rest, nil
}
