package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/internal/benchstat"
	"github.com/skewscope/skewscope/internal/fakejm"
)

// pollRow is what one measured poll cost.
type pollRow struct {
	stats   fakejm.Stats
	cpu     time.Duration // the collector's process, user + system
	wall    time.Duration
	fakeCPU float64 // the fake's process, seconds
}

// result is one shape's measured polls.
type result struct {
	shape shape
	rows  []pollRow
}

// mean averages the rows.
func (r *result) mean() pollRow {
	var m pollRow
	m.stats.ByKind = map[string]fakejm.Count{}
	for _, p := range r.rows {
		m.stats.Total.Requests += p.stats.Total.Requests
		m.stats.Total.Bytes += p.stats.Total.Bytes
		for k, c := range p.stats.ByKind {
			t := m.stats.ByKind[k]
			t.Requests += c.Requests
			t.Bytes += c.Bytes
			m.stats.ByKind[k] = t
		}
		m.cpu += p.cpu
		m.wall += p.wall
		m.fakeCPU += p.fakeCPU
	}
	n := int64(len(r.rows))
	m.stats.Total.Requests /= n
	m.stats.Total.Bytes /= n
	for k, c := range m.stats.ByKind {
		m.stats.ByKind[k] = fakejm.Count{Requests: c.Requests / n, Bytes: c.Bytes / n}
	}
	m.cpu /= time.Duration(n)
	m.wall /= time.Duration(n)
	m.fakeCPU /= float64(n)
	return m
}

// measure starts the fake of one shape in a child process, polls it
// cfg.warmup times, then measures cfg.polls polls, printing each.
func measure(ctx context.Context, cfg config, sh shape, stdout, stderr io.Writer) (*result, error) {
	addr, stop, err := startChild(cfg, sh, stderr)
	if err != nil {
		return nil, err
	}
	defer stop()
	fc := fakeConfig(cfg, sh)
	c, err := flink.NewCollector(flink.Config{
		Name: "jmload", URL: "http://" + addr, PollInterval: cfg.interval, RequestTimeout: cfg.timeout,
		MaxRequestsPerSecond: cfg.rps, MaxInFlight: cfg.inFlight,
	}, nil)
	if err != nil {
		return nil, err
	}
	defer c.Close()

	res := &result{shape: sh}
	printHeader(stdout, cfg)
	stopProfile := func() {}
	defer func() { stopProfile() }()
	for i := range cfg.warmup + cfg.polls {
		if i == cfg.warmup && cfg.cpuProfile != "" {
			if stopProfile, err = startProfile(cfg.cpuProfile); err != nil {
				return nil, err
			}
		}
		before, err := fetchStats(ctx, addr)
		if err != nil {
			return nil, err
		}
		cpu0, err := benchstat.SelfCPU()
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		s := c.PollOnce(ctx)
		row := pollRow{wall: time.Since(t0)}
		cpu1, err := benchstat.SelfCPU()
		if err != nil {
			return nil, err
		}
		row.cpu = cpu1 - cpu0
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		after, err := fetchStats(ctx, addr)
		if err != nil {
			return nil, err
		}
		row.stats = after.Stats.Sub(before.Stats)
		row.fakeCPU = after.CPUSeconds - before.CPUSeconds
		if n := row.stats.Failed(); n > 0 {
			return nil, fmt.Errorf("poll %d: the fake answered %d requests 404 or refused them: %q", i+1, n, row.stats.Unanswered)
		}
		if err := checkSnapshot(s, fc); err != nil {
			return nil, fmt.Errorf("poll %d: %w", i+1, err)
		}
		label := "warm-up"
		if i >= cfg.warmup {
			label = strconv.Itoa(i - cfg.warmup + 1)
			res.rows = append(res.rows, row)
		}
		printRow(stdout, cfg, label, row)
	}
	stopProfile()
	stopProfile = func() {}
	m := res.mean()
	printRow(stdout, cfg, "mean", m)
	printKinds(stdout, m.stats)
	return res, nil
}

