package web

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/strategy"
)

// Limits on planner input. Pastes beyond them get an inline message.
const (
	maxRatesBytes  = 4 << 20
	maxRatesRows   = 200_000
	maxTopicsBytes = 256 << 10
	maxStateBytes  = 256 << 10
	// maxPlannerPartitions bounds one plan; the planner is built to render
	// 10,000 partitions quickly, and stays correct (if slower) up to this.
	maxPlannerPartitions = 50_000
	// maxPlannerSubtasks bounds parallelism + target: the page draws a
	// grid row per subtask of each side, and rows, not partitions, make
	// most of its size (32,768 + 32,768 rows were 24 MB of HTML).
	maxPlannerSubtasks = 8192
)

// planForm is the planner's input exactly as the user typed it, plus the
// parsed values and one message per bad field.
type planForm struct {
	// Raw text of each field, echoed back into the form.
	Topics, Rates, State                string
	Parallelism, Target, MaxParallelism string
	Mode, Strategy, Color               string
	Highlight                           string
	// History is the source's parallelism history as typed (?history=).
	History string
	// Capacity inputs as typed: per current source subtask its busy ratio
	// and records/s read, or a capacity per subtask; the same for the
	// keyed vertex; the target utilisation in percent.
	Busy, Observed, Capacity          string
	KeyedIn, KeyedBusy, KeyedCapacity string
	Utilization                       string
	// ObservedAt and Job say that the inputs were filled in from a live
	// job, and when (RFC 3339).
	ObservedAt, Job string
	// Sample is a key sample's id whose key groups give the keyed load.
	Sample string
	// Backlog is the source's records not yet read per partition, CSV
	// "topic,partition,records"; Retention each topic's retention.ms, CSV
	// "topic,retention.ms".
	Backlog, Retention string

	// Parsed values, valid when Errors is empty.
	topics     []assign.Topic
	rates      map[assign.TopicPartition]float64
	stateBytes []int64
	stateTotal bool // one total was given and spread evenly
	current    int
	target     int
	maxP       int // 0: Flink's default
	mode       assign.StartMode
	strat      strategy.Strategy
	// history is the source's parallelisms from its fresh start on, ending
	// at current; nil or one entry for a job that started fresh.
	history []int
	// Parsed capacity inputs: nil or 0 when not given.
	busy, observed, keyedIn, keyedBusy []float64
	capacity, keyedCapacity            float64
	utilization                        float64 // share, 0: the default
	observedAt                         time.Time
	// backlog and retention are Backlog and Retention parsed; nil unknown.
	backlog   map[assign.TopicPartition]float64
	retention map[string]time.Duration
	// sampled is the key sample named by Sample, attached by the server.
	sampled *sampledLoad

	Errors map[string]string

	canonical  url.Values // cached by canonicalQuery
	encodedLen int
}

// queryLen is the length of the encoded canonical query. Pasted rates
// longer than any link are not encoded just to be measured.
func (f *planForm) queryLen() int {
	if f.canonical == nil && len(f.Rates) > maxLinkQuery {
		return len(f.Rates)
	}
	f.canonicalQuery()
	return f.encodedLen
}

func (f *planForm) fail(field, format string, args ...any) {
	if f.Errors == nil {
		f.Errors = map[string]string{}
	}
	if _, dup := f.Errors[field]; !dup {
		f.Errors[field] = fmt.Sprintf(format, args...)
	}
}

