// Command keybench measures skewscope's String key routing against the JVM
// it mirrors: the time per key of assign.StringHashCode and
// assign.KeyGroupForHash on one goroutine, and of assign.RouteStrings over
// every core, beside Flink 2.2.1's own
// KeyGroupRangeAssignment.assignToKeyGroup on one JVM thread.
//
//	go run ./cmd/keybench                   # what make bench runs
//	go run ./cmd/keybench -rounds 5 -java /usr/lib/jvm/temurin-25-jdk-amd64/bin/java
//
// The keys are those of assign's BenchmarkKeyGroups1MStringKeys
// ("customer-" + 0..6 x's + a letter + the index, 11 to 23 ASCII bytes),
// written one per line to a temporary file that the Java side
// (e2e/flinkjob/bench, KeyGroupBench) reads, so both sides route the same
// bytes; each side sums its key groups and keybench fails unless every
// sum is equal. The Java side builds a fresh String per key before each
// pass, untimed, so no hashCode is cached (Go strings cache none).
//
// It runs the JVM it finds with Java 17 (Debian's openjdk-17, what make
// test needs) and the newest JDK it finds (in $JAVA_HOME, on PATH and in
// /usr/lib/jvm), or those -java names; the goals are judged against the
// newest. Rounds interleave the sides (Go one thread, the same with the
// code this package had before its 8-byte hashing, Go bulk, then each JVM
// in a new process), each round a few untimed warm-up passes and then
// timed passes over all keys; the figures are the minimum and the median
// of all timed passes, in ns per key. The harness is built with Maven
// (offline first, online when the local repository lacks a jar).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/skewscope/skewscope/assign"
)

// The goals of issue 26: one goroutine no slower than one thread of the
// newest JVM; the bulk API over every core at most half that thread's time.
const (
	goalSingle = 1.0
	goalBulk   = 0.5
)

type config struct {
	keys, maxP             int
	rounds, warmup, passes int
	javaWarmup, javaPasses int
	javas                  []string
	flinkjob               string
	build                  bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "keybench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("keybench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	var javas string
	fs.IntVar(&c.keys, "keys", 1_000_000, "number of keys")
	fs.IntVar(&c.maxP, "maxp", assign.UpperBoundMaxParallelism, "max parallelism (key groups)")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds, each running every side once")
	fs.IntVar(&c.warmup, "warmup", 2, "untimed Go passes per round")
	fs.IntVar(&c.passes, "passes", 10, "timed passes per side per round")
	fs.IntVar(&c.javaWarmup, "java-warmup", 10, "untimed JVM passes per round (the JIT compiles during them)")
	fs.StringVar(&javas, "java", "", "comma-separated java binaries (default: Java 17 and the newest JDK found)")
	fs.StringVar(&c.flinkjob, "flinkjob", filepath.Join("e2e", "flinkjob"), "the Maven project whose bench module holds the Java harness")
	fs.BoolVar(&c.build, "build", true, "build the Java harness with Maven first")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c.javaPasses = c.passes
	if c.keys < 1 || c.rounds < 1 || c.passes < 1 || c.warmup < 0 || c.javaWarmup < 0 {
		return errors.New("-keys, -rounds and -passes must be positive, the warm-ups not negative")
	}
	if err := assign.CheckParallelism(c.maxP); err != nil {
		return fmt.Errorf("-maxp: %w", err)
	}
	if javas != "" {
		c.javas = strings.Split(javas, ",")
	}
	return bench(ctx, c, stdout, stderr)
}

