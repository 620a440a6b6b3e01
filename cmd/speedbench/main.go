// Command speedbench times the planner's and the key sampler's costly steps
// beside the goals of issue 26, in interleaved rounds, and prints each
// figure (minimum / median of every timed run) with its goal and anchor:
//
//   - MakePlan for 10,000 partitions (20 topics × 500, p = 1024 → 1280,
//     max parallelism 32768) restored from a savepoint: goal ≤ 2 ms; the
//     anchor is the same plan for a fresh start, timed in the same rounds;
//   - the capacity sweep with a rate per partition over p = 1..10,000
//     (assign.Size, source capacity 5,000 records/s): goal ≤ 10 ms; it
//     prints how many p the sweep judged and its note;
//   - the heavy-hitter summary (keysample.Summary.Add, 1,000 counters, max
//     parallelism 128) over 1,000,000 string keys drawn from a Zipf law:
//     goal ≤ 1.5× the anchor, hashing the same keys alone (Java hashCode
//     and key group);
//   - and, for issue 25, routing 1,000,000 Flink SQL key rows of (BIGINT,
//     STRING) at max parallelism 32768 and parallelism 100, given whole
//     (KeyRowEncoder.RouteValues, the key sample's path) and written by
//     one Append per column (the key lookup's): goal ≤ 1.5× the anchor,
//     routing the same strings as plain String keys.
//
// The inputs are those of the benchmarks BenchmarkPlan10kRestore,
// BenchmarkPlan10k, BenchmarkSweep10kRates (assign) and
// BenchmarkSummaryAdd1MStringKeys, BenchmarkHashOnly1MStringKeys
// (keysample) and BenchmarkKeyRoute1M (assign).
//
//	go run ./cmd/speedbench            # what make bench runs
//	go run ./cmd/speedbench -rounds 9
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/benchstat"
	"github.com/skewscope/skewscope/keysample"
)

