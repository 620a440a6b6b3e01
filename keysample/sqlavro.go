package keysample

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/quote"
)

// Flink's avro formats. avro (AvroRowDataDeserializationSchema) reads each
// record's binary Avro body with the schema of the table; avro-confluent
// (RegistryAvroDeserializationSchema, ConfluentSchemaRegistryCoder) reads a
// magic byte 0 and a 4-byte big-endian schema id, then the body written
// with that schema, which Avro resolves into the table's schema by field
// name. The values are then converted by each column's type
// (AvroToRowDataConverters). The body is read here by a small decoder of
// its own over the schema hamba/avro parses, which skips the fields that
// are not key columns and allocates nothing per record.

// avroNode is a compiled Avro schema.
type avroNode struct {
	kind     avro.Type
	size     int         // fixed
	items    *avroNode   // array items, map values
	branches []*avroNode // union
	fields   []*avroNode // record
	names    []string    // record field names
	logical  string
}

// avroRecord is a top-level record schema and where the key columns are in it.
type avroRecord struct {
	root     *avroNode
	keyField []int // per record field: the key position, or -1
	missing  []int // key positions with no field in the schema (read as null)
}

// avroFormat is the schema side of an avro or avro-confluent spec.
type avroFormat struct {
	confluent bool
	fixed     *avroRecord // the one schema, when there is no registry
	registry  SchemaSource

	mu   sync.Mutex
	byID map[uint32]avroByID
}

type avroByID struct {
	rec *avroRecord
	err error
}

func newAvroFormat(sp *sqlSpec, o SQLKeyOptions) (*avroFormat, error) {
	a := &avroFormat{confluent: sp.format == "avro-confluent", registry: o.Registry, byID: map[uint32]avroByID{}}
	schema := strings.TrimSpace(o.AvroSchema)
	if !a.confluent && o.Registry != nil {
		return nil, fmt.Errorf("format avro: a registry is read by the avro-confluent format only")
	}
	switch {
	case a.confluent && schema == "" && o.Registry == nil:
		return nil, fmt.Errorf("format avro-confluent: give the writer schema or a schema registry")
	case a.confluent && o.Registry != nil:
		if schema != "" {
			return nil, fmt.Errorf("format avro-confluent: give the writer schema or a schema registry, not both")
		}
		return a, nil
	case schema == "":
		root, err := deriveAvroSchema(sp)
		if err != nil {
			return nil, err
		}
		a.fixed, err = sp.avroRecordOf(root, "the schema Flink derives")
		return a, err
	}
	root, err := compileAvro(schema)
	if err != nil {
		return nil, fmt.Errorf("avro schema: %v", err)
	}
	if !a.confluent {
		// Flink reads the body with the schema it derives from the
		// table's columns: the writer's fields must be those columns.
		if len(root.names) != len(sp.cols) {
			return nil, fmt.Errorf("avro schema: %d fields, the table has %d columns; Flink's avro format reads the fields as the table's columns in order", len(root.names), len(sp.cols))
		}
		for i, n := range root.names {
			if n != sp.cols[i].name {
				return nil, fmt.Errorf("avro schema: field %d is %s, column %d is %s; Flink's avro format reads the fields as the table's columns in order", i+1, quote.Clip(n), i+1, sp.cols[i].name)
			}
		}
	}
	a.fixed, err = sp.avroRecordOf(root, "the avro schema")
	return a, err
}

// compileAvro parses a writer schema, which must be a record.
func compileAvro(schema string) (*avroNode, error) {
	s, err := avro.ParseWithCache(schema, "", &avro.SchemaCache{})
	if err != nil {
		return nil, err
	}
	n := compileAvroNode(s, map[avro.Schema]*avroNode{})
	if n.kind != avro.Record {
		return nil, fmt.Errorf("the schema is a %s, not a record", n.kind)
	}
	return n, nil
}

