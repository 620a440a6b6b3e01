package sample

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/collectors/kafka"
)

// ProgressInterval is the longest time between two progress calls (while
// the handler takes less than ProgressInterval/64 a record).
const ProgressInterval = 250 * time.Millisecond

// progressEvery is how many records the sampler takes between two looks at
// the clock within one fetch.
const progressEvery = 64

// Why a sample stopped: [Progress.StoppedBy].
const (
	StoppedComplete  = "complete"  // every partition read to its end ("last") or the window ended ("live")
	StoppedRecords   = "records"   // Limits.MaxRecords delivered
	StoppedBytes     = "bytes"     // the next record would have passed Limits.MaxBytes
	StoppedTime      = "time"      // Limits.MaxTime passed
	StoppedCancelled = "cancelled" // the context was cancelled
	StoppedError     = "error"     // see Progress.Err
)

// The consumer's memory bounds. A fetch response holds at most about
// fetchMaxBytes (more only when one partition's first batch is larger,
// which Kafka returns whole), at most maxConcurrentFetches are in flight
// or buffered, a response over brokerMaxReadBytes is refused before it is
// read, and a batch that would decompress past maxDecompressBatchBytes is
// an error rather than an allocation.
const (
	fetchMaxBytes           = 8 << 20
	fetchMaxPartitionBytes  = 1 << 20
	brokerMaxReadBytes      = 32 << 20
	maxDecompressBatchBytes = 32 << 20
	maxConcurrentFetches    = 4
)

// Record is one sampled record. Key and Value belong to the receiver,
// which may keep them.
type Record struct {
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	// Size is the bytes of key, value and headers (names and values), the
	// measure of Limits.MaxBytes and Limits.MaxRecordBytes.
	Size int
}

// Progress is how far a sample got.
type Progress struct {
	Records        int64 // Records delivered.
	Bytes          int64 // Bytes of the delivered records' Size.
	Partitions     int   // Partitions sampled; 0 until their offsets are listed.
	PartitionsDone int   // PartitionsDone were read to their end (mode "last"; all of them when a "live" window ends).
	Elapsed        time.Duration
	Done           bool
	StoppedBy      string // "" while running, then one of the Stopped constants.
	// Skipped records over Limits.MaxRecordBytes, counted but not
	// delivered; also the offsets of a batch that would decompress past
	// 32 MiB, which the client does not decompress.
	Skipped int64

	Err string // Err says why StoppedBy is "error".
}

// Sample reads the records of req and calls handle with each, in offset
// order per partition, then returns the final [Progress]. handle and
// progress are called from one goroutine, the caller's; progress at least
// every [ProgressInterval] and once at the end with Done set. Either may
// be nil.
//
// Sample only reads: it lists the log start and end offsets of the
// partitions, then fetches them from exact offsets with a direct-partition
// consumer of its own (kgo.ConsumePartitions, like the collectors), closed
// before it returns. It never joins a group, commits or produces. The
// client takes its brokers, TLS and SASL from cfg ([kafka.Config.ClientOptions]),
// and its dial and request timeouts are cfg.RequestTimeout, at most
// req.Limits.MaxTime, so an unreachable cluster is an error after that
// long, not a hang.
//
// The error is non-nil only when the sample failed (StoppedBy "error": a
// bad request or config, unreachable brokers, an unknown topic or
// partition, a fetch error). A sample stopped by a limit or by cancelling
// ctx is not an error: the records delivered so far are a valid sample,
// and StoppedBy says why it ended.
//
// Mode "last" stops at the end offsets listed at the start even while
// producers write. Transaction markers take offsets but are not records, so
// a partition with them delivers fewer than LastN records; so does a
// compacted one, and one whose records are deleted (retention,
// DeleteRecords) while the sample runs: the consumer goes on from the new
// log start, and a partition left with nothing to read is seen done by
// listing the log starts again after a second without records.
//
// extra are further client options, after the ones cfg gives (tests pass
// a dialer).
func Sample(ctx context.Context, cfg kafka.Config, req Request, handle func(Record), progress func(Progress), extra ...kgo.Opt) (Progress, error) {
	if handle == nil {
		handle = func(Record) {}
	}
	if progress == nil {
		progress = func(Progress) {}
	}
	s := &sampler{started: time.Now(), topic: req.Topic, handle: handle, progress: progress}
	stop, err := s.run(ctx, cfg, req, extra)
	s.p.Done, s.p.StoppedBy = true, stop
	if err != nil {
		s.p.Err = err.Error()
	}
	if stop == StoppedComplete && req.Mode == ModeLive {
		s.p.PartitionsDone = s.p.Partitions
	}
	s.emit(time.Now())
	return s.p, err
}

