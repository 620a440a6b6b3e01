package assign

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/internal/quote"
)

// Kind is the Java type of a key (or of one field of a tuple key).
type Kind string

// The key types skewscope hashes exactly like the JVM.
const (
	KindString  Kind = "string"  // java.lang.String
	KindInt     Kind = "int"     // java.lang.Integer
	KindLong    Kind = "long"    // java.lang.Long
	KindBoolean Kind = "boolean" // java.lang.Boolean
	KindShort   Kind = "short"   // java.lang.Short
	KindByte    Kind = "byte"    // java.lang.Byte
	KindChar    Kind = "char"    // java.lang.Character (one UTF-16 code unit)
	KindFloat   Kind = "float"   // java.lang.Float
	KindDouble  Kind = "double"  // java.lang.Double
	KindTuple   Kind = "tuple"   // org.apache.flink.api.java.tuple.TupleN
)

var scalarKinds = map[string]Kind{
	"string": KindString, "int": KindInt, "integer": KindInt, "long": KindLong,
	"boolean": KindBoolean, "short": KindShort, "byte": KindByte, "char": KindChar,
	"character": KindChar, "float": KindFloat, "double": KindDouble,
}

// MaxTupleArity is the largest Flink tuple, Tuple25.
const MaxTupleArity = 25

// KeyType describes the object a keyBy KeySelector returns: a scalar of one
// Kind, or a Flink tuple whose fields are scalars.
type KeyType struct {
	Kind   Kind
	Fields []Kind // for KindTuple only
}

// String returns the canonical spelling, which ParseKeyType accepts:
// "string", "long", "tuple<string,int>".
func (t KeyType) String() string {
	if t.Kind != KindTuple {
		return string(t.Kind)
	}
	fs := make([]string, len(t.Fields))
	for i, f := range t.Fields {
		fs[i] = string(f)
	}
	return "tuple<" + strings.Join(fs, ",") + ">"
}

// ParseKeyType parses a key type: one of string, int (integer), long,
// boolean, short, byte, char, float, double, or tuple<T1,...,Tn> of those
// with 1 <= n <= 25. Matching is case-insensitive and ignores spaces, so
// "Tuple2<String, Integer>" is accepted too.
func ParseKeyType(s string) (KeyType, error) {
	norm := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	if k, ok := scalarKinds[norm]; ok {
		return KeyType{Kind: k}, nil
	}
	open := strings.IndexByte(norm, '<')
	if open < 0 || !strings.HasSuffix(norm, ">") || !strings.HasPrefix(norm, "tuple") {
		return KeyType{}, fmt.Errorf("unknown key type %q: want string, int, long, boolean, short, byte, char, float, double or tuple<...> of those", s)
	}
	arity := norm[len("tuple"):open]
	inner := norm[open+1 : len(norm)-1]
	if inner == "" {
		return KeyType{}, fmt.Errorf("key type %q: a tuple needs at least one field", s)
	}
	parts := strings.Split(inner, ",")
	if len(parts) > MaxTupleArity {
		return KeyType{}, fmt.Errorf("key type %q: Flink tuples have at most %d fields", s, MaxTupleArity)
	}
	if arity != "" && arity != strconv.Itoa(len(parts)) {
		return KeyType{}, fmt.Errorf("key type %q: Tuple%s with %d fields", s, arity, len(parts))
	}
	t := KeyType{Kind: KindTuple, Fields: make([]Kind, len(parts))}
	for i, p := range parts {
		k, ok := scalarKinds[p]
		if !ok {
			return KeyType{}, fmt.Errorf("key type %q: field %d has unknown type %q", s, i, p)
		}
		t.Fields[i] = k
	}
	return t, nil
}

// HashKey returns the Java hashCode of the key written as text for type t.
// Scalars are written as Java would print them ("42", "-7", "true", "1.5");
// a char is a single UTF-16 code unit, given as one BMP character. A tuple
// key is a JSON array with one element per field, where null is Java null
// (hash 0) and numbers may be JSON numbers or strings:
// ["customer-42", 7]; its strings are decoded as Jackson would, so an
// escaped lone surrogate ("\ud800") stays one UTF-16 code unit.
func HashKey(t KeyType, text string) (int32, error) {
	if t.Kind != KindTuple {
		return hashScalar(t.Kind, text)
	}
	fields, err := decodeTupleJSON(text)
	if errors.Is(err, errTrailing) {
		return 0, fmt.Errorf("tuple key %s: %v", quote.Clip(text), err)
	}
	if err != nil {
		return 0, fmt.Errorf("tuple key %s: want a JSON array like [\"a\", 1]: %v", quote.Clip(text), err)
	}
	return HashTuple(t, fields)
}