func compileAvroNode(s avro.Schema, seen map[avro.Schema]*avroNode) *avroNode {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	if n, ok := seen[s]; ok {
		return n
	}
	n := &avroNode{kind: s.Type()}
	seen[s] = n
	if l, ok := s.(avro.LogicalTypeSchema); ok && l.Logical() != nil {
		n.logical = string(l.Logical().Type())
	}
	switch s := s.(type) {
	case *avro.RecordSchema:
		n.kind = avro.Record
		for _, f := range s.Fields() {
			n.names = append(n.names, f.Name())
			n.fields = append(n.fields, compileAvroNode(f.Type(), seen))
		}
	case *avro.ArraySchema:
		n.items = compileAvroNode(s.Items(), seen)
	case *avro.MapSchema:
		n.items = compileAvroNode(s.Values(), seen)
	case *avro.UnionSchema:
		for _, b := range s.Types() {
			n.branches = append(n.branches, compileAvroNode(b, seen))
		}
	case *avro.FixedSchema:
		n.size = s.Size()
	}
	return n
}

// deriveAvroSchema builds the schema Flink's avro format reads a table
// with: a record of the columns in order, a nullable column a union of null
// and its type.
//
// Mirrors AvroSchemaConverter.convertToSchema (legacy timestamp mapping).
func deriveAvroSchema(sp *sqlSpec) (*avroNode, error) {
	root := &avroNode{kind: avro.Record}
	for _, c := range sp.cols {
		t, err := assign.ParseSQLType(c.typ)
		if k := c.keyPos; k >= 0 {
			t, err = sp.types[k], nil
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %v (give the Avro schema: skewscope derives Flink's schema only for the types of key columns)", c.name, err)
		}
		n := &avroNode{}
		switch t.Root {
		case assign.SQLBoolean:
			n.kind = avro.Boolean
		case assign.SQLTinyInt, assign.SQLSmallInt, assign.SQLInt, assign.SQLDate, assign.SQLTime:
			n.kind = avro.Int
		case assign.SQLBigInt, assign.SQLTimestamp, assign.SQLTimestampLTZ:
			n.kind = avro.Long
		case assign.SQLFloat:
			n.kind = avro.Float
		case assign.SQLDouble:
			n.kind = avro.Double
		case assign.SQLChar, assign.SQLVarChar:
			n.kind = avro.String
		default: // BINARY, VARBINARY, DECIMAL
			n.kind = avro.Bytes
		}
		if !t.NotNull {
			n = &avroNode{kind: avro.Union, branches: []*avroNode{{kind: avro.Null}, n}}
		}
		root.names = append(root.names, c.name)
		root.fields = append(root.fields, n)
	}
	return root, nil
}

// avroRecordOf places the key columns in a record schema and checks that
// each can be read as its column's type.
func (sp *sqlSpec) avroRecordOf(root *avroNode, what string) (*avroRecord, error) {
	r := &avroRecord{root: root, keyField: make([]int, len(root.names))}
	found := make([]bool, len(sp.key))
	for j, name := range root.names {
		r.keyField[j] = -1
		if i, ok := sp.byName[name]; ok && sp.cols[i].keyPos >= 0 {
			k := sp.cols[i].keyPos
			r.keyField[j], found[k] = k, true
			if !avroReadable(root.fields[j], sp.types[k]) {
				return nil, fmt.Errorf("column %s %s: %s has it as %s, which Flink does not read as %s", name, sp.types[k].Text(), what, avroTypeName(root.fields[j]), sp.types[k].Text())
			}
		}
	}
	for k, ok := range found {
		if !ok {
			if sp.types[k].NotNull {
				return nil, fmt.Errorf("column %s %s: no field of %s", sp.cols[sp.key[k]].name, sp.types[k].Text(), what)
			}
			r.missing = append(r.missing, k)
		}
	}
	return r, nil
}

func avroTypeName(n *avroNode) string {
	if n.kind == avro.Union {
		var b []string
		for _, x := range n.branches {
			b = append(b, avroTypeName(x))
		}
		return "[" + strings.Join(b, ", ") + "]"
	}
	if n.logical != "" {
		return string(n.kind) + " (" + n.logical + ")"
	}
	return string(n.kind)
}

// avroReadable reports whether some branch of n is read as type t: the
// Avro type Flink's schema has for t, or one that Avro's schema resolution
// promotes to it (int to long, float or double; long to float or double;
// float to double; string and bytes to each other).
func avroReadable(n *avroNode, t assign.SQLType) bool {
	if n.kind == avro.Union {
		for _, b := range n.branches {
			if b.kind != avro.Null && avroReadable(b, t) {
				return true
			}
		}
		return false
	}
	k := n.kind
	switch t.Root {
	case assign.SQLBoolean:
		return k == avro.Boolean
	case assign.SQLTinyInt, assign.SQLSmallInt, assign.SQLInt, assign.SQLDate, assign.SQLTime:
		return k == avro.Int
	case assign.SQLBigInt, assign.SQLTimestamp, assign.SQLTimestampLTZ:
		return k == avro.Int || k == avro.Long
	case assign.SQLFloat:
		return k == avro.Int || k == avro.Long || k == avro.Float
	case assign.SQLDouble:
		return k == avro.Int || k == avro.Long || k == avro.Float || k == avro.Double
	case assign.SQLChar, assign.SQLVarChar:
		return k == avro.String || k == avro.Bytes
	case assign.SQLBinary, assign.SQLVarBinary:
		return k == avro.String || k == avro.Bytes || k == avro.Fixed
	case assign.SQLDecimal:
		return k == avro.Bytes || k == avro.Fixed
	}
	return false
}

// recordFor returns the record schema of a schema id, fetched once from
// the registry (a failure is remembered too, so that a missing schema
// costs one request).
func (a *avroFormat) recordFor(sp *sqlSpec, id uint32) (*avroRecord, error) {
	if a.fixed != nil {
		return a.fixed, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.byID[id]; ok {
		return e.rec, e.err
	}
	rec, err := a.fetch(sp, id)
	if len(a.byID) < 10_000 {
		a.byID[id] = avroByID{rec, err}
	}
	return rec, err
}

func (a *avroFormat) fetch(sp *sqlSpec, id uint32) (*avroRecord, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := a.registry.SchemaByID(ctx, int(id))
	if err != nil {
		return nil, &SQLKeyError{Reason: fmt.Sprintf("schema id %d: the registry has no schema for it: %v", id, err)}
	}
	if s.Type != sr.TypeAvro {
		return nil, &SQLKeyError{Reason: fmt.Sprintf("schema id %d: a %s schema, not Avro", id, s.Type)}
	}
	if len(s.References) > 0 {
		return nil, &SQLKeyError{Reason: fmt.Sprintf("schema id %d: it references other schemas, which are not followed", id)}
	}
	root, err := compileAvro(s.Schema)
	if err != nil {
		return nil, &SQLKeyError{Reason: fmt.Sprintf("schema id %d: not an Avro record schema: %v", id, err)}
	}
	rec, err := sp.avroRecordOf(root, fmt.Sprintf("schema id %d", id))
	if err != nil {
		return nil, &SQLKeyError{Reason: err.Error()}
	}
	return rec, nil
}

// avroReader reads Avro's binary encoding.
type avroReader struct {
	b   []byte
	i   int
	bad string // the first error's reason
}

func (r *avroReader) fail(reason string) {
	if r.bad == "" {
		r.bad = reason
	}
	r.i = len(r.b)
}

// long reads a zig-zag varint of at most 10 bytes.
func (r *avroReader) long() int64 {
	var u uint64
	for shift := uint(0); shift < 70; shift += 7 {
		if r.i >= len(r.b) {
			r.fail("it ends early")
			return 0
		}
		c := r.b[r.i]
		r.i++
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1)
		}
	}
	r.fail("a varint is longer than 10 bytes")
	return 0
}