// startChild re-executes this program as the fake JobManager of sh and
// returns its address and a function that stops it.
func startChild(cfg config, sh shape, stderr io.Writer) (string, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(exe, "-serve",
		"-jobs", strconv.Itoa(sh.jobs), "-parallelism", strconv.Itoa(sh.parallelism),
		"-partitions", strconv.Itoa(sh.partitions), "-topics", strings.Join(cfg.topics, ","),
		"-checkpoint-every", strconv.Itoa(cfg.checkpointEvery), "-event-time="+strconv.FormatBool(cfg.eventTime))
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	kill := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		kill()
		return "", nil, fmt.Errorf("fake JobManager child: no listen address (%v)", lines.Err())
	}
	addr, ok := strings.CutPrefix(lines.Text(), "listening ")
	if !ok {
		kill()
		return "", nil, fmt.Errorf("fake JobManager child said %q, want listening <addr>", lines.Text())
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	return addr, stop, nil
}

// startProfile starts a CPU profile into path; the function it returns
// stops it.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func fetchStats(ctx context.Context, addr string) (childStats, error) {
	var st childStats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/_stats", nil)
	if err != nil {
		return st, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /_stats: %s", resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// checkSnapshot reports what is wrong with a poll's snapshot of the fake:
// a poll error, a missing job, a job or vertex read with an error, a
// vertex without its subtasks, a source without every partition, a
// partition observed under another subtask than Flink assigns it to or,
// with event time, a subtask or split whose watermark was not read.
func checkSnapshot(s *flink.Snapshot, fc fakejm.Config) error {
	if s == nil {
		return errors.New("no snapshot")
	}
	if s.Err != nil {
		return fmt.Errorf("snapshot: %w", s.Err)
	}
	if len(s.Jobs) != fc.Jobs {
		return fmt.Errorf("snapshot has %d jobs, want %d", len(s.Jobs), fc.Jobs)
	}
	var topics []string
	for _, t := range fc.Topics {
		topics = append(topics, t.Name)
	}
	for _, j := range s.Jobs {
		if j.Err != nil {
			return fmt.Errorf("job %s: %w", j.Name, j.Err)
		}
		if j.State != "RUNNING" || len(j.Vertices) != 3 {
			return fmt.Errorf("job %s: state %s with %d vertices, want RUNNING with 3", j.Name, j.State, len(j.Vertices))
		}
		for _, v := range j.Vertices {
			if v.Err != nil || v.Freshness.Stale {
				return fmt.Errorf("job %s vertex %q: stale %v: %v", j.Name, v.Name, v.Freshness.Stale, v.Err)
			}
			if len(v.Subtasks) != fc.Parallelism {
				return fmt.Errorf("job %s vertex %q: %d subtasks, want %d", j.Name, v.Name, len(v.Subtasks), fc.Parallelism)
			}
			for _, st := range v.Subtasks {
				w := st.EventTime.InputWatermark
				if v.Source {
					w = st.EventTime.OutputWatermark
				}
				if fc.EventTime && (!st.EventTime.Read || w == flink.WatermarkUnread) {
					return fmt.Errorf("job %s vertex %q subtask %d: no watermark read", j.Name, v.Name, st.Index)
				}
			}
		}
		src := j.Vertices[0]
		if !src.Source || src.Kafka == nil {
			return fmt.Errorf("job %s: the first vertex %q is not a Kafka source", j.Name, src.Name)
		}
		for _, ps := range src.Kafka.States {
			if fc.EventTime && (ps.Split == nil || ps.Split.Watermark == flink.WatermarkUnread) {
				return fmt.Errorf("job %s: the watermark of split %s-%d on subtask %d was not read", j.Name, ps.Topic, ps.Partition, ps.Subtask)
			}
		}
		owners := src.Kafka.Owners()
		if len(owners) != fc.Partitions {
			return fmt.Errorf("job %s: %d partitions observed, want %d", j.Name, len(owners), fc.Partitions)
		}
		for _, o := range owners {
			real := flink.ResolveTopic(o.Topic, topics)
			if len(real) != 1 {
				return fmt.Errorf("job %s: topic %q of the metric ids resolves to %q", j.Name, o.Topic, real)
			}
			want, err := assign.KafkaSplitOwner(assign.TopicPartition{Topic: real[0], Partition: o.Partition}, fc.Parallelism)
			if err != nil {
				return err
			}
			if o.Owner != want {
				return fmt.Errorf("job %s: partition %s-%d observed under subtask %d (%s), Flink assigns it to %d", j.Name, real[0], o.Partition, o.Owner, o.Reason, want)
			}
		}
	}
	return nil
}

const mb = 1e6

func printHeader(w io.Writer, cfg config) {
	fmt.Fprintf(w, "%-8s %9s %9s %9s %6s %10s %9s %8s %8s %9s %9s\n",
		"poll", "requests", "resp MB", "list MB", "list%", "values MB", "other MB", "CPU s", "wall s",
		"core@"+cfg.interval.String(), "fake CPU s")
}

func printRow(w io.Writer, cfg config, label string, r pollRow) {
	t := r.stats.Total
	list := r.stats.Kind(fakejm.KindMetricList).Bytes
	values := r.stats.Kind(fakejm.KindMetricValues).Bytes
	share := 0.0
	if t.Bytes > 0 {
		share = 100 * float64(list) / float64(t.Bytes)
	}
	fmt.Fprintf(w, "%-8s %9d %9.1f %9.1f %5.1f%% %10.2f %9.2f %8.2f %8.2f %9.3f %9.2f\n",
		label, t.Requests, float64(t.Bytes)/mb, float64(list)/mb, share, float64(values)/mb,
		float64(t.Bytes-list-values)/mb, r.cpu.Seconds(), r.wall.Seconds(),
		r.cpu.Seconds()/cfg.interval.Seconds(), r.fakeCPU)
}

// printKinds prints where a poll's requests and bytes go, by kind of
// endpoint, largest first.
func printKinds(w io.Writer, st fakejm.Stats) {
	kinds := slices.SortedFunc(maps.Keys(st.ByKind), func(a, b string) int {
		return cmp.Or(cmp.Compare(st.ByKind[b].Bytes, st.ByKind[a].Bytes), cmp.Compare(a, b))
	})
	fmt.Fprintf(w, "by kind (mean per poll):")
	for _, k := range kinds {
		c := st.ByKind[k]
		fmt.Fprintf(w, " %s %d req %.2f MB (%.1f%%);", k, c.Requests, float64(c.Bytes)/mb, 100*float64(c.Bytes)/float64(max(st.Total.Bytes, 1)))
	}
	fmt.Fprintln(w)
}

// printSummary prints one line per shape: the mean of its measured polls.
func printSummary(w io.Writer, cfg config, results []*result) {
	fmt.Fprintf(w, "\nsummary: mean of %d measured polls after %d warm-up; MB = 10^6 response body bytes; CPU = the collector's process (user+system); core = CPU per poll / %v\n",
		cfg.polls, cfg.warmup, cfg.interval)
	for _, r := range results {
		m := r.mean()
		list := m.stats.Kind(fakejm.KindMetricList)
		cores := m.cpu.Seconds() / cfg.interval.Seconds()
		fmt.Fprintf(w, "  %s: %d requests (%d id lists), %.1f MB = %d bytes (id lists %.1f%%), CPU %.2f s, %.3f core, wall %.2f s\n",
			r.shape, m.stats.Total.Requests, list.Requests, float64(m.stats.Total.Bytes)/mb, m.stats.Total.Bytes,
			100*float64(list.Bytes)/float64(max(m.stats.Total.Bytes, 1)), m.cpu.Seconds(), cores, m.wall.Seconds())
		if r.shape == goalShape && slices.Equal(cfg.topics, fakejm.DefaultTopics) && cfg.checkpointEvery == 0 && cfg.interval == flink.MetricFreshness {
			ok := func(b bool) string {
				if b {
					return "met"
				}
				return "MISSED"
			}
			fmt.Fprintf(w, "  goal (issue 11, this shape): bytes ≤ 10%% of the %.1f MB baseline = %.2f MB: %s (%.1f%% of it); CPU ≤ %.2f core: %s (%.3f)\n",
				float64(baselineBytes)/mb, float64(baselineBytes)/10/mb, ok(m.stats.Total.Bytes*10 <= baselineBytes),
				100*float64(m.stats.Total.Bytes)/float64(baselineBytes), goalCores, ok(cores <= goalCores), cores)
		}
	}
}

// Issue 11's goal for its first shape (50 jobs × 3 × p=64, 256 partitions
// per source, the default topics, a 10 s poll interval): at most a tenth
// of the response bytes per poll of the collector that read every
// vertex's id list on every poll (baselineBytes, measured with this fake
// when jmload was written), and at most goalCores of a core.
var goalShape = shape{jobs: 50, parallelism: 64, partitions: 256}

const (
	baselineBytes = 99_197_471
	goalCores     = 0.05
)