type sampler struct {
	started  time.Time
	topic    string
	lim      Limits
	handle   func(Record)
	progress func(Progress)

	p            Progress
	parts        map[int32]*partState
	nextProgress time.Time
	seen         int // records taken from fetches, control records included

	// Mode "last": after idleRecheck with nothing fetched, the log start
	// offsets are listed again, to finish the partitions whose records
	// were all deleted before they were read.
	adm         *kadm.Client
	timeout     time.Duration // timeout is the client's request timeout.
	idleSince   time.Time
	nextRecheck time.Time
}

// idleRecheck is how long a "last" sample waits for records before it
// lists the log start offsets again, and then between two listings.
const idleRecheck = time.Second

type partState struct {
	start int64 // start is the first offset read.
	end   int64 // end is the offset to stop before; math.MaxInt64 in mode "live".
	done  bool
}

// partRange is one partition's offsets to read, [start, end).
type partRange struct {
	partition  int32
	start, end int64
}

// FetchOptions are the fetch bounds of every sample's consumer (see the
// constants above), for a consumer that is to fetch as a sample does: the
// plain franz-go consumer cmd/samplebench times a sample against.
func FetchOptions() []kgo.Opt {
	return []kgo.Opt{
		kgo.FetchMaxBytes(fetchMaxBytes),
		kgo.FetchMaxPartitionBytes(fetchMaxPartitionBytes),
		kgo.BrokerMaxReadBytes(brokerMaxReadBytes),
		kgo.MaxDecompressBatchBytes(maxDecompressBatchBytes),
		kgo.MaxConcurrentFetches(maxConcurrentFetches),
	}
}

// run samples until done and says why it stopped; the client is closed
// when it returns.
func (s *sampler) run(ctx context.Context, cfg kafka.Config, req Request, extra []kgo.Opt) (string, error) {
	req = req.WithDefaults()
	if err := req.Validate(); err != nil {
		return StoppedError, fmt.Errorf("sample request: %w", err)
	}
	s.lim = req.Limits
	opts, err := cfg.ClientOptions()
	if err != nil {
		return StoppedError, err
	}
	cfg = cfg.WithDefaults()
	deadline := s.started.Add(s.lim.MaxTime)
	timeout := min(cfg.RequestTimeout, s.lim.MaxTime)
	var brokerErr lastBrokerError
	opts = append(opts, FetchOptions()...)
	opts = append(opts,
		kgo.DialTimeout(timeout),
		kgo.RequestTimeoutOverhead(timeout),
		kgo.RetryTimeout(timeout),
		// Transaction markers take offsets: seeing them tells that a
		// partition whose last offset is a marker was read to its end.
		kgo.KeepControlRecords(),
		// Records deleted under the sample: go on from the new log start.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.WithHooks(&brokerErr),
		// KIP-714 client metrics would be a PushTelemetry every few
		// seconds: a write, of sorts, that a sample has no need of.
		kgo.DisableClientMetrics(),
		// A sample is short: without a fetch session a cancel's Close
		// reads no session state that a fetch in flight may still be
		// writing (franz-go v1.22.3 races there).
		kgo.DisableFetchSessions(),
	)
	opts = append(opts, extra...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return StoppedError, fmt.Errorf("kafka cluster %q: %w", cfg.Name, err)
	}
	defer cl.Close()

	s.emit(time.Now())
	ranges, err := s.listRanges(ctx, kadm.NewClient(cl), req, timeout)
	switch {
	case ctx.Err() != nil:
		return StoppedCancelled, nil
	case err != nil && errors.Is(err, context.DeadlineExceeded):
		err = fmt.Errorf("no answer within %v", timeout)
		if last := brokerErr.get(); last != nil {
			err = fmt.Errorf("%w; last broker error: %w", err, last)
		}
		return StoppedError, fmt.Errorf("kafka cluster %q: listing the offsets of topic %q: %w", cfg.Name, req.Topic, err)
	case err != nil:
		return StoppedError, fmt.Errorf("kafka cluster %q: listing the offsets of topic %q: %w", cfg.Name, req.Topic, err)
	}
	listedAt := time.Now()

	live := req.Mode == ModeLive
	s.parts = make(map[int32]*partState, len(ranges))
	offsets := make(map[int32]kgo.Offset, len(ranges))
	for _, r := range ranges {
		st := &partState{start: r.start, end: r.end}
		s.parts[r.partition] = st
		if r.start >= r.end && !live {
			st.done = true
			s.p.PartitionsDone++
			continue
		}
		offsets[r.partition] = kgo.NewOffset().At(r.start)
	}
	s.p.Partitions = len(ranges)
	s.emit(listedAt)
	if len(offsets) > 0 {
		cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{req.Topic: offsets})
	}
	var windowEnd time.Time
	if live {
		windowEnd = listedAt.Add(req.Window)
	}
	s.adm, s.timeout = kadm.NewClient(cl), timeout
	return s.consume(ctx, cl, windowEnd, deadline)
}

