package plan

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

// Limits on a request. Pastes beyond them get a message on their field.
const (
	// MaxRatesBytes bounds the pasted rates (and the backlog).
	MaxRatesBytes  = 4 << 20
	maxRatesRows   = 200_000
	maxTopicsBytes = 256 << 10
	maxStateBytes  = 256 << 10
	// MaxPartitions bounds one plan; the planner is built to render
	// 10,000 partitions quickly, and stays correct (if slower) up to this.
	MaxPartitions = 50_000
	// MaxSubtasks bounds parallelism + target: the page draws a grid row
	// per subtask of each side, and rows, not partitions, make most of its
	// size (32,768 + 32,768 rows were 24 MB of HTML).
	MaxSubtasks = 8192
	// maxJobBytes bounds the job name a live plan carries.
	maxJobBytes = 256
)

// Request is what a plan asks: a Kafka source's topics and layout now, the
// target, and the optional figures that size it. The zero values of the
// optional fields mean "not given". FromQuery reads one from a URL and
// Query writes it back.
type Request struct {
	// Topics are the source's topics with their partition counts, in the
	// order given (which colours and orders the page).
	Topics []assign.Topic
	// Rates are the produced records/s per partition; nil when not given.
	Rates map[assign.TopicPartition]float64
	// Parallelism is the source's current parallelism, Target the one
	// planned (FromQuery defaults it to Parallelism).
	Parallelism, Target int
	// MaxParallelism is the number of key groups; 0 is Flink's default
	// for Parallelism.
	MaxParallelism int
	// Mode is how the target starts: fresh, or restored from a savepoint
	// taken at Parallelism.
	Mode assign.StartMode
	// Strategy names the partition assignment strategy (package strategy);
	// "" is Flink's KafkaSource, strategy.Default.
	Strategy string
	// History is the source's parallelisms from its fresh start on, ending
	// at Parallelism; nil for a job that started fresh at Parallelism.
	History []int
	// State is the keyed state in bytes per current subtask; StateTotal
	// says that one total was given and spread evenly over them.
	State      []int64
	StateTotal bool
	// Busy and Observed are each current source subtask's busy ratio
	// (0..1) and records/s read; Capacity is the records/s one source
	// subtask processes at 100% busy. KeyedIn, KeyedBusy and
	// KeyedCapacity are the same for the keyed vertex behind the source.
	Busy, Observed, KeyedIn, KeyedBusy []float64
	Capacity, KeyedCapacity            float64
	// Utilization is the target utilisation in percent, 0 the
	// autoscaler's default.
	Utilization float64
	// Backlog is the source's records not yet read per partition, nil
	// unknown; Retention each topic's retention (topics without a limit
	// left out), nil unknown.
	Backlog   map[assign.TopicPartition]float64
	Retention map[string]time.Duration
	// ObservedAt and Job say that the figures were filled in from a live
	// job, and when.
	ObservedAt time.Time
	Job        string
	// Sample is the id of a key sample whose key groups give the keyed
	// load; the caller looks it up and passes it to Compute.
	Sample string
}

// Errors holds one message per bad field of a request, keyed by its query
// parameter; the message says what was wrong and what is accepted.
type Errors map[string]string

// Add records msg for field unless the field has a message already: the
// first problem found is the one to fix first.
func (e Errors) Add(field, format string, args ...any) {
	if _, dup := e[field]; !dup {
		e[field] = fmt.Sprintf(format, args...)
	}
}

// Texts are a request's fields as typed, for the messages and for a form
// that shows them again.
type Texts struct {
	Topics, Rates, State                string
	Parallelism, Target, MaxParallelism string
	Mode, Strategy, History             string
	Busy, Observed, Capacity            string
	KeyedIn, KeyedBusy, KeyedCapacity   string
	Utilization, ObservedAt, Job        string
	Backlog, Retention                  string
}

// TextsOf reads a query's texts: topics from repeated topic= and one
// "topics" text, each field trimmed but for the pasted lists, and the
// target defaulting to the current parallelism.
func TextsOf(v url.Values) Texts {
	t := Texts{
		Topics:         strings.Join(v["topic"], "\n"),
		Rates:          v.Get("rates"),
		State:          v.Get("state"),
		Parallelism:    strings.TrimSpace(v.Get("parallelism")),
		Target:         strings.TrimSpace(v.Get("target")),
		MaxParallelism: strings.TrimSpace(v.Get("maxParallelism")),
		Mode:           strings.TrimSpace(v.Get("mode")),
		Strategy:       strings.TrimSpace(v.Get("strategy")),
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
		Backlog:        v.Get("backlog"),
		Retention:      v.Get("retention"),
	}
	if more := v.Get("topics"); more != "" {
		if t.Topics != "" {
			t.Topics += "\n"
		}
		t.Topics += more
	}
	if t.Target == "" {
		t.Target = t.Parallelism
	}
	return t
}

