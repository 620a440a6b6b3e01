package web

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gorilla/websocket"
)

const pipeOrigin = "https://skewscope.example.com"

// startPipeHub runs a hub inside the current synctest bubble; its clients
// connect over net.Pipe (pipeDial), so the bubble's fake clock drives the
// hub's timers. The hub stops when the test ends.
func startPipeHub(t *testing.T, opts HubOptions) *Hub {
	t.Helper()
	opts.AllowedOrigins = []string{pipeOrigin}
	h, err := NewHub(nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

// pipeResponse is the server side of one net.Pipe connection: a
// ResponseWriter that can be hijacked, and that sends a buffered response
// when it is not.
type pipeResponse struct {
	conn     net.Conn
	br       *bufio.Reader
	header   http.Header
	code     int
	body     bytes.Buffer
	hijacked bool
}

func (p *pipeResponse) Header() http.Header         { return p.header }
func (p *pipeResponse) Write(b []byte) (int, error) { return p.body.Write(b) }
func (p *pipeResponse) WriteHeader(code int)        { p.code = code }
func (p *pipeResponse) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	p.hijacked = true
	return p.conn, bufio.NewReadWriter(p.br, bufio.NewWriter(p.conn)), nil
}

func (p *pipeResponse) finish() {
	if p.code == 0 {
		p.code = http.StatusOK
	}
	p.header.Set("Content-Length", fmt.Sprint(p.body.Len()))
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", p.code, http.StatusText(p.code))
	p.header.Write(&b)
	b.WriteString("\r\n")
	b.Write(p.body.Bytes())
	p.conn.Write(b.Bytes())
}

// pipeDial opens a websocket to h from the client address remote
// ("host:port") over an in-memory connection. It returns the status of a
// refused handshake.
func pipeDial(t *testing.T, h *Hub, remote string) (*websocket.Conn, int) {
	t.Helper()
	return pipeDialHeader(t, h, remote, nil)
}

// pipeDialHeader is pipeDial with extra request headers.
func pipeDialHeader(t *testing.T, h *Hub, remote string, header http.Header) (*websocket.Conn, int) {
	t.Helper()
	cli, srv := net.Pipe()
	go func() {
		br := bufio.NewReader(srv)
		req, err := http.ReadRequest(br)
		if err != nil {
			srv.Close()
			return
		}
		req.RemoteAddr = remote
		w := &pipeResponse{conn: srv, br: br, header: http.Header{}}
		h.ServeWS(w, req)
		if !w.hijacked {
			w.finish()
			srv.Close()
		}
	}()
	d := websocket.Dialer{NetDialContext: func(context.Context, string, string) (net.Conn, error) { return cli, nil }}
	header = header.Clone()
	if header == nil {
		header = http.Header{}
	}
	header.Set("Origin", pipeOrigin)
	c, resp, err := d.Dial("ws://skewscope.test/ws", header)
	if err != nil {
		if resp == nil {
			t.Fatalf("dial from %s: %v", remote, err)
		}
		return nil, resp.StatusCode
	}
	t.Cleanup(func() { c.Close() })
	return c, http.StatusSwitchingProtocols
}

func TestHubLimitsSocketsPerAddress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startPipeHub(t, HubOptions{MaxConnections: 100, MaxConnectionsPerClient: 3})
		for i := range 3 {
			if _, code := pipeDial(t, h, fmt.Sprintf("192.0.2.1:%d", 4000+i)); code != 101 {
				t.Fatalf("socket %d from 192.0.2.1 = %d, want 101", i+1, code)
			}
		}
		if _, code := pipeDial(t, h, "192.0.2.1:5000"); code != http.StatusTooManyRequests {
			t.Errorf("4th socket from 192.0.2.1 = %d, want 429", code)
		}
		if _, code := pipeDial(t, h, "192.0.2.2:4000"); code != 101 {
			t.Errorf("first socket from 192.0.2.2 = %d, want 101", code)
		}
		// IPv6 clients are counted by /64: one host has many addresses.
		for i := range 3 {
			if _, code := pipeDial(t, h, fmt.Sprintf("[2001:db8:1:2::%x]:443", i+1)); code != 101 {
				t.Fatalf("socket %d from 2001:db8:1:2::/64 = %d, want 101", i+1, code)
			}
		}
		if _, code := pipeDial(t, h, "[2001:db8:1:2::99]:443"); code != http.StatusTooManyRequests {
			t.Errorf("4th socket from 2001:db8:1:2::/64 = %d, want 429", code)
		}
		if got := h.Stats().Connections; got != 7 {
			t.Errorf("Connections = %d, want 7", got)
		}
	})
}

// TestHubReservesSlotsForNewAddresses: an address that already has a
// socket cannot take the last ReservedConnections slots, so one client
// cannot lock every new browser out.
func TestHubReservesSlotsForNewAddresses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startPipeHub(t, HubOptions{MaxConnections: 10, ReservedConnections: 2, MaxConnectionsPerClient: 100})
		for i := range 8 {
			if _, code := pipeDial(t, h, fmt.Sprintf("192.0.2.1:%d", 4000+i)); code != 101 {
				t.Fatalf("socket %d from 192.0.2.1 = %d, want 101", i+1, code)
			}
		}
		if _, code := pipeDial(t, h, "192.0.2.1:5000"); code != http.StatusServiceUnavailable {
			t.Errorf("9th socket from 192.0.2.1 (only reserved slots left) = %d, want 503", code)
		}
		for _, a := range []string{"192.0.2.2:1", "192.0.2.3:1"} {
			if _, code := pipeDial(t, h, a); code != 101 {
				t.Errorf("first socket from %s (reserved slot) = %d, want 101", a, code)
			}
		}
		if _, code := pipeDial(t, h, "192.0.2.4:1"); code != http.StatusServiceUnavailable {
			t.Errorf("socket beyond MaxConnections = %d, want 503", code)
		}
	})
}