// listRanges lists the partitions' offsets, emitting progress while it
// waits; timeout bounds the listing.
func (s *sampler) listRanges(ctx context.Context, adm *kadm.Client, req Request, timeout time.Duration) ([]partRange, error) {
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		ranges []partRange
		err    error
	}
	done := make(chan result, 1)
	go func() {
		rs, err := listRanges(lctx, adm, req)
		done <- result{rs, err}
	}()
	tick := time.NewTicker(ProgressInterval)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			return r.ranges, r.err
		case now := <-tick.C:
			s.emit(now)
		}
	}
}

// listRanges reads the partitions of req.Topic and the offsets to read in
// each: from the end offsets in mode "live", from the last LastN (not
// before the log start) in mode "last".
func listRanges(ctx context.Context, adm *kadm.Client, req Request) ([]partRange, error) {
	var starts kadm.ListedOffsets
	var startErr error
	var wg sync.WaitGroup
	if req.Mode == ModeLast {
		wg.Go(func() { starts, startErr = adm.ListStartOffsets(ctx, req.Topic) })
	}
	ends, err := adm.ListEndOffsets(ctx, req.Topic)
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("end offsets: %w", err)
	}
	if startErr != nil {
		return nil, fmt.Errorf("start offsets: %w", startErr)
	}
	if o, ok := ends.Lookup(req.Topic, -1); ok && o.Err != nil {
		return nil, o.Err
	}
	byPartition := ends[req.Topic]
	if len(byPartition) == 0 {
		return nil, kerr.UnknownTopicOrPartition
	}
	all := make([]int32, 0, len(byPartition))
	for p := range byPartition {
		all = append(all, p)
	}
	slices.Sort(all)
	want := all
	if req.Partitions != nil {
		want = slices.Sorted(slices.Values(req.Partitions))
		var missing []int32
		for _, p := range want {
			if _, ok := byPartition[p]; !ok {
				missing = append(missing, p)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("partitions %v: not in the topic, which has %d partitions", missing, len(all))
		}
	}
	out := make([]partRange, 0, len(want))
	for _, p := range want {
		end := byPartition[p]
		if end.Err != nil {
			return nil, fmt.Errorf("partition %d: end offset: %w", p, end.Err)
		}
		r := partRange{partition: p, start: end.Offset, end: end.Offset}
		if req.Mode == ModeLast {
			start, ok := starts.Lookup(req.Topic, p)
			switch {
			case !ok:
				return nil, fmt.Errorf("partition %d: no start offset returned", p)
			case start.Err != nil:
				return nil, fmt.Errorf("partition %d: start offset: %w", p, start.Err)
			}
			r.start = max(start.Offset, end.Offset-req.LastN)
		} else {
			r.end = 1<<63 - 1
		}
		out = append(out, r)
	}
	return out, nil
}