// HashTuple hashes a tuple key given as decoded JSON values (string,
// JavaString, json.Number, float64, bool or nil per field).
func HashTuple(t KeyType, fields []any) (int32, error) {
	if t.Kind != KindTuple {
		return 0, fmt.Errorf("key type %s is not a tuple", t)
	}
	if len(fields) != len(t.Fields) {
		return 0, fmt.Errorf("tuple key has %d fields, type %s has %d", len(fields), t, len(t.Fields))
	}
	hs := make([]int32, len(fields))
	for i, f := range fields {
		var text string
		switch v := f.(type) {
		case nil:
			continue // Java null field: hash 0
		case string:
			text = v
		case JavaString:
			h, err := HashKeyJava(KeyType{Kind: t.Fields[i]}, v)
			if err != nil {
				return 0, fmt.Errorf("tuple field %d: %w", i, err)
			}
			hs[i] = h
			continue
		case json.Number:
			text = v.String()
		case float64:
			text = strconv.FormatFloat(v, 'g', -1, 64)
		case bool:
			text = strconv.FormatBool(v)
		default:
			return 0, fmt.Errorf("tuple field %d: unsupported JSON value %T", i, f)
		}
		h, err := hashScalar(t.Fields[i], text)
		if err != nil {
			return 0, fmt.Errorf("tuple field %d: %w", i, err)
		}
		hs[i] = h
	}
	return TupleHashCode(hs...), nil
}

func hashScalar(k Kind, text string) (int32, error) {
	switch k {
	case KindString:
		return StringHashCode(text), nil
	case KindInt, KindShort, KindByte:
		bitSize := map[Kind]int{KindInt: 32, KindShort: 16, KindByte: 8}[k]
		v, err := strconv.ParseInt(strings.TrimSpace(text), 10, bitSize)
		if err != nil {
			return 0, fmt.Errorf("%s key %s: %w", k, quote.Clip(text), numErr(err, bitSize))
		}
		return IntHashCode(int32(v)), nil
	case KindLong:
		v, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("long key %s: %w", quote.Clip(text), numErr(err, 64))
		}
		return LongHashCode(v), nil
	case KindBoolean:
		switch strings.TrimSpace(text) {
		case "true":
			return BooleanHashCode(true), nil
		case "false":
			return BooleanHashCode(false), nil
		}
		return 0, fmt.Errorf("boolean key %s: want true or false", quote.Clip(text))
	case KindChar:
		rs := []rune(text)
		if len(rs) != 1 || rs[0] > 0xFFFF {
			return 0, fmt.Errorf("char key %s: want exactly one UTF-16 code unit (one character of the Basic Multilingual Plane)", quote.Clip(text))
		}
		return int32(rs[0]), nil
	case KindFloat:
		v, err := strconv.ParseFloat(strings.TrimSpace(text), 32)
		if err != nil {
			return 0, fmt.Errorf("float key %s: not a number", quote.Clip(text))
		}
		return FloatHashCode(float32(v)), nil
	case KindDouble:
		v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil {
			return 0, fmt.Errorf("double key %s: not a number", quote.Clip(text))
		}
		return DoubleHashCode(v), nil
	}
	return 0, fmt.Errorf("unknown key kind %q", k)
}

// FloatHashCode returns Java's Float.hashCode: floatToIntBits, which maps
// every NaN to the canonical 0x7fc00000 and keeps -0.0 distinct from 0.0.
func FloatHashCode(v float32) int32 {
	if v != v {
		return 0x7fc00000
	}
	return int32(math.Float32bits(v))
}

// DoubleHashCode returns Java's Double.hashCode: bits = doubleToLongBits(v)
// (every NaN canonical 0x7ff8000000000000), then (int)(bits ^ (bits >>> 32)).
func DoubleHashCode(v float64) int32 {
	if v != v {
		return LongHashCode(0x7ff8000000000000)
	}
	return LongHashCode(int64(math.Float64bits(v)))
}

func numErr(err error, bitSize int) error {
	if errors.Is(err, strconv.ErrRange) {
		lo, hi := -(int64(1) << (bitSize - 1)), int64(1)<<(bitSize-1)-1
		return fmt.Errorf("out of range %d..%d", lo, hi)
	}
	return errors.New("not an integer")
}

// ErrNullKey is Flink's NullPointerException for a null key.
//
//lint:ignore ST1005 Flink's own message, word for word: the golden vectors compare it
var ErrNullKey = errors.New("Assigned key must not be null!")
