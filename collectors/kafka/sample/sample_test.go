package sample

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/skewscope/skewscope/collectors"
	"github.com/skewscope/skewscope/collectors/kafka"
)

const topic = "clicks"

// testCluster is a 3-broker kfake cluster on an in-memory network, so that
// it runs in a synctest bubble, with topic "clicks".
type testCluster struct {
	c    *kfake.Cluster
	cfg  kafka.Config
	dial kgo.Opt     // dial is the network's dialer, for every client.
	cl   *kgo.Client // cl produces the fixture records.
}

func newCluster(t testing.TB, partitions int32) *testCluster {
	t.Helper()
	vn := new(kfake.VirtualNetwork)
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.Ports(19092, 19093, 19094),
		kfake.SeedTopics(partitions, topic), kfake.ListenFn(vn.Listen))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	tc := &testCluster{c: c, cfg: kafka.Config{Name: "test", Brokers: c.ListenAddrs()}, dial: kgo.Dialer(vn.DialContext)}
	tc.cl = tc.client(t, kgo.ClientID("fixture"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	return tc
}

func (tc *testCluster) client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(tc.c.ListenAddrs()...), tc.dial}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produce writes n records to partition with the given value size; keys
// are "p<partition>-<offset>" from offset first.
func (tc *testCluster) produce(t testing.TB, partition int32, first, n, valueSize int) {
	t.Helper()
	rs := make([]*kgo.Record, n)
	for i := range rs {
		rs[i] = &kgo.Record{Topic: topic, Partition: partition,
			Key: fmt.Appendf(nil, "p%d-%d", partition, first+i), Value: make([]byte, valueSize)}
	}
	if err := tc.cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// sample runs Sample against tc and returns the records in the order
// handled.
func (tc *testCluster) sample(ctx context.Context, req Request, progress func(Progress)) ([]Record, Progress, error) {
	var got []Record
	p, err := Sample(ctx, tc.cfg, req, func(r Record) { got = append(got, r) }, progress, tc.dial)
	return got, p, err
}

type po struct {
	partition int32
	offset    int64
}

// offsets returns the (partition, offset) of rs sorted, after checking
// that each partition's records came in offset order and each key matches
// its offset.
func offsets(t *testing.T, rs []Record) []po {
	t.Helper()
	last := map[int32]int64{}
	var out []po
	for _, r := range rs {
		if prev, ok := last[r.Partition]; ok && r.Offset <= prev {
			t.Errorf("partition %d: offset %d handled after %d", r.Partition, r.Offset, prev)
		}
		last[r.Partition] = r.Offset
		if want := fmt.Sprintf("p%d-%d", r.Partition, r.Offset); string(r.Key) != want {
			t.Errorf("record at %d/%d has key %q, want %q", r.Partition, r.Offset, r.Key, want)
		}
		if r.Size != len(r.Key)+len(r.Value) {
			t.Errorf("record at %d/%d: Size = %d, want %d", r.Partition, r.Offset, r.Size, len(r.Key)+len(r.Value))
		}
		out = append(out, po{r.Partition, r.Offset})
	}
	slices.SortFunc(out, func(a, b po) int {
		return cmp.Or(cmp.Compare(a.partition, b.partition), cmp.Compare(a.offset, b.offset))
	})
	return out
}

func span(partition int32, from, to int64) []po {
	var out []po
	for o := from; o < to; o++ {
		out = append(out, po{partition, o})
	}
	return out
}

// TestSampleLastN reads exactly the last N offsets of each partition, fewer
// when the log is shorter or starts later, and nothing produced after the
// start.
func TestSampleLastN(t *testing.T) {
	for _, tt := range []struct {
		name       string
		setup      func(t *testing.T, tc *testCluster)
		partitions []int32
		during     func(t *testing.T, tc *testCluster) // once, at the first record
		want       []po
	}{
		{
			name: "full, short and empty partitions",
			want: slices.Concat(span(0, 5, 10), span(1, 0, 3)),
		},
		{
			name:  "log start moved by DeleteRecords",
			setup: func(t *testing.T, tc *testCluster) { deleteRecords(t, tc, 0, 8) },
			want:  slices.Concat(span(0, 8, 10), span(1, 0, 3)),
		},
		{
			name:  "every record deleted",
			setup: func(t *testing.T, tc *testCluster) { deleteRecords(t, tc, 0, 10) },
			want:  span(1, 0, 3),
		},
		{
			name:       "chosen partitions",
			partitions: []int32{1},
			want:       span(1, 0, 3),
		},
		{
			name: "records produced while sampling are not read",
			during: func(t *testing.T, tc *testCluster) {
				tc.produce(t, 0, 10, 5, 10)
				tc.produce(t, 1, 3, 5, 10)
				tc.produce(t, 2, 0, 5, 10)
			},
			want: slices.Concat(span(0, 5, 10), span(1, 0, 3)),
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc := newCluster(t, 3)
				tc.produce(t, 0, 0, 10, 10)
				tc.produce(t, 1, 0, 3, 10)
				if tt.setup != nil {
					tt.setup(t, tc)
				}
				var got []Record
				handle := func(r Record) {
					if tt.during != nil && len(got) == 0 {
						tt.during(t, tc)
					}
					got = append(got, r)
				}
				req := Request{Topic: topic, Partitions: tt.partitions, Mode: ModeLast, LastN: 5}
				p, err := Sample(t.Context(), tc.cfg, req, handle, nil, tc.dial)
				if err != nil {
					t.Fatalf("Sample(%+v) error = %v", req, err)
				}
				if g := offsets(t, got); !slices.Equal(g, tt.want) {
					t.Errorf("Sample(%+v) read %v, want %v", req, g, tt.want)
				}
				wantParts := 3
				if tt.partitions != nil {
					wantParts = len(tt.partitions)
				}
				want := Progress{Records: int64(len(tt.want)), Bytes: int64(len(tt.want)) * (5 + 10), Partitions: wantParts,
					PartitionsDone: wantParts, Done: true, StoppedBy: StoppedComplete}
				p.Elapsed, p.Bytes = 0, p.Bytes-int64(keyLenExtra(got))
				if p != want {
					t.Errorf("Sample(%+v) = %+v, want %+v", req, p, want)
				}
			})
		})
	}
}