// parsePlanForm reads planner input from a query (GET) or a posted form.
// Topics come as repeated topic=NAME:PARTITIONS or one "topics" text with a
// topic per line. It never fails as a whole: bad fields are reported in
// Errors, and the other fields are still parsed.
func parsePlanForm(v url.Values) *planForm {
	f := &planForm{
		Topics:         strings.Join(v["topic"], "\n"),
		Rates:          v.Get("rates"),
		State:          v.Get("state"),
		Parallelism:    strings.TrimSpace(v.Get("parallelism")),
		Target:         strings.TrimSpace(v.Get("target")),
		MaxParallelism: strings.TrimSpace(v.Get("maxParallelism")),
		Mode:           strings.TrimSpace(v.Get("mode")),
		Strategy:       strings.TrimSpace(v.Get("strategy")),
		Color:          strings.TrimSpace(v.Get("color")),
		Highlight:      strings.TrimSpace(v.Get("highlight")),
		History:        strings.TrimSpace(v.Get("history")),
		Busy:           strings.TrimSpace(v.Get("busy")),
		Observed:       strings.TrimSpace(v.Get("observed")),
		Capacity:       strings.TrimSpace(v.Get("capacity")),
		KeyedIn:        strings.TrimSpace(v.Get("keyedIn")),
		KeyedBusy:      strings.TrimSpace(v.Get("keyedBusy")),
		KeyedCapacity:  strings.TrimSpace(v.Get("keyedCapacity")),
		Utilization:    strings.TrimSpace(v.Get("utilization")),
		ObservedAt:     strings.TrimSpace(v.Get("observedAt")),
		Job:            strings.TrimSpace(v.Get("job")),
		Sample:         strings.TrimSpace(v.Get("sample")),
		Backlog:        v.Get("backlog"),
		Retention:      v.Get("retention"),
	}
	if t := v.Get("topics"); t != "" {
		if f.Topics != "" {
			f.Topics += "\n"
		}
		f.Topics += t
	}
	f.parseTopics()
	f.current = f.parallelismField("parallelism", f.Parallelism, "current parallelism")
	if a := strings.TrimSpace(v.Get("apply")); a != "" {
		f.Target = a // a candidate's button: apply it as the target
	}
	if f.Target == "" {
		f.Target = f.Parallelism
	}
	f.target = f.parallelismField("target", f.Target, "target parallelism")
	if n := f.current + f.target; f.current > 0 && f.target > 0 && n > maxPlannerSubtasks {
		field := "parallelism"
		if f.target > f.current {
			field = "target"
		}
		f.fail(field, "parallelism + target is %d subtasks; the planner draws a row for each and at most %d in all (for larger jobs use /api/v1/assignment)", n, maxPlannerSubtasks)
	}
	f.parseMaxParallelism()
	switch f.Mode {
	case "", "fresh":
		f.Mode, f.mode = "fresh", assign.StartFresh
	case "restore":
		f.mode = assign.StartRestore
	default:
		f.fail("mode", "%s: choose fresh start or restore from savepoint", quote.Clip(f.Mode))
	}
	if f.Strategy == "" {
		f.Strategy = strategy.Default
	}
	st, err := strategy.Lookup(f.Strategy)
	if err != nil {
		f.fail("strategy", "%v", err)
	} else {
		f.strat = st
		if st.Name != strategy.Default && f.mode == assign.StartRestore {
			f.fail("mode", "restore from a savepoint is modelled for Flink's KafkaSource only; %s has no savepoint", st.Label)
		}
	}
	switch f.Color {
	case "", "topic":
		f.Color = "topic"
	case "rate":
	default:
		f.fail("color", "%s: colour cells by topic or by rate", quote.Clip(f.Color))
	}
	f.parseHistory()
	f.parseRates()
	f.parseBacklog()
	f.parseRetention()
	f.parseState()
	f.parseCapacity()
	if f.ObservedAt != "" {
		t, err := time.Parse(time.RFC3339, f.ObservedAt)
		if err != nil {
			f.fail("observedAt", "%s is not a time such as 2026-12-01T18:30:05Z", quote.Clip(f.ObservedAt))
		}
		f.observedAt = t
	}
	if len(f.Job) > 256 {
		f.fail("job", "a job name of %d bytes; at most 256", len(f.Job))
	}
	return f
}

// Limits on the capacity inputs.
const maxCapacityBytes = 256 << 10

