package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/skewscope/skewscope/web"
)

// result is what one load run measured. Counters and CPU cover the window
// that starts once every client is connected and subscribed.
type result struct {
	cfg        config
	cpus       int
	connected  int
	connectDur time.Duration
	dialErrs   []string

	window           time.Duration
	published        uint64 // updates encoded by the hub in the window
	publishedTotal   uint64
	received         int64 // messages received by all clients in the window
	skipped          int64 // updates a client never saw (conflated to the latest)
	dropped          uint64
	lost             int64 // client connections that ended before the run did
	serverUser       time.Duration
	serverSys        time.Duration
	clientCPU        time.Duration
	machineCPU       time.Duration // all CPUs, every process
	lostErrs         []string
	rssPeak, rssNow  int64
	latencies        []time.Duration
	payloadBytes     int64 // uncompressed message bytes received in the window
	wireBytes        int64 // bytes read from the sockets in the window
	finalServerStats string
	goalCores        float64
	goalP99          time.Duration
	goalRSS          int64
}

// load starts the server child, connects the clients, measures for
// cfg.dur and stops everything.
func load(ctx context.Context, cfg config, stderr io.Writer) (*result, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-serve",
		"-clients", strconv.Itoa(cfg.clients),
		"-partitions", strconv.Itoa(cfg.partitions),
		"-subtasks", strconv.Itoa(cfg.subtasks),
		"-interval", cfg.interval.String(),
		"-compress="+strconv.FormatBool(cfg.compress),
		"-for", cfg.dur.String())
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	childDone := make(chan struct{})
	var finalStats string
	lines := bufio.NewScanner(out)
	var stopOnce sync.Once
	stopChild := func() {
		stopOnce.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-childDone:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				<-childDone
			}
			_ = cmd.Wait()
		})
	}
	if !lines.Scan() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("server child: no listen address (%v)", lines.Err())
	}
	addr, ok := strings.CutPrefix(lines.Text(), "listening ")
	if !ok {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("server child said %q, want listening <addr>", lines.Text())
	}
	go func() {
		defer close(childDone)
		for lines.Scan() {
			if s, ok := strings.CutPrefix(lines.Text(), "stats "); ok {
				finalStats = s
			}
		}
	}()
	defer stopChild()
	res, err := measure(ctx, cfg, target{
		addr:  addr,
		dial:  (&net.Dialer{}).DialContext,
		stats: func() (web.HubStats, error) { return fetchStats(addr) },
		pid:   cmd.Process.Pid,
	})
	if res == nil {
		return nil, err
	}
	stopChild()
	res.finalServerStats = finalStats
	return res, err
}

// target is the server a load run measures: where its clients connect,
// how its hub's counters are read, and the process whose CPU and memory
// are measured.
type target struct {
	addr  string // host:port of the ws:// URL and the Origin header
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	stats func() (web.HubStats, error)
	pid   int
}

