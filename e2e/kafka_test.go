//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/assign"
)

// kafkaClient produces to and reads from the test broker with franz-go.
type kafkaClient struct {
	bootstrap string
	cl        *kgo.Client
	adm       *kadm.Client
}

func newKafkaClient(t *testing.T, bootstrap string) *kafkaClient {
	t.Helper()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(bootstrap),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.ProducerBatchMaxBytes(1<<20),
		kgo.MaxBufferedRecords(100_000),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &kafkaClient{bootstrap: bootstrap, cl: cl, adm: kadm.NewClient(cl)}
}

// createTopics creates topics (replication 1) and waits until every
// partition has a leader. It retries while the fresh broker is still
// registering with its controller.
func (k *kafkaClient) createTopics(t *testing.T, topics ...assign.Topic) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for _, tp := range topics {
		for {
			resp, err := k.adm.CreateTopic(ctx, int32(tp.Partitions), 1, nil, tp.Name)
			if err == nil {
				err = resp.Err
			}
			if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("create topic %s: %v / %v", tp.Name, err, resp.Err)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	k.waitTopics(ctx, t, topics...)
}

// growTopic raises topic's partition count to total and waits for leaders.
func (k *kafkaClient) growTopic(t *testing.T, topic assign.Topic) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	resp, err := k.adm.UpdatePartitions(ctx, topic.Partitions, topic.Name)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("grow %s to %d partitions: %v", topic.Name, topic.Partitions, err)
	}
	k.waitTopics(ctx, t, topic)
}

// waitTopics waits until each topic has its partition count, all with leaders.
func (k *kafkaClient) waitTopics(ctx context.Context, t *testing.T, topics ...assign.Topic) {
	t.Helper()
	names := make([]string, len(topics))
	for i, tp := range topics {
		names[i] = tp.Name
	}
	for {
		md, err := k.adm.ListTopics(ctx, names...)
		ready := err == nil
		for _, tp := range topics {
			d, ok := md[tp.Name]
			if !ok || d.Err != nil || len(d.Partitions) != tp.Partitions {
				ready = false
				continue
			}
			for _, p := range d.Partitions {
				if p.Err != nil || p.Leader < 0 {
					ready = false
				}
			}
		}
		if ready {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("topics %v not ready: %v", names, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// produce writes recs synchronously.
func (k *kafkaClient) produce(t *testing.T, recs []*kgo.Record) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	for {
		err := k.cl.ProduceSync(ctx, recs...).FirstErr()
		if err == nil {
			return
		}
		// After growTopic the client's cached metadata may still show the
		// old partition count; refresh and retry (records are re-sent, and
		// the checks tolerate duplicates).
		if !strings.Contains(err.Error(), "invalid record partitioning choice") || ctx.Err() != nil {
			t.Fatalf("produce %d records: %v", len(recs), err)
		}
		k.cl.ForceMetadataRefresh()
		time.Sleep(300 * time.Millisecond)
	}
}

// pokePartitions writes one record to every partition of topics, keyed
// "poke-<topic>-<p>-<round>", tagged "-".
func (k *kafkaClient) pokePartitions(t *testing.T, round string, topics ...assign.Topic) {
	t.Helper()
	var recs []*kgo.Record
	for _, tp := range assign.Partitions(topics) {
		recs = append(recs, &kgo.Record{
			Topic:     tp.Topic,
			Partition: tp.Partition,
			Key:       []byte(fmt.Sprintf("poke-%s-%d-%s", tp.Topic, tp.Partition, round)),
			Value:     []byte("-"),
		})
	}
	k.produce(t, recs)
}

// produceKeys writes one record per key, value = its index (the tag the
// job echoes), spread round-robin over the topic's partitions.
func (k *kafkaClient) produceKeys(t *testing.T, topic assign.Topic, keys []string, tagPrefix string) {
	t.Helper()
	recs := make([]*kgo.Record, len(keys))
	for i, key := range keys {
		recs[i] = &kgo.Record{
			Topic:     topic.Name,
			Partition: int32(i % topic.Partitions),
			Key:       []byte(key),
			Value:     []byte(tagPrefix + strconv.Itoa(i)),
		}
	}
	k.produce(t, recs)
}

// route is one output record of the job: the keyed subtask's view
// (Subtask … Tag) and which source subtask read the record from which
// partition (SourceSubtask … Partition).
type route struct {
	Key               string
	Subtask           int
	Parallelism       int
	MaxP              int
	Count             int64
	Hash              int32
	Tag               string
	SourceSubtask     int
	SourceParallelism int
	Topic             string
	Partition         int32
}

// parseRoute reads an output value
// "subtask,parallelism,maxParallelism,count,hashCode,tag,sourceSubtask,sourceParallelism,topic,partition":
// five fields from the left, four from the right (topic names hold no
// commas), and the tag is what lies between, commas and all.
func parseRoute(r *kgo.Record) (route, error) {
	head := strings.SplitN(string(r.Value), ",", 6)
	if len(head) != 6 {
		return route{}, fmt.Errorf("output value %q: want at least 10 comma-separated fields", r.Value)
	}
	rest := head[5]
	tailFields := make([]string, 4)
	for i := 3; i >= 0; i-- {
		cut := strings.LastIndexByte(rest, ',')
		if cut < 0 {
			return route{}, fmt.Errorf("output value %q: want at least 10 comma-separated fields", r.Value)
		}
		tailFields[i], rest = rest[cut+1:], rest[:cut]
	}
	var out route
	var err error
	ints := make([]int64, 5)
	for i := 0; i < 5; i++ {
		if ints[i], err = strconv.ParseInt(head[i], 10, 64); err != nil {
			return route{}, fmt.Errorf("output value %q: %v", r.Value, err)
		}
	}
	var src [3]int64
	for i, f := range []string{tailFields[0], tailFields[1], tailFields[3]} {
		if src[i], err = strconv.ParseInt(f, 10, 32); err != nil {
			return route{}, fmt.Errorf("output value %q: %v", r.Value, err)
		}
	}
	out.Key = string(r.Key)
	out.Subtask, out.Parallelism, out.MaxP = int(ints[0]), int(ints[1]), int(ints[2])
	out.Count, out.Hash, out.Tag = ints[3], int32(ints[4]), rest
	out.SourceSubtask, out.SourceParallelism, out.Topic, out.Partition = int(src[0]), int(src[1]), tailFields[2], int32(src[2])
	return out, nil
}

// readRoutes consumes topic from the start and hands each route to
// visit until visit reports that it has all it needs, or timeout passes.
func (k *kafkaClient) readRoutes(t *testing.T, topic string, timeout time.Duration, visit func(route) (done bool)) error {
	t.Helper()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(k.bootstrap),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	n := 0
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("reading %s: timed out after %s (%d records)", topic, timeout, n)
		}
		for _, e := range fs.Errors() {
			t.Logf("fetch %s[%d]: %v", e.Topic, e.Partition, e.Err)
		}
		var perr error
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			n++
			if perr != nil || done {
				return
			}
			rt, err := parseRoute(r)
			if err != nil {
				perr = err
				return
			}
			done = visit(rt)
		})
		if perr != nil {
			return perr
		}
		if done {
			return nil
		}
	}
}