// parseCapacity reads the capacity inputs: per-subtask lists need one value
// per current subtask; busy ratios are shares (0.95) or percentages (95%).
func (f *planForm) parseCapacity() {
	list := func(field, text, what string, ratio bool) []float64 {
		if text == "" {
			return nil
		}
		if len(text) > maxCapacityBytes {
			f.fail(field, "%d KB pasted; at most %d KB", len(text)>>10, maxCapacityBytes>>10)
			return nil
		}
		fields := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ';' || r == '\n' || r == '\t' || r == ' ' })
		out := make([]float64, 0, len(fields))
		for i, fld := range fields {
			v, err := parseShareOrNumber(fld, ratio)
			if err != nil {
				f.fail(field, "value %d, %s: %v", i+1, quote.Clip(fld), err)
				return nil
			}
			out = append(out, v)
		}
		if f.current > 0 && len(out) != f.current {
			f.fail(field, "%d values for %d current subtasks: give one %s per subtask, in subtask order", len(out), f.current, what)
			return nil
		}
		return out
	}
	f.busy = list("busy", f.Busy, "busy ratio", true)
	f.observed = list("observed", f.Observed, "rate", false)
	f.keyedIn = list("keyedIn", f.KeyedIn, "rate", false)
	f.keyedBusy = list("keyedBusy", f.KeyedBusy, "busy ratio", true)
	one := func(field, text string) float64 {
		if text == "" {
			return 0
		}
		v, err := strconv.ParseFloat(text, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			f.fail(field, "%s is not a rate: give the records/s one subtask processes at 100%% busy", quote.Clip(text))
			return 0
		}
		return v
	}
	f.capacity = one("capacity", f.Capacity)
	f.keyedCapacity = one("keyedCapacity", f.KeyedCapacity)
	if f.Utilization != "" {
		v, err := strconv.ParseFloat(strings.TrimSuffix(f.Utilization, "%"), 64)
		if err != nil || !(v > 0 && v <= 100) {
			f.fail("utilization", "%s is not a target utilisation: give a percentage in (0, 100], e.g. 70", quote.Clip(f.Utilization))
		} else {
			f.utilization = v / 100
		}
	}
	if f.observed != nil && f.busy == nil {
		f.fail("busy", "records/s per subtask are given without busy ratios: the capacity is rate ÷ busy")
	}
	if f.keyedBusy != nil && f.keyedIn == nil {
		f.fail("keyedIn", "busy ratios of the keyed vertex need its records in per subtask too")
	}
	if f.busy != nil && f.rates == nil && f.observed == nil && f.capacity == 0 {
		f.fail("rates", "busy ratios need partition rates (or records/s per subtask) to tell a subtask's capacity")
	}
}

// parseShareOrNumber reads a finite non-negative number; with ratio, a
// share in 0..1 or a percentage "95%".
func parseShareOrNumber(s string, ratio bool) (float64, error) {
	s = strings.TrimSpace(s)
	pctSign := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		if ratio {
			return 0, errors.New("not a busy ratio such as 0.95 or 95%")
		}
		return 0, errors.New("not a non-negative number of records/s")
	}
	if !ratio {
		if pctSign {
			return 0, errors.New("a rate, not a percentage")
		}
		return v, nil
	}
	if pctSign {
		v /= 100
	}
	if v > 1 {
		return 0, errors.New("a busy ratio is at most 1 (100%)")
	}
	return v, nil
}

// parseHistory reads the source's parallelisms before now, from its fresh
// start on ("4,6"; spaces and arrows also separate), as the live vertex
// page's ?history= does: the current parallelism ends the history, and is
// added when it is not the last entry.
func (f *planForm) parseHistory() {
	if f.History == "" {
		return
	}
	h, err := assign.ParseHistory(f.History)
	if err != nil {
		f.fail("history", "%v", err)
		return
	}
	if f.current == 0 {
		return // the current parallelism's own error says what is wrong
	}
	if h[len(h)-1] != f.current {
		h = append(h, f.current)
	}
	if len(h) > 1 && f.strat.Name != "" && f.strat.Name != strategy.Default {
		f.fail("history", "a restore history is modelled for Flink's KafkaSource only; %s has no savepoint", f.strat.Label)
		return
	}
	f.history = h
}

func (f *planForm) parallelismField(field, s, what string) int {
	if s == "" {
		f.fail(field, "required: the %s, an integer in 1..%d", what, assign.UpperBoundMaxParallelism)
		return 0
	}
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > assign.UpperBoundMaxParallelism {
		f.fail(field, "%s is not a parallelism: Flink accepts 1..%d", quote.Clip(s), assign.UpperBoundMaxParallelism)
		return 0
	}
	return p
}

