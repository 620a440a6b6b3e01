package sandbox

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Topic names. clicks and pageviews share KafkaStartIndex 1 at parallelism
// 4 (and 3 at 6), so both land on the same subtasks; the test checks it.
const (
	topicOrders    = "orders"
	topicInventory = "inventory.events"
	topicClicks    = "clicks"
	topicPageviews = "pageviews"
	topicPayments  = "payments"

	inventoryMaxPartitions = 8
)

// SilentPartition is the orders partition that stops receiving records
// Options.SilentAfter after Start. It is the quietest (Zipf rank 11), read
// by a subtask that keeps up (subtask 2 at parallelism 4): its watermark
// stops a second before the silence, and holds the job's once the hot
// subtask, which falls behind (reading about two thirds of its
// partitions' traffic), has read past that instant.
const SilentPartition = 7

// defaultSilentAfter is Options.SilentAfter when it is 0.
const defaultSilentAfter = 60 * time.Second

// topicSpec is one sandbox topic and its traffic.
type topicSpec struct {
	name              string
	initialPartitions int
	// rate returns the produce rate (records/s) of partition p at time t
	// since start.
	rate func(tr *topicTraffic, p int, t time.Duration) float64
	// key returns a record key.
	key func(r *rand.Rand, z *rand.Zipf) string
	// zipfN is the size of the key universe drawn from with z (0 = none).
	zipfN uint64
	// value returns a record value for key and event time ts (epoch ms);
	// nil is keyedValue.
	value func(r *rand.Rand, key string, ts int64) []byte
	// keyless topics' records have a null key: the key is in the value.
	keyless bool
}

var sandboxTopics = []topicSpec{
	{name: topicOrders, initialPartitions: 12, rate: ordersRate, key: orderKey, zipfN: 20000},
	{name: topicInventory, initialPartitions: 3, rate: flatRate(15), key: inventoryKey, zipfN: 5000},
	{name: topicClicks, initialPartitions: 2, rate: flatRate(65), key: sessionKey},
	{name: topicPageviews, initialPartitions: 2, rate: flatRate(65), key: userKey, zipfN: 50000},
	// payments: 30 records/s per partition, user ids Zipf-distributed,
	// written as a Flink SQL table's json format reads them, with a null
	// record key (the SQL job keys by the value's user_id).
	{name: topicPayments, initialPartitions: 6, rate: flatRate(30), key: paymentUser, zipfN: 2000, value: paymentValue, keyless: true},
}

// ordersTotalRate is the mean total produce rate of orders, records/s.
const ordersTotalRate = 360.0

// ordersRank gives each orders partition its Zipf rank (0 = hottest).
// Partitions 0 and 4 are the two hottest and both belong to subtask 3 at
// parallelism 4 (start index 3), which makes that subtask fall behind.
var ordersRank = [12]int{0, 5, 3, 7, 1, 9, 4, 11, 6, 2, 10, 8}

// ordersNorm is the sum of the Zipf weights of ordersRank, so that the
// weights add up to 1.
var ordersNorm = func() float64 {
	var norm float64
	for r := range len(ordersRank) {
		norm += 1 / math.Pow(float64(r+1), 1.1)
	}
	return norm
}()

// ordersRate is a Zipf-like rate (s = 1.1) by rank, modulated by a slow
// sine per partition (±35 %, periods of 8 to 20 minutes), so the ranking
// drifts over time.
func ordersRate(tr *topicTraffic, p int, t time.Duration) float64 {
	w := 1 / math.Pow(float64(ordersRank[p%12]+1), 1.1) / ordersNorm
	ph := tr.phase[p%len(tr.phase)]
	period := 8*time.Minute + time.Duration(p)*time.Minute
	mod := 1 + 0.35*math.Sin(2*math.Pi*t.Seconds()/period.Seconds()+ph)
	return ordersTotalRate * w * mod
}

func flatRate(perPartition float64) func(*topicTraffic, int, time.Duration) float64 {
	return func(tr *topicTraffic, p int, t time.Duration) float64 {
		ph := tr.phase[p%len(tr.phase)]
		return perPartition * (1 + 0.1*math.Sin(2*math.Pi*t.Seconds()/300+ph))
	}
}

var firstNames = []string{"anna", "jürgen", "zoë", "søren", "josé", "mia", "noah", "łukasz", "ines", "李雷", "Ольга", "emre", "chloé", "mateo", "aiko"}
var domains = []string{"example.com", "example.org", "mail.example", "beispiel.de"}

// orderKey is a customer id (70 %, Zipf-distributed so a few customers are
// hot) or a customer e-mail.
func orderKey(r *rand.Rand, z *rand.Zipf) string {
	n := z.Uint64()
	if r.IntN(10) < 7 {
		return fmt.Sprintf("customer-%05d", n)
	}
	return fmt.Sprintf("%s.%d@%s", firstNames[n%uint64(len(firstNames))], n, domains[n%uint64(len(domains))])
}

