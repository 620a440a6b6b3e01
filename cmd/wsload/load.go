package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
)

// result is what one load run measured. Counters and CPU cover the window
// that starts once every client is connected and has had its first,
// whole update.
type result struct {
	cfg        config
	cpus       int
	topic      string
	connected  int
	connectDur time.Duration
	dialErrs   []string

	window      time.Duration
	polls       int64  // polls of the source handed to the store in the window
	sent        uint64 // messages the hub wrote in the window
	received    int64  // messages received by all clients in the window
	fresh       int64  // of which carried a Flink poll the client had not seen
	skipped     int64  // polls a client never saw (conflated, or published together)
	dropped     uint64 // slow clients the hub dropped, in all
	lost        int64  // client connections that ended before the run did
	serverUser  time.Duration
	serverSys   time.Duration
	clientCPU   time.Duration
	machineCPU  time.Duration // all CPUs, every process
	lostErrs    []string
	rssPeak     int64
	rssNow      int64
	latencies   []time.Duration
	first       msgBytes // the first update of each client: the whole update
	whole       msgBytes // whole updates in the window (a client that missed a change)
	changes     msgBytes // changes in the window: sparklines carry only their new samples
	finalServer string
	goalCores   float64
	goalP99     time.Duration
	goalRSS     int64
}

// msgBytes counts messages and their bytes, uncompressed and as read
// from the socket.
type msgBytes struct {
	n, payload, wire int64
}

func (m *msgBytes) add(o msgBytes) {
	m.n, m.payload, m.wire = m.n+o.n, m.payload+o.payload, m.wire+o.wire
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
		"-history", strconv.Itoa(cfg.history),
		"-interval", cfg.interval.String(),
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
		addr: addr,
		dial: (&net.Dialer{}).DialContext,
		pid:  cmd.Process.Pid,
	})
	if res == nil {
		return nil, err
	}
	stopChild()
	res.finalServer = finalStats
	return res, err
}

// target is the server a load run measures: where its clients connect,
// how they dial it, and the process whose CPU and memory are measured.
type target struct {
	addr string // host:port of the URLs and the Origin header
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	pid  int
}

// serverStats are the counters the run reads from the server: its
// /metrics and the child's own.
type serverStats struct {
	polls   int64
	sent    uint64
	dropped uint64
}

