package views

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"iter"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/a-h/templ"
)

// The live parts of a page. A live page's model holds every figure that
// changes between updates as one of the types below, with a key that names
// its element (data-live) and is stable while the page's shape is. The
// component renders the model; UpdateOf gathers the same values into the
// page's websocket update. So a figure is formatted once, by the builder
// that made the model, and the browser applies an update by key, never by
// position.

// Text is a live figure's text.
type Text struct{ Key, Text string }

// Copy is a live figure shown a second time on its page: it has the key of
// the Text it repeats, is rendered with data-live-copy and is updated with
// that Text. UpdateOf leaves it out, since the figure is already there.
type Copy struct{ Key, Text string }

// Meter is a meter's value attribute, written by the builder ("0.534").
type Meter struct{ Key, Value string }

// LiveAge is the time a figure's data was collected: the browser counts its
// age up from At (Unix ms, 0 never); Text is the age at rendering.
type LiveAge struct {
	Key  string
	At   int64
	Text string
}

// AtAttr is LiveAge.At as the data-at attribute.
func (a LiveAge) AtAttr() string { return strconv.FormatInt(a.At, 10) }

// Spark is a sparkline's samples, oldest first; a negative sample is
// unknown (a gap). The builder writes no NaN or infinity. Max is the top of
// its y range, shared by the sparklines of its column, and Label its
// aria-label and title (what it covers and its scale). A sparkline's times
// are its table's SparkAxis, a Spark too: Values the samples' times (Unix
// seconds), no Max or Label.
type Spark struct {
	Key    string
	Values []float64
	Max    float64
	Label  string
}

// MaxAttr is Max as the data-spark-max attribute.
func (s Spark) MaxAttr() string { return strconv.FormatFloat(s.Max, 'g', -1, 64) }

// JSON is the samples as the data-spark attribute.
func (s Spark) JSON() string {
	b, err := json.Marshal(s.Values)
	if err != nil {
		return "[]"
	}
	return string(b)
}

// Live is the head of a live page's model: the websocket topic the page
// subscribes to, its shape (a layout other than the page's needs the page
// re-rendered) and whether its data are stale.
type Live struct {
	Topic, Shape string
	Stale        bool
}

// LiveHead returns the head of the page model that embeds it.
func (l Live) LiveHead() Live { return l }

// LivePage is a live page's model: a struct embedding Live.
type LivePage interface{ LiveHead() Live }

// LiveCell is a partition cell's live part: its colour step (0–3, data-l on
// the element with the key), its text (the element's <i>), its state class
// (one class of the element, also in its data-st) and its reader's reading,
// the title of its <i> ("" none: the element's own title shows).
type LiveCell struct {
	Key   string
	Level int
	Text  string
	State string
	Title string
}

// Update is a live page's websocket update. Each part maps data-live keys
// to values: T texts (textContent), C partition cells (their level, text,
// state class and title, sent in the order of their keys), M meter values,
// Ages data times (data-at), Spark sparklines (whole, or with SparkAppend
// the samples to append). A key the page does not have, or a Shape other
// than its data-shape, makes
// the page fetch its new rendering instead. The parts keep the page's
// order and are written as JSON objects in that order.
type Update struct {
	Shape string
	Stale bool
	T     []Entry[string]
	C     []Entry[LiveCell]
	M     []Entry[string]
	Ages  []Entry[int64]
	Spark []Entry[Spark]
	// SparkAppend makes Spark's samples the ones to append after the
	// sample of time SparkAfter (Unix seconds, on the axis of times), then
	// keeping the last SparkKeep of each sparkline; a page whose last
	// time is another asks for the whole series (see ChangeSince).
	SparkAppend bool
	SparkAfter  float64
	SparkKeep   int
}

// Entry is one keyed value of an update.
type Entry[V any] struct {
	Key   string
	Value V
}

// Keys returns every key of the update.
func (u Update) Keys() []string {
	var ks []string
	for k := range u.keys() {
		ks = append(ks, k)
	}
	return ks
}

// keys yields every key of the update: its texts', cells', meters', ages'
// and sparklines', in that order.
func (u Update) keys() iter.Seq[string] {
	return func(yield func(string) bool) {
		_ = yieldKeys(u.T, yield) && yieldKeys(u.C, yield) && yieldKeys(u.M, yield) &&
			yieldKeys(u.Ages, yield) && yieldKeys(u.Spark, yield)
	}
}