func (r *avroReader) int() int64 {
	v := r.long()
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.fail("an int is out of range")
	}
	return v
}

func (r *avroReader) take(n int64) []byte {
	if n < 0 || n > int64(len(r.b)-r.i) {
		r.fail("it ends early")
		return nil
	}
	b := r.b[r.i : r.i+int(n)]
	r.i += int(n)
	return b
}

// skip reads past one value of n.
func (r *avroReader) skip(n *avroNode, depth int) {
	if depth > 100 {
		r.fail("it nests deeper than 100")
		return
	}
	switch n.kind {
	case avro.Null:
	case avro.Boolean:
		r.take(1)
	case avro.Int, avro.Long, avro.Enum:
		r.long()
	case avro.Float:
		r.take(4)
	case avro.Double:
		r.take(8)
	case avro.String, avro.Bytes:
		r.take(r.long())
	case avro.Fixed:
		r.take(int64(n.size))
	case avro.Record, avro.Error:
		for _, f := range n.fields {
			r.skip(f, depth+1)
		}
	case avro.Union:
		if b := r.branch(n); b != nil {
			r.skip(b, depth+1)
		}
	case avro.Array, avro.Map:
		for r.bad == "" {
			c := r.long()
			if c == 0 {
				return
			}
			if c < 0 {
				r.take(r.long()) // a block with its size in bytes
				continue
			}
			// Every item takes a byte but a null's (or an empty
			// record's): a count beyond the bytes left, or beyond a
			// million zero-byte items, is not a record Flink reads.
			if c > int64(len(r.b)-r.i) && (c > 1<<20 || n.kind == avro.Map || avroWidth(n.items, 0) != 0) {
				r.fail("a block count is larger than the record")
				return
			}
			for ; c > 0 && r.bad == ""; c-- {
				if n.kind == avro.Map {
					r.take(r.long())
				}
				r.skip(n.items, depth+1)
			}
		}
	}
}