func (f *planForm) parseMaxParallelism() {
	if f.MaxParallelism == "" {
		return
	}
	m, err := strconv.Atoi(f.MaxParallelism)
	if err != nil || m < 1 || m > assign.UpperBoundMaxParallelism {
		f.fail("maxParallelism", "%s is not a max parallelism: Flink accepts 1..%d", quote.Clip(f.MaxParallelism), assign.UpperBoundMaxParallelism)
		return
	}
	f.maxP = m
	if f.current > m {
		f.fail("maxParallelism", "%d is below the current parallelism %d: Flink requires max parallelism ≥ parallelism", m, f.current)
	} else if f.target > m {
		f.fail("maxParallelism", "%d is below the target parallelism %d: a restored job keeps its max parallelism, so keyed operators cannot run above it", m, f.target)
	}
}

// parseTopics reads "NAME:PARTITIONS" entries, one per line (commas and
// semicolons also separate entries only when the text has no newline, so
// that names with commas still work line by line).
func (f *planForm) parseTopics() {
	if len(f.Topics) > maxTopicsBytes {
		f.fail("topics", "%d KB pasted; at most %d KB", len(f.Topics)>>10, maxTopicsBytes>>10)
		return
	}
	text := strings.TrimSpace(f.Topics)
	if text == "" {
		f.fail("topics", "required: one topic per line as NAME:PARTITIONS, e.g. orders:12")
		return
	}
	var entries []string
	if strings.ContainsAny(text, "\n\r") {
		entries = strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == '\r' })
	} else {
		entries = strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ';' })
	}
	seen := map[string]bool{}
	total := 0
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		i := strings.LastIndexByte(e, ':')
		if i <= 0 {
			f.fail("topics", "%s: write NAME:PARTITIONS, e.g. orders:12", quote.Clip(e))
			return
		}
		name, count := strings.TrimSpace(e[:i]), strings.TrimSpace(e[i+1:])
		n, err := strconv.Atoi(count)
		if err != nil || n < 1 || n > assign.MaxPartitions {
			f.fail("topics", "%s: partition count %s is not an integer in 1..%d", quote.Clip(name), quote.Clip(count), assign.MaxPartitions)
			return
		}
		if seen[name] {
			f.fail("topics", "%s is listed twice", quote.Clip(name))
			return
		}
		seen[name] = true
		total += n
		if total > maxPlannerPartitions {
			f.fail("topics", "more than %d partitions in all; the planner handles up to %d", maxPlannerPartitions, maxPlannerPartitions)
			return
		}
		f.topics = append(f.topics, assign.Topic{Name: name, Partitions: n})
	}
	if len(f.topics) == 0 {
		f.fail("topics", "required: one topic per line as NAME:PARTITIONS, e.g. orders:12")
	}
}

// parseRates reads CSV lines "topic,partition,rate" (a header line is
// allowed). Rates for partitions the topics do not have are an error: they
// usually mean the partition count is wrong.
func (f *planForm) parseRates() {
	if m := f.parsePartitionCSV("rates", f.Rates, "rate"); len(m) > 0 {
		f.rates = m
	}
}

// parseBacklog reads the source's backlog per partition, CSV lines
// "topic,partition,records" as the rates are given.
func (f *planForm) parseBacklog() {
	if m := f.parsePartitionCSV("backlog", f.Backlog, "records"); m != nil {
		f.backlog = m
	}
}