// keyLenExtra is the bytes by which the keys of rs are longer than 5 ("p0-1"
// is 4, "p0-10" 5...), so that expected byte counts stay simple.
func keyLenExtra(rs []Record) int {
	n := 0
	for _, r := range rs {
		n += len(r.Key) - 5
	}
	return n
}

func deleteRecords(t *testing.T, tc *testCluster, partition int32, before int64) {
	t.Helper()
	if err := tc.c.DeleteRecords(topic, partition, before); err != nil {
		t.Fatalf("DeleteRecords(%d, %d): %v", partition, before, err)
	}
}

// TestSampleLastEndsAtTransactionMarker: a partition whose last offset is
// a commit marker, not a record, is still read to its end.
func TestSampleLastEndsAtTransactionMarker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newCluster(t, 1)
		tx := tc.client(t, kgo.TransactionalID("flink-sink"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		ctx := t.Context()
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			r := &kgo.Record{Topic: topic, Partition: 0, Key: fmt.Appendf(nil, "p0-%d", i), Value: []byte("v")}
			if err := tx.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
		got, p, err := tc.sample(ctx, Request{Topic: topic, Mode: ModeLast, LastN: 100}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if g, want := offsets(t, got), span(0, 0, 3); !slices.Equal(g, want) {
			t.Errorf("read %v, want %v", g, want)
		}
		if p.StoppedBy != StoppedComplete || p.PartitionsDone != 1 {
			t.Errorf("Sample = %+v, want complete with the partition done", p)
		}
	})
}