// avroBytes reads a bytes, string or fixed value.
func (r *avroReader) avroBytes(n *avroNode) []byte {
	if n.kind == avro.Fixed {
		return r.take(int64(n.size))
	}
	return r.take(r.long())
}

func (r *avroReader) branch(n *avroNode) *avroNode {
	i := r.long()
	if r.bad != "" {
		return nil
	}
	if i < 0 || i >= int64(len(n.branches)) {
		r.fail("a union index is out of range")
		return nil
	}
	return n.branches[i]
}

// decodeAvro reads the key columns of one Avro record.
//
// Mirrors AvroRowDataDeserializationSchema.deserialize and, for
// avro-confluent, RegistryAvroDeserializationSchema.deserialize with
// ConfluentSchemaRegistryCoder.readSchema.
func (sp *sqlSpec) decodeAvro(st *sqlState, src []byte) error {
	if src == nil {
		return sp.skipped("the " + sp.partName() + " is null")
	}
	a := sp.avro
	body := src
	var id uint32
	if a.confluent {
		if len(src) < 5 || src[0] != 0 {
			return &SQLKeyError{Reason: "the " + sp.partName() + " is not in the Confluent wire format: no magic byte 0 and schema id (Flink's job fails on it)"}
		}
		id = binary.BigEndian.Uint32(src[1:5])
		body = src[5:]
	}
	rec, err := a.recordFor(sp, id)
	if err != nil {
		return err
	}
	r := &st.avroR
	*r = avroReader{b: body}
	for j, f := range rec.root.fields {
		k := rec.keyField[j]
		if k < 0 {
			r.skip(f, 0)
		} else {
			sp.avroValue(r, &st.vals[k], k, f)
		}
		if r.bad != "" {
			what := "the Avro body does not match "
			if a.confluent {
				what += fmt.Sprintf("schema id %d", id)
			} else {
				what += "the schema"
			}
			return &SQLKeyError{Reason: fmt.Sprintf("%s at field %s: %s (Flink's job fails on it)", what, rec.root.names[j], r.bad)}
		}
	}
	for _, k := range rec.missing {
		st.vals[k].null = true
	}
	return nil
}

