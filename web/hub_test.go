package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
)

// hubFixture is a running Hub behind an httptest server.
type hubFixture struct {
	hub     *Hub
	srv     *httptest.Server
	cancel  context.CancelFunc
	runDone chan struct{}
	origin  string // the server's own origin
}

// newHubFixture starts a hub whose allowlist holds opts.AllowedOrigins
// plus the test server's own origin, as the caller does with the origin
// of --web.external-url.
func newHubFixture(t *testing.T, opts HubOptions) *hubFixture {
	t.Helper()
	return startHub(t, opts, true)
}

// startHub starts a hub behind an httptest server; allowSelf adds the
// server's own origin to the allowlist.
func startHub(t *testing.T, opts HubOptions, allowSelf bool) *hubFixture {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	origin := "http://" + srv.Listener.Addr().String()
	if allowSelf {
		opts.AllowedOrigins = append(slices.Clone(opts.AllowedOrigins), origin)
	}
	h, err := NewHub(nil, opts)
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	srv.Config.Handler = http.HandlerFunc(h.ServeWS)
	srv.Start()
	ctx, cancel := context.WithCancel(context.Background())
	f := &hubFixture{hub: h, srv: srv, cancel: cancel, runDone: make(chan struct{}), origin: origin}
	go func() { h.Run(ctx); close(f.runDone) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-f.runDone:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after cancel")
		}
		f.srv.Close()
	})
	return f
}

func (f *hubFixture) wsURL() string { return "ws" + strings.TrimPrefix(f.srv.URL, "http") }

// dial opens a websocket with the given Origin ("" sends none).
func (f *hubFixture) dial(t *testing.T, origin string, d *websocket.Dialer) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	if d == nil {
		d = &websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	}
	hdr := http.Header{}
	if origin != "" {
		hdr.Set("Origin", origin)
	}
	c, resp, err := d.Dial(f.wsURL(), hdr)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, resp, err
}

func (f *hubFixture) mustDial(t *testing.T) *websocket.Conn {
	t.Helper()
	c, _, err := f.dial(t, f.origin, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	return c
}

// subscribe sends a subscribe message and waits for its ack.
func subscribe(t *testing.T, c *websocket.Conn, topics ...string) {
	t.Helper()
	if err := c.WriteJSON(map[string][]string{"subscribe": topics}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var ack struct{ Subscribed []string }
	if err := c.ReadJSON(&ack); err != nil {
		t.Fatalf("read subscribe ack: %v", err)
	}
	if strings.Join(ack.Subscribed, ",") != strings.Join(topics, ",") {
		t.Fatalf("ack = %q, want %q", ack.Subscribed, topics)
	}
}

func readRaw(t *testing.T, c *websocket.Conn) []byte {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	typ, data, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if typ != websocket.TextMessage {
		t.Fatalf("message type %d, want text", typ)
	}
	return data
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// expectClosed reads until the connection fails and returns the error.
func expectClosed(t *testing.T, c *websocket.Conn) error {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
				t.Fatalf("connection still open: %v", err)
			}
			return err
		}
	}
}

func TestHubPublishEncodesOnce(t *testing.T) {
	f := newHubFixture(t, HubOptions{})
	a, b, other := f.mustDial(t), f.mustDial(t), f.mustDial(t)
	subscribe(t, a, "vertex:1")
	subscribe(t, b, "job:9", "vertex:1")
	subscribe(t, other, "vertex:2")

	if err := f.hub.Publish("vertex:1", map[string]int{"lag": 42}); err != nil {
		t.Fatal(err)
	}
	ga, gb := readRaw(t, a), readRaw(t, b)
	want := `{"topic":"vertex:1","data":{"lag":42}}`
	if string(ga) != want || !bytes.Equal(ga, gb) {
		t.Errorf("a got %s, b got %s, want both %s", ga, gb, want)
	}
	// Sent counts the three acks and the two updates; one encode served both.
	waitFor(t, "sent counter", 5*time.Second, func() bool { return f.hub.Stats().Sent == 5 })
	if s := f.hub.Stats(); s.Encoded != 1 || s.Connections != 3 {
		t.Errorf("stats = %+v, want Encoded 1, Connections 3", s)
	}
	// The non-subscriber got nothing: its next message is the next update of its own topic.
	if err := f.hub.Publish("vertex:2", 7); err != nil {
		t.Fatal(err)
	}
	if got := string(readRaw(t, other)); got != `{"topic":"vertex:2","data":7}` {
		t.Errorf("other got %s", got)
	}

	// Resubscribing replaces the subscription set.
	subscribe(t, b, "job:9")
	if err := f.hub.Publish("vertex:1", 1); err != nil {
		t.Fatal(err)
	}
	if err := f.hub.Publish("job:9", 2); err != nil {
		t.Fatal(err)
	}
	if got := string(readRaw(t, b)); got != `{"topic":"job:9","data":2}` {
		t.Errorf("b after resubscribe got %s", got)
	}
	if err := f.hub.Publish("x", func() {}); err == nil {
		t.Error("Publish of an unencodable value: no error")
	}
}

