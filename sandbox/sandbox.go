package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Options configures Start.
type Options struct {
	// Logger receives the sandbox's own log lines; nil discards them.
	Logger *slog.Logger
	// Seed makes traffic, keys and ids reproducible; 0 picks a time-based
	// seed.
	Seed int64
	// Retention is how long records stay before the sandbox deletes them
	// (DeleteRecords), TrimEvery how often it deletes; zero means 2 minutes
	// and 20 s. The hot orders subtask falls behind by more than the
	// retention after a few minutes and loses records; a retention of
	// seconds makes that happen within seconds (tests).
	Retention, TrimEvery time.Duration
	// SilentAfter is how long after Start the orders partition
	// SilentPartition stops receiving records, for good: the
	// orders-enrichment job has no idle timeout, so its watermark stops
	// there and the dashboard names that partition as the holder. Zero
	// means 60 s; a negative value keeps it writing.
	SilentAfter time.Duration

	// Test knobs (zero means the default).
	growEvery       time.Duration // one more inventory.events partition
	discoverEvery   time.Duration // Flink partition discovery
	checkpointEvery time.Duration // checkpoint (and offset commit) interval
}

// JobInfo describes one simulated Flink job.
type JobInfo struct {
	Name  string
	ID    string
	State string // RUNNING, or FINISHED after a Restore replaced it
	// SourceVertexID and KeyedVertexID are the JobVertexIDs of the Kafka
	// source and of the keyed (HASH input) vertex.
	SourceVertexID string
	KeyedVertexID  string
	// Parallelism is the source parallelism; KeyedParallelism that of the
	// keyed vertex; MaxParallelism the number of key groups.
	Parallelism      int
	KeyedParallelism int
	MaxParallelism   int
	// ParallelismHistory lists the source parallelism at the fresh start
	// and after each restore, ending with Parallelism.
	ParallelismHistory []int
	// GroupID is the Kafka consumer group the job commits offsets to.
	GroupID string
	Topics  []string
}

// Stats counts records since Start.
type Stats struct {
	Produced int64 // acknowledged by the cluster
	Consumed int64 // processed by the simulated source subtasks
}

// Sandbox is a running sandbox: a kfake cluster, its producers and the
// simulated Flink JobManager with its jobs.
type Sandbox struct {
	log  *slog.Logger
	opts Options
	seed int64

	cluster *kfake.Cluster
	brokers []string
	admCl   *kgo.Client
	adm     *kadm.Client
	traffic *traffic

	ln   net.Listener
	srv  *http.Server
	url  string
	tmID string

	ctx       context.Context
	cancel    context.CancelFunc
	stopAfter func() bool // unregisters the Close on the Start context; guarded by mu
	wg        sync.WaitGroup

	restoreMu sync.Mutex // one Restore at a time

	mu     sync.Mutex // guards jobs and rng
	jobs   []*job     // running jobs and the newest finished ones, in start order
	rng    *rand.Rand
	closed bool

	produced atomic.Int64
	consumed atomic.Int64

	closeOnce sync.Once
}

const (
	// maxFinishedPerName is how many finished jobs of each name the
	// sandbox keeps listing, like Flink's job store (jobstore.max-capacity,
	// jobstore.expiration-time): older ones are forgotten, so restores do
	// not grow memory without bound.
	maxFinishedPerName = 8
	// maxRestoreParallelism is the highest parallelism Restore accepts.
	maxRestoreParallelism = 128

	defaultGrowEvery       = 45 * time.Second
	defaultDiscoverEvery   = 10 * time.Second
	defaultCheckpointEvery = 5 * time.Second
)