// The goals of issue 26.
const (
	goalPlanMs    = 2.0
	goalSweepMs   = 10.0
	goalSummaryX  = 1.5
	goalKeyRowX   = 1.5
	summaryKeys   = 1_000_000
	summaryCounts = 1000
	summaryMaxP   = 128
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "speedbench:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("speedbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rounds := fs.Int("rounds", 5, "rounds, each timing every measure")
	plans := fs.Int("plans", 20, "plans timed per side per round")
	sweeps := fs.Int("sweeps", 5, "sweeps timed per round")
	passes := fs.Int("passes", 2, "summary and hashing passes timed per round")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rounds < 1 || *plans < 1 || *sweeps < 1 || *passes < 1 {
		return errors.New("-rounds, -plans, -sweeps and -passes must be positive")
	}
	load0 := loadAverage()
	topics := planTopics()
	restoreIn := assign.PlanInput{Topics: topics, Current: 1024, Target: 1280, MaxParallelism: 32768, Start: assign.StartRestore}
	freshIn := restoreIn
	freshIn.Start = assign.StartFresh
	sweepIn := sweepInput()
	texts := summaryTexts()
	rowKeys := keyRowTexts()
	enc, err := assign.NewKeyRowEncoder(assign.SQLType{Root: assign.SQLBigInt}, assign.SQLType{Root: assign.SQLVarChar, Length: assign.SQLMaxLength})
	if err != nil {
		return err
	}

	var restore, fresh, sweep, summary, hashing, plainKeys, rowValues, rowAppends []float64
	var sz assign.Sizing
	for round := range *rounds {
		fmt.Fprintf(stderr, "speedbench: round %d of %d\n", round+1, *rounds)
		// One untimed run of each first, so every timed one finds warm code.
		for _, in := range []assign.PlanInput{restoreIn, freshIn} {
			if _, err := assign.MakePlan(in); err != nil {
				return err
			}
		}
		for range *plans {
			restore = append(restore, timeMs(func() { _, err = assign.MakePlan(restoreIn) }))
			if err != nil {
				return err
			}
			fresh = append(fresh, timeMs(func() { _, err = assign.MakePlan(freshIn) }))
			if err != nil {
				return err
			}
		}
		for range *sweeps {
			sweep = append(sweep, timeMs(func() { sz, err = assign.Size(sweepIn) }))
			if err != nil {
				return err
			}
		}
		for range *passes {
			var inSummary, hashed int64
			runtime.GC()
			summary = append(summary, timeMs(func() { inSummary = addAll(texts) }))
			runtime.GC()
			hashing = append(hashing, timeMs(func() { hashed = hashAll(texts) }))
			if inSummary != hashed {
				return fmt.Errorf("key group 0 holds %d keys in the summary, %d by hashing alone", inSummary, hashed)
			}
			var plain, byValues, byAppends int
			plainKeys = append(plainKeys, timeMs(func() { plain = routeStrings(rowKeys) }))
			rowValues = append(rowValues, timeMs(func() { byValues, err = routeRowValues(enc, rowKeys) }))
			if err != nil {
				return err
			}
			rowAppends = append(rowAppends, timeMs(func() { byAppends, err = routeRowAppends(enc, rowKeys) }))
			if err != nil {
				return err
			}
			if byValues != byAppends || plain == byValues {
				return fmt.Errorf("subtask sums: key rows given whole %d, appended %d, plain strings %d", byValues, byAppends, plain)
			}
		}
	}
	w := func(format string, a ...any) { fmt.Fprintf(stdout, format, a...) }
	w("Planner and key summary, issue 26: %d rounds, min / median of every timed run\n", *rounds)
	w("  load average before %s, after %s; GOMAXPROCS %d\n", load0, loadAverage(), runtime.GOMAXPROCS(0))
	r, f := summarize(restore), summarize(fresh)
	w("  %-34s goal ≤ %.1f ms   anchor fresh start %s   now %s: %s\n",
		"MakePlan 10k partitions, restore", goalPlanMs, f.ms(), r.ms(), verdict(r.median <= goalPlanMs))
	s := summarize(sweep)
	w("  %-34s goal ≤ %.1f ms   now %s: %s\n", "capacity sweep with rates, 1..10k", goalSweepMs, s.ms(), verdict(s.median <= goalSweepMs))
	if sz.SweptNote != "" {
		w("  %-34s %d of 1..%d judged: %s\n", "", sz.Swept, sz.Upper, sz.SweptNote)
	}
	a, h := summarize(summary), summarize(hashing)
	w("  %-34s goal ≤ %.1f× hashing   anchor hashing alone %s   now %s   ratio %.2f× (min %.2f×): %s\n",
		"heavy-hitter summary add, 1M keys", goalSummaryX, h.ms(), a.ms(), a.median/h.median, a.min/h.min, verdict(a.median/h.median <= goalSummaryX))
	k, v, ap := summarize(plainKeys), summarize(rowValues), summarize(rowAppends)
	w("Flink SQL key rows, issue 25\n")
	w("  %-34s goal ≤ %.1f× String keys   anchor 1M String keys %s   now %s   ratio %.2f× (min %.2f×): %s\n",
		"1M (BIGINT, STRING) rows, whole", goalKeyRowX, k.ms(), v.ms(), v.median/k.median, v.min/k.min, verdict(v.median/k.median <= goalKeyRowX))
	w("  %-34s goal ≤ %.1f× String keys   now %s   ratio %.2f× (min %.2f×): %s\n",
		"the same, one Append per column", goalKeyRowX, ap.ms(), ap.median/k.median, ap.min/k.min, verdict(ap.median/k.median <= goalKeyRowX))
	return nil
}

// The shape BenchmarkKeyRoute1M routes at, in variables so that no
// division is by a constant.
var rowMaxP, rowP = 32768, 100

// keyRowTexts are BenchmarkKeyRoute1M's strings: "customer-", 0 to 6
// x's, a letter and the key's index, 11 to 23 bytes.
func keyRowTexts() []string {
	keys := make([]string, 1_000_000)
	for i := range keys {
		keys[i] = "customer-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strconv.Itoa(i)
	}
	return keys
}