func TestHubCompression(t *testing.T) {
	f := newHubFixture(t, HubOptions{EnableCompression: true})
	d := &websocket.Dialer{HandshakeTimeout: 10 * time.Second, EnableCompression: true}
	deflate, resp, err := f.dial(t, f.origin, d)
	if err != nil {
		t.Fatal(err)
	}
	if ext := resp.Header.Get("Sec-Websocket-Extensions"); !strings.Contains(ext, "permessage-deflate") {
		t.Fatalf("Sec-Websocket-Extensions = %q, want permessage-deflate", ext)
	}
	plain := f.mustDial(t) // offers no compression
	subscribe(t, deflate, "grid")
	subscribe(t, plain, "grid")
	update := map[string]string{"cells": strings.Repeat("12345,", 2000)}
	if err := f.hub.Publish("grid", update); err != nil {
		t.Fatal(err)
	}
	want := []byte(`{"topic":"grid","data":{"cells":"` + update["cells"] + `"}}`)
	if got := readRaw(t, deflate); !bytes.Equal(got, want) {
		t.Errorf("compressed client got %d bytes, want the %d-byte update", len(got), len(want))
	}
	if got := readRaw(t, plain); !bytes.Equal(got, want) {
		t.Errorf("plain client got %d bytes, want the %d-byte update", len(got), len(want))
	}
	if s := f.hub.Stats(); s.Encoded != 1 {
		t.Errorf("Encoded = %d, want 1", s.Encoded)
	}
}