// yieldKeys yields the entries' keys; false when yield stopped.
func yieldKeys[V any](es []Entry[V], yield func(string) bool) bool {
	for _, e := range es {
		if !yield(e.Key) {
			return false
		}
	}
	return true
}

// MarshalJSON writes the update as the page script reads it:
// {"shape":…,"stale":…,"t":{key:text},"c":{cells, see appendCells},
// "m":{key:value},"ages":{key:ms},"spark":{key:[[samples],max,label]}}, empty parts left
// out but "t".
func (u Update) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 64+32*(len(u.T)+len(u.C)))
	b = append(b, `{"shape":`...)
	b = strconv.AppendQuote(b, u.Shape)
	b = append(b, `,"stale":`...)
	b = strconv.AppendBool(b, u.Stale)
	var err error
	b = appendPart(b, "t", u.T, true, func(b []byte, v string) []byte { return appendString(b, v) })
	b = appendCells(b, u.C)
	b = appendPart(b, "m", u.M, false, func(b []byte, v string) []byte { return appendString(b, v) })
	b = appendPart(b, "ages", u.Ages, false, func(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) })
	if u.SparkAppend && len(u.Spark) > 0 {
		b = append(b, `,"after":`...)
		b = strconv.AppendFloat(b, u.SparkAfter, 'f', -1, 64)
		b = append(b, `,"keep":`...)
		b = strconv.AppendInt(b, int64(u.SparkKeep), 10)
	}
	b = appendPart(b, "spark", u.Spark, false, func(b []byte, s Spark) []byte {
		j, e := json.Marshal(s.Values)
		if e != nil && err == nil {
			err = e
		}
		b = append(b, '[')
		b = append(b, j...)
		b = append(b, ',')
		b = append(b, s.MaxAttr()...)
		b = append(b, ',')
		b = appendString(b, s.Label)
		return append(b, ']')
	})
	return append(b, '}'), err
}

// appendCells appends the partition cells, in the order of their keys
// (bytewise), as
//
//	"c":{"k":…,"st":[states],"ti":[titles],"kd":[[level,state,title],…],"x":"codes","tx":"text|text|…"}
//
// Cells are thousands and their levels, states and readings repeat: each
// distinct state class and reading is named once in st and ti, each
// distinct (level, state, title) triple once in kd, and a cell is one
// character of x (its triple's index in kd, in cellCodes) and its text in
// tx, the texts joined by '|'. A push of ten thousand cells is then about
// 4 bytes a cell. When a text holds a '|' or the triples are more than
// cellCodes has characters, the cells go as "v":[level, text, state
// index, title index, …] instead, four values per cell.
//
// The page sorts its cell elements by key the same way, whatever order a
// sorted grid shows them in, and compares k, the FNV-1a hash (hex) of the
// sorted keys joined by newlines, with its own before it applies the
// values by index.
func appendCells(b []byte, cs []Entry[LiveCell]) []byte {
	if len(cs) == 0 {
		return b
	}
	order := make([]int, len(cs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return strings.Compare(cs[i].Key, cs[j].Key) })
	h := fnv.New32a()
	states, titles := map[string]int{}, map[string]int{}
	var stateList, titleList []string
	index := func(m map[string]int, list *[]string, s string) int {
		i, ok := m[s]
		if !ok {
			i = len(*list)
			m[s] = i
			*list = append(*list, s)
		}
		return i
	}
	type kind struct{ level, state, title int }
	kinds := map[kind]int{}
	var kindList []kind
	codes := make([]byte, 0, len(cs))
	texts := make([]byte, 0, 4*len(cs))
	compact := true
	for n, i := range order {
		if n > 0 {
			h.Write([]byte{'\n'})
			texts = append(texts, '|')
		}
		c := cs[i].Value
		h.Write([]byte(cs[i].Key))
		k := kind{c.Level, index(states, &stateList, c.State), index(titles, &titleList, c.Title)}
		at, ok := kinds[k]
		if !ok {
			at = len(kindList)
			kinds[k] = at
			kindList = append(kindList, k)
		}
		if at >= len(cellCodes) || strings.IndexByte(c.Text, '|') >= 0 {
			compact = false
		}
		if compact {
			codes = append(codes, cellCodes[at])
			texts = append(texts, c.Text...)
		}
	}
	b = append(b, `,"c":{"k":"`...)
	b = fmt.Appendf(b, "%08x", h.Sum32())
	b = append(b, `","st":`...)
	b = appendStrings(b, stateList)
	b = append(b, `,"ti":`...)
	b = appendStrings(b, titleList)
	if compact {
		b = append(b, `,"kd":[`...)
		for n, k := range kindList {
			if n > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, "[%d,%d,%d]", k.level, k.state, k.title)
		}
		b = append(b, `],"x":"`...)
		b = append(b, codes...)
		b = append(b, `","tx":`...)
		b = appendString(b, string(texts))
		return append(b, '}')
	}
	b = append(b, `,"v":[`...)
	for n, i := range order {
		if n > 0 {
			b = append(b, ',')
		}
		c := cs[i].Value
		b = strconv.AppendInt(b, int64(c.Level), 10)
		b = append(b, ',')
		b = appendString(b, c.Text)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(states[c.State]), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(titles[c.Title]), 10)
	}
	return append(b, "]}"...)
}