// TestHubClosesSocketsWithoutSubscription: a socket that subscribes to
// nothing within SubscribeWait (or unsubscribes from everything for that
// long) is closed with 1008; a subscribed one stays.
func TestHubClosesSocketsWithoutSubscription(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startPipeHub(t, HubOptions{SubscribeWait: 10 * time.Second})
		idle, _ := pipeDial(t, h, "192.0.2.1:1")
		empty, _ := pipeDial(t, h, "192.0.2.2:1")
		subscribed, _ := pipeDial(t, h, "192.0.2.3:1")
		subscribe(t, subscribed, "a")
		time.Sleep(5 * time.Second)
		subscribe(t, empty, "a")
		subscribe(t, empty, []string{}...) // now watching nothing again
		time.Sleep(5*time.Second + time.Millisecond)
		_, _, err := idle.ReadMessage()
		if ce, ok := errors.AsType[*websocket.CloseError](err); !ok || ce.Code != websocket.ClosePolicyViolation {
			t.Errorf("socket without subscription after 10 s: read error %v, want close 1008", err)
		}
		synctest.Wait()
		if got := h.Stats().Connections; got != 2 {
			t.Errorf("Connections after 10 s = %d, want 2 (the emptied one is still within its wait)", got)
		}
		_ = empty.SetReadDeadline(time.Now().Add(time.Minute)) // subscribe set one at 15 s
		time.Sleep(5 * time.Second)
		_, _, err = empty.ReadMessage()
		if ce, ok := errors.AsType[*websocket.CloseError](err); !ok || ce.Code != websocket.ClosePolicyViolation {
			t.Errorf("socket subscribed to nothing for 10 s: read error %v, want close 1008", err)
		}
		synctest.Wait()
		if got := h.Stats().Connections; got != 1 {
			t.Errorf("Connections after 15 s = %d, want 1 (the subscribed socket)", got)
		}
		if got := h.Stats().Unsubscribed; got != 2 {
			t.Errorf("Stats().Unsubscribed = %d, want 2", got)
		}
	})
}

// TestHubLimitsPerForwardedAddress: behind a trusted reverse proxy every
// socket comes from the proxy's address; the per-address bound applies to
// the client X-Forwarded-For names, the rightmost hop outside the trusted
// proxies, so what a client writes into the header itself does not count.
func TestHubLimitsPerForwardedAddress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startPipeHub(t, HubOptions{MaxConnections: 100, MaxConnectionsPerClient: 2,
			TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}})
		const proxy = "10.1.2.3:40000"
		xff := func(v string) http.Header { return http.Header{"X-Forwarded-For": {v}} }
		for _, tc := range []struct {
			name, remote string
			xff          []string // one per socket
			want         []int
		}{
			{"one client through the proxy", proxy, []string{"198.51.100.1", "198.51.100.1", "198.51.100.1"}, []int{101, 101, 429}},
			{"another client through the same proxy", proxy, []string{"198.51.100.2", "198.51.100.2"}, []int{101, 101}},
			{"through two trusted proxies", "[fd00::7]:443", []string{"198.51.100.3, 10.9.9.9", "198.51.100.3,10.9.9.9", "198.51.100.3, 10.9.9.9"}, []int{101, 101, 429}},
			{"a client that writes its own header", proxy, []string{"203.0.113.1, 198.51.100.4", "203.0.113.2, 198.51.100.4", "203.0.113.3, 198.51.100.4"}, []int{101, 101, 429}},
			{"the header in two fields", proxy, []string{"198.51.100.5", "198.51.100.5", "198.51.100.5"}, []int{101, 101, 429}},
		} {
			for i, v := range tc.xff {
				hdr := xff(v)
				if tc.name == "the header in two fields" {
					hdr = http.Header{"X-Forwarded-For": {"203.0.113.9", v}}
				}
				if _, code := pipeDialHeader(t, h, tc.remote, hdr); code != tc.want[i] {
					t.Errorf("%s: socket %d (X-Forwarded-For %q) = %d, want %d", tc.name, i+1, v, code, tc.want[i])
				}
			}
		}
		// Without the header the proxy is the client.
		for i, want := range []int{101, 101, 429} {
			if _, code := pipeDial(t, h, proxy); code != want {
				t.Errorf("socket %d from the proxy without X-Forwarded-For = %d, want %d", i+1, code, want)
			}
		}
	})
}

// TestHubIgnoresForwardedFromUntrustedPeer: a peer outside the trusted
// proxies (or with none configured) cannot pick its address with
// X-Forwarded-For: its sockets count under its own address.
func TestHubIgnoresForwardedFromUntrustedPeer(t *testing.T) {
	for _, trusted := range [][]netip.Prefix{nil, {netip.MustParsePrefix("10.0.0.0/8")}} {
		synctest.Test(t, func(t *testing.T) {
			h := startPipeHub(t, HubOptions{MaxConnections: 100, MaxConnectionsPerClient: 2, TrustedProxies: trusted})
			for i, want := range []int{101, 101, 429} {
				hdr := http.Header{"X-Forwarded-For": {fmt.Sprintf("198.51.100.%d, 10.0.0.%d", i+1, i+1)}}
				if _, code := pipeDialHeader(t, h, fmt.Sprintf("192.0.2.7:%d", 4000+i), hdr); code != want {
					t.Errorf("trusted %v: socket %d from 192.0.2.7 with a spoofed X-Forwarded-For = %d, want %d", trusted, i+1, code, want)
				}
			}
		})
	}
}