// TestSampleReadOnly fails on any request from the sampler that would
// write to the cluster or join a group, and checks that every request it
// sends is a read of metadata, offsets or records.
func TestSampleReadOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newCluster(t, 3)
		for p := range int32(3) {
			tc.produce(t, p, 0, 20, 10)
		}
		tc.cl.Close() // the fixture's requests are over before the hooks go in

		forbidden := []kmsg.Key{kmsg.Produce, kmsg.JoinGroup, kmsg.SyncGroup, kmsg.Heartbeat, kmsg.LeaveGroup,
			kmsg.OffsetCommit, kmsg.TxnOffsetCommit, kmsg.InitProducerID, kmsg.AddPartitionsToTxn,
			kmsg.AddOffsetsToTxn, kmsg.EndTxn, kmsg.ConsumerGroupHeartbeat, kmsg.DeleteRecords,
			kmsg.CreateTopics, kmsg.DeleteTopics, kmsg.FindCoordinator, kmsg.OffsetFetch,
			kmsg.GetTelemetrySubscriptions, kmsg.PushTelemetry}
		var mu sync.Mutex
		var bad []string
		seen := map[kmsg.Key]int{}
		for _, k := range forbidden {
			tc.c.ControlKey(int16(k), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
				tc.c.KeepControl()
				mu.Lock()
				bad = append(bad, kmsg.NameForKey(kreq.Key()))
				mu.Unlock()
				return nil, nil, false
			})
		}
		tc.c.Control(func(kreq kmsg.Request) (kmsg.Response, error, bool) {
			tc.c.KeepControl()
			mu.Lock()
			seen[kmsg.Key(kreq.Key())]++
			mu.Unlock()
			return nil, nil, false
		})

		got, p, err := tc.sample(t.Context(), Request{Topic: topic, Mode: ModeLast, LastN: 10}, nil)
		if err != nil || len(got) != 30 || p.StoppedBy != StoppedComplete {
			t.Errorf("last: Sample = %d records, %+v, %v; want 30, complete", len(got), p, err)
		}
		if _, p, err = tc.sample(t.Context(), Request{Topic: topic, Mode: ModeLive, Window: 5 * time.Second}, nil); err != nil || p.StoppedBy != StoppedComplete {
			t.Errorf("live: Sample = %+v, %v; want complete", p, err)
		}

		mu.Lock()
		defer mu.Unlock()
		if len(bad) > 0 {
			t.Errorf("the sampler sent %v, want no write and no group request", bad)
		}
		allowed := []kmsg.Key{kmsg.ApiVersions, kmsg.Metadata, kmsg.ListOffsets, kmsg.Fetch, kmsg.OffsetForLeaderEpoch}
		for k, n := range seen {
			if !slices.Contains(allowed, k) {
				t.Errorf("the sampler sent %d %s requests, want only %v", n, kmsg.NameForKey(int16(k)), allowed)
			}
		}
		for _, k := range []kmsg.Key{kmsg.ListOffsets, kmsg.Fetch} {
			if seen[k] == 0 {
				t.Errorf("no %s request seen: the hook does not see the sampler", kmsg.NameForKey(int16(k)))
			}
		}
	})
}

