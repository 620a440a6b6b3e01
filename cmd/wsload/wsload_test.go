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

	"github.com/skewscope/skewscope/internal/livebench"
	"github.com/skewscope/skewscope/views"
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

// TestParseUpdate reads an update framed as the hub frames it and written
// as views.Update writes it, whole and as a change, and agrees with a
// JSON decoder; texts that look like its keys do not fool it.
func TestParseUpdate(t *testing.T) {
	const topic = "vertex:j/v"
	decoy := `"ages":{"age":1,"after":2}`
	for _, change := range []bool{false, true} {
		u := views.Update{
			Shape: "s1",
			T:     []views.Entry[string]{{Key: "t/1", Value: decoy}, {Key: "t/2", Value: `,"after":3`}},
			Ages:  []views.Entry[int64]{{Key: "age:kafka", Value: 1_750_000_000_999}, {Key: "age", Value: 1_750_000_000_123}},
			Spark: []views.Entry[views.Spark]{{Key: "spark:axis", Value: views.Spark{Values: []float64{1, 2}}}},
		}
		if change {
			u.SparkAppend, u.SparkAfter, u.SparkKeep = true, 0.5, 360
		}
		msg, err := json.Marshal(struct {
			Topic string `json:"topic"`
			Data  any    `json:"data"`
		}{topic, u})
		if err != nil {
			t.Fatal(err)
		}
		var dec struct {
			Data struct {
				Ages  map[string]int64
				After *float64
			}
		}
		if err := json.Unmarshal(msg, &dec); err != nil {
			t.Fatal(err)
		}
		got, ok := parseUpdate(msg, topic)
		if !ok || got.at != dec.Data.Ages["age"] || got.change != (dec.Data.After != nil) || got.change != change {
			t.Errorf("parseUpdate(%s) = %+v, %v; want at %d, change %v", msg, got, ok, dec.Data.Ages["age"], change)
		}
		if _, ok := parseUpdate(msg, "vertex:j/other"); ok {
			t.Errorf("parseUpdate of another topic's update: ok")
		}
	}
	for _, msg := range []string{
		`{"subscribed":["vertex:j/v"]}`,
		`{"topic":"vertex:j/v","data":{"shape":"s","stale":false,"t":{"a":"\"ages\":{\"age\":12}"}}}`,
		`{"topic":"vertex:j/v","data":{"shape":"s","stale":false,"t":{},"ages":{"age:kafka":12}}}`,
	} {
		if u, ok := parseUpdate([]byte(msg), topic); ok {
			t.Errorf("parseUpdate(%s) = %+v, ok; want not an update with a Flink age", msg, u)
		}
	}
}

func TestParseMetrics(t *testing.T) {
	m := parseMetrics([]byte("# HELP skewscope_websocket_messages_sent_total Websocket messages written.\n" +
		"# TYPE skewscope_websocket_messages_sent_total counter\nskewscope_websocket_messages_sent_total 1234\n" +
		"skewscope_websocket_refused_total{reason=\"idle\"} 3\nskewscope_websocket_dropped_clients_total 2\n"))
	if len(m) != 2 || m["skewscope_websocket_messages_sent_total"] != 1234 || m["skewscope_websocket_dropped_clients_total"] != 2 {
		t.Errorf("parseMetrics = %v, want the two series without labels", m)
	}
}

