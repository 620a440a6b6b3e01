package web

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
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
	c, resp, err := d.Dial("ws://skewscope.test/ws", http.Header{"Origin": {pipeOrigin}})
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