func TestSampleLimits(t *testing.T) {
	for _, tt := range []struct {
		name   string
		limits Limits
		values int // value bytes of the fixture's 4 records a partition, whose keys are 4 bytes
		big    int // records of 2,000-byte values after them in partition 0
		want   Progress
	}{
		{
			name:   "records",
			limits: Limits{MaxRecords: 7},
			values: 10,
			want:   Progress{Records: 7, Bytes: 7 * 14, Partitions: 3, StoppedBy: StoppedRecords},
		},
		{
			name:   "records equal to the sample",
			limits: Limits{MaxRecords: 12},
			values: 10,
			want:   Progress{Records: 12, Bytes: 12 * 14, Partitions: 3, PartitionsDone: 3, StoppedBy: StoppedComplete},
		},
		{
			name:   "bytes",
			limits: Limits{MaxBytes: 100},
			values: 10,
			want:   Progress{Records: 7, Bytes: 98, Partitions: 3, StoppedBy: StoppedBytes},
		},
		{
			name:   "oversized records skipped and counted",
			limits: Limits{MaxRecordBytes: 1000},
			values: 10,
			big:    2,
			want:   Progress{Records: 12, Bytes: 12 * 14, Skipped: 2, Partitions: 3, PartitionsDone: 3, StoppedBy: StoppedComplete},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc := newCluster(t, 3)
				for p := range int32(3) {
					tc.produce(t, p, 0, 4, tt.values)
				}
				if tt.big > 0 {
					tc.produce(t, 0, 4, tt.big, 2000)
				}
				req := Request{Topic: topic, Mode: ModeLast, LastN: 100, Limits: tt.limits}
				got, p, err := tc.sample(t.Context(), req, nil)
				if err != nil {
					t.Fatal(err)
				}
				// Which partitions a stopped sample finished depends on
				// the order of the fetches.
				p.Elapsed, p.PartitionsDone = 0, min(p.PartitionsDone, tt.want.PartitionsDone)
				tt.want.Done = true
				if p != tt.want {
					t.Errorf("Sample(%+v) = %+v, want %+v", req.Limits, p, tt.want)
				}
				if int64(len(got)) != p.Records {
					t.Errorf("Sample(%+v) handled %d records, progress says %d", req.Limits, len(got), p.Records)
				}
				for _, r := range got {
					if r.Size > 1000 {
						t.Errorf("record %d/%d of %d bytes delivered over MaxRecordBytes", r.Partition, r.Offset, r.Size)
					}
				}
			})
		})
	}
}

// TestSampleTimeLimit: a sample whose fetches get no answer stops at
// MaxTime. Time is the bubble's.
func TestSampleTimeLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newCluster(t, 1)
		tc.produce(t, 0, 0, 10, 10)
		tc.c.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
			tc.c.KeepControl()
			return nil, nil, true // handled, no answer
		})
		req := Request{Topic: topic, Mode: ModeLast, LastN: 10, Limits: Limits{MaxTime: 3 * time.Second}}
		got, p, err := tc.sample(t.Context(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.StoppedBy != StoppedTime || len(got) != 0 || p.Elapsed < 3*time.Second {
			t.Errorf("Sample = %d records, %+v; want none, stopped by time after 3s", len(got), p)
		}
	})
}

// TestSampleProgress: progress comes every ProgressInterval while a live
// sample waits, and once at the end with Done.
func TestSampleProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newCluster(t, 2)
		var ps []Progress
		_, p, err := tc.sample(t.Context(), Request{Topic: topic, Mode: ModeLive, Window: 2 * time.Second}, func(p Progress) { ps = append(ps, p) })
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) < 8 {
			t.Errorf("%d progress calls in a 2s window, want at least 8", len(ps))
		}
		for i := 1; i < len(ps); i++ {
			if d := ps[i].Elapsed - ps[i-1].Elapsed; d > ProgressInterval {
				t.Errorf("progress %d came %v after the one before, want at most %v", i, d, ProgressInterval)
			}
		}
		if last := ps[len(ps)-1]; last != p || !p.Done || p.StoppedBy != StoppedComplete || p.PartitionsDone != 2 {
			t.Errorf("last progress %+v, returned %+v; want them equal, done, complete, 2 partitions done", last, p)
		}
		for _, q := range ps[:len(ps)-1] {
			if q.Done {
				t.Errorf("progress %+v before the end has Done", q)
			}
		}
	})
}