func TestHubOriginCheck(t *testing.T) {
	// The server's own origin is not allowlisted: only the list counts.
	f := startHub(t, HubOptions{AllowedOrigins: []string{"https://Dash.Example.com:443/"}}, false)
	tests := []struct {
		name   string
		header http.Header
		want   int
	}{
		{"allowlisted", http.Header{"Origin": {"https://dash.example.com"}}, http.StatusSwitchingProtocols},
		{"allowlisted, upper case and default port", http.Header{"Origin": {"HTTPS://DASH.EXAMPLE.COM:443"}}, http.StatusSwitchingProtocols},
		{"cross origin", http.Header{"Origin": {"https://evil.example.com"}}, http.StatusForbidden},
		{"own origin, not allowlisted", http.Header{"Origin": {f.origin}}, http.StatusForbidden},
		{"allowlisted host other scheme", http.Header{"Origin": {"http://dash.example.com"}}, http.StatusForbidden},
		{"allowlisted host other port", http.Header{"Origin": {"https://dash.example.com:8443"}}, http.StatusForbidden},
		{"allowlisted host as subdomain", http.Header{"Origin": {"https://dash.example.com.evil.example"}}, http.StatusForbidden},
		{"origin with path", http.Header{"Origin": {"https://dash.example.com/x"}}, http.StatusForbidden},
		{"null origin", http.Header{"Origin": {"null"}}, http.StatusForbidden},
		{"no origin", http.Header{}, http.StatusForbidden},
		// Host is the client's to choose (DNS rebinding, direct exposure):
		// making it match Origin no longer opens the door.
		{"host spoofed to match origin", http.Header{"Origin": {"http://evil.example.com"}, "Host": {"evil.example.com"}}, http.StatusForbidden},
		{"forwarded host", http.Header{"Origin": {"http://proxy.example.com"}, "X-Forwarded-Host": {"proxy.example.com"}, "X-Forwarded-Proto": {"http"}}, http.StatusForbidden},
		// Host does not matter for an allowlisted origin either (a proxy
		// that rewrites Host does not break the handshake).
		{"allowlisted behind host-rewriting proxy", http.Header{"Origin": {"https://dash.example.com"}, "Host": {"10.0.0.7:8080"}}, http.StatusSwitchingProtocols},
	}
	rejected := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &websocket.Dialer{HandshakeTimeout: 10 * time.Second}
			c, resp, err := d.Dial(f.wsURL(), tt.header)
			if resp == nil {
				t.Fatalf("no response: %v", err)
			}
			if resp.StatusCode != tt.want {
				t.Fatalf("handshake with %v: status %d (%v), want %d", tt.header, resp.StatusCode, err, tt.want)
			}
			if c != nil {
				defer c.Close()
				subscribe(t, c, "t")
			}
		})
		if tt.want == http.StatusForbidden {
			rejected++
		}
	}
	if s := f.hub.Stats(); s.Rejected != uint64(rejected) {
		t.Errorf("Rejected = %d, want %d", s.Rejected, rejected)
	}

	for _, bad := range []string{"dash.example.com", "ftp://dash.example.com", "https://dash.example.com/app", "https://user@dash.example.com", ""} {
		if _, err := NewHub(nil, HubOptions{AllowedOrigins: []string{bad}}); err == nil {
			t.Errorf("NewHub(AllowedOrigins %q): no error", bad)
		}
	}

	// Without an external URL the caller allowlists the loopback origin
	// of the listen address; that origin is accepted, other spellings of
	// the same address are not.
	g := startHub(t, HubOptions{}, true)
	if _, resp, err := g.dial(t, g.origin, nil); err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Errorf("loopback origin %s: %v", g.origin, err)
	}
	if _, resp, _ := g.dial(t, strings.Replace(g.origin, "127.0.0.1", "localhost", 1), nil); resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("localhost spelling of %s: resp %v, want 403", g.origin, resp)
	}

	// A missing Origin is refused unless AllowNoOrigin says otherwise.
	if _, resp, _ := g.dial(t, "", nil); resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("no origin without AllowNoOrigin: resp %v, want 403", resp)
	}
	n := startHub(t, HubOptions{AllowNoOrigin: true}, false)
	c, resp, err := n.dial(t, "", nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("AllowNoOrigin: %v", err)
	}
	subscribe(t, c, "t")
	if _, resp, _ := n.dial(t, "https://evil.example.com", nil); resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("AllowNoOrigin with a foreign origin: resp %v, want 403", resp)
	}
}

func TestHubMaxConnections(t *testing.T) {
	f := newHubFixture(t, HubOptions{MaxConnections: 1})
	a := f.mustDial(t)
	if _, resp, err := f.dial(t, f.origin, nil); err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("second connection: err %v, resp %v; want 503", err, resp)
	}
	a.Close()
	waitFor(t, "connection released", 5*time.Second, func() bool { return f.hub.Stats().Connections == 0 })
	f.mustDial(t)
}

// smallReadBufferDialer shrinks the client's socket receive buffer so a
// client that never reads backs up the server quickly.
func smallReadBufferDialer() *websocket.Dialer {
	return &websocket.Dialer{
		HandshakeTimeout: 10 * time.Second,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(4096)
			}
			return c, err
		},
	}
}