// Start starts the cluster, the producers, the jobs and the REST endpoint,
// and returns when all of them are ready to serve. Cancelling ctx stops the
// sandbox like Close.
func Start(ctx context.Context, opts Options) (*Sandbox, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.growEvery <= 0 {
		opts.growEvery = defaultGrowEvery
	}
	if opts.discoverEvery <= 0 {
		opts.discoverEvery = defaultDiscoverEvery
	}
	if opts.checkpointEvery <= 0 {
		opts.checkpointEvery = defaultCheckpointEvery
	}
	if opts.Retention <= 0 {
		opts.Retention = defaultRetention
	}
	if opts.TrimEvery <= 0 {
		opts.TrimEvery = defaultTrimEvery
	}
	if opts.SilentAfter == 0 {
		opts.SilentAfter = defaultSilentAfter
	}
	seed := opts.Seed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	s := &Sandbox{
		log:  opts.Logger.With("component", "sandbox"),
		opts: opts,
		seed: seed,
		rng:  rand.New(rand.NewPCG(uint64(seed), 0x5eed)),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if err := s.start(); err != nil {
		s.Close()
		return nil, err
	}
	s.mu.Lock() // the callback may run Close at once when ctx is done
	s.stopAfter = context.AfterFunc(ctx, func() { s.Close() })
	s.mu.Unlock()
	return s, nil
}

func (s *Sandbox) start() error {
	seeds := []kfake.Opt{
		kfake.NumBrokers(3), kfake.ClusterID("skewscope-sandbox"),
		// kfake keeps every partition's log in in-memory segment files
		// and DeleteRecords frees a segment only once every batch in it
		// is below the log start offset. At the default 100 MiB no
		// sandbox segment ever fills, so nothing was ever freed; small
		// segments let the trimmer release memory as it goes.
		kfake.BrokerConfigs(map[string]string{"log.segment.bytes": strconv.Itoa(segmentBytes)}),
	}
	for _, t := range sandboxTopics {
		seeds = append(seeds, kfake.SeedTopics(int32(t.initialPartitions), t.name))
	}
	c, err := kfake.NewCluster(seeds...)
	if err != nil {
		return fmt.Errorf("sandbox: start kfake: %w", err)
	}
	s.cluster = c
	s.brokers = c.ListenAddrs()

	s.admCl, err = kgo.NewClient(kgo.SeedBrokers(s.brokers...), kgo.ClientID("skewscope-sandbox-admin"))
	if err != nil {
		return fmt.Errorf("sandbox: admin client: %w", err)
	}
	s.adm = kadm.NewClient(s.admCl)
	if err := s.setRetention(); err != nil {
		return err
	}

	s.traffic, err = newTraffic(s)
	if err != nil {
		return err
	}
	s.tmID = "sandbox-taskmanager-" + s.hex(6)

	for _, spec := range jobSpecs {
		j, err := s.newFreshJob(spec)
		if err != nil {
			return err
		}
		s.jobs = append(s.jobs, j)
	}

	s.ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("sandbox: listen: %w", err)
	}
	s.url = fmt.Sprintf("http://%s/", s.ln.Addr())
	s.srv = &http.Server{
		Handler:           s.restHandler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("sandbox REST server stopped", "error", err)
		}
	}()

	s.traffic.start()
	s.log.Info("sandbox started", "kafka", s.brokers, "flink", s.url, "seed", s.seed)
	return nil
}

// KafkaBrokers returns the loopback host:port seed brokers of the in-process
// Kafka cluster.
func (s *Sandbox) KafkaBrokers() []string { return append([]string(nil), s.brokers...) }

// FlinkURL returns the base URL of the simulated JobManager REST endpoint,
// http://127.0.0.1:PORT/.
func (s *Sandbox) FlinkURL() string { return s.url }

// Seed returns the seed in use (the time-based one when Options.Seed was 0).
func (s *Sandbox) Seed() int64 { return s.seed }

// Stats returns how many records were produced and consumed so far.
func (s *Sandbox) Stats() Stats {
	return Stats{Produced: s.produced.Load(), Consumed: s.consumed.Load()}
}

// Jobs lists the running job of each name (one per simulated job), in a
// stable order.
func (s *Sandbox) Jobs() []JobInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []JobInfo
	for _, j := range s.jobs {
		if j.isRunning() {
			out = append(out, j.info())
		}
	}
	return out
}

// AllJobs lists the jobs the JobManager still knows, in start order: the
// running ones and the newest finished ones of each name (see
// maxFinishedPerName).
func (s *Sandbox) AllJobs() []JobInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]JobInfo, 0, len(s.jobs))
	for _, j := range s.jobs {
		out = append(out, j.info())
	}
	return out
}

