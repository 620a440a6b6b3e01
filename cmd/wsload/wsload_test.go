package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skewscope/skewscope/web"
)

// TestMain lets the test binary act as the server child: load re-executes
// os.Executable with -serve.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-serve" {
		if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type vertexUpdate struct {
	Seq   int64
	At    int64
	Shape string
	P     [][]int64
	S     [][]int64
}

func TestVertexGen(t *testing.T) {
	const partitions, subtasks = 1000, 64
	g := newVertexGen(partitions, subtasks, 7)
	at := time.UnixMilli(1_750_000_000_123)
	var prev vertexUpdate
	for i := range 3 {
		raw := g.next(at)
		var u vertexUpdate
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&u); err != nil {
			t.Fatalf("update %d: %v\n%.200s", i, err, raw)
		}
		if u.Seq != int64(i+1) || u.At != at.UnixMilli() || u.Shape == "" {
			t.Errorf("update %d: seq %d at %d shape %q, want seq %d at %d and a shape", i, u.Seq, u.At, u.Shape, i+1, at.UnixMilli())
		}
		if len(u.P) != partitions || len(u.S) != subtasks {
			t.Fatalf("update %d: %d partition rows, %d subtask rows; want %d, %d", i, len(u.P), len(u.S), partitions, subtasks)
		}
		// Subtask totals agree with their partitions (up to truncation).
		rate := make([]int64, subtasks)
		for r, p := range u.P {
			if len(p) != 3 || p[0] < 0 || p[1] < 0 || p[2] < 0 {
				t.Fatalf("update %d row %d = %v, want [lag,lagSecondsTenths,rateTenths] ≥ 0", i, r, p)
			}
			rate[g.owner[r]] += p[2]
		}
		for s, st := range u.S {
			if len(st) != 4 || st[3] < 0 || st[3] > 1000 {
				t.Fatalf("update %d subtask %d = %v, want [rate,lag,lagSeconds,busyPermille]", i, s, st)
			}
			if d := st[0] - rate[s]/10; d < -1 || d > int64(partitions/subtasks)+2 {
				t.Errorf("update %d subtask %d: rate %d, partitions sum to %d/10", i, s, st[0], rate[s])
			}
		}
		if i > 0 {
			if u.Shape != prev.Shape {
				t.Errorf("shape changed from %s to %s with the same layout", prev.Shape, u.Shape)
			}
			changed := 0
			for r := range u.P {
				if u.P[r][0] != prev.P[r][0] || u.P[r][2] != prev.P[r][2] {
					changed++
				}
			}
			if changed < partitions/2 {
				t.Errorf("update %d: only %d of %d partitions changed", i, changed, partitions)
			}
		}
		prev = u
	}
	if other := newVertexGen(partitions, subtasks+1, 7); other.shape == g.shape {
		t.Errorf("layouts over %d and %d subtasks share shape %s", subtasks, subtasks+1, g.shape)
	}
	// Rows are ordered by subtask.
	for r := 1; r < len(g.owner); r++ {
		if g.owner[r] < g.owner[r-1] {
			t.Fatalf("row %d owned by subtask %d after subtask %d", r, g.owner[r], g.owner[r-1])
		}
	}
}

func TestParseStat(t *testing.T) {
	line := []byte("4242 (ws load) (x)) S 1 4242 4242 0 -1 4194560 913 0 0 0 1234 567 0 0 20 0 9 0 1000 1200000 3000 18446744073709551615\n")
	u, s, err := parseStat(line)
	if err != nil || u != 12340*time.Millisecond || s != 5670*time.Millisecond {
		t.Errorf("parseStat = %v, %v, %v; want 12.34s, 5.67s", u, s, err)
	}
	if _, _, err := parseStat([]byte("4242 (x) S 1 2")); err == nil {
		t.Error("parseStat of a short line: no error")
	}
	peak, cur, err := parseStatus([]byte("Name:\twsload\nVmPeak:\t  900000 kB\nVmHWM:\t   65536 kB\nVmRSS:\t   40960 kB\n"))
	if err != nil || peak != 64<<20 || cur != 40<<20 {
		t.Errorf("parseStatus = %d, %d, %v; want 64 MiB, 40 MiB", peak, cur, err)
	}
	if _, _, err := parseStatus([]byte("VmRSS:\t1 kB\n")); err == nil {
		t.Error("parseStatus without VmHWM: no error")
	}
}

func TestUpdateHeader(t *testing.T) {
	seq, at, ok := updateHeader([]byte(`{"topic":"vertex:a/b/c","data":{"seq":17,"at":1750000000123,"shape":"ab","p":[[1,`))
	if !ok || seq != 17 || at != 1750000000123 {
		t.Errorf("updateHeader = %d, %d, %v; want 17, 1750000000123, true", seq, at, ok)
	}
	if _, _, ok := updateHeader([]byte(`{"subscribed":["vertex:a/b/c"]}`)); ok {
		t.Error("updateHeader of a subscribe ack: ok")
	}
}