// consume polls the client until every partition is read, a limit is
// reached, the window ends (windowEnd is zero in mode "last") or ctx is
// cancelled.
func (s *sampler) consume(ctx context.Context, cl *kgo.Client, windowEnd, deadline time.Time) (string, error) {
	live := !windowEnd.IsZero()
	s.idleSince = time.Now()
	for {
		if !live && s.p.PartitionsDone == s.p.Partitions {
			return StoppedComplete, nil
		}
		now := time.Now()
		if !live && now.Sub(s.idleSince) >= idleRecheck && !now.Before(s.nextRecheck) {
			s.emit(now) // the listing takes at most the next interval
			s.recheckStarts(ctx, cl, deadline)
			s.nextRecheck = now.Add(idleRecheck)
			continue
		}
		switch {
		case live && !now.Before(windowEnd) && !windowEnd.After(deadline):
			return StoppedComplete, nil
		case !now.Before(deadline):
			return StoppedTime, nil
		}
		if !now.Before(s.nextProgress) {
			s.emit(now)
		}
		until := s.nextProgress
		if deadline.Before(until) {
			until = deadline
		}
		if live && windowEnd.Before(until) {
			until = windowEnd
		}
		pctx, cancel := context.WithDeadline(ctx, until)
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return StoppedCancelled, nil
		}
		if err := s.fetchError(cl, fs); err != nil {
			return StoppedError, err
		}
		seen := s.seen
		if stop := s.take(ctx, cl, fs, live); stop != "" {
			return stop, nil
		}
		if s.seen != seen {
			s.idleSince = time.Now()
		}
	}
}

// recheckStarts finishes the unread partitions whose log now starts at or
// after their end: records deleted (retention, DeleteRecords) after the
// listing and before the fetch. Nothing is left to fetch there, so no
// record would say the partition is done. The listing gets at most
// ProgressInterval, to keep progress coming; a failed one is tried again
// later.
func (s *sampler) recheckStarts(ctx context.Context, cl *kgo.Client, deadline time.Time) {
	until := time.Now().Add(min(s.timeout, ProgressInterval))
	if deadline.Before(until) {
		until = deadline
	}
	lctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	starts, err := s.adm.ListStartOffsets(lctx, s.topic)
	if err != nil {
		return
	}
	for p, st := range s.parts {
		if o, ok := starts.Lookup(s.topic, p); ok && o.Err == nil && !st.done && o.Offset >= st.end {
			s.finish(cl, p, st)
		}
	}
}

// fetchError is the first error of fs that stops the sample. The poll's
// own deadline, retried broker errors and a reset to a newer log start
// (records deleted while the sample ran) do not; a batch too large to
// decompress within the bound is skipped, its offsets counted in Skipped.
func (s *sampler) fetchError(cl *kgo.Client, fs kgo.Fetches) error {
	for _, fe := range fs.Errors() {
		switch {
		case errors.Is(fe.Err, context.DeadlineExceeded), errors.Is(fe.Err, context.Canceled):
			continue
		case kerr.IsRetriable(fe.Err):
			continue
		}
		if _, ok := errors.AsType[*kgo.ErrDataLoss](fe.Err); ok {
			continue
		}
		if big, ok := errors.AsType[*kgo.ErrDecompressTooLarge](fe.Err); ok {
			s.skipBatch(cl, big)
			continue
		}
		err := fe.Err
		if strings.Contains(err.Error(), "BrokerMaxReadBytes") {
			err = fmt.Errorf("%w (a record batch over the %d MiB a sample fetches at once)", err, brokerMaxReadBytes>>20)
		}
		if fe.Topic == "" {
			return fmt.Errorf("fetch: %w", err)
		}
		return fmt.Errorf("fetch topic %q partition %d: %w", fe.Topic, fe.Partition, err)
	}
	return nil
}