// TestMeasure runs a load against the server in this process, over
// net.Pipe inside a synctest bubble: the fake clock stands still while the
// store, the publish loop, the hub and the clients work, so the window
// holds exactly five polls and every client reads each of them, however
// slow the machine is.
func TestMeasure(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run("compress="+strconv.FormatBool(compress), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// Polls every 2 s, the publish loop at most once a second:
				// each poll is pushed at once, or a second later when the
				// loop took the Kafka half of the poll alone.
				cfg := config{clients: 5, partitions: 600, subtasks: 8, history: 20, dur: 10 * time.Second, interval: 2 * time.Second, compress: compress, dialWorkers: 2}
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
				// Polls come at 2 s, 4 s, ...; the window opens 2 intervals
				// after the clients connect, at 5.5 s, and closes at 15.5 s:
				// polls 6 to 14 s, pushed by 15 s.
				time.Sleep(1500 * time.Millisecond)
				res, err := measure(context.Background(), cfg, target{addr: addr, dial: ln.dial, pid: os.Getpid()})
				stop()
				if err := <-served; err != nil {
					t.Errorf("server run: %v", err)
				}
				if err != nil {
					t.Fatalf("measure: %v\nserver log:\n%s", err, logs.String())
				}
				const polls = 5
				if want := "vertex:" + livebench.Job + "/" + livebench.Vertex; res.topic != want {
					t.Errorf("page topic %q, want %q", res.topic, want)
				}
				if res.connected != cfg.clients || len(res.dialErrs) > 0 {
					t.Errorf("measure: %d clients connected (%v), want %d", res.connected, res.dialErrs, cfg.clients)
				}
				if res.window != cfg.dur || res.polls != polls {
					t.Errorf("measure: window %v of %d polls, want %v, %d", res.window, res.polls, cfg.dur, polls)
				}
				if want := int64(cfg.clients * polls); res.fresh != want || res.skipped != 0 || len(res.latencies) != int(want) {
					t.Errorf("measure: %d new polls seen, %d skipped, %d latencies; want %d, 0, %d", res.fresh, res.skipped, len(res.latencies), want, want)
				}
				if res.received < res.fresh || uint64(res.received) != res.sent {
					t.Errorf("measure: %d messages received, %d sent by the hub, %d with a new poll", res.received, res.sent, res.fresh)
				}
				if res.dropped != 0 || res.lost != 0 {
					t.Errorf("measure: %d dropped, %d lost (%v); want none", res.dropped, res.lost, res.lostErrs)
				}
				// The first update is whole, with every sparkline's samples;
				// the later ones are changes with only the new samples.
				if res.first.n != int64(cfg.clients) || res.whole.n != 0 || res.changes.n != res.received {
					t.Errorf("measure: %d first updates, %d whole and %d changes in the window; want %d, 0, %d",
						res.first.n, res.whole.n, res.changes.n, cfg.clients, res.received)
				}
				if res.changes.payload/res.changes.n >= res.first.payload/res.first.n {
					t.Errorf("changes of %d bytes, first updates of %d: want changes smaller", res.changes.payload/res.changes.n, res.first.payload/res.first.n)
				}
				if compress && res.changes.wire >= res.changes.payload*3/4 {
					t.Errorf("compressed: %d bytes on the wire for %d of payload", res.changes.wire, res.changes.payload)
				}
				if !compress && res.changes.wire < res.changes.payload {
					t.Errorf("uncompressed: %d bytes on the wire for %d of payload", res.changes.wire, res.changes.payload)
				}
				// A poll is pushed the publisher's settle (a hundredth of
				// its 1 s interval) after it lands: the fake clock stands
				// still while the server works.
				for _, l := range res.latencies {
					if l != 10*time.Millisecond {
						t.Fatalf("measure: latency %v under a clock that stood still, want 10ms", l)
					}
				}
				final := strings.TrimSpace(out.String())
				if !regexp.MustCompile(`^stats polls=27 .*skewscope_websocket_dropped_clients_total=0 skewscope_websocket_messages_sent_total=[1-9]`).MatchString(final) {
					t.Errorf("server printed %q, want stats polls=27 and the websocket metrics", final)
				}

				var report bytes.Buffer
				res.print(&report)
				for _, re := range []string{
					`clients connected: +5/5 `,
					`window: +10s `,
					`polls: +5 in the window`,
					`messages received: +[0-9]+ \(≈ clients × polls = 25\), 25 with a new Flink poll; 0 polls never seen`,
					`dropped clients: +0 .*connections lost: 0`,
					`update latency: +p50 \S+, p99 \S+, max \S+ \(25 samples\) +goal p99 ≤ 200ms: `,
					`first update: +5 × [0-9.]+ KiB payload, [0-9.]+ KiB on the wire`,
					`steady changes: +[0-9]+ × [0-9.]+ KiB payload`,
					`server RSS: +peak \(VmHWM\) [0-9.]+ MiB, current \(VmRSS\) [0-9.]+ MiB +goal ≤ 256.0 MiB: `,
					`server CPU: +[0-9.]+ cores .* goal ≤ 0.5 core: `,
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
			args := []string{"-clients", "5", "-partitions", "600", "-subtasks", "8", "-history", "20", "-for", "2s", "-interval", "500ms", "-compress=" + strconv.FormatBool(compress)}
			if err := run(context.Background(), args, &out, &errOut); err != nil {
				t.Fatalf("run: %v\n%s", err, errOut.String())
			}
			report := out.String()
			for _, re := range []string{
				`clients connected: +5/5 `,
				`polls: +[0-9]+ in the window`,
				`messages received: +[0-9]+ `,
				`dropped clients: +0 .*connections lost: 0`,
				`update latency: +p50 \S+, p99 \S+, max \S+ \([0-9]+ samples\)`,
				`first update: +5 × [0-9.]+ KiB payload`,
				`server RSS: +peak \(VmHWM\) [0-9.]+ MiB`,
			} {
				if !regexp.MustCompile(re).MatchString(report) {
					t.Errorf("report does not match %q:\n%s", re, report)
				}
			}
		})
	}
}