// parser reads a query into a Request, field by field, keeping the texts
// as typed for the messages.
type parser struct {
	Texts

	r     Request
	strat strategy.Strategy
	errs  Errors
}

func (f *parser) fail(field, format string, args ...any) {
	if f.errs == nil {
		f.errs = Errors{}
	}
	f.errs.Add(field, format, args...)
}

// FromQuery reads a request from a query (GET) or a posted form. Topics
// come as repeated topic=NAME:PARTITIONS or one "topics" text with a topic
// per line. It never fails as a whole: bad fields are reported in Errors
// (nil when there are none), and the other fields are still read.
func FromQuery(v url.Values) (Request, Errors) {
	f := &parser{Texts: TextsOf(v)}
	f.r.Sample = strings.TrimSpace(v.Get("sample"))
	f.r.Job = f.Job
	f.parseTopics()
	f.r.Parallelism = f.parallelismField("parallelism", f.Parallelism, "current parallelism")
	f.r.Target = f.parallelismField("target", f.Target, "target parallelism")
	if n := f.r.Parallelism + f.r.Target; f.r.Parallelism > 0 && f.r.Target > 0 && n > MaxSubtasks {
		field := "parallelism"
		if f.r.Target > f.r.Parallelism {
			field = "target"
		}
		f.fail(field, "parallelism + target is %d subtasks; the planner draws a row for each and at most %d in all (for larger jobs use /api/v1/assignment)", n, MaxSubtasks)
	}
	f.parseMaxParallelism()
	switch f.Mode {
	case "", "fresh":
		f.r.Mode = assign.StartFresh
	case "restore":
		f.r.Mode = assign.StartRestore
	default:
		f.fail("mode", "%s: choose fresh start or restore from savepoint", quote.Clip(f.Mode))
	}
	if f.Strategy == "" {
		f.Strategy = strategy.Default
	}
	f.r.Strategy = f.Strategy
	st, err := strategy.Lookup(f.Strategy)
	if err != nil {
		f.fail("strategy", "%v", err)
	} else {
		f.strat = st
		if st.Name != strategy.Default && f.r.Mode == assign.StartRestore {
			f.fail("mode", "restore from a savepoint is modelled for Flink's KafkaSource only; %s has no savepoint", st.Label)
		}
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
		f.r.ObservedAt = t
	}
	if len(f.Job) > maxJobBytes {
		f.fail("job", "a job name of %d bytes; at most %d", len(f.Job), maxJobBytes)
	}
	return f.r, f.errs
}

// Validate checks r against the rules FromQuery applies, by reading r's
// own query back: a request built in code is valid exactly when the
// planner would accept its URL. It returns nil when r is valid.
func (r Request) Validate() Errors {
	_, errs := FromQuery(r.Query())
	return errs
}

// Limits on the capacity inputs.
const maxCapacityBytes = 256 << 10