func TestHubSlowClientDoesNotBlockOthers(t *testing.T) {
	f := newHubFixture(t, HubOptions{WriteWait: 500 * time.Millisecond})
	slow, _, err := f.dial(t, f.origin, smallReadBufferDialer())
	if err != nil {
		t.Fatal(err)
	}
	subscribe(t, slow, "grid")
	fast := f.mustDial(t)
	subscribe(t, fast, "grid")

	// The fast client reads everything; it reports each sequence number.
	type update struct {
		Data struct {
			Seq int
		}
	}
	got := make(chan int, 1024)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(got)
		for {
			_ = fast.SetReadDeadline(time.Now().Add(20 * time.Second))
			_, data, err := fast.ReadMessage()
			if err != nil {
				return
			}
			var u update
			if err := json.Unmarshal(data, &u); err != nil {
				return
			}
			got <- u.Data.Seq
		}
	}()

	pad := strings.Repeat("x", 128<<10)
	start := time.Now()
	const maxUpdates = 2000 // 256 MB at most; the slow client is dropped long before
	seq := 0
	for ; seq < maxUpdates && f.hub.Stats().Dropped == 0; seq++ {
		if err := f.hub.Publish("grid", map[string]any{"seq": seq, "pad": pad}); err != nil {
			t.Fatal(err)
		}
		// Lock-step with the fast client: every update reaches it while the
		// slow one is stuck.
		select {
		case s, ok := <-got:
			if !ok {
				t.Fatalf("fast client failed after %d updates", seq)
			}
			if s != seq {
				t.Fatalf("fast client got seq %d, want %d", s, seq)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("fast client did not receive update %d within 10s (slow client blocking?)", seq)
		}
		if time.Since(start) > 60*time.Second {
			t.Fatalf("slow client not dropped after %d updates in %v", seq, time.Since(start))
		}
	}
	if f.hub.Stats().Dropped == 0 {
		// Published maxUpdates without the slow client being dropped.
		waitFor(t, "slow client dropped", 10*time.Second, func() bool { return f.hub.Stats().Dropped == 1 })
	}
	t.Logf("slow client dropped after %d updates in %v", seq, time.Since(start))

	// After the drop the fast client still gets updates, and only one client is counted.
	if err := f.hub.Publish("grid", map[string]any{"seq": seq}); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != seq {
			t.Errorf("after drop: seq %d, want %d", s, seq)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("fast client got nothing after the drop")
	}
	waitFor(t, "one connection left", 10*time.Second, func() bool { return f.hub.Stats().Connections == 1 })
	if s := f.hub.Stats(); s.Dropped != 1 {
		t.Errorf("Dropped = %d, want 1", s.Dropped)
	}
	fast.Close()
	wg.Wait()
}

func TestHubCoalescesToLatest(t *testing.T) {
	f := newHubFixture(t, HubOptions{ClientBuffer: 2})
	c := f.mustDial(t)
	subscribe(t, c, "a", "b")
	// Without reading, publish many updates of two topics; the client's
	// buffer keeps at most the latest of each, so it is never dropped.
	for i := range 200 {
		if err := f.hub.Publish("a", i); err != nil {
			t.Fatal(err)
		}
		if err := f.hub.Publish("b", i); err != nil {
			t.Fatal(err)
		}
	}
	lastA, lastB := -1, -1
	for lastA != 199 || lastB != 199 {
		var u struct {
			Topic string
			Data  int
		}
		if err := json.Unmarshal(readRaw(t, c), &u); err != nil {
			t.Fatal(err)
		}
		p := &lastA
		if u.Topic == "b" {
			p = &lastB
		}
		if u.Data <= *p {
			t.Fatalf("topic %s: got %d after %d", u.Topic, u.Data, *p)
		}
		*p = u.Data
	}
	if s := f.hub.Stats(); s.Dropped != 0 || s.Encoded != 400 || s.Sent > 401 {
		t.Errorf("stats = %+v", s)
	}
}

func TestHubBadSubscribeClosesOnlyThatConnection(t *testing.T) {
	tests := []struct {
		name string
		msg  string
	}{
		{"oversized", `{"subscribe":["` + strings.Repeat("a", 8000) + `"]}`},
		{"malformed JSON", `{"subscribe":[`},
		{"not an object", `["a"]`},
		{"unknown field", `{"subscribe":["a"],"admin":true}`},
		{"missing subscribe", `{}`},
		{"trailing data", `{"subscribe":["a"]} {}`},
		{"too many topics", `{"subscribe":["a","b","c","d"]}`},
		{"empty topic", `{"subscribe":[""]}`},
		{"long topic", `{"subscribe":["` + strings.Repeat("a", maxTopicLen+1) + `"]}`},
		{"bad characters", `{"subscribe":["<script>"]}`},
	}
	f := newHubFixture(t, HubOptions{MaxTopics: 3, ReadLimit: 1024})
	good := f.mustDial(t)
	subscribe(t, good, "a")
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := f.mustDial(t)
			// The hub may close an oversized message's connection while the
			// client is still writing it: a reset write is a closed
			// connection too, counted below like the others.
			if err := c.WriteMessage(websocket.TextMessage, []byte(tt.msg)); err != nil {
				if len(tt.msg) <= 1024 {
					t.Fatal(err)
				}
			} else {
				err := expectClosed(t, c)
				if !websocket.IsCloseError(err, websocket.ClosePolicyViolation, websocket.CloseMessageTooBig) && len(tt.msg) <= 1024 {
					t.Errorf("closed with %v, want close 1008 or 1009", err)
				}
			}
			waitFor(t, "bad subscriber counted", 5*time.Second, func() bool { return f.hub.Stats().BadSubscribers == uint64(i+1) })
			// The good client is unaffected.
			if err := f.hub.Publish("a", i); err != nil {
				t.Fatal(err)
			}
			var u struct{ Data int }
			if err := json.Unmarshal(readRaw(t, good), &u); err != nil || u.Data != i {
				t.Fatalf("good client got %+v, %v; want %d", u, err, i)
			}
		})
	}
	// A binary message is refused too.
	c := f.mustDial(t)
	_ = c.WriteMessage(websocket.BinaryMessage, []byte(`{"subscribe":["a"]}`))
	expectClosed(t, c)
	waitFor(t, "only the good connection left", 5*time.Second, func() bool { return f.hub.Stats().Connections == 1 })
}

