// Command jmload measures what skewscope's Flink collector costs per poll
// against a large Flink cluster: requests, response bytes and CPU.
//
//	go run ./cmd/jmload                       # both shapes of issue 11
//	go run ./cmd/jmload -jobs 50 -parallelism 64 -partitions 256 -polls 5
//	go run ./cmd/jmload -event-time=false     # what reading event time costs: compare
//
// It re-executes itself with the hidden -serve flag to run a fake
// JobManager (internal/fakejm) in a child process, then polls it with
// flink.NewCollector and PollOnce in its own process: the CPU figures are
// getrusage(RUSAGE_SELF) of that process (user + system) around each
// poll, so they cover the collector alone (its HTTP client, JSON decoding
// and garbage collection), not the fake. Requests and bytes are counted by
// the fake, per kind of endpoint, and read from its /_stats endpoint,
// which the counts leave out. The core fraction is CPU per poll divided by
// the poll interval (default flink.MetricFreshness, 10 s): the share of a
// core the collector needs to poll at that interval.
//
// Every poll's snapshot is checked (every job and vertex read without
// error, every partition observed under the subtask Flink assigns it to)
// and the fake must have answered every request; otherwise jmload prints
// what is wrong and exits non-zero, so a broken fake or collector cannot
// report figures.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

// defaultShapes are issue 11's: 50 jobs at p=64 reading 256 partitions
// each, and 500 jobs at p=16 reading 64 (four partitions per source
// subtask in both).
const defaultShapes = "50x64x256,500x16x64"

// shape is one fake cluster: jobs × 3 vertices at one parallelism.
type shape struct {
	jobs, parallelism, partitions int
}

func (s shape) String() string {
	return fmt.Sprintf("%d jobs × 3 vertices × p=%d, %d partitions per source", s.jobs, s.parallelism, s.partitions)
}

type config struct {
	serve           bool
	addr            string
	shapes          []shape
	topics          []string
	polls, warmup   int
	interval        time.Duration
	timeout         time.Duration
	rps             float64
	inFlight        int
	checkpointEvery int
	eventTime       bool
	cpuProfile      string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "jmload:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("jmload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg                   config
		shapes, topics        string
		jobs, par, partitions int
	)
	fs.BoolVar(&cfg.serve, "serve", false, "") // hidden: run as the fake JobManager child
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:0", "listen address of the fake JobManager (child)")
	fs.StringVar(&shapes, "shapes", defaultShapes, "comma-separated shapes JOBSxPARALLELISMxPARTITIONS, measured one after the other")
	fs.IntVar(&jobs, "jobs", 0, "jobs (with -parallelism and -partitions: one shape instead of -shapes)")
	fs.IntVar(&par, "parallelism", 0, "parallelism of every vertex")
	fs.IntVar(&partitions, "partitions", 0, "partitions each job's source reads, spread over -topics")
	fs.StringVar(&topics, "topics", "orders,payments.v1", "comma-separated topics every source reads")
	fs.IntVar(&cfg.polls, "polls", 3, "measured polls per shape")
	fs.IntVar(&cfg.warmup, "warmup", 1, "polls before measuring (the first reads every checkpoint's details)")
	fs.DurationVar(&cfg.interval, "interval", flink.MetricFreshness, "poll interval the core fraction is computed for")
	fs.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "collector RequestTimeout (bounds one whole poll)")
	fs.Float64Var(&cfg.rps, "rps", 0, "collector MaxRequestsPerSecond (0: its default)")
	fs.IntVar(&cfg.inFlight, "in-flight", 0, "collector MaxInFlight (0: its default)")
	fs.IntVar(&cfg.checkpointEvery, "checkpoint-every", 0, "checkpoint-list requests per new checkpoint (0: the fake's default, a checkpoint a minute at 10 s polls)")
	fs.BoolVar(&cfg.eventTime, "event-time", true, "the fake's jobs have event time: watermark gauges listed and advancing (false: none listed, so the collector reads none; the baseline of event time's cost)")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of the collector's process over the measured polls to this file (with several shapes: the last)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	cfg.topics = strings.Split(topics, ",")
	if jobs != 0 || par != 0 || partitions != 0 {
		shapes = fmt.Sprintf("%dx%dx%d", jobs, par, partitions)
	}
	var err error
	if cfg.shapes, err = parseShapes(shapes); err != nil {
		return err
	}
	switch {
	case cfg.polls < 1 || cfg.warmup < 0:
		return errors.New("-polls must be positive and -warmup not negative")
	case cfg.interval <= 0 || cfg.timeout <= 0:
		return errors.New("-interval and -timeout must be positive")
	case cfg.checkpointEvery < 0:
		return errors.New("-checkpoint-every must not be negative")
	}
	if cfg.serve {
		if len(cfg.shapes) != 1 {
			return errors.New("-serve takes one shape")
		}
		return serve(ctx, cfg, stdout, stderr)
	}
	var results []*result
	for _, sh := range cfg.shapes {
		fmt.Fprintf(stdout, "\n%s (topics %s)\n", sh, strings.Join(cfg.topics, ", "))
		res, err := measure(ctx, cfg, sh, stdout, stderr)
		if err != nil {
			return fmt.Errorf("%s: %w", sh, err)
		}
		results = append(results, res)
	}
	printSummary(stdout, cfg, results)
	return nil
}

// parseShapes parses "50x64x256,500x16x64".
func parseShapes(s string) ([]shape, error) {
	var out []shape
	for f := range strings.SplitSeq(s, ",") {
		parts := strings.Split(strings.TrimSpace(f), "x")
		if len(parts) != 3 {
			return nil, fmt.Errorf("shape %q: want JOBSxPARALLELISMxPARTITIONS", f)
		}
		var n [3]int
		for i, p := range parts {
			v, err := strconv.Atoi(p)
			if err != nil || v < 1 {
				return nil, fmt.Errorf("shape %q: %q is not a positive number", f, p)
			}
			n[i] = v
		}
		if err := assign.CheckParallelism(n[1]); err != nil {
			return nil, fmt.Errorf("shape %q: %w", f, err)
		}
		out = append(out, shape{jobs: n[0], parallelism: n[1], partitions: n[2]})
	}
	return out, nil
}
