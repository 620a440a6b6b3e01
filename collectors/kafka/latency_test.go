package kafka

import (
	"context"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// latencyDialer returns a kgo.Dialer function whose connections simulate a
// network round-trip time of rtt on top of loopback.
//
// Model: a delay line on the receive side. A goroutine per connection reads
// the real socket as soon as bytes arrive and stamps each chunk with its
// arrival time; Read hands a chunk to the caller no earlier than arrival +
// rtt. Writes go out at once. So every response reaches the client rtt
// later than it would on loopback, which, as seen by the client, is the
// same as rtt/2 each way: request at the broker after rtt/2, broker work,
// response back after rtt/2. Requests pipelined on one connection overlap
// (two responses arriving together are both delivered rtt later, not 2*rtt
// later), as they would on a real link. Dialing also takes one rtt (the TCP
// handshake), though the benchmarks dial during warm-up only.
//
// Limits: no bandwidth, so a 1 MB response costs the same as a 100-byte one
// beyond rtt; no TCP slow start, window or Nagle effects; no loss or
// jitter; the broker sees requests at once rather than rtt/2 later, which
// only matters when several clients contend for the broker at the same
// time; and the broker's own work (kfake, one goroutine, on this CPU) is
// still counted in full, as real broker time would be.
func latencyDialer(rtt time.Duration) func(ctx context.Context, network, host string) (net.Conn, error) {
	var d net.Dialer
	return withLatency(d.DialContext, rtt)
}

// withLatency wraps dial so that its connections take one rtt to open
// and deliver what they read rtt late (latencyDialer's model).
func withLatency(dial func(ctx context.Context, network, host string) (net.Conn, error), rtt time.Duration) func(ctx context.Context, network, host string) (net.Conn, error) {
	return func(ctx context.Context, network, host string) (net.Conn, error) {
		conn, err := dial(ctx, network, host)
		if err != nil {
			return nil, err
		}
		select {
		case <-time.After(rtt):
		case <-ctx.Done():
			conn.Close()
			return nil, ctx.Err()
		}
		return newLatencyConn(conn, rtt), nil
	}
}

type chunk struct {
	data []byte
	at   time.Time // when the bytes arrived on the real socket
	err  error
}

// latencyConn delays every byte read from the embedded conn by rtt after
// its arrival. Read deadlines are passed to the real socket: when one
// fires, the pump gets the error and Read returns it after the data that
// came before it.
type latencyConn struct {
	net.Conn
	rtt  time.Duration
	in   chan chunk
	done chan struct{}
	once sync.Once
	cur  []byte
	err  error
}

func newLatencyConn(conn net.Conn, rtt time.Duration) *latencyConn {
	c := &latencyConn{Conn: conn, rtt: rtt, in: make(chan chunk, 1024), done: make(chan struct{})}
	go c.pump()
	return c
}

// pump reads the real socket until it fails, stamping each chunk.
func (c *latencyConn) pump() {
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Conn.Read(buf)
		now := time.Now()
		if n > 0 {
			select {
			case c.in <- chunk{data: append([]byte(nil), buf[:n]...), at: now}:
			case <-c.done:
				return
			}
		}
		if err != nil {
			select {
			case c.in <- chunk{err: err, at: now}:
			case <-c.done:
			}
			return
		}
	}
}

func (c *latencyConn) Read(p []byte) (int, error) {
	if len(c.cur) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		var ch chunk
		select {
		case ch = <-c.in:
		case <-c.done:
			return 0, net.ErrClosed
		}
		if ch.err != nil {
			c.err = ch.err
			return 0, ch.err
		}
		if wait := time.Until(ch.at.Add(c.rtt)); wait > 0 {
			time.Sleep(wait)
		}
		c.cur = ch.data
	}
	n := copy(p, c.cur)
	c.cur = c.cur[n:]
	return n, nil
}

func (c *latencyConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return c.Conn.Close()
}

// TestLatencyConn checks the model: dialing takes one rtt, a response
// arrives one rtt after its request, and two pipelined responses arrive
// one rtt after each request, not one after the other. It runs over
// net.Pipe in a synctest bubble, so the delays are exact whatever the
// load on the machine.
func TestLatencyConn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, server := net.Pipe()
		go func() { // echo server
			defer server.Close()
			buf := make([]byte, 1024)
			for {
				n, err := server.Read(buf)
				if err != nil {
					return
				}
				if _, err := server.Write(buf[:n]); err != nil {
					return
				}
			}
		}()
		const rtt = 100 * time.Millisecond
		start := time.Now()
		dial := withLatency(func(context.Context, string, string) (net.Conn, error) { return client, nil }, rtt)
		conn, err := dial(context.Background(), "pipe", "echo")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if d := time.Since(start); d != rtt {
			t.Errorf("dial took %v, want %v", d, rtt)
		}

		read := func(want string) {
			t.Helper()
			got := make([]byte, 0, len(want))
			buf := make([]byte, len(want))
			for len(got) < len(want) {
				n, err := conn.Read(buf[:len(want)-len(got)])
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, buf[:n]...)
			}
			if string(got) != want {
				t.Fatalf("read %q, want %q", got, want)
			}
		}

		start = time.Now()
		if _, err := conn.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		read("ping")
		if d := time.Since(start); d != rtt {
			t.Errorf("round trip took %v, want %v", d, rtt)
		}

		start = time.Now()
		if _, err := conn.Write([]byte("a")); err != nil {
			t.Fatal(err)
		}
		const gap = 10 * time.Millisecond
		time.Sleep(gap)
		if _, err := conn.Write([]byte("b")); err != nil {
			t.Fatal(err)
		}
		read("a")
		if d := time.Since(start); d != rtt {
			t.Errorf("first of two pipelined round trips took %v, want %v", d, rtt)
		}
		read("b")
		if d := time.Since(start); d != rtt+gap {
			t.Errorf("two pipelined round trips took %v, want %v (not 2x)", d, rtt+gap)
		}
	})
}
