package sample

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/collectors/kafka"
)

// BenchmarkSample1M reads 1,000,000 records (16-byte keys, 100-byte
// values, 4 partitions) from a kfake cluster over loopback TCP with a
// no-op handler. The records are produced once, before the timer.
func BenchmarkSample1M(b *testing.B) {
	const (
		records    = 1_000_000
		partitions = 4
		perPart    = records / partitions
	)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.MaxBufferedRecords(100_000))
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	var perr error
	var mu sync.Mutex
	value := make([]byte, 100)
	for i := range records {
		r := &kgo.Record{Topic: topic, Partition: int32(i % partitions), Key: fmt.Appendf(nil, "user-%011d", i), Value: value}
		wg.Add(1)
		cl.Produce(context.Background(), r, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				perr = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	cl.Close()
	if perr != nil {
		b.Fatal(perr)
	}

	cfg := kafka.Config{Name: "bench", Brokers: c.ListenAddrs()}
	req := Request{Topic: topic, Mode: ModeLast, LastN: perPart, Limits: Limits{MaxRecords: records, MaxTime: 5 * time.Minute}}
	b.ReportAllocs()
	var bytes int64
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	start := time.Now()
	n := 0
	for b.Loop() {
		p, err := Sample(context.Background(), cfg, req, func(Record) {}, nil)
		if err != nil || p.Records != records || p.StoppedBy != StoppedComplete {
			b.Fatalf("Sample = %+v, %v; want %d records, complete", p, err, records)
		}
		bytes = p.Bytes
		n++
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(n*records)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(int64(n)*bytes)/1e6/elapsed.Seconds(), "MB/s")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(n*records), "allocs/record")
}