// parseRetention reads each topic's retention.ms, CSV lines
// "topic,retention.ms"; -1 (no limit) is taken as no retention.
func (f *planForm) parseRetention() {
	text := strings.TrimSpace(f.Retention)
	if text == "" {
		return
	}
	if len(text) > maxStateBytes {
		f.fail("retention", "%d KB pasted; at most %d KB", len(text)>>10, maxStateBytes>>10)
		return
	}
	out := map[string]time.Duration{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		topic, ms, ok := strings.Cut(line, ",")
		topic, ms = strings.TrimSpace(topic), strings.TrimSpace(ms)
		n, err := strconv.ParseInt(ms, 10, 64)
		switch {
		case !ok || topic == "":
			f.fail("retention", "line %d: write topic,retention.ms", i+1)
			return
		case err != nil || n < -1 || n > math.MaxInt64/int64(time.Millisecond):
			f.fail("retention", "line %d: retention.ms %s is not a number of milliseconds (or -1, no limit)", i+1, quote.Clip(ms))
			return
		}
		if n > 0 {
			out[topic] = time.Duration(n) * time.Millisecond
		}
	}
	f.retention = out
}

// parsePartitionCSV reads CSV lines "topic,partition,value" of field (a
// header line "topic,partition,<noun>" is allowed) into a map; nil when
// the text is empty or wrong (the error is recorded).
func (f *planForm) parsePartitionCSV(field, text, noun string) map[assign.TopicPartition]float64 {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if len(text) > maxRatesBytes {
		f.fail(field, "%.1f MB pasted; at most %d MB (about %d rows of topic,partition,%s)", float64(len(text))/(1<<20), maxRatesBytes>>20, maxRatesRows, noun)
		return nil
	}
	counts := map[string]int{}
	for _, t := range f.topics {
		counts[t.Name] = t.Partitions
	}
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	r.ReuseRecord = true
	values := map[assign.TopicPartition]float64{}
	for row := 0; ; row++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				f.fail(field, "line %d: %v", pe.Line, pe.Err)
			} else {
				f.fail(field, "%v", err)
			}
			return nil
		}
		line, _ := r.FieldPos(0)
		if row >= maxRatesRows {
			f.fail(field, "more than %d rows", maxRatesRows)
			return nil
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) != 3 {
			f.fail(field, "line %d has %d fields; write topic,partition,%s", line, len(rec), noun)
			return nil
		}
		if row == 0 && strings.EqualFold(strings.TrimSpace(rec[0]), "topic") && strings.EqualFold(strings.TrimSpace(rec[2]), noun) {
			continue
		}
		topic := strings.TrimSpace(rec[0])
		part, err := strconv.Atoi(strings.TrimSpace(rec[1]))
		if err != nil || part < 0 {
			f.fail(field, "line %d: partition %s is not a partition number", line, quote.Clip(rec[1]))
			return nil
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[2]), 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			f.fail(field, "line %d: %s %s is not a non-negative number", line, noun, quote.Clip(rec[2]))
			return nil
		}
		n, known := counts[topic]
		switch {
		case len(f.topics) > 0 && !known:
			f.fail(field, "line %d: topic %s is not in the topic list", line, quote.Clip(topic))
			return nil
		case known && part >= n:
			f.fail(field, "line %d: %s has %d partitions (0..%d), not partition %d", line, quote.Clip(topic), n, n-1, part)
			return nil
		}
		tp := assign.TopicPartition{Topic: topic, Partition: int32(part)}
		if _, dup := values[tp]; dup {
			f.fail(field, "line %d: %s-%d is given twice", line, quote.Clip(topic), part)
			return nil
		}
		values[tp] = v
	}
	return values
}

// parseState reads keyed state sizes: one per current subtask, or a single
// total that is spread evenly. Sizes take units B, KB, MB, GB, TB (powers of
// 1000) or KiB, MiB, GiB, TiB.
func (f *planForm) parseState() {
	text := strings.TrimSpace(f.State)
	if text == "" {
		return
	}
	if len(text) > maxStateBytes {
		f.fail("state", "%d KB pasted; at most %d KB", len(text)>>10, maxStateBytes>>10)
		return
	}
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ';' || r == '\n' || r == '\t' })
	sizes := make([]int64, 0, len(fields))
	for _, fld := range fields {
		b, err := parseBytes(fld)
		if err != nil {
			f.fail("state", "%s: %v", quote.Clip(strings.TrimSpace(fld)), err)
			return
		}
		sizes = append(sizes, b)
	}
	if f.current == 0 {
		return
	}
	switch len(sizes) {
	case 1:
		f.stateTotal = true
		f.stateBytes = make([]int64, f.current)
		for i := range f.stateBytes {
			// Spread the total so the parts add up exactly.
			f.stateBytes[i] = sizes[0]*int64(i+1)/int64(f.current) - sizes[0]*int64(i)/int64(f.current)
		}
	case f.current:
		f.stateBytes = sizes
	default:
		f.fail("state", "%d sizes for %d current subtasks: give one size per subtask, or one total", len(sizes), f.current)
	}
}