// cellCodes are the characters of x, a cell's triple's index in kd:
// none needs escaping in JSON.
const cellCodes = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_"

// appendStrings appends ss as a JSON array of strings.
func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

func appendPart[V any](b []byte, name string, es []Entry[V], always bool, value func([]byte, V) []byte) []byte {
	if len(es) == 0 && !always {
		return b
	}
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `":{`...)
	for i, e := range es {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, e.Key)
		b = append(b, ':')
		b = value(b, e.Value)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string, escaped as encoding/json does
// (which also escapes <, > and &); most figures are plain ASCII and are
// copied as they are.
func appendString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			j, _ := json.Marshal(s) // a string always encodes
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

var (
	textType  = reflect.TypeFor[Text]()
	cellType  = reflect.TypeFor[LiveCell]()
	meterType = reflect.TypeFor[Meter]()
	ageType   = reflect.TypeFor[LiveAge]()
	sparkType = reflect.TypeFor[Spark]()
)

// liveTypes caches, per struct type, the indexes of its exported fields
// that may hold a live figure, so that UpdateOf skips the texts, flags and
// numbers around them.
var liveTypes sync.Map // reflect.Type → []int

func liveFields(t reflect.Type) []int {
	if f, ok := liveTypes.Load(t); ok {
		return f.([]int)
	}
	var f []int
	for i := range t.NumField() {
		if sf := t.Field(i); sf.IsExported() && holdsLive(sf.Type) {
			f = append(f, i)
		}
	}
	liveTypes.Store(t, f)
	return f
}

// holdsLive reports whether a value of type t may hold a live figure.
func holdsLive(t reflect.Type) bool {
	return holdsLiveSeen(t, map[reflect.Type]bool{})
}

func holdsLiveSeen(t reflect.Type, seen map[reflect.Type]bool) bool {
	switch t {
	case textType, cellType, meterType, ageType, sparkType:
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if sf := t.Field(i); sf.IsExported() && holdsLiveSeen(sf.Type, seen) {
				return true
			}
		}
	case reflect.Slice, reflect.Array, reflect.Pointer:
		return holdsLiveSeen(t.Elem(), seen)
	}
	return false
}