// TestMeasure runs a load against the server in this process, over
// net.Pipe inside a synctest bubble: the fake clock stands still while the
// hub and the clients work, so the window holds exactly ten updates and
// every client reads each of them, however slow the machine is.
func TestMeasure(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run("compress="+strconv.FormatBool(compress), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := config{clients: 5, partitions: 500, subtasks: 8, dur: time.Second, interval: 100 * time.Millisecond, compress: compress, dialWorkers: 2}
				const addr = "wsload.test:80"
				var logs bytes.Buffer
				s, err := newLoadServer(cfg, "http://"+addr, &logs)
				if err != nil {
					t.Fatal(err)
				}
				ln := newPipeListener(addr)
				ctx, stop := context.WithCancel(context.Background())
				var out bytes.Buffer
				served := make(chan error, 1)
				go func() { served <- s.run(ctx, ln, &out) }()
				// Updates go out at 100 ms, 200 ms, ...; starting half an
				// interval later keeps every tick off the window's edges.
				time.Sleep(cfg.interval / 2)
				res, err := measure(context.Background(), cfg, target{
					addr:  addr,
					dial:  ln.dial,
					stats: func() (web.HubStats, error) { return s.hub.Stats(), nil },
					pid:   os.Getpid(),
				})
				stop()
				if err := <-served; err != nil {
					t.Errorf("server run: %v", err)
				}
				if err != nil {
					t.Fatalf("measure: %v\nserver log:\n%s", err, logs.String())
				}
				const updates = 10 // 1 s window / 100 ms
				if res.connected != cfg.clients || len(res.dialErrs) > 0 {
					t.Errorf("measure: %d clients connected (%v), want %d", res.connected, res.dialErrs, cfg.clients)
				}
				if res.window != cfg.dur {
					t.Errorf("measure: window %v, want %v", res.window, cfg.dur)
				}
				if res.published != updates || res.publishedTotal != updates+2 {
					t.Errorf("measure: published %d in the window, %d in all; want %d, %d", res.published, res.publishedTotal, updates, updates+2)
				}
				if want := int64(cfg.clients * updates); res.received != want || res.skipped != 0 || len(res.latencies) != int(want) {
					t.Errorf("measure: received %d, skipped %d, %d latencies; want %d, 0, %d", res.received, res.skipped, len(res.latencies), want, want)
				}
				if res.dropped != 0 || res.lost != 0 {
					t.Errorf("measure: %d dropped, %d lost (%v); want none", res.dropped, res.lost, res.lostErrs)
				}
				if res.latencies[len(res.latencies)-1] != 0 {
					t.Errorf("measure: latency up to %v under a clock that stood still, want 0", res.latencies[len(res.latencies)-1])
				}
				if compress && res.wireBytes >= res.payloadBytes*3/4 {
					t.Errorf("compressed: %d bytes on the wire for %d of payload", res.wireBytes, res.payloadBytes)
				}
				if !compress && res.wireBytes < res.payloadBytes {
					t.Errorf("uncompressed: %d bytes on the wire for %d of payload", res.wireBytes, res.payloadBytes)
				}
				var st web.HubStats
				if line, ok := strings.CutPrefix(strings.TrimSpace(out.String()), "stats "); !ok || json.Unmarshal([]byte(line), &st) != nil {
					t.Errorf("server printed %q, want stats <json>", out.String())
				} else if st.Encoded != updates+2 || st.Dropped != 0 {
					t.Errorf("server final stats: %d encoded, %d dropped; want %d, 0", st.Encoded, st.Dropped, updates+2)
				}

				var report bytes.Buffer
				res.print(&report)
				for _, re := range []string{
					`clients connected: +5/5 `,
					`window: +1s `,
					`updates published: +10 in the window \(12 in all\)`,
					`messages received: +50 \(≈ clients × updates = 50\); 0 updates skipped`,
					`dropped clients: +0 .*connections lost: 0`,
					`delivery latency: +p50 0s, p99 0s, max 0s \(50 samples\)`,
					`bytes per message: +[1-9][0-9]+ payload, [1-9][0-9]+ on the wire`,
					`server RSS: +peak \(VmHWM\) [0-9.]+ MiB`,
				} {
					if !regexp.MustCompile(re).MatchString(report.String()) {
						t.Errorf("report does not match %q:\n%s", re, report.String())
					}
				}
			})
		})
	}
}

// pipeListener is a net.Listener whose connections are net.Pipe pairs
// made by dial, so that an http.Server and its clients can run inside a
// synctest bubble.
type pipeListener struct {
	addr   pipeAddr
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

type pipeAddr string

func (a pipeAddr) Network() string { return "pipe" }
func (a pipeAddr) String() string  { return string(a) }

func newPipeListener(addr string) *pipeListener {
	return &pipeListener{addr: pipeAddr(addr), conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return l.addr }

// dial hands the server end of a new pipe to Accept.
func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestRunSmall runs the whole program, server child included, over real
// sockets at a small size. How many updates fit its one-second window
// depends on the machine, so it checks only what does not: every client
// connects and stays connected, and the report states every figure.
// TestMeasure checks the figures.
func TestRunSmall(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run("compress="+strconv.FormatBool(compress), func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := []string{"-clients", "5", "-partitions", "500", "-subtasks", "8", "-for", "1s", "-interval", "100ms", "-compress=" + strconv.FormatBool(compress)}
			if err := run(context.Background(), args, &out, &errOut); err != nil {
				t.Fatalf("run: %v\n%s", err, errOut.String())
			}
			report := out.String()
			for _, re := range []string{
				`clients connected: +5/5 `,
				`updates published: +[0-9]+ in the window`,
				`messages received: +[0-9]+ `,
				`dropped clients: +0 .*connections lost: 0`,
				`delivery latency: +p50 \S+, p99 \S+, max \S+ \([0-9]+ samples\)`,
				`bytes per message: +[0-9]+ payload, [0-9]+ on the wire`,
				`server RSS: +peak \(VmHWM\) [0-9.]+ MiB`,
			} {
				if !regexp.MustCompile(re).MatchString(report) {
					t.Errorf("report does not match %q:\n%s", re, report)
				}
			}
		})
	}
}