// TestSampleProgressSlowHandler: progress keeps coming while a slow
// handler works through one fetch.
func TestSampleProgressSlowHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newCluster(t, 1)
		tc.produce(t, 0, 0, 1000, 10)
		var ps []Progress
		p, err := Sample(t.Context(), tc.cfg, Request{Topic: topic, Mode: ModeLast, LastN: 1000},
			func(Record) { time.Sleep(time.Millisecond) }, func(p Progress) { ps = append(ps, p) }, tc.dial)
		if err != nil || p.Records != 1000 {
			t.Fatalf("Sample = %+v, %v; want 1000 records", p, err)
		}
		for i := 1; i < len(ps); i++ {
			if d := ps[i].Elapsed - ps[i-1].Elapsed; d > ProgressInterval+progressEvery*time.Millisecond {
				t.Errorf("progress %d came %v after the one before, want at most %v", i, d, ProgressInterval+progressEvery*time.Millisecond)
			}
		}
		if len(ps) < 4 {
			t.Errorf("%d progress calls over a 1s handler, want at least 4", len(ps))
		}
	})
}

// TestSampleCancel: cancelling ctx stops a sample with what it read.
func TestSampleCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newCluster(t, 1)
		tc.produce(t, 0, 0, 100, 10)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var n int
		p, err := Sample(ctx, tc.cfg, Request{Topic: topic, Mode: ModeLast, LastN: 100}, func(Record) {
			n++
			if n == 10 {
				cancel()
			}
		}, nil, tc.dial)
		if err != nil {
			t.Fatal(err)
		}
		if p.StoppedBy != StoppedCancelled || !p.Done || p.Records >= 100 || p.Records < 10 {
			t.Errorf("Sample cancelled at 10 records = %+v, want cancelled with 10 to 99 records", p)
		}

		// Cancelled while live and idle.
		ctx, cancel = context.WithCancel(t.Context())
		p, err = Sample(ctx, tc.cfg, Request{Topic: topic, Mode: ModeLive, Window: time.Minute}, nil, func(p Progress) {
			if p.Partitions > 0 {
				cancel()
			}
		}, tc.dial)
		if err != nil || p.StoppedBy != StoppedCancelled || p.Records != 0 {
			t.Errorf("live Sample cancelled = %+v, %v; want cancelled, no records", p, err)
		}
	})
}

// TestSampleLive reads the records produced after the start, not those
// before, and ends with the window.
func TestSampleLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newCluster(t, 2)
		tc.produce(t, 0, 0, 5, 10) // before: not read
		var listed bool
		var got []Record
		var p Progress
		done := make(chan struct{})
		start := time.Now()
		go func() {
			defer close(done)
			var err error
			got, p, err = tc.sample(t.Context(), Request{Topic: topic, Mode: ModeLive, Window: 10 * time.Second}, func(p Progress) {
				if p.Partitions > 0 && !listed {
					listed = true
					tc.produce(t, 0, 5, 3, 10)
					tc.produce(t, 1, 0, 2, 10)
				}
			})
			if err != nil {
				t.Error(err)
			}
		}()
		// Written while the sample waits, within the window.
		time.Sleep(5 * time.Second)
		tc.produce(t, 1, 2, 1, 10)
		<-done
		// Written after the window: the sample is over.
		tc.produce(t, 1, 3, 1, 10)
		if g, want := offsets(t, got), slices.Concat(span(0, 5, 8), span(1, 0, 3)); !slices.Equal(g, want) {
			t.Errorf("live sample read %v, want %v", g, want)
		}
		if p.StoppedBy != StoppedComplete || p.PartitionsDone != 2 {
			t.Errorf("live Sample = %+v, want complete, 2 partitions done", p)
		}
		if d := time.Since(start); d < 10*time.Second {
			t.Errorf("live Sample of a 10s window returned after %v (bubble time)", d)
		}
	})
}