// avroValue reads one key column's value.
//
// Mirrors AvroToRowDataConverters.createConverter: TINYINT and SMALLINT
// are the int cut to their width (byteValue, shortValue), a string is
// new String(utf8, UTF_8) (malformed bytes become U+FFFD), TIMESTAMP(p <= 3)
// is epoch milliseconds and TIMESTAMP(p <= 6) microseconds (or as the
// writer's timestamp-millis or timestamp-micros says), BYTES and DECIMAL
// are read from bytes or a fixed, and DECIMAL is the unscaled two's
// complement bytes at the column's scale (null when it has more digits than
// the column: DecimalData.fromUnscaledBytes).
func (sp *sqlSpec) avroValue(r *avroReader, v *sqlVal, k int, n *avroNode) {
	if n.kind == avro.Union {
		if n = r.branch(n); n == nil {
			return
		}
	}
	if n.kind == avro.Null {
		v.null = true
		return
	}
	t := &sp.types[k]
	if !avroReadable(n, *t) {
		r.skip(n, 0)
		r.fail(fmt.Sprintf("a %s, which Flink does not read as %s", avroTypeName(n), t.Text()))
		return
	}
	var x int64
	switch n.kind {
	case avro.Int:
		x = r.int()
	case avro.Long:
		x = r.long()
	}
	switch t.Root {
	case assign.SQLBoolean:
		if b := r.take(1); len(b) == 1 && b[0] == 1 {
			v.i = 1
		}
	case assign.SQLTinyInt:
		v.i = int64(int8(x))
	case assign.SQLSmallInt:
		v.i = int64(int16(x))
	case assign.SQLInt, assign.SQLBigInt, assign.SQLDate, assign.SQLTime:
		v.i = x
	case assign.SQLFloat:
		switch n.kind {
		case avro.Float:
			if b := r.take(4); b != nil {
				v.i = int64(binary.LittleEndian.Uint32(b))
			}
		default:
			v.i = int64(math.Float32bits(float32(x)))
		}
	case assign.SQLDouble:
		switch n.kind {
		case avro.Double:
			if b := r.take(8); b != nil {
				v.i = int64(binary.LittleEndian.Uint64(b))
			}
		case avro.Float:
			if b := r.take(4); b != nil {
				v.i = floatBits(float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), 64)
			}
		default:
			v.i = int64(math.Float64bits(float64(x)))
		}
	case assign.SQLTimestamp, assign.SQLTimestampLTZ:
		// The writer's logical type says what the long counts; without
		// one, the column's precision does (as the schema Flink derives
		// writes it).
		micros := t.Precision > 3
		switch n.logical {
		case "timestamp-millis", "local-timestamp-millis":
			micros = false
		case "timestamp-micros", "local-timestamp-micros":
			micros = true
		}
		if micros {
			v.i, v.nano = floorDiv(x, 1000), int32(x-floorDiv(x, 1000)*1000)*1000
		} else {
			v.i = x
		}
	case assign.SQLChar, assign.SQLVarChar:
		b := r.take(r.long())
		if utf8.Valid(b) {
			v.b = b
		} else {
			v.buf = append(v.buf[:0], assign.JavaText(string(b))...)
			v.b = v.buf
		}
	case assign.SQLBinary, assign.SQLVarBinary:
		v.b = r.avroBytes(n)
	case assign.SQLDecimal:
		b := r.avroBytes(n)
		if r.bad != "" {
			return
		}
		if len(b) == 0 {
			r.fail("a decimal has no bytes")
			return
		}
		v.dec.SetBytes(b)
		if b[0]&0x80 != 0 { // two's complement
			v.dec.Sub(&v.dec, new(big.Int).Lsh(bigOne, uint(8*len(b))))
		}
		var abs big.Int
		abs.Abs(&v.dec)
		if abs.Cmp(new(big.Int).Exp(bigTen, big.NewInt(int64(t.Precision)), nil)) >= 0 {
			v.null = true
		}
	}
}

var bigOne = big.NewInt(1)

// avroWidth is the encoded size of a value of n when it is always 0 bytes
// (null, a record of nulls), else -1.
func avroWidth(n *avroNode, depth int) int {
	switch n.kind {
	case avro.Null:
		return 0
	case avro.Record, avro.Error:
		for _, f := range n.fields {
			if depth > 100 || avroWidth(f, depth+1) != 0 {
				return -1
			}
		}
		return 0
	case avro.Fixed:
		if n.size == 0 {
			return 0
		}
	}
	return -1
}
