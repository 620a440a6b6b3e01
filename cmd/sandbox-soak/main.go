// Command sandbox-soak starts the skewscope sandbox, lets it run for a while
// and reports its start time, resident memory (VmRSS) every minute and at the
// end, and the records produced and consumed.
//
//	go run ./cmd/sandbox-soak -for 10m
//
// With -memprofile PREFIX it also writes a heap profile after every report
// interval (PREFIX-2m.pprof, PREFIX-4m.pprof, ...), after a GC, for
// `go tool pprof -top -inuse_space`. Each report then includes the live heap.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/skewscope/skewscope/sandbox"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox-soak:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sandbox-soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dur := fs.Duration("for", 10*time.Minute, "how long to run")
	every := fs.Duration("every", time.Minute, "report interval")
	seed := fs.Int64("seed", 0, "sandbox seed (0 = time-based)")
	verbose := fs.Bool("v", false, "log the sandbox's own lines to stderr")
	memprofile := fs.String("memprofile", "", "write a heap profile to `PREFIX`-<elapsed>.pprof at every report")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}

	t0 := time.Now()
	sb, err := sandbox.Start(ctx, sandbox.Options{Logger: logger, Seed: *seed})
	if err != nil {
		return err
	}
	startup := time.Since(t0)
	defer sb.Close()
	fmt.Fprintf(stdout, "start time: %v (kafka %v, flink %s, seed %d)\n", startup.Round(time.Millisecond), sb.KafkaBrokers(), sb.FlinkURL(), sb.Seed())

	report := func(label string) {
		rss, err := vmRSS()
		if err != nil {
			fmt.Fprintf(stdout, "%s: rss error: %v\n", label, err)
		}
		st := sb.Stats()
		elapsed := time.Since(t0).Round(time.Second)
		heap := ""
		if *memprofile != "" {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heap = fmt.Sprintf(", heap inuse %.1f MB, sys %.1f MB", float64(ms.HeapInuse)/(1<<20), float64(ms.Sys)/(1<<20))
			if err := writeHeap(fmt.Sprintf("%s-%s.pprof", *memprofile, elapsed.Round(time.Minute))); err != nil {
				fmt.Fprintf(stdout, "%s: heap profile error: %v\n", label, err)
			}
		}
		fmt.Fprintf(stdout, "%s: elapsed %v, rss %s, produced %d, consumed %d%s\n",
			label, elapsed, rss, st.Produced, st.Consumed, heap)
	}
	report("start")
	tick := time.NewTicker(*every)
	defer tick.Stop()
	end := time.NewTimer(*dur)
	defer end.Stop()
	for {
		select {
		case <-ctx.Done():
			report("interrupted")
			return nil
		case <-tick.C:
			report("tick")
		case <-end.C:
			report("end")
			return nil
		}
	}
}

// writeHeap writes a heap profile to path.
func writeHeap(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// vmRSS reads the VmRSS line of /proc/self/status.
func vmRSS() (string, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("no VmRSS in /proc/self/status")
}