// TestSampleUnreachable: brokers that refuse connections or never answer
// are an error naming the cause within the request timeout, not a hang.
func TestSampleUnreachable(t *testing.T) {
	req := Request{Topic: topic, Mode: ModeLast, LastN: 10, Limits: Limits{MaxTime: 3 * time.Second}}
	t.Run("refused", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			vn := new(kfake.VirtualNetwork) // nothing listens
			start := time.Now()
			p, err := Sample(t.Context(), kafka.Config{Name: "down", Brokers: []string{"127.0.0.1:19099"}}, req, nil, nil, kgo.Dialer(vn.DialContext))
			if err == nil || !strings.Contains(err.Error(), "no listener on port 19099") || p.StoppedBy != StoppedError || p.Err != err.Error() {
				t.Errorf("Sample(down) = %+v, %v; want an error naming the dial failure", p, err)
			}
			if d := time.Since(start); d > req.Limits.MaxTime+time.Second {
				t.Errorf("Sample(down) took %v (bubble time), want at most MaxTime %v", d, req.Limits.MaxTime)
			}
		})
	})
	t.Run("silent", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// The broker accepts connections and reads requests but
			// never answers.
			dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
				client, server := net.Pipe()
				go func() {
					defer server.Close()
					buf := make([]byte, 4096)
					for {
						if _, err := server.Read(buf); err != nil {
							return
						}
					}
				}()
				return client, nil
			}
			start := time.Now()
			p, err := Sample(t.Context(), kafka.Config{Name: "silent", Brokers: []string{"127.0.0.1:19099"}}, req, nil, nil, kgo.Dialer(dial))
			if err == nil || !strings.Contains(err.Error(), "no answer within 3s") || p.StoppedBy != StoppedError {
				t.Errorf("Sample(silent) = %+v, %v; want an error saying no answer came", p, err)
			}
			if d := time.Since(start); d > req.Limits.MaxTime+time.Second {
				t.Errorf("Sample(silent) took %v (bubble time), want at most MaxTime %v", d, req.Limits.MaxTime)
			}
		})
	})
	t.Run("real socket refused", func(t *testing.T) {
		// A closed port on the loopback: no timing asserted.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		req := req
		req.Limits.MaxTime = 500 * time.Millisecond
		p, err := Sample(t.Context(), kafka.Config{Name: "down", Brokers: []string{addr}}, req, nil, nil)
		if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), `kafka cluster "down"`) {
			t.Errorf("Sample(%s) = %+v, %v; want an error naming the cluster and the broker", addr, p, err)
		}
	})
}

func TestSampleUnknownTopicAndPartition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newCluster(t, 3)
		_, p, err := tc.sample(t.Context(), Request{Topic: "nope", Mode: ModeLast, LastN: 1}, nil)
		if err == nil || !strings.Contains(err.Error(), "UNKNOWN_TOPIC_OR_PARTITION") || p.StoppedBy != StoppedError {
			t.Errorf("Sample(unknown topic) = %+v, %v; want UNKNOWN_TOPIC_OR_PARTITION", p, err)
		}
		_, _, err = tc.sample(t.Context(), Request{Topic: topic, Partitions: []int32{1, 7}, Mode: ModeLast, LastN: 1}, nil)
		if err == nil || !strings.Contains(err.Error(), "partitions [7]: not in the topic, which has 3 partitions") {
			t.Errorf("Sample(partition 7 of 3) error = %v, want one naming partition 7", err)
		}
	})
}