// Restore does what `flink stop --savepointPath` followed by a resubmission
// with `-p parallelism -s savepoint` does: the running job of that name takes
// a savepoint of its Kafka splits and offsets, finishes, and a new job (new
// job id, same vertex ids) starts at the new parallelism from the savepoint.
// Its splits are the saved per-subtask split lists concatenated and cut into
// contiguous chunks, as assign.Restore models; partitions discovered later get
// assign.KafkaSplitOwner at the new parallelism. Keyed state (the per key
// group state sizes) moves with its key groups. Whatever it refuses (the
// parallelism, a history longer than assign.MaxRestoreHistory) it refuses
// before stopping the job, which then goes on running.
func (s *Sandbox) Restore(jobName string, parallelism int) error {
	if parallelism < 1 || parallelism > maxRestoreParallelism {
		return fmt.Errorf("sandbox: parallelism %d out of range 1..%d", parallelism, maxRestoreParallelism)
	}
	s.restoreMu.Lock()
	defer s.restoreMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("sandbox: closed")
	}
	var old *job
	for _, j := range s.jobs {
		if j.spec.name == jobName && j.isRunning() {
			old = j
		}
	}
	s.mu.Unlock()
	if old == nil {
		return fmt.Errorf("sandbox: no running job named %q", jobName)
	}
	if err := old.checkRestorable(); err != nil {
		return err
	}
	sp, err := old.stopWithSavepoint()
	if err != nil {
		return err
	}
	nj, err := s.newRestoredJob(old, sp, parallelism)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.jobs = expireFinished(append(s.jobs, nj), maxFinishedPerName)
	s.mu.Unlock()
	s.log.Info("sandbox job restored", "job", jobName, "old_job_id", old.id, "job_id", nj.id, "parallelism", parallelism)
	return nil
}

// expireFinished drops, in place, all but the newest keep finished jobs of
// each name. A finished job is stopped already: nothing else refers to it.
func expireFinished(jobs []*job, keep int) []*job {
	finished := map[string]int{}
	drop := map[*job]bool{}
	for i := len(jobs) - 1; i >= 0; i-- {
		j := jobs[i]
		if j.isRunning() {
			continue
		}
		if finished[j.spec.name]++; finished[j.spec.name] > keep {
			drop[j] = true
		}
	}
	if len(drop) == 0 {
		return jobs
	}
	return slices.DeleteFunc(jobs, func(j *job) bool { return drop[j] })
}

// Close stops the REST endpoint, the jobs, the producers and the cluster,
// and waits for every goroutine the sandbox started.
func (s *Sandbox) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		if s.stopAfter != nil {
			s.stopAfter()
		}
		s.closed = true
		jobs := append([]*job(nil), s.jobs...)
		s.mu.Unlock()
		if s.srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if err := s.srv.Shutdown(ctx); err != nil {
				s.srv.Close()
			}
			cancel()
		}
		for _, j := range jobs {
			j.stop()
		}
		if s.traffic != nil {
			s.traffic.stop()
		}
		if s.cancel != nil {
			s.cancel()
		}
		s.wg.Wait()
		if s.admCl != nil {
			s.admCl.Close()
		}
		if s.cluster != nil {
			s.cluster.Close()
		}
		s.log.Info("sandbox stopped")
	})
	return nil
}

// hex returns n random bytes as lower-case hex (2n characters).
func (s *Sandbox) hex(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	const digits = "0123456789abcdef"
	b := make([]byte, 2*n)
	for i := range b {
		b[i] = digits[s.rng.IntN(16)]
	}
	return string(b)
}

// subRand returns a new generator derived from the seed, for one goroutine.
func (s *Sandbox) subRand() *rand.Rand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return rand.New(rand.NewPCG(s.rng.Uint64(), s.rng.Uint64()))
}

// setRetention gives every sandbox topic the retention its trimmer applies
// (retention.ms = Options.Retention, cleanup.policy delete), so the topics
// report their real retention to DescribeConfigs as a broker's do. kfake
// enforces retention.ms itself only on its cleaner's interval
// (log.cleaner.backoff.ms, an hour); the trimmer deletes on time.
func (s *Sandbox) setRetention() error {
	ms := strconv.FormatInt(s.opts.Retention.Milliseconds(), 10)
	del := "delete"
	names := make([]string, 0, len(sandboxTopics))
	for _, t := range sandboxTopics {
		names = append(names, t.name)
	}
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	rs, err := s.adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "retention.ms", Value: &ms},
		{Op: kadm.SetConfig, Name: "cleanup.policy", Value: &del},
	}, names...)
	if err == nil {
		for _, r := range rs {
			if r.Err != nil {
				err = fmt.Errorf("topic %s: %w", r.Name, r.Err)
				break
			}
		}
	}
	if err != nil {
		return fmt.Errorf("sandbox: set retention.ms: %w", err)
	}
	return nil
}