// routeStrings routes keys as String keys and returns the sum of their
// subtasks.
func routeStrings(keys []string) int {
	sum := 0
	for _, k := range keys {
		sum += assign.OperatorIndex(rowMaxP, rowP, assign.KeyGroupForHash(assign.StringHashCode(k), rowMaxP))
	}
	return sum
}

// routeRowValues routes the key rows (i, keys[i]) given whole and returns
// the sum of their subtasks.
func routeRowValues(e *assign.KeyRowEncoder, keys []string) (int, error) {
	vals := make([]assign.KeyValue, 2)
	sum := 0
	for i, k := range keys {
		vals[0].Int, vals[1].Text = int64(i), k
		_, op, err := e.RouteValues(vals, rowMaxP, rowP)
		if err != nil {
			return 0, err
		}
		sum += op
	}
	return sum, nil
}

// routeRowAppends routes the same key rows written by one Append per
// column.
func routeRowAppends(e *assign.KeyRowEncoder, keys []string) (int, error) {
	sum := 0
	for i, k := range keys {
		e.Reset()
		if err := e.AppendInt(int64(i)); err != nil {
			return 0, err
		}
		if err := e.AppendString(k); err != nil {
			return 0, err
		}
		_, op, err := e.Route(rowMaxP, rowP)
		if err != nil {
			return 0, err
		}
		sum += op
	}
	return sum, nil
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "NOT met"
}

// planTopics are BenchmarkPlan10k's topics: 20 × 500 partitions.
func planTopics() []assign.Topic {
	topics := make([]assign.Topic, 20)
	for i := range topics {
		topics[i] = assign.Topic{Name: fmt.Sprintf("events-%02d", i), Partitions: 500}
	}
	return topics
}

// sweepInput is BenchmarkSweep10kRates' input (assign's recBenchTopics).
func sweepInput() assign.SizingInput {
	r := rand.New(rand.NewPCG(9, 10))
	var topics []assign.Topic
	rates := map[assign.TopicPartition]float64{}
	for i := range 20 {
		tp := assign.Topic{Name: fmt.Sprintf("events-%02d", i), Partitions: 500}
		topics = append(topics, tp)
		for q := range tp.Partitions {
			v := r.ExpFloat64() * 1000
			if q%97 == 0 {
				v *= 20
			}
			rates[assign.TopicPartition{Topic: tp.Name, Partition: int32(q)}] = v
		}
	}
	return assign.SizingInput{RecommendInput: assign.RecommendInput{Topics: topics, Rates: rates, MaxParallelism: 32768,
		Current: 100, Target: 150, UpperLimit: 10000}, SourceCapacity: 5000}
}

// summaryTexts are keysample's benchTexts: "customer-" and a Zipf(1.05)
// draw from 200,000 values.
func summaryTexts() []string {
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.05, 1, 200_000-1)
	texts := make([]string, summaryKeys)
	for i := range texts {
		texts[i] = "customer-" + strconv.FormatUint(z.Uint64(), 10)
	}
	return texts
}

// addAll adds texts to a new summary and returns the records counted in
// its key group 0 (the same every pass).
func addAll(texts []string) int64 {
	s := keysample.NewSummary(summaryCounts, summaryMaxP)
	for _, t := range texts {
		s.Add(keysample.Key{Text: t, Hash: assign.StringHashCode(t)})
	}
	return s.KeyGroupCounts()[0]
}

// hashAll returns how many of texts fall in key group 0.
func hashAll(texts []string) int64 {
	var n int64
	for _, t := range texts {
		if assign.KeyGroupForHash(assign.StringHashCode(t), summaryMaxP) == 0 {
			n++
		}
	}
	return n
}

func timeMs(f func()) float64 {
	start := time.Now()
	f()
	return float64(time.Since(start).Nanoseconds()) / 1e6
}

// stats is the minimum and median of a series of figures in ms.
type stats struct{ min, median float64 }

func summarize(xs []float64) stats {
	lo, m := benchstat.MinMedian(xs)
	return stats{min: lo, median: m}
}

func (s stats) ms() string { return fmt.Sprintf("%.2f / %.2f ms", s.min, s.median) }

// loadAverage is the 1-, 5- and 15-minute load average from
// /proc/loadavg, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