// skipBatch moves past a batch that kgo refused to decompress, counting
// its offsets as skipped records.
func (s *sampler) skipBatch(cl *kgo.Client, big *kgo.ErrDecompressTooLarge) {
	st := s.parts[big.Partition]
	if st == nil || st.done {
		return
	}
	s.p.Skipped += min(big.NextOffset, st.end) - max(big.Offset, st.start)
	if big.NextOffset >= st.end {
		s.finish(cl, big.Partition, st)
		return
	}
	cl.SetOffsets(map[string]map[int32]kgo.EpochOffset{s.topic: {big.Partition: {Epoch: big.Epoch, Offset: big.NextOffset}}})
}

// take hands the records of fs to the handler and says why to stop, ""
// to go on.
func (s *sampler) take(ctx context.Context, cl *kgo.Client, fs kgo.Fetches, live bool) string {
	for i := range fs {
		for j := range fs[i].Topics {
			ft := &fs[i].Topics[j]
			for k := range ft.Partitions {
				fp := &ft.Partitions[k]
				st := s.parts[fp.Partition]
				if st == nil {
					continue
				}
				for _, r := range fp.Records {
					if ctx.Err() != nil { // an atomic load
						return StoppedCancelled
					}
					if s.seen++; s.seen%progressEvery == 0 { // a slow handler
						if now := time.Now(); !now.Before(s.nextProgress) {
							s.emit(now)
						}
					}
					if st.done {
						break
					}
					if r.Offset >= st.end {
						s.finish(cl, fp.Partition, st)
						break
					}
					if !r.Attrs.IsControl() {
						if stop := s.deliver(fp.Partition, r); stop != "" {
							return stop
						}
					}
					if r.Offset >= st.end-1 {
						s.finish(cl, fp.Partition, st)
					}
					if s.p.Records >= s.lim.MaxRecords && (live || s.p.PartitionsDone < s.p.Partitions) {
						return StoppedRecords
					}
				}
			}
		}
	}
	return ""
}

// deliver hands r to the handler unless it is over MaxRecordBytes
// (skipped) or would pass MaxBytes (stop).
func (s *sampler) deliver(partition int32, r *kgo.Record) string {
	size := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		size += len(h.Key) + len(h.Value)
	}
	if size > s.lim.MaxRecordBytes {
		s.p.Skipped++
		return ""
	}
	if s.p.Bytes+int64(size) > s.lim.MaxBytes {
		return StoppedBytes
	}
	s.p.Records++
	s.p.Bytes += int64(size)
	s.handle(Record{Partition: partition, Offset: r.Offset, Key: r.Key, Value: r.Value, Size: size})
	return ""
}

// finish marks a partition read to its end and stops fetching it.
func (s *sampler) finish(cl *kgo.Client, partition int32, st *partState) {
	st.done = true
	s.p.PartitionsDone++
	cl.PauseFetchPartitions(map[string][]int32{s.topic: {partition}})
}

func (s *sampler) emit(now time.Time) {
	s.p.Elapsed = now.Sub(s.started)
	s.progress(s.p)
	s.nextProgress = now.Add(ProgressInterval)
}

// lastBrokerError is a kgo hook keeping the last connection or request
// error, to say why a listing got no answer in time.
type lastBrokerError struct {
	mu  sync.Mutex
	err error
}

func (h *lastBrokerError) set(meta kgo.BrokerMetadata, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.err = fmt.Errorf("broker %s: %w", net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port))), err)
}

func (h *lastBrokerError) get() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// OnBrokerConnect implements kgo.HookBrokerConnect.
func (h *lastBrokerError) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil {
		h.set(meta, err)
	}
}

// OnBrokerE2E implements kgo.HookBrokerE2E.
func (h *lastBrokerError) OnBrokerE2E(meta kgo.BrokerMetadata, _ int16, e2e kgo.BrokerE2E) {
	if err := cmp.Or(e2e.WriteErr, e2e.ReadErr); err != nil {
		h.set(meta, err)
	}
}
