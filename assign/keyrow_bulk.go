package assign

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skewscope/skewscope/internal/quote"
)

// SetKeyText writes a whole key row from one line of text, after a Reset:
// for a key of one column, the value's text as AppendText reads it; for a
// key of several, a JSON array with one element per column in key order,
// each a string or a number (read by AppendText; a string of a CHAR or
// VARCHAR column keeps an escaped lone surrogate, as a JSON record would
// give it to Flink) or null. A key of one column can be given as such an
// array too, which is the only way to give it a null: the text "null" is a
// string.
//
// The error names the column whose value does not fit, or says how the
// array is malformed.
func (e *KeyRowEncoder) SetKeyText(text string) error {
	e.Reset()
	if len(e.types) == 1 && !isKeyArray(text) {
		return e.AppendText(text)
	}
	if !isKeyArray(text) {
		return fmt.Errorf("%s: a key of %d columns is a JSON array of %d values, such as %s", quote.Clip(text), len(e.types), len(e.types), e.exampleArray())
	}
	vals, err := decodeKeyArray(text)
	if err != nil {
		return fmt.Errorf("%s: %v", quote.Clip(text), err)
	}
	if len(vals) != len(e.types) {
		return fmt.Errorf("%s: %d values for a key of %d columns", quote.Clip(text), len(vals), len(e.types))
	}
	for _, v := range vals {
		var err error
		switch v := v.(type) {
		case nil:
			err = e.AppendNull()
		case JavaString:
			if r := e.roots[e.next]; r == SQLChar || r == SQLVarChar {
				err = e.AppendJavaString(v)
			} else {
				err = e.AppendText(v.String())
			}
		case json.Number:
			err = e.AppendText(string(v))
		case bool:
			if v {
				err = e.AppendText("true")
			} else {
				err = e.AppendText("false")
			}
		default:
			err = e.fail(&e.types[e.next], "want a string, a number or null")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// isKeyArray reports whether text is given as a JSON array: it starts
// with '[' once leading spaces are skipped.
func isKeyArray(text string) bool {
	return strings.HasPrefix(strings.TrimLeft(text, " \t"), "[")
}

// exampleArray is a JSON array of placeholder values of the key's types,
// for messages.
func (e *KeyRowEncoder) exampleArray() string {
	parts := make([]string, len(e.types))
	for i, r := range e.roots {
		switch r {
		case SQLChar, SQLVarChar:
			parts[i] = `"a"`
		case SQLBinary, SQLVarBinary:
			parts[i] = `"0a1b"`
		case SQLBoolean:
			parts[i] = "true"
		case SQLDate:
			parts[i] = `"2026-01-31"`
		case SQLTime:
			parts[i] = `"12:30:00"`
		case SQLTimestamp:
			parts[i] = `"2026-01-31 12:30:00"`
		case SQLTimestampLTZ:
			parts[i] = `"2026-01-31 12:30:00Z"`
		default:
			parts[i] = "1"
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// decodeKeyArray reads a key row's JSON array: strings as JavaString,
// numbers as json.Number, booleans and null as themselves. It is the tuple
// keys' reading (decodeTupleJSON) with its messages.
func decodeKeyArray(text string) ([]any, error) {
	vals, err := decodeTupleJSON(text)
	if err != nil {
		return nil, fmt.Errorf("not a JSON array of values: %v", err)
	}
	for i, v := range vals {
		if _, ok := v.(map[string]any); ok {
			return nil, fmt.Errorf("value %d is a JSON object; a key column holds a string, a number or null", i+1)
		}
		if _, ok := v.([]any); ok {
			return nil, fmt.Errorf("value %d is a JSON array; a key column holds a string, a number or null", i+1)
		}
	}
	return vals, nil
}

// RouteKeyRows routes Flink SQL keys given as text (one key per element, as
// SetKeyText reads it) in one call: each key's BinaryRowData.hashCode into
// out.Hashes, its key group (MathUtils.murmurHash of that hash, mod maxP)
// into out.KeyGroups and, when p > 0, its subtask into out.Subtasks, over
// every core for a long list. The first key that does not fit its columns
// is returned as a *KeyError with its index.
//
// Mirrors, per key, the planner's key projection
// (KeySelectorUtil.getRowDataSelector), BinaryRowData.hashCode and
// KeyGroupRangeAssignment.assignKeyToParallelOperator.
func RouteKeyRows(types []SQLType, keys []string, maxP, p int, out Routes) error {
	if _, err := NewKeyRowEncoder(types...); err != nil {
		return err
	}
	r, err := newRouter(len(keys), maxP, p, out)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	first := &KeyError{Index: len(keys)}
	var bound atomic.Int64 // no chunk at or after the first bad key needs to run
	bound.Store(int64(len(keys)))
	runChunks(len(keys), func(lo, hi int) {
		if int64(lo) >= bound.Load() {
			return
		}
		enc, _ := NewKeyRowEncoder(types...) // checked above
		for i := lo; i < hi; i++ {
			err := enc.SetKeyText(keys[i])
			var h int32
			if err == nil {
				h, err = enc.HashCode()
			}
			if err != nil {
				mu.Lock()
				if i < first.Index {
					first.Index, first.Err = i, err
					bound.Store(int64(i))
				}
				mu.Unlock()
				return
			}
			r.put(i, h)
		}
	})
	if first.Err != nil {
		return first
	}
	return nil
}

// FormatKeyRow writes a key row's bytes as lines of 8 bytes in hex, each
// named by what it holds: the header and null bitset, the slot of each
// column (names[i], or "column i" when names is short), and the variable
// part. It is the row Bytes returns, shown the way the key lookup's steps
// show it.
func FormatKeyRow(row []byte, arity int, names []string) []string {
	nb := keyRowBitSetWidth(arity)
	var out []string
	var b bytes.Buffer
	for off := 0; off+8 <= len(row); off += 8 {
		b.Reset()
		fmt.Fprintf(&b, "%4d  % x  ", off, row[off:off+8])
		switch {
		case off < nb:
			b.WriteString("header and null bits")
		case off < nb+8*arity:
			i := (off - nb) / 8
			if i < len(names) && names[i] != "" {
				b.WriteString(names[i])
			} else {
				fmt.Fprintf(&b, "column %d", i)
			}
		default:
			b.WriteString("variable part")
		}
		out = append(out, b.String())
	}
	return out
}