// UpdateOf gathers a live page's update from its model: every Text, LiveCell,
// Meter, LiveAge and Spark in it, however nested (fields, slices, pointers),
// in the model's order, except those with an empty key, which are not
// live. Two figures with one key are an error: the builder must name each
// element once.
func UpdateOf(p LivePage) (Update, error) {
	h := p.LiveHead()
	u := Update{Shape: h.Shape, Stale: h.Stale}
	if c, ok := p.(interface{ liveCells() int }); ok {
		// A source's grid holds thousands of cells: the entries are made
		// once, not grown a quarter at a time.
		u.C = make([]Entry[LiveCell], 0, c.liveCells())
	}
	add := func(key string) bool { return key != "" }
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Type() {
		case textType:
			if t := v.Addr().Interface().(*Text); add(t.Key) {
				u.T = append(u.T, Entry[string]{t.Key, t.Text})
			}
			return
		case cellType:
			if c := v.Addr().Interface().(*LiveCell); add(c.Key) {
				u.C = append(u.C, Entry[LiveCell]{c.Key, *c})
			}
			return
		case meterType:
			if m := v.Addr().Interface().(*Meter); add(m.Key) {
				u.M = append(u.M, Entry[string]{m.Key, m.Value})
			}
			return
		case ageType:
			if a := v.Addr().Interface().(*LiveAge); add(a.Key) {
				u.Ages = append(u.Ages, Entry[int64]{a.Key, a.At})
			}
			return
		case sparkType:
			if s := v.Addr().Interface().(*Spark); add(s.Key) {
				u.Spark = append(u.Spark, Entry[Spark]{s.Key, *s})
			}
			return
		}
		switch v.Kind() {
		case reflect.Struct:
			for _, i := range liveFields(v.Type()) {
				walk(v.Field(i))
			}
		case reflect.Slice, reflect.Array:
			if !holdsLive(v.Type().Elem()) {
				return
			}
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		}
	}
	// A pointer to a copy, so that every value in the walk is addressable.
	c := reflect.New(reflect.TypeOf(p))
	c.Elem().Set(reflect.ValueOf(p))
	walk(c.Elem())
	seen := make(map[string]struct{}, len(u.T)+len(u.C)+len(u.M)+len(u.Ages)+len(u.Spark))
	for k := range u.keys() {
		if _, dup := seen[k]; dup {
			return u, fmt.Errorf("live key %q is used twice on the page", k)
		}
		seen[k] = struct{}{}
	}
	return u, nil
}

// ChangeSince returns cur as an update to apply after prev: its texts and
// meters only those whose value is not prev's, its sparklines only the
// samples newer than prev's, to append after prev's last sample time
// (SparkAfter), keeping the last SparkKeep. (Cells, ages, shape and
// staleness go whole: cells are applied by index.) axis
// is the key of the sparklines' times (a Spark of cur and prev). It
// reports false, and cur is to be sent whole, when cur does not continue
// prev: no axis in either, prev's last time not among cur's, samples
// before it that differ, or a sparkline of cur that prev lacks or whose
// length is not its axis's.
func ChangeSince(prev, cur Update, axis string) (Update, bool) {
	old := make(map[string][]float64, len(prev.Spark))
	for _, e := range prev.Spark {
		old[e.Key] = e.Value.Values
	}
	pa, ok := old[axis]
	if !ok || len(pa) == 0 {
		return cur, false
	}
	var ca []float64
	for _, e := range cur.Spark {
		if e.Key == axis {
			ca = e.Value.Values
		}
	}
	last := pa[len(pa)-1]
	k := slices.Index(ca, last) // cur[:k+1] were sent already
	if k < 0 || k >= len(pa) {
		return cur, false
	}
	out := cur
	out.Spark = make([]Entry[Spark], len(cur.Spark))
	for i, e := range cur.Spark {
		was, ok := old[e.Key]
		xs := e.Value.Values
		if !ok || len(xs) != len(ca) || len(was) != len(pa) || !slices.Equal(xs[:k+1], was[len(was)-k-1:]) {
			return cur, false
		}
		s := e.Value
		s.Values = xs[k+1:]
		out.Spark[i] = Entry[Spark]{e.Key, s}
	}
	out.SparkAppend, out.SparkAfter, out.SparkKeep = true, last, len(ca)
	out.T, out.M = changedEntries(prev.T, cur.T), changedEntries(prev.M, cur.M)
	return out, true
}

// changedEntries are the entries of cur whose key prev lacks or holds
// with another value.
func changedEntries(prev, cur []Entry[string]) []Entry[string] {
	was := make(map[string]string, len(prev))
	for _, e := range prev {
		was[e.Key] = e.Value
	}
	var out []Entry[string]
	for _, e := range cur {
		if v, ok := was[e.Key]; !ok || v != e.Value {
			out = append(out, e)
		}
	}
	return out
}

// earlierSummary heads the runs folded under a job: "1 earlier run".
func earlierSummary(n int) string {
	if n == 1 {
		return "1 earlier run"
	}
	return strconv.Itoa(n) + " earlier runs"
}

// copyAttrs are a Copy's element attributes: its key, marked as a copy,
// or none for a copy without one (a figure no update changes).
func copyAttrs(c Copy) templ.Attributes {
	if c.Key == "" {
		return templ.Attributes{}
	}
	return templ.Attributes{"data-live": c.Key, "data-live-copy": true}
}