func TestRequestValidate(t *testing.T) {
	ok := Request{Topic: topic, Mode: ModeLast, LastN: 10}
	for _, tt := range []struct {
		name string
		edit func(r *Request)
		want []string // field paths
	}{
		{"valid last", func(*Request) {}, nil},
		{"valid live", func(r *Request) { r.Mode, r.LastN, r.Window = ModeLive, 0, time.Minute }, nil},
		{"valid caps", func(r *Request) {
			r.Limits = Limits{MaxRecords: MaxRecordsCap, MaxBytes: MaxBytesCap, MaxTime: MaxTimeCap, MaxRecordBytes: MaxRecordBytesCap}
		}, nil},
		{"no topic", func(r *Request) { r.Topic = " " }, []string{"topic"}},
		{"bad mode", func(r *Request) { r.Mode = "first" }, []string{"mode"}},
		{"last without n", func(r *Request) { r.LastN = 0 }, []string{"lastN"}},
		{"last over cap", func(r *Request) { r.LastN = MaxRecordsCap + 1 }, []string{"lastN"}},
		{"last with window", func(r *Request) { r.Window = time.Second }, []string{"window"}},
		{"live without window", func(r *Request) { r.Mode, r.LastN = ModeLive, 0 }, []string{"window"}},
		{"live window over maxTime", func(r *Request) {
			r.Mode, r.LastN, r.Window, r.Limits.MaxTime = ModeLive, 0, time.Minute, 30*time.Second
		}, []string{"window"}},
		{"partitions", func(r *Request) { r.Partitions = []int32{1, -1, 1} }, []string{"partitions[1]", "partitions[2]"}},
		{"empty partitions", func(r *Request) { r.Partitions = []int32{} }, []string{"partitions"}},
		{"limits over caps", func(r *Request) {
			r.Limits = Limits{MaxRecords: MaxRecordsCap + 1, MaxBytes: MaxBytesCap + 1, MaxTime: MaxTimeCap + 1, MaxRecordBytes: MaxRecordBytesCap + 1}
		}, []string{"limits.maxRecords", "limits.maxBytes", "limits.maxRecordBytes", "limits.maxTime"}},
		{"negative limits", func(r *Request) {
			r.Limits = Limits{MaxRecords: -1, MaxBytes: -1, MaxTime: -1, MaxRecordBytes: -1}
		}, []string{"limits.maxRecords", "limits.maxBytes", "limits.maxRecordBytes", "limits.maxTime"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ok
			tt.edit(&r)
			err := r.Validate()
			var got []string
			if fe, ok := errors.AsType[collectors.FieldErrors](err); ok {
				for _, e := range fe {
					got = append(got, e.Path)
				}
			} else if err != nil {
				t.Fatalf("Validate() = %v, not FieldErrors", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Validate(%+v) fields = %v (%v), want %v", r, got, err, tt.want)
			}
		})
	}
}

func TestWithDefaults(t *testing.T) {
	got := Request{Mode: ModeLive, Window: time.Minute}.WithDefaults().Limits
	want := Limits{MaxRecords: DefaultMaxRecords, MaxBytes: DefaultMaxBytes, MaxTime: time.Minute + DefaultMaxTime, MaxRecordBytes: DefaultMaxRecordBytes}
	if got != want {
		t.Errorf("live WithDefaults().Limits = %+v, want %+v", got, want)
	}
	got = Request{Mode: ModeLive, Window: time.Minute, Limits: Limits{MaxTime: DefaultMaxTime + time.Minute/2}}.WithDefaults().Limits
	if got.MaxTime != DefaultMaxTime+time.Minute/2 {
		t.Errorf("live WithDefaults() changed a given MaxTime to %v", got.MaxTime)
	}
	if got := (Request{Mode: ModeLast}).WithDefaults().Limits.MaxTime; got != DefaultMaxTime {
		t.Errorf("last WithDefaults().Limits.MaxTime = %v, want %v", got, DefaultMaxTime)
	}
}

// TestSampleLogDeletedUnderIt: records deleted between the listing and the
// fetch leave nothing to read; the sample still completes.
func TestSampleLogDeletedUnderIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newCluster(t, 2)
		tc.produce(t, 0, 0, 10, 10)
		tc.produce(t, 1, 0, 10, 10)
		deleted := false
		got, p, err := tc.sample(t.Context(), Request{Topic: topic, Mode: ModeLast, LastN: 5}, func(p Progress) {
			if p.Partitions > 0 && !deleted { // listed, not fetched yet
				deleted = true
				deleteRecords(t, tc, 0, -1)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if g, want := offsets(t, got), span(1, 5, 10); !slices.Equal(g, want) {
			t.Errorf("read %v, want %v", g, want)
		}
		if p.StoppedBy != StoppedComplete || p.PartitionsDone != 2 {
			t.Errorf("Sample = %+v, want complete, 2 partitions done", p)
		}
	})
}