var products = []string{"crème-brûlée", "äpfel", "naïve-café", "寿司", "smørbrød", "jalapeño", "widget", "gadget"}

// inventoryKey is a SKU, sometimes with a non-ASCII product name.
func inventoryKey(r *rand.Rand, z *rand.Zipf) string {
	n := z.Uint64()
	if r.IntN(4) == 0 {
		return fmt.Sprintf("%s/sku-%06d", products[n%uint64(len(products))], n)
	}
	return fmt.Sprintf("sku-%06d", n)
}

// sessionKey is a random UUID (version 4).
func sessionKey(r *rand.Rand, _ *rand.Zipf) string {
	a, b := r.Uint64(), r.Uint64()
	a = a&^0xf000 | 0x4000
	b = b&^(3<<62) | 1<<63
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", a>>32, (a>>16)&0xffff, a&0xffff, b>>48, b&0xffffffffffff)
}

// userKey is a user e-mail, Zipf-distributed.
func userKey(r *rand.Rand, z *rand.Zipf) string {
	n := z.Uint64()
	return fmt.Sprintf("%s%d@%s", firstNames[n%uint64(len(firstNames))], n, domains[(n/7)%uint64(len(domains))])
}

// paymentUser is a user id, "u-00042", Zipf-distributed.
func paymentUser(_ *rand.Rand, z *rand.Zipf) string {
	return fmt.Sprintf("u-%05d", z.Uint64())
}

var regions = []string{"eu-west", "eu-central", "us-east", "us-west", "ap-south"}

// paymentValue is a payments row in Flink's json format:
// {"user_id":"u-00042","region":"eu-west","amount":12.5,"ts":1796345634024},
// the key column first.
func paymentValue(r *rand.Rand, key string, ts int64) []byte {
	b := make([]byte, 0, 96)
	b = append(b, `{"user_id":`...)
	b = strconv.AppendQuote(b, key)
	b = append(b, `,"region":`...)
	b = strconv.AppendQuote(b, regions[r.IntN(len(regions))])
	b = append(b, `,"amount":`...)
	b = strconv.AppendFloat(b, float64(1+r.IntN(20000))/100, 'f', -1, 64)
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, ts, 10)
	return append(b, '}')
}

// keyedValue is the record value of the keyed topics.
func keyedValue(r *rand.Rand, key string, ts int64) []byte {
	return fmt.Appendf(nil, `{"key":%s,"seq":%d,"amount":%d.%02d,"ts":%d}`,
		strconv.Quote(key), r.Uint32(), r.IntN(500), r.IntN(100), ts)
}

// topicTraffic is the live state of one topic's producer.
type topicTraffic struct {
	spec  topicSpec
	parts atomic.Int32 // partitions known to exist
	phase []float64    // per partition phase of the rate drift
}

// traffic produces records, grows inventory.events and deletes old records.
type traffic struct {
	s      *Sandbox
	cl     *kgo.Client
	topics []*topicTraffic
	began  time.Time

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// defaultRetention is how long records stay before the trimmer deletes
// them, defaultTrimEvery how often it does (Options.Retention, TrimEvery).
const (
	defaultRetention = 2 * time.Minute
	defaultTrimEvery = 20 * time.Second
	produceIn        = 100 * time.Millisecond
	// segmentBytes is the brokers' log.segment.bytes. DeleteRecords only
	// frees whole segments, so each partition holds up to one segment
	// beyond retention: 30 partitions × 256 KiB (plus kfake's in-memory
	// file growth slack) stays a few MiB, and the hottest orders partition
	// still rolls a segment about every minute.
	segmentBytes = 256 << 10
)

func newTraffic(s *Sandbox) (*traffic, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(s.brokers...),
		kgo.ClientID("skewscope-sandbox-producer"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(50*time.Millisecond),
		kgo.MaxBufferedRecords(20000),
	)
	if err != nil {
		return nil, fmt.Errorf("sandbox: producer client: %w", err)
	}
	tr := &traffic{s: s, cl: cl}
	r := s.subRand()
	for _, spec := range sandboxTopics {
		tt := &topicTraffic{spec: spec}
		tt.parts.Store(int32(spec.initialPartitions))
		tt.phase = make([]float64, inventoryMaxPartitions+12)
		for i := range tt.phase {
			tt.phase[i] = r.Float64() * 2 * math.Pi
		}
		tr.topics = append(tr.topics, tt)
	}
	tr.ctx, tr.cancel = context.WithCancel(context.Background())
	return tr, nil
}

func (tr *traffic) start() {
	tr.began = time.Now()
	tr.wg.Add(3)
	go tr.produceLoop()
	go tr.growLoop()
	go tr.trimLoop()
}

func (tr *traffic) stop() {
	tr.cancel()
	tr.wg.Wait()
	tr.cl.Close()
}

func (tr *traffic) produceLoop() {
	defer tr.wg.Done()
	r := tr.s.subRand()
	zipfs := make([]*rand.Zipf, len(tr.topics))
	for i, tt := range tr.topics {
		if tt.spec.zipfN > 0 {
			zipfs[i] = rand.NewZipf(r, 1.15, 2, tt.spec.zipfN-1)
		}
	}
	acc := make([][]float64, len(tr.topics))
	for i := range acc {
		acc[i] = make([]float64, inventoryMaxPartitions+12)
	}
	var failed atomic.Int64
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			if failed.Add(1)%1000 == 1 {
				tr.s.log.Debug("sandbox produce failed", "error", err)
			}
			return
		}
		tr.s.produced.Add(1)
	}
	tick := time.NewTicker(produceIn)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-tr.ctx.Done():
			return
		case now := <-tick.C:
			dt := now.Sub(last).Seconds()
			last = now
			if dt > 1 {
				dt = 1 // after a stall, do not burst
			}
			since := now.Sub(tr.began)
			for i, tt := range tr.topics {
				n := int(tt.parts.Load())
				for p := range n {
					if tr.silent(tt.spec.name, p, since) {
						continue
					}
					acc[i][p] += tt.spec.rate(tt, p, since) * dt
					for acc[i][p] >= 1 {
						acc[i][p]--
						key := tt.spec.key(r, zipfs[i])
						// The event time: a little before the record is
						// produced, never more than the jobs'
						// out-of-orderness bound, so none is late.
						ts := now.Add(-time.Duration(r.Int64N(int64(maxJitter))))
						value := tt.spec.value
						if value == nil {
							value = keyedValue
						}
						rec := &kgo.Record{
							Topic: tt.spec.name, Partition: int32(p),
							Value: value(r, key, ts.UnixMilli()), Timestamp: ts,
						}
						if !tt.spec.keyless {
							rec.Key = []byte(key)
						}
						tr.cl.Produce(tr.ctx, rec, promise)
					}
				}
			}
		}
	}
}