// measure reads the vertex page's topic, connects cfg.clients clients to
// tg, lets each see a first update, measures for cfg.dur and closes the
// clients. It returns nil and the error when a step fails, and the result
// with ctx's error when ctx ended the window early.
func measure(ctx context.Context, cfg config, tg target) (*result, error) {
	pid := tg.pid
	res := &result{cfg: cfg, cpus: runtime.NumCPU(), goalCores: 0.5, goalP99: 200 * time.Millisecond, goalRSS: 256 << 20}
	hc := &http.Client{Transport: &http.Transport{DialContext: tg.dial}, Timeout: 60 * time.Second}
	defer hc.CloseIdleConnections()
	topic, err := pageTopic(ctx, hc, tg.addr)
	if err != nil {
		return nil, err
	}
	res.topic = topic
	var measuring atomic.Bool

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
			clients[i], errs[i] = dialClient(ctx, tg, topic, cfg.compress, &measuring)
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
		c.interval = cfg.interval
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
	st0, err := fetchStats(ctx, hc, tg.addr)
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
	measuring.Store(true)
	t0 := time.Now()
	cpuProf := make(chan error, 1)
	if cfg.cpuProfile != "" {
		go func() {
			cpuProf <- saveProfile(ctx, &http.Client{Transport: hc.Transport}, tg.addr,
				fmt.Sprintf("profile?seconds=%d", max(1, int(cfg.dur.Seconds()))), cfg.cpuProfile)
		}()
	} else {
		cpuProf <- nil
	}
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
	if res.rssPeak, res.rssNow, err = memory(pid); err != nil {
		return nil, err
	}
	st1, err := fetchStats(context.WithoutCancel(ctx), hc, tg.addr)
	if err != nil {
		return nil, err
	}
	if cfg.memProfile != "" {
		if err := saveProfile(context.WithoutCancel(ctx), hc, tg.addr, "heap", cfg.memProfile); err != nil {
			return nil, err
		}
	}
	if err := <-cpuProf; err != nil {
		return nil, err
	}
	res.serverUser, res.serverSys = u1-u0, s1-s0
	res.clientCPU = (cu1 + cs1) - (cu0 + cs0)
	res.polls = st1.polls - st0.polls
	res.sent = st1.sent - st0.sent
	res.dropped = st1.dropped

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
		res.received += c.whole.n + c.changes.n
		res.fresh += c.fresh
		res.skipped += c.skipped
		res.first.add(c.first)
		res.whole.add(c.whole)
		res.changes.add(c.changes)
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

func get(ctx context.Context, hc *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return b, err
}

// saveProfile writes the server child's /debug/pprof/<name> to file.
func saveProfile(ctx context.Context, hc *http.Client, addr, name, file string) error {
	b, err := get(ctx, hc, "http://"+addr+"/debug/pprof/"+name)
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

// topicAttr is where a live page names its websocket topic.
var topicAttr = regexp.MustCompile(`data-live-topic="([^"]+)"`)

// pageTopic reads the topic the vertex page subscribes to, as the
// browser's live script does.
func pageTopic(ctx context.Context, hc *http.Client, addr string) (string, error) {
	page, err := get(ctx, hc, "http://"+addr+pagePath)
	if err != nil {
		return "", err
	}
	m := topicAttr.FindSubmatch(page)
	if m == nil {
		return "", fmt.Errorf("GET %s: no data-live-topic in %d bytes", pagePath, len(page))
	}
	return html.UnescapeString(string(m[1])), nil
}

// fetchStats reads the hub's counters from /metrics and the child's
// polls.
func fetchStats(ctx context.Context, hc *http.Client, addr string) (serverStats, error) {
	var st serverStats
	b, err := get(ctx, hc, "http://"+addr+statsPath)
	if err != nil {
		return st, err
	}
	var cs childStats
	if err := json.Unmarshal(b, &cs); err != nil {
		return st, fmt.Errorf("%s: %v", statsPath, err)
	}
	st.polls = cs.Polls
	if b, err = get(ctx, hc, "http://"+addr+"/metrics"); err != nil {
		return st, err
	}
	m := parseMetrics(b)
	st.sent, st.dropped = uint64(m["skewscope_websocket_messages_sent_total"]), uint64(m["skewscope_websocket_dropped_clients_total"])
	return st, nil
}

// parseMetrics reads the series without labels of a Prometheus text
// exposition.
func parseMetrics(b []byte) map[string]float64 {
	m := map[string]float64{}
	for line := range strings.Lines(string(b)) {
		name, val, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(val, 64); err == nil {
			m[name] = v
		}
	}
	return m
}

// loadClient is one websocket client; its fields are written by its
// read loop only and read after the loop ended.
type loadClient struct {
	conn      *websocket.Conn
	topic     string
	interval  time.Duration
	measuring *atomic.Bool
	done      atomic.Bool // closed by the run, not by the server
	wire      *atomic.Int64

	lastAt    int64 // the newest Flink poll seen, unix ms
	fresh     int64
	skipped   int64
	first     msgBytes
	whole     msgBytes
	changes   msgBytes
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

func dialClient(ctx context.Context, tg target, topic string, compress bool, measuring *atomic.Bool) (*loadClient, error) {
	wire := &atomic.Int64{}
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
	// What static/js/live.js sends on open.
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
	return &loadClient{conn: conn, topic: topic, measuring: measuring, wire: wire}, nil
}

// readLoop reads each message whole into a reused buffer, stamps the time
// once it is in, and reads its topic, kind and Flink poll time.
func (c *loadClient) readLoop() {
	var buf []byte
	w0 := c.wire.Load()
	for {
		_, r, err := c.conn.NextReader()
		if err == nil {
			buf, err = readAll(r, buf[:0])
		}
		if err != nil {
			c.lost, c.err = !c.done.Load(), err.Error()
			return
		}
		now := time.Now()
		w1 := c.wire.Load()
		u, ok := parseUpdate(buf, c.topic)
		if !ok {
			continue
		}
		// The socket's bytes since the last message: the read-ahead
		// buffer makes the split between messages approximate, the sum
		// exact.
		mb := msgBytes{n: 1, payload: int64(len(buf)), wire: w1 - w0}
		w0 = w1
		switch {
		case c.first.n == 0:
			c.first = mb
		case !c.measuring.Load():
		case u.change:
			c.changes.add(mb)
		default:
			c.whole.add(mb)
		}
		if u.at > c.lastAt {
			if c.measuring.Load() && c.lastAt > 0 {
				c.fresh++
				c.latencies = append(c.latencies, now.Sub(time.UnixMilli(u.at)))
				if gap := time.Duration(u.at-c.lastAt) * time.Millisecond; gap > c.interval*3/2 {
					c.skipped += int64((gap+c.interval/2)/c.interval) - 1
				}
			}
			c.lastAt = u.at
		}
	}
}

// readAll appends r's bytes to buf.
func readAll(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// liveUpdate is what a load client reads of an update.
type liveUpdate struct {
	at     int64 // the Flink poll's time, unix ms ("ages":{"age":…})
	change bool  // a change after the last update ("after": its sparklines' last sample)
}

// parseUpdate reads an update of topic, {"topic":topic,"data":{…}}, as
// web.Hub frames it and views.Update writes it, without decoding the
// thousands of cells: the page's Flink age ("ages":{"age":ms,…}) and
// whether its sparklines are to be appended ("after"). Every string in
// the update is JSON-quoted, so `"ages":{` and `,"after":` occur only as
// the update's own keys.
func parseUpdate(b []byte, topic string) (u liveUpdate, ok bool) {
	head := `{"topic":` + strconv.Quote(topic) + `,"data":{`
	if !bytes.HasPrefix(b, []byte(head)) {
		return u, false
	}
	i := bytes.Index(b, []byte(`"ages":{`))
	if i < 0 {
		return u, false
	}
	ages := b[i+len(`"ages":{`):]
	j := bytes.Index(ages, []byte(`"age":`))
	if k := bytes.IndexByte(ages, '}'); j < 0 || (k >= 0 && k < j) {
		return u, false
	}
	rest := ages[j+len(`"age":`):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	at, err := strconv.ParseInt(string(rest[:n]), 10, 64)
	if err != nil || at <= 0 {
		return u, false
	}
	return liveUpdate{at: at, change: bytes.Contains(b, []byte(`,"after":`))}, true
}

func (r *result) print(w io.Writer) {
	c := r.cfg
	pct := func(p float64) time.Duration {
		if len(r.latencies) == 0 {
			return 0
		}
		return r.latencies[min(len(r.latencies)-1, int(p*float64(len(r.latencies))))]
	}
	win := r.window.Seconds()
	cores := (r.serverUser + r.serverSys).Seconds() / win
	mb := func(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
	per := func(m msgBytes) string {
		if m.n == 0 {
			return "none"
		}
		return fmt.Sprintf("%d × %.1f KiB payload, %.1f KiB on the wire", m.n, float64(m.payload)/float64(m.n)/1024, float64(m.wire)/float64(m.n)/1024)
	}
	comp := "off"
	if c.compress {
		comp = "permessage-deflate"
	}
	goal := func(met bool, g string) string {
		if met {
			return "goal " + g + ": met"
		}
		return "goal " + g + ": MISSED"
	}
	p99 := pct(0.99)
	fmt.Fprintf(w, "wsload: %d clients of the vertex page, topic %s; a Kafka source of %d partitions over %d subtasks, one Kafka and one Flink poll every %v (%d polls of history); compression %s\n",
		c.clients, r.topic, c.partitions, c.subtasks, c.interval, c.history, comp)
	fmt.Fprintf(w, "machine: %d CPUs shared by the server child and the clients; in the window all CPUs were busy %.2f cores: server %.2f, clients %.2f, other processes %.2f\n",
		r.cpus, r.machineCPU.Seconds()/win, (r.serverUser+r.serverSys).Seconds()/win, r.clientCPU.Seconds()/win,
		(r.machineCPU-r.serverUser-r.serverSys-r.clientCPU).Seconds()/win)
	fmt.Fprintf(w, "clients connected:   %d/%d in %v\n", r.connected, c.clients, r.connectDur.Round(time.Millisecond))
	for _, e := range r.dialErrs {
		fmt.Fprintf(w, "  dial error: %s\n", e)
	}
	fmt.Fprintf(w, "window:              %v (after every client had its first update)\n", r.window.Round(time.Millisecond))
	fmt.Fprintf(w, "polls:               %d in the window; the hub wrote %d messages\n", r.polls, r.sent)
	fmt.Fprintf(w, "messages received:   %d (≈ clients × polls = %d), %d with a new Flink poll; %d polls never seen by a client\n",
		r.received, int64(r.connected)*r.polls, r.fresh, r.skipped)
	fmt.Fprintf(w, "dropped clients:     %d (skewscope_websocket_dropped_clients_total); client connections lost: %d\n", r.dropped, r.lost)
	for _, e := range r.lostErrs {
		fmt.Fprintf(w, "  lost: %s\n", e)
	}
	fmt.Fprintf(w, "server CPU:          %.3f cores (user %v + system %v over %v)    %s\n",
		cores, r.serverUser, r.serverSys, r.window.Round(time.Millisecond), goal(cores <= r.goalCores, fmt.Sprintf("≤ %.1f core", r.goalCores)))
	fmt.Fprintf(w, "server RSS:          peak (VmHWM) %s, current (VmRSS) %s    %s\n", mb(r.rssPeak), mb(r.rssNow), goal(r.rssPeak <= r.goalRSS, "≤ "+mb(r.goalRSS)))
	fmt.Fprintf(w, "update latency:      p50 %v, p99 %v, max %v (%d samples)    %s\n",
		pct(0.50).Round(time.Millisecond), p99.Round(time.Millisecond), pct(1).Round(time.Millisecond), len(r.latencies),
		goal(len(r.latencies) > 0 && p99 <= r.goalP99, fmt.Sprintf("p99 ≤ %v", r.goalP99)))
	fmt.Fprintf(w, "first update:        %s\n", per(r.first))
	fmt.Fprintf(w, "steady changes:      %s\n", per(r.changes))
	fmt.Fprintf(w, "whole updates:       %s (in the window)\n", per(r.whole))
	if r.finalServer != "" {
		fmt.Fprintf(w, "server final stats:  %s\n", r.finalServer)
	}
}