// measure connects cfg.clients clients to tg, lets each see a first
// update, measures for cfg.dur and closes the clients. It returns nil and
// the error when a step fails, and the result with ctx's error when ctx
// ended the window early.
func measure(ctx context.Context, cfg config, tg target) (*result, error) {
	pid := tg.pid
	res := &result{cfg: cfg, cpus: runtime.NumCPU(), goalCores: 0.5, goalP99: 200 * time.Millisecond, goalRSS: 256 << 20}
	var measuring atomic.Bool
	wire := &atomic.Int64{}

	// Connect every client, a few handshakes at a time.
	start := time.Now()
	clients := make([]*loadClient, cfg.clients)
	errs := make([]error, cfg.clients)
	var wg sync.WaitGroup
	sem := make(chan struct{}, cfg.dialWorkers)
	for i := range clients {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			clients[i], errs[i] = dialClient(ctx, tg, cfg.compress, wire, &measuring)
		}()
	}
	wg.Wait()
	res.connectDur = time.Since(start)
	var readers sync.WaitGroup
	for i, c := range clients {
		if errs[i] != nil {
			if len(res.dialErrs) < 5 {
				res.dialErrs = append(res.dialErrs, errs[i].Error())
			}
			continue
		}
		res.connected++
		readers.Add(1)
		go func() { defer readers.Done(); c.readLoop() }()
	}
	if res.connected == 0 {
		return nil, fmt.Errorf("no client connected: %s", strings.Join(res.dialErrs, "; "))
	}

	// Let every client see a first update before measuring.
	if err := sleep(ctx, 2*cfg.interval); err != nil {
		return nil, err
	}
	st0, err := tg.stats()
	if err != nil {
		return nil, err
	}
	u0, s0, err := cpuTime(pid)
	if err != nil {
		return nil, err
	}
	cu0, cs0, err := cpuTime(os.Getpid())
	if err != nil {
		return nil, err
	}
	m0, err := machineBusy()
	if err != nil {
		return nil, err
	}
	wire.Store(0)
	measuring.Store(true)
	t0 := time.Now()
	werr := sleep(ctx, cfg.dur)
	measuring.Store(false)
	res.window = time.Since(t0)
	u1, s1, err := cpuTime(pid)
	if err != nil {
		return nil, err
	}
	cu1, cs1, err := cpuTime(os.Getpid())
	if err != nil {
		return nil, err
	}
	m1, err := machineBusy()
	if err != nil {
		return nil, err
	}
	res.machineCPU = m1 - m0
	res.wireBytes = wire.Load()
	if res.rssPeak, res.rssNow, err = memory(pid); err != nil {
		return nil, err
	}
	st1, err := tg.stats()
	if err != nil {
		return nil, err
	}
	res.serverUser, res.serverSys = u1-u0, s1-s0
	res.clientCPU = (cu1 + cs1) - (cu0 + cs0)
	res.published = st1.Encoded - st0.Encoded
	res.publishedTotal = st1.Encoded
	res.dropped = st1.Dropped

	for _, c := range clients {
		if c != nil {
			c.done.Store(true)
			_ = c.conn.Close()
		}
	}
	readers.Wait()
	for _, c := range clients {
		if c == nil {
			continue
		}
		res.received += c.received
		res.skipped += c.skipped
		res.payloadBytes += c.payload
		res.latencies = append(res.latencies, c.latencies...)
		if c.lost {
			res.lost++
			if len(res.lostErrs) < 3 && !slices.Contains(res.lostErrs, c.err) {
				res.lostErrs = append(res.lostErrs, c.err)
			}
		}
	}
	slices.Sort(res.latencies)
	return res, werr
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func fetchStats(addr string) (web.HubStats, error) {
	var st web.HubStats
	resp, err := http.Get("http://" + addr + "/stats")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /stats: %s", resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// loadClient is one websocket client; its fields are written by its
// read loop only and read after the loop ended.
type loadClient struct {
	conn      *websocket.Conn
	measuring *atomic.Bool
	done      atomic.Bool // closed by the run, not by the server

	lastSeq   int64
	received  int64
	skipped   int64
	payload   int64
	latencies []time.Duration
	lost      bool
	err       string
}

// countingConn counts the bytes read from the socket.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func dialClient(ctx context.Context, tg target, compress bool, wire *atomic.Int64, measuring *atomic.Bool) (*loadClient, error) {
	d := &websocket.Dialer{
		HandshakeTimeout:  30 * time.Second,
		ReadBufferSize:    64 << 10,
		EnableCompression: compress,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := tg.dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countingConn{c, wire}, nil
		},
	}
	// A browser on the dashboard's own (allowlisted) origin.
	hdr := http.Header{"Origin": {"http://" + tg.addr}}
	conn, resp, err := d.DialContext(ctx, "ws://"+tg.addr+"/ws", hdr)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("dial: %v (%s)", err, resp.Status)
		}
		return nil, fmt.Errorf("dial: %v", err)
	}
	if err := conn.WriteJSON(map[string][]string{"subscribe": {topic}}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("subscribe: %v", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	var ack struct{ Subscribed []string }
	if err := conn.ReadJSON(&ack); err != nil || len(ack.Subscribed) != 1 || ack.Subscribed[0] != topic {
		conn.Close()
		return nil, fmt.Errorf("subscribe ack %v: %v", ack.Subscribed, err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	return &loadClient{conn: conn, measuring: measuring}, nil
}

// readLoop reads messages into a reused buffer, stamps the time once the
// whole message is in, and takes seq and at from its first bytes.
func (c *loadClient) readLoop() {
	buf := make([]byte, 64<<10)
	head := make([]byte, 0, 256)
	for {
		_, r, err := c.conn.NextReader()
		if err != nil {
			c.lost, c.err = !c.done.Load(), err.Error()
			return
		}
		head = head[:0]
		var n int64
		for {
			k, err := r.Read(buf)
			if len(head) < cap(head) {
				head = append(head, buf[:min(k, cap(head)-len(head))]...)
			}
			n += int64(k)
			if err == io.EOF {
				break
			}
			if err != nil {
				c.lost, c.err = !c.done.Load(), err.Error()
				return
			}
		}
		now := time.Now()
		seq, at, ok := updateHeader(head)
		if !ok {
			continue
		}
		if c.measuring.Load() {
			c.received++
			c.payload += n
			c.latencies = append(c.latencies, now.Sub(time.UnixMilli(at)))
			if c.lastSeq > 0 && seq > c.lastSeq+1 {
				c.skipped += seq - c.lastSeq - 1
			}
		}
		c.lastSeq = seq
	}
}

// updateHeader reads seq and at from the start of
// {"topic":"...","data":{"seq":N,"at":MS,...
func updateHeader(head []byte) (seq, at int64, ok bool) {
	num := func(key string) (int64, bool) {
		i := bytes.Index(head, []byte(key))
		if i < 0 {
			return 0, false
		}
		rest := head[i+len(key):]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		v, err := strconv.ParseInt(string(rest[:j]), 10, 64)
		return v, err == nil
	}
	seq, ok1 := num(`"seq":`)
	at, ok2 := num(`"at":`)
	return seq, at, ok1 && ok2
}

func (r *result) print(w io.Writer) {
	c := r.cfg
	pct := func(p float64) time.Duration {
		if len(r.latencies) == 0 {
			return 0
		}
		return r.latencies[min(len(r.latencies)-1, int(p*float64(len(r.latencies))))]
	}
	cores := (r.serverUser + r.serverSys).Seconds() / r.window.Seconds()
	mb := func(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
	per := func(b int64) int64 {
		if r.received == 0 {
			return 0
		}
		return b / r.received
	}
	comp := "off"
	if c.compress {
		comp = "permessage-deflate"
	}
	ok := func(b bool) string {
		if b {
			return "met"
		}
		return "MISSED"
	}
	p99 := pct(0.99)
	fmt.Fprintf(w, "wsload: %d clients, topic %s, %d partitions over %d subtasks, one update every %v, compression %s\n",
		c.clients, topic, c.partitions, c.subtasks, c.interval, comp)
	win := r.window.Seconds()
	fmt.Fprintf(w, "machine: %d CPUs shared by the server child and the clients; in the window all CPUs were busy %.2f cores: server %.2f, clients %.2f, other processes %.2f\n",
		r.cpus, r.machineCPU.Seconds()/win, (r.serverUser+r.serverSys).Seconds()/win, r.clientCPU.Seconds()/win,
		(r.machineCPU-r.serverUser-r.serverSys-r.clientCPU).Seconds()/win)
	fmt.Fprintf(w, "clients connected:   %d/%d in %v\n", r.connected, c.clients, r.connectDur.Round(time.Millisecond))
	for _, e := range r.dialErrs {
		fmt.Fprintf(w, "  dial error: %s\n", e)
	}
	fmt.Fprintf(w, "window:              %v (after all clients subscribed)\n", r.window.Round(time.Millisecond))
	fmt.Fprintf(w, "updates published:   %d in the window (%d in all)\n", r.published, r.publishedTotal)
	fmt.Fprintf(w, "messages received:   %d (≈ clients × updates = %d); %d updates skipped by latest-only conflation\n",
		r.received, int64(r.connected)*int64(r.published), r.skipped)
	fmt.Fprintf(w, "dropped clients:     %d (hub Stats.Dropped); client connections lost: %d\n", r.dropped, r.lost)
	for _, e := range r.lostErrs {
		fmt.Fprintf(w, "  lost: %s\n", e)
	}
	fmt.Fprintf(w, "server CPU:          %.3f cores (user %v + system %v over %v)\n",
		cores, r.serverUser, r.serverSys, r.window.Round(time.Millisecond))
	fmt.Fprintf(w, "server RSS:          peak (VmHWM) %s, current (VmRSS) %s\n", mb(r.rssPeak), mb(r.rssNow))
	fmt.Fprintf(w, "delivery latency:    p50 %v, p99 %v, max %v (%d samples)\n",
		pct(0.50).Round(time.Millisecond), p99.Round(time.Millisecond), pct(1).Round(time.Millisecond), len(r.latencies))
	fmt.Fprintf(w, "bytes per message:   %d payload, %d on the wire\n", per(r.payloadBytes), per(r.wireBytes))
	fmt.Fprintf(w, "goals:               CPU ≤ %.1f core %s; p99 ≤ %v %s; RSS ≤ %s %s\n",
		r.goalCores, ok(cores <= r.goalCores), r.goalP99, ok(p99 <= r.goalP99), mb(r.goalRSS), ok(r.rssPeak <= r.goalRSS))
	if r.finalServerStats != "" {
		fmt.Fprintf(w, "server final stats:  %s\n", r.finalServerStats)
	}
}