// parseCapacity reads the capacity inputs: per-subtask lists need one value
// per current subtask; busy ratios are shares (0.95) or percentages (95%).
func (f *parser) parseCapacity() {
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
		if f.r.Parallelism > 0 && len(out) != f.r.Parallelism {
			f.fail(field, "%d values for %d current subtasks: give one %s per subtask, in subtask order", len(out), f.r.Parallelism, what)
			return nil
		}
		return out
	}
	f.r.Busy = list("busy", f.Busy, "busy ratio", true)
	f.r.Observed = list("observed", f.Observed, "rate", false)
	f.r.KeyedIn = list("keyedIn", f.KeyedIn, "rate", false)
	f.r.KeyedBusy = list("keyedBusy", f.KeyedBusy, "busy ratio", true)
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
	f.r.Capacity = one("capacity", f.Capacity)
	f.r.KeyedCapacity = one("keyedCapacity", f.KeyedCapacity)
	if f.Utilization != "" {
		v, err := strconv.ParseFloat(strings.TrimSuffix(f.Utilization, "%"), 64)
		if err != nil || !(v > 0 && v <= 100) {
			f.fail("utilization", "%s is not a target utilisation: give a percentage in (0, 100], e.g. 70", quote.Clip(f.Utilization))
		} else {
			f.r.Utilization = v
		}
	}
	if f.r.Observed != nil && f.r.Busy == nil {
		f.fail("busy", "records/s per subtask are given without busy ratios: the capacity is rate ÷ busy")
	}
	if f.r.KeyedBusy != nil && f.r.KeyedIn == nil {
		f.fail("keyedIn", "busy ratios of the keyed vertex need its records in per subtask too")
	}
	if f.r.Busy != nil && f.r.Rates == nil && f.r.Observed == nil && f.r.Capacity == 0 {
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
func (f *parser) parseHistory() {
	if f.History == "" {
		return
	}
	h, err := assign.ParseHistory(f.History)
	if err != nil {
		f.fail("history", "%v", err)
		return
	}
	if f.r.Parallelism == 0 {
		return // the current parallelism's own error says what is wrong
	}
	if h[len(h)-1] != f.r.Parallelism {
		h = append(h, f.r.Parallelism)
	}
	if len(h) > 1 && f.strat.Name != "" && f.strat.Name != strategy.Default {
		f.fail("history", "a restore history is modelled for Flink's KafkaSource only; %s has no savepoint", f.strat.Label)
		return
	}
	if len(h) > 1 {
		f.r.History = h // a single entry is a fresh start, as no history is
	}
}

func (f *parser) parallelismField(field, s, what string) int {
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

func (f *parser) parseMaxParallelism() {
	if f.MaxParallelism == "" {
		return
	}
	m, err := strconv.Atoi(f.MaxParallelism)
	if err != nil || m < 1 || m > assign.UpperBoundMaxParallelism {
		f.fail("maxParallelism", "%s is not a max parallelism: Flink accepts 1..%d", quote.Clip(f.MaxParallelism), assign.UpperBoundMaxParallelism)
		return
	}
	f.r.MaxParallelism = m
	if f.r.Parallelism > m {
		f.fail("maxParallelism", "%d is below the current parallelism %d: Flink requires max parallelism ≥ parallelism", m, f.r.Parallelism)
	} else if f.r.Target > m {
		f.fail("maxParallelism", "%d is below the target parallelism %d: a restored job keeps its max parallelism, so keyed operators cannot run above it", m, f.r.Target)
	}
}

// parseTopics reads "NAME:PARTITIONS" entries, one per line (commas and
// semicolons also separate entries only when the text has no newline, so
// that names with commas still work line by line).
func (f *parser) parseTopics() {
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
		if total > MaxPartitions {
			f.fail("topics", "more than %d partitions in all; the planner handles up to %d", MaxPartitions, MaxPartitions)
			return
		}
		f.r.Topics = append(f.r.Topics, assign.Topic{Name: name, Partitions: n})
	}
	if len(f.r.Topics) == 0 {
		f.fail("topics", "required: one topic per line as NAME:PARTITIONS, e.g. orders:12")
	}
}

// parseRates reads CSV lines "topic,partition,rate" (a header line is
// allowed). Rates for partitions the topics do not have are an error: they
// usually mean the partition count is wrong.
func (f *parser) parseRates() {
	if m := f.parsePartitionCSV("rates", f.Rates, "rate"); len(m) > 0 {
		f.r.Rates = m
	}
}

// parseBacklog reads the source's backlog per partition, CSV lines
// "topic,partition,records" as the rates are given.
func (f *parser) parseBacklog() {
	if m := f.parsePartitionCSV("backlog", f.Backlog, "records"); m != nil {
		f.r.Backlog = m
	}
}

// parseRetention reads each topic's retention.ms, CSV lines
// "topic,retention.ms"; -1 (no limit) is taken as no retention.
func (f *parser) parseRetention() {
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
	if len(out) > 0 {
		f.r.Retention = out
	}
}

// parsePartitionCSV reads CSV lines "topic,partition,value" of field (a
// header line "topic,partition,<noun>" is allowed) into a map; nil when
// the text is empty or wrong (the error is recorded).
func (f *parser) parsePartitionCSV(field, text, noun string) map[assign.TopicPartition]float64 {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if len(text) > MaxRatesBytes {
		f.fail(field, "%.1f MB pasted; at most %d MB (about %d rows of topic,partition,%s)", float64(len(text))/(1<<20), MaxRatesBytes>>20, maxRatesRows, noun)
		return nil
	}
	counts := map[string]int{}
	for _, t := range f.r.Topics {
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
		case len(f.r.Topics) > 0 && !known:
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
func (f *parser) parseState() {
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
	if f.r.Parallelism == 0 {
		return
	}
	switch len(sizes) {
	case 1:
		f.r.StateTotal = true
		f.r.State = make([]int64, f.r.Parallelism)
		for i := range f.r.State {
			// Spread the total so the parts add up exactly.
			f.r.State[i] = sizes[0]*int64(i+1)/int64(f.r.Parallelism) - sizes[0]*int64(i)/int64(f.r.Parallelism)
		}
	case f.r.Parallelism:
		f.r.State = sizes
	default:
		f.fail("state", "%d sizes for %d current subtasks: give one size per subtask, or one total", len(sizes), f.r.Parallelism)
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

// Query is the canonical URL query of r: topics as repeated topic=,
// defaults and figures not given left out, numbers in their shortest form,
// so that links stay short and stable. FromQuery reads it back to r.
func (r Request) Query() url.Values {
	v := url.Values{}
	for _, t := range r.Topics {
		v.Add("topic", t.Name+":"+strconv.Itoa(t.Partitions))
	}
	setInt := func(k string, n int) {
		if n > 0 {
			v.Set(k, strconv.Itoa(n))
		}
	}
	setNum := func(k string, x float64) {
		if x > 0 {
			v.Set(k, formatNum(x))
		}
	}
	setList := func(k string, xs []float64) {
		if xs == nil {
			return
		}
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i] = formatNum(x)
		}
		v.Set(k, strings.Join(s, ","))
	}
	setInt("parallelism", r.Parallelism)
	setInt("target", r.Target)
	setInt("maxParallelism", r.MaxParallelism)
	if r.Mode == assign.StartRestore {
		v.Set("mode", "restore")
	}
	if r.Strategy != "" && r.Strategy != strategy.Default {
		v.Set("strategy", r.Strategy)
	}
	if len(r.History) > 1 {
		v.Set("history", assign.FormatHistory(r.History))
	}
	if len(r.Rates) > 0 {
		v.Set("rates", partitionCSV(r.Topics, r.Rates))
	}
	switch {
	case r.State == nil:
	case r.StateTotal:
		total := int64(0)
		for _, b := range r.State {
			total += b
		}
		v.Set("state", formatBytes(total))
	default:
		s := make([]string, len(r.State))
		for i, b := range r.State {
			s[i] = formatBytes(b)
		}
		v.Set("state", strings.Join(s, ","))
	}
	setList("busy", r.Busy)
	setList("observed", r.Observed)
	setNum("capacity", r.Capacity)
	setList("keyedIn", r.KeyedIn)
	setList("keyedBusy", r.KeyedBusy)
	setNum("keyedCapacity", r.KeyedCapacity)
	setNum("utilization", r.Utilization)
	switch {
	case r.Backlog == nil:
	case len(r.Backlog) == 0:
		// Known to be empty: only the header says so.
		v.Set("backlog", "topic,partition,records\n")
	default:
		v.Set("backlog", partitionCSV(r.Topics, r.Backlog))
	}
	if len(r.Retention) > 0 {
		v.Set("retention", retentionCSV(r.Topics, r.Retention))
	}
	if !r.ObservedAt.IsZero() {
		v.Set("observedAt", r.ObservedAt.Format(time.RFC3339Nano))
	}
	if r.Job != "" {
		v.Set("job", r.Job)
	}
	if r.Sample != "" {
		v.Set("sample", r.Sample)
	}
	return v
}

// formatBytes is a size in the largest unit that divides it ("4GiB",
// "1500MB"), in bytes when none does, so that a typed size reads back
// exactly and a link still says "4GiB" for it.
func formatBytes(b int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"TB", 1e12}, {"GiB", 1 << 30}, {"GB", 1e9}, {"MiB", 1 << 20}, {"MB", 1e6}, {"KiB", 1 << 10}, {"KB", 1e3}} {
		if b >= u.size && b%u.size == 0 {
			return strconv.FormatInt(b/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(b, 10)
}

// formatNum is x in the shortest form that reads back to x.
func formatNum(x float64) string {
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// partitionCSV writes values per partition back as CSV lines
// "topic,partition,value" in topic order, partitions ascending.
func partitionCSV(topics []assign.Topic, values map[assign.TopicPartition]float64) string {
	order := map[string]int{}
	for i, t := range topics {
		order[t.Name] = i
	}
	tps := make([]assign.TopicPartition, 0, len(values))
	for tp := range values {
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
		w.Write([]string{tp.Topic, strconv.Itoa(int(tp.Partition)), formatNum(values[tp])})
	}
	w.Flush()
	return b.String()
}

// retentionCSV writes retentions back as lines "topic,retention.ms", the
// plan's topics in their order first, then any others by name.
func retentionCSV(topics []assign.Topic, retention map[string]time.Duration) string {
	order := map[string]int{}
	for i, t := range topics {
		order[t.Name] = i
	}
	names := make([]string, 0, len(retention))
	for name := range retention {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		oi, iKnown := order[names[i]]
		oj, jKnown := order[names[j]]
		switch {
		case iKnown && jKnown:
			return oi < oj
		case iKnown != jKnown:
			return iKnown
		}
		return names[i] < names[j]
	})
	var b strings.Builder
	for _, name := range names {
		b.WriteString(name + "," + strconv.FormatInt(retention[name].Milliseconds(), 10) + "\n")
	}
	return b.String()
}
