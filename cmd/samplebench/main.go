// Command samplebench times a key sample's Kafka reads against a plain
// franz-go consumer on the same broker (issue 26's goal: the sample at
// least 0.9× the plain consumer's records per second), in interleaved
// rounds, and prints each side's records/s (minimum / median), the ratio
// of the medians, and the CPU the reading process spends per record (when
// the broker rather than the reader is what bounds a side's rate, the
// records/s of the two come out alike and the CPU figure tells them
// apart).
//
// The broker is franz-go's kfake, run in a child process (samplebench
// re-executes itself with the hidden -serve flag), so that the broker's own
// work is not on the measured process's cores: on 2 cores the broker has
// one and the reader the other. The child produces the records once: by
// default 1,000,000 of 16-byte keys and 100-byte values over 4 partitions,
// BenchmarkSample1M's. Each round reads all of them three ways:
//
//   - plain: a kgo consumer of its own, with the fetch options a sample
//     uses (sample.FetchOptions), reading every partition from its start
//     until it has counted every record;
//
//   - sample: sample.Sample in mode "last" over the same records with a
//     handler that does nothing, the sample's reading alone (the goal's
//     row);
//
//   - keyed: the same with the key sample's work on each record
//     (keysample.KeySpec.Key of the record key as a String, then
//     Summary.Add with 1,000 counters), what a key sample costs in all.
//
//     go run ./cmd/samplebench            # what make bench runs
//     go run ./cmd/samplebench -rounds 9
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/collectors/kafka/sample"
	"github.com/skewscope/skewscope/internal/benchstat"
	"github.com/skewscope/skewscope/keysample"
)

const (
	topic      = "bench"
	goalRatio  = 0.9
	keyBytes   = 16
	valueBytes = 100
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "samplebench:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("samplebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	serve := fs.Bool("serve", false, "") // hidden: run as the broker child
	rounds := fs.Int("rounds", 5, "rounds, each reading the records the three ways")
	records := fs.Int("records", 1_000_000, "records the broker holds")
	partitions := fs.Int("partitions", 4, "partitions of the topic")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	case *rounds < 1:
		return errors.New("-rounds must be positive")
	case *records < 1 || *partitions < 1 || *records%*partitions != 0:
		return errors.New("-records and -partitions must be positive, the records a multiple of the partitions")
	}
	if *serve {
		return serveBroker(*records, *partitions, stdin, stdout)
	}
	// The child's stderr is copied in by os/exec's goroutine while the
	// rounds write their progress: one lock for both.
	stderr = &lockedWriter{w: stderr}
	addr, stopBroker, err := startBroker(*records, *partitions, stderr)
	if err != nil {
		return err
	}
	defer stopBroker()

	cfg := kafka.Config{Name: "bench", Brokers: []string{addr}}
	want := int64(*records)
	req := sample.Request{Topic: topic, Mode: sample.ModeLast, LastN: want / int64(*partitions),
		Limits: sample.Limits{MaxRecords: want, MaxTime: 5 * time.Minute}}
	spec, err := keysample.ParseKeySpec("key", "string", "", "")
	if err != nil {
		return err
	}
	sides := []struct {
		name string
		read func() (int64, error)
	}{
		{"plain", func() (int64, error) { return readPlain(addr, *partitions, want) }},
		{"sample", func() (int64, error) { return readSample(cfg, req, func(sample.Record) {}) }},
		{"keyed", func() (int64, error) {
			sum := keysample.NewSummary(1000, 128)
			var bad error
			n, err := readSample(cfg, req, func(r sample.Record) {
				k, err := spec.Key(r.Key, r.Value)
				if err != nil {
					bad = err
					return
				}
				sum.Add(k)
			})
			if err == nil && bad != nil {
				err = fmt.Errorf("a record key: %w", bad)
			}
			if err == nil && sum.Records() != want {
				err = fmt.Errorf("the summary counted %d records, not %d", sum.Records(), want)
			}
			return n, err
		}},
	}
	rates, cpus := make([][]float64, len(sides)), make([][]float64, len(sides))
	for round := range *rounds {
		fmt.Fprintf(stderr, "samplebench: round %d of %d\n", round+1, *rounds)
		for i := range sides {
			// Each round starts with another side, so that none is always
			// the one that finds the broker's caches cold.
			s := (i + round) % len(sides)
			runtime.GC()
			cpu0, err := benchstat.SelfCPU()
			if err != nil {
				return err
			}
			start := time.Now()
			n, err := sides[s].read()
			elapsed := time.Since(start)
			if err != nil {
				return fmt.Errorf("%s: %w", sides[s].name, err)
			}
			cpu1, err := benchstat.SelfCPU()
			if err != nil {
				return err
			}
			cpus[s] = append(cpus[s], float64(cpu1-cpu0)/float64(n))
			if n != want {
				return fmt.Errorf("%s read %d records, not %d", sides[s].name, n, want)
			}
			rates[s] = append(rates[s], float64(n)/elapsed.Seconds()/1e6)
		}
	}
	w := func(format string, a ...any) { fmt.Fprintf(stdout, format, a...) }
	w("Key sample reads, issue 26: %d rounds of %d records (%d-byte keys, %d-byte values, %d partitions) from kfake in a child process; GOMAXPROCS %d\n",
		*rounds, *records, keyBytes, valueBytes, *partitions, runtime.GOMAXPROCS(0))
	med := make([]float64, len(sides))
	for i, s := range sides {
		lo, m := benchstat.MinMedian(rates[i])
		clo, cm := benchstat.MinMedian(cpus[i])
		med[i] = m
		w("  %-7s %.2f / %.2f M records/s   reader CPU %.0f / %.0f ns/record\n", s.name, lo, m, clo, cm)
	}
	verdict := "NOT met"
	if med[1] >= goalRatio*med[0] {
		verdict = "met"
	}
	w("  sample ÷ plain %.2f× (goal ≥ %.1f×): %s; keyed ÷ plain %.2f× (the key sample's work on each record included)\n",
		med[1]/med[0], goalRatio, verdict, med[2]/med[0])
	return nil
}

