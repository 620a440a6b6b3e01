package sample

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSampleHugeBatch: a 40 MiB record in a topic that allows it neither
// reaches the handler nor the sampler's memory: compressed, its batch is
// skipped and counted without being decompressed; uncompressed, the fetch
// response is refused before it is read, and the sample fails saying so.
func TestSampleHugeBatch(t *testing.T) {
	for _, tt := range []struct {
		name string
		comp kgo.CompressionCodec
		err  string // "": skipped
	}{
		// lz4: zstd decoders close a channel from a finalizer, which a
		// synctest bubble does not allow.
		{name: "compressed", comp: kgo.Lz4Compression()},
		{name: "uncompressed", comp: kgo.NoCompression(), err: "a record batch over the 32 MiB a sample fetches at once"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc := newCluster(t, 1)
				v := "100000000"
				if _, err := kadm.NewClient(tc.cl).AlterTopicConfigs(t.Context(), []kadm.AlterConfig{{Name: "max.message.bytes", Value: &v}}, topic); err != nil {
					t.Fatal(err)
				}
				big := tc.client(t, kgo.ProducerBatchMaxBytes(64<<20), kgo.BrokerMaxWriteBytes(128<<20),
					kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(tt.comp))
				tc.produce(t, 0, 0, 2, 10)
				if err := big.ProduceSync(t.Context(), &kgo.Record{Topic: topic, Partition: 0, Key: []byte("p0-2"), Value: make([]byte, 40<<20)}).FirstErr(); err != nil {
					t.Fatal(err)
				}
				tc.produce(t, 0, 3, 2, 10)
				got, p, err := tc.sample(t.Context(), Request{Topic: topic, Mode: ModeLast, LastN: 10}, nil)
				if tt.err != "" {
					if err == nil || !strings.Contains(err.Error(), tt.err) || p.StoppedBy != StoppedError {
						t.Errorf("Sample = %+v, %v; want an error with %q", p, err, tt.err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if g, want := offsets(t, got), []po{{0, 0}, {0, 1}, {0, 3}, {0, 4}}; !slices.Equal(g, want) {
					t.Errorf("read %v, want %v", g, want)
				}
				if p.Skipped != 1 || p.StoppedBy != StoppedComplete {
					t.Errorf("Sample = %+v, want 1 skipped, complete", p)
				}
			})
		})
	}
}