var byteUnits = map[string]float64{
	"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
}

func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-") {
		return 0, errors.New("not a size: sizes cannot be negative")
	}
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	}
	mult, ok := byteUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit %s; use B, KB, MB, GB, TB or KiB, MiB, GiB, TiB", quote.Clip(unit))
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, errors.New("not a size such as 2.5 GB")
	}
	b := v * mult
	if b > 1<<62 {
		return 0, errors.New("too large")
	}
	return int64(math.Round(b)), nil
}

// canonicalQuery is the URL query that reproduces the form: topics as
// repeated topic=, defaults left out, so links stay short and stable.
func (f *planForm) canonicalQuery() url.Values {
	if f.canonical == nil {
		f.canonical = f.buildCanonicalQuery()
		f.encodedLen = len(f.canonical.Encode())
	}
	// A copy, so callers may change it.
	v := make(url.Values, len(f.canonical))
	for k, vs := range f.canonical {
		v[k] = vs
	}
	return v
}

func (f *planForm) buildCanonicalQuery() url.Values {
	v := url.Values{}
	for _, t := range f.topics {
		v.Add("topic", t.Name+":"+strconv.Itoa(t.Partitions))
	}
	if len(f.topics) == 0 && f.Topics != "" {
		v.Set("topics", f.Topics)
	}
	set := func(k, val, def string) {
		if val != "" && val != def {
			v.Set(k, val)
		}
	}
	set("parallelism", f.Parallelism, "")
	set("target", f.Target, "")
	set("maxParallelism", f.MaxParallelism, "")
	set("mode", f.Mode, "fresh")
	set("strategy", f.Strategy, strategy.Default)
	set("color", f.Color, "topic")
	set("state", strings.TrimSpace(f.State), "")
	set("highlight", f.Highlight, "")
	set("busy", f.Busy, "")
	set("observed", f.Observed, "")
	set("capacity", f.Capacity, "")
	set("keyedIn", f.KeyedIn, "")
	set("keyedBusy", f.KeyedBusy, "")
	set("keyedCapacity", f.KeyedCapacity, "")
	set("utilization", f.Utilization, "")
	set("observedAt", f.ObservedAt, "")
	set("job", f.Job, "")
	set("sample", f.Sample, "")
	set("backlog", strings.TrimSpace(f.Backlog), "")
	set("retention", strings.TrimSpace(f.Retention), "")
	if len(f.history) > 1 {
		v.Set("history", assign.FormatHistory(f.history))
	} else {
		set("history", f.History, "")
	}
	if f.rates != nil {
		v.Set("rates", ratesCSV(f.topics, f.rates))
	} else if strings.TrimSpace(f.Rates) != "" {
		v.Set("rates", f.Rates)
	}
	return v
}

// ratesCSV writes rates back as CSV in topic order, partitions ascending.
func ratesCSV(topics []assign.Topic, rates map[assign.TopicPartition]float64) string {
	order := map[string]int{}
	for i, t := range topics {
		order[t.Name] = i
	}
	tps := make([]assign.TopicPartition, 0, len(rates))
	for tp := range rates {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool {
		a, b := tps[i], tps[j]
		if a.Topic != b.Topic {
			return order[a.Topic] < order[b.Topic]
		}
		return a.Partition < b.Partition
	})
	var b strings.Builder
	w := csv.NewWriter(&b)
	for _, tp := range tps {
		w.Write([]string{tp.Topic, strconv.Itoa(int(tp.Partition)), strconv.FormatFloat(rates[tp], 'f', -1, 64)})
	}
	w.Flush()
	return b.String()
}