// readPlain reads want records from every partition's start with a
// consumer that fetches as a sample does, and returns how many it read.
func readPlain(addr string, partitions int, want int64) (int64, error) {
	offsets := map[int32]kgo.Offset{}
	for p := range partitions {
		offsets[int32(p)] = kgo.NewOffset().AtStart()
	}
	opts := append(sample.FetchOptions(),
		kgo.SeedBrokers(addr),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.DisableClientMetrics())
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var n int64
	for n < want {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return n, err
		}
		fs.EachRecord(func(*kgo.Record) { n++ })
	}
	return n, nil
}

// readSample runs a sample with handle and returns how many records it
// delivered.
func readSample(cfg kafka.Config, req sample.Request, handle func(sample.Record)) (int64, error) {
	p, err := sample.Sample(context.Background(), cfg, req, handle, nil)
	if err != nil {
		return p.Records, err
	}
	if p.StoppedBy != sample.StoppedComplete {
		return p.Records, fmt.Errorf("the sample stopped by %s", p.StoppedBy)
	}
	return p.Records, nil
}

// startBroker starts the child broker and returns its address and a
// function that stops it.
func startBroker(records, partitions int, stderr io.Writer) (string, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(exe, "-serve", fmt.Sprintf("-records=%d", records), fmt.Sprintf("-partitions=%d", partitions))
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		in.Close() // the child stops when its stdin closes
		cmd.Wait()
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("the broker child said no address: %v", err)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		stop()
		return "", nil, fmt.Errorf("the broker child said %q, not its address", line)
	}
	return addr, stop, nil
}

// lockedWriter serialises the writes of several goroutines to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// serveBroker runs a kfake broker holding the records, prints its
// address, and serves until stdin closes.
func serveBroker(records, partitions int, stdin io.Reader, stdout io.Writer) error {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), topic))
	if err != nil {
		return err
	}
	defer c.Close()
	if err := produce(c.ListenAddrs(), records, partitions); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "listening %s\n", c.ListenAddrs()[0])
	_, err = io.Copy(io.Discard, stdin)
	return err
}

// produce writes the records round-robin over the partitions: key
// "user-" and 11 digits, a value of valueBytes zeros; 10,000 at a time.
func produce(addrs []string, records, partitions int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.DisableClientMetrics())
	if err != nil {
		return err
	}
	defer cl.Close()
	value := make([]byte, valueBytes)
	batch := make([]*kgo.Record, 0, 10_000)
	for i := 0; i < records; {
		batch = batch[:0]
		for ; i < records && len(batch) < cap(batch); i++ {
			batch = append(batch, &kgo.Record{Topic: topic, Partition: int32(i % partitions), Key: fmt.Appendf(nil, "user-%011d", i), Value: value})
		}
		if err := cl.ProduceSync(context.Background(), batch...).FirstErr(); err != nil {
			return err
		}
	}
	return nil
}