// TestHubKeepalive: a client that answers pings stays however long it is
// idle; one that never reads sends no pongs and is closed after PongWait.
// It runs in a synctest bubble, where a pong cannot come late because the
// machine is busy.
func TestHubKeepalive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startPipeHub(t, HubOptions{PongWait: time.Second, PingPeriod: 200 * time.Millisecond, WriteWait: time.Second})
		// A client that reads answers pings (gorilla's default ping handler) and stays.
		alive, _ := pipeDial(t, h, "192.0.2.1:1")
		subscribe(t, alive, "a")
		_ = alive.SetReadDeadline(time.Time{}) // subscribe set one
		readErr := make(chan error, 1)
		go func() {
			for {
				if _, _, err := alive.ReadMessage(); err != nil {
					readErr <- err
					return
				}
			}
		}()
		// A client that never reads sends no pongs and is disconnected.
		pipeDial(t, h, "192.0.2.2:1")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := h.Stats().Connections; n != 1 {
			t.Fatalf("Connections 2 s after the silent client connected = %d, want 1", n)
		}
		// Many pong waits later the reading client is still there.
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := h.Stats().Connections; n != 1 {
			t.Fatalf("Connections after a minute = %d, want 1 (keepalive failed)", n)
		}
		select {
		case err := <-readErr:
			t.Fatalf("reading client closed: %v", err)
		default:
		}
		alive.Close()
	})
}

func TestHubCancelClosesClients(t *testing.T) {
	f := newHubFixture(t, HubOptions{})
	a, b := f.mustDial(t), f.mustDial(t)
	subscribe(t, a, "a")
	f.cancel()
	for _, c := range []*websocket.Conn{a, b} {
		if err := expectClosed(t, c); !websocket.IsCloseError(err, websocket.CloseGoingAway) {
			t.Errorf("closed with %v, want 1001 going away", err)
		}
	}
	select {
	case <-f.runDone:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	if s := f.hub.Stats(); s.Connections != 0 {
		t.Errorf("Connections = %d after Run returned", s.Connections)
	}
	if err := f.hub.Publish("a", 1); !errors.Is(err, ErrHubClosed) {
		t.Errorf("Publish after close: %v, want ErrHubClosed", err)
	}
	if _, resp, err := f.dial(t, f.origin, nil); err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("dial after close: err %v, resp %v; want 503", err, resp)
	}
}

// TestHubSubscribed follows the watched topics through a subscribe, a
// changed subscription, a shared topic and a disconnect.
func TestHubSubscribed(t *testing.T) {
	f := newHubFixture(t, HubOptions{})
	check := func(want map[string]bool) {
		t.Helper()
		for topic, w := range want {
			if got := f.hub.Subscribed(topic); got != w {
				t.Errorf("Subscribed(%q) = %v, want %v", topic, got, w)
			}
		}
	}
	c1, c2 := f.mustDial(t), f.mustDial(t)
	subscribe(t, c1, "a", "b")
	check(map[string]bool{"a": true, "b": true, "c": false})
	subscribe(t, c1, "b", "c")
	check(map[string]bool{"a": false, "b": true, "c": true})
	subscribe(t, c2, "c")
	_ = c1.Close()
	waitFor(t, "b unwatched", 5*time.Second, func() bool { return !f.hub.Subscribed("b") })
	check(map[string]bool{"a": false, "b": false, "c": true})
	_ = c2.Close()
	waitFor(t, "c unwatched", 5*time.Second, func() bool { return !f.hub.Subscribed("c") })
}