func bench(ctx context.Context, c config, stdout, stderr io.Writer) error {
	load0 := loadAverage()
	var jvms []jvm
	var err error
	if c.javas != nil {
		jvms, err = describeJVMs(ctx, c.javas)
	} else {
		jvms, err = findJVMs(ctx)
	}
	if err != nil {
		return err
	}
	if c.build {
		if err := buildHarness(ctx, c.flinkjob, stderr); err != nil {
			return err
		}
	}
	cp, err := harnessClasspath(c.flinkjob)
	if err != nil {
		return err
	}

	keys := benchKeys(c.keys)
	file, err := writeKeys(keys)
	if err != nil {
		return err
	}
	defer os.Remove(file)

	var single, before, bulk []float64
	perJVM := make([][]float64, len(jvms))
	want := int64(-1)
	check := func(who string, sum int64) error {
		if want < 0 {
			want = sum
		}
		if sum != want {
			return fmt.Errorf("%s: key groups sum to %d, Go one thread to %d: the sides route differently", who, sum, want)
		}
		return nil
	}
	kgs := make([]int32, len(keys))
	for round := range c.rounds {
		fmt.Fprintf(stderr, "keybench: round %d of %d\n", round+1, c.rounds)
		ts, sum := timeSingle(keys, c.maxP, c.warmup, c.passes)
		single = append(single, ts...)
		if err := check("Go, one thread", sum); err != nil {
			return err
		}
		tp, sum := timeBefore(keys, c.maxP, c.warmup, c.passes)
		before = append(before, tp...)
		if err := check("Go, one thread, before", sum); err != nil {
			return err
		}
		tb, sum, err := timeBulk(keys, kgs, c.maxP, c.warmup, c.passes)
		if err != nil {
			return err
		}
		bulk = append(bulk, tb...)
		if err := check("Go, bulk", sum); err != nil {
			return err
		}
		for i, j := range jvms {
			tj, sum, err := runHarness(ctx, j, cp, file, c)
			if err != nil {
				return err
			}
			perJVM[i] = append(perJVM[i], tj...)
			if err := check(j.String(), sum); err != nil {
				return err
			}
		}
	}
	r := report{
		keys: c.keys, maxP: c.maxP, rounds: c.rounds, passes: c.passes, procs: runtime.GOMAXPROCS(0),
		load: [2]string{load0, loadAverage()}, single: summarize(single), before: summarize(before), bulk: summarize(bulk), sum: want,
	}
	for i, j := range jvms {
		r.jvms = append(r.jvms, jvmResult{jvm: j, s: summarize(perJVM[i])})
	}
	r.write(stdout)
	return nil
}

// benchKeys returns the n keys of assign's BenchmarkKeyGroups1MStringKeys.
func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("customer-%s%c%d", strings.Repeat("x", i%7), 'a'+i%26, i)
	}
	return keys
}

// writeKeys writes keys one per line to a new temporary file and returns
// its name.
func writeKeys(keys []string) (string, error) {
	f, err := os.CreateTemp("", "keybench-*.keys")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(f, b.String()); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// timeSingle times passes over keys on this goroutine, each key's
// StringHashCode and KeyGroupForHash, as a Flink operator does per record:
// ns per key of each timed pass, and the sum of the key groups.
func timeSingle(keys []string, maxP, warmup, passes int) ([]float64, int64) {
	var out []float64
	var sum int64
	for pass := range warmup + passes {
		runtime.GC()
		start := time.Now()
		var s int64
		for _, k := range keys {
			s += int64(assign.KeyGroupForHash(assign.StringHashCode(k), maxP))
		}
		d := time.Since(start)
		sum = s
		if pass >= warmup {
			out = append(out, float64(d.Nanoseconds())/float64(len(keys)))
		}
	}
	return out, sum
}

// timeBulk times assign.RouteStrings over keys into kgs, on every core.
func timeBulk(keys []string, kgs []int32, maxP, warmup, passes int) ([]float64, int64, error) {
	var out []float64
	for pass := range warmup + passes {
		runtime.GC()
		start := time.Now()
		if err := assign.RouteStrings(keys, maxP, 0, assign.Routes{KeyGroups: kgs}); err != nil {
			return nil, 0, err
		}
		d := time.Since(start)
		if pass >= warmup {
			out = append(out, float64(d.Nanoseconds())/float64(len(keys)))
		}
	}
	var sum int64
	for _, kg := range kgs {
		sum += int64(kg)
	}
	return out, sum, nil
}

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