// silent reports whether partition p of topic receives no more records
// at since after the start (Options.SilentAfter).
func (tr *traffic) silent(topic string, p int, since time.Duration) bool {
	after := tr.s.opts.SilentAfter
	return topic == topicOrders && p == SilentPartition && after > 0 && since >= after
}

// growLoop adds one inventory.events partition every growEvery until it has
// inventoryMaxPartitions.
func (tr *traffic) growLoop() {
	defer tr.wg.Done()
	t := time.NewTicker(tr.s.opts.growEvery)
	defer t.Stop()
	var inv *topicTraffic
	for _, tt := range tr.topics {
		if tt.spec.name == topicInventory {
			inv = tt
		}
	}
	for inv.parts.Load() < inventoryMaxPartitions {
		select {
		case <-tr.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(tr.ctx, 5*time.Second)
		resp, err := tr.s.adm.CreatePartitions(ctx, 1, topicInventory)
		if err == nil {
			err = resp.Error()
		}
		cancel()
		if err != nil {
			tr.s.log.Warn("sandbox: add partition failed", "topic", topicInventory, "error", err)
			continue
		}
		n := inv.parts.Add(1)
		tr.cl.ForceMetadataRefresh()
		tr.s.log.Info("sandbox: topic grew", "topic", topicInventory, "partitions", n)
	}
}

// trimLoop deletes records older than Options.Retention: every TrimEvery
// it notes the end offsets and deletes up to the ones noted Retention ago.
func (tr *traffic) trimLoop() {
	defer tr.wg.Done()
	t := time.NewTicker(tr.s.opts.TrimEvery)
	defer t.Stop()
	type mark struct {
		at   time.Time
		ends kadm.ListedOffsets
	}
	var marks []mark
	names := make([]string, len(tr.topics))
	for i, tt := range tr.topics {
		names[i] = tt.spec.name
	}
	for {
		select {
		case <-tr.ctx.Done():
			return
		case now := <-t.C:
			ctx, cancel := context.WithTimeout(tr.ctx, 5*time.Second)
			ends, err := tr.s.adm.ListEndOffsets(ctx, names...)
			if err == nil {
				marks = append(marks, mark{now, ends})
			}
			var cut kadm.Offsets
			for len(marks) > 0 && now.Sub(marks[0].at) >= tr.s.opts.Retention {
				m := marks[0]
				marks = marks[1:]
				cut = kadm.Offsets{}
				m.ends.Each(func(o kadm.ListedOffset) {
					if o.Err == nil && o.Offset > 0 {
						cut.AddOffset(o.Topic, o.Partition, o.Offset, -1)
					}
				})
			}
			if len(cut) > 0 {
				if _, err := tr.s.adm.DeleteRecords(ctx, cut); err != nil {
					tr.s.log.Debug("sandbox: delete records failed", "error", err)
				}
			}
			cancel()
		}
	}
}