// TestHubCloseReasonIsUTF8: the close reason naming a bad topic is clipped
// on a rune boundary (here the 120-byte cut falls inside an "é").
func TestHubCloseReasonIsUTF8(t *testing.T) {
	f := newHubFixture(t, HubOptions{})
	c := f.mustDial(t)
	if err := c.WriteJSON(map[string][]string{"subscribe": {strings.Repeat("\x01", 28) + strings.Repeat("é", 20)}}); err != nil {
		t.Fatal(err)
	}
	err := expectClosed(t, c)
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation {
		t.Fatalf("closed with %v, want close 1008", err)
	}
	if !utf8.ValidString(ce.Text) || len(ce.Text) > 123 || !strings.HasSuffix(ce.Text, "…") {
		t.Errorf("close reason = %q (%d bytes), want valid UTF-8 of at most 123 bytes ending in …", ce.Text, len(ce.Text))
	}
}

func TestNormalizeOrigin(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"https://Dash.Example.com", "https://dash.example.com", ""},
		{"https://dash.example.com:443/", "https://dash.example.com", ""},
		{"http://dash.example.com:80", "http://dash.example.com", ""},
		{"http://dash.example.com:443", "http://dash.example.com:443", ""},
		{"http://[::1]:8080", "http://[::1]:8080", ""},
		{"ws://dash.example.com", "", `scheme "ws" not allowed`},
		{"file:///etc/passwd", "", "want an http or https origin"},
		{"dash.example.com", "", "want an http or https origin"},
		{"https://u:p@dash.example.com", "", "want an http or https origin"},
		{"https://dash.example.com/app", "", "no path"},
		{"https://dash.example.com?x=1", "", "want an http or https origin"},
		{"*", "", "want an http or https origin"},
	} {
		got, err := NormalizeOrigin(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("NormalizeOrigin(%q) = %q, %v, want error containing %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("NormalizeOrigin(%q) = %q, %v, want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestHubOnSubscribe: the hook hears the topics a socket joins, once
// each, and may publish to them, which reaches the new subscriber.
func TestHubOnSubscribe(t *testing.T) {
	h, err := NewHub(nil, HubOptions{AllowNoOrigin: true})
	if err != nil {
		t.Fatal(err)
	}
	joined := make(chan []string, 8)
	h.onSubscribe = func(topics []string) {
		joined <- topics
		for _, tp := range topics {
			if err := h.Publish(tp, "hello "+tp); err != nil {
				t.Errorf("publish from the hook: %v", err)
			}
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(h.ServeWS))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	next := func(want string) {
		t.Helper()
		if got := strings.Join(<-joined, ","); got != want {
			t.Errorf("joined %q, want %q", got, want)
		}
	}
	subscribe(t, c, "a", "b")
	next("a,b")
	got := map[string]bool{}
	for range 2 {
		var m struct{ Topic, Data string }
		if err := c.ReadJSON(&m); err != nil {
			t.Fatal(err)
		}
		got[m.Topic+" "+m.Data] = true
	}
	if !got["a hello a"] || !got["b hello b"] {
		t.Errorf("the subscriber got %v, want the hook's updates of a and b", got)
	}
	subscribe(t, c, "b", "c")
	next("c")
	var m struct{ Topic, Data string }
	if err := c.ReadJSON(&m); err != nil || m.Topic != "c" || m.Data != "hello c" {
		t.Errorf("after joining c: %+v, %v; want the hook's update of c", m, err)
	}
	// The same topics again join nothing: the hook is not told, so the
	// next it hears is d.
	subscribe(t, c, "b", "c")
	subscribe(t, c, "d")
	next("d")
	// The hook's publish of d arrives before the hub closes: the test's
	// end would otherwise race it.
	if err := c.ReadJSON(&m); err != nil || m.Topic != "d" || m.Data != "hello d" {
		t.Errorf("after joining d: %+v, %v; want the hook's update of d", m, err)
	}
}
