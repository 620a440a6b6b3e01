// Command wsbomb measures what compressed websocket messages cost a running
// dashboard: it opens -sockets websockets to it from this machine, each
// sending one permessage-deflate subscribe message whose frame is under
// the 4 KiB read limit and inflates to -inflate bytes, and prints the
// dashboard's resident memory (VmRSS of -pid, from /proc) before, at the
// highest it saw while the sockets were open, and a few seconds after.
//
//	go run ./cmd/wsbomb -addr 127.0.0.1:8080 -pid $(pgrep -f 'dashboard --listen 127.0.0.1:8080')
//
// It talks to loopback addresses only, and every socket ends within -wait.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skewscope/skewscope/internal/wsframe"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "wsbomb:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("wsbomb", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "the dashboard's listen address (loopback only)")
	pid := fs.Int("pid", 0, "the dashboard's process id, for its memory")
	sockets := fs.Int("sockets", 128, "websockets to open (1 to 1000)")
	inflate := fs.Int("inflate", 4_000_000, "bytes each message inflates to (1 KiB to 64 MiB)")
	wait := fs.Duration("wait", 5*time.Second, "how long each socket waits for the server to close it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return fmt.Errorf("-addr %q: want a loopback host:port, e.g. 127.0.0.1:8080", *addr)
	}
	if *pid <= 0 || *sockets < 1 || *sockets > 1000 || *inflate < 1<<10 || *inflate > 64<<20 {
		return errors.New("want -pid of the dashboard, -sockets 1..1000 and -inflate 1 KiB..64 MiB")
	}
	msg := []byte(`{"subscribe":["overview"` + strings.Repeat(" ", *inflate) + `]}`)
	frame := wsframe.Deflated(msg)
	fmt.Fprintf(out, "frame %d bytes, inflates to %d bytes, %d sockets\n", len(frame), len(msg), *sockets)
	before, err := rss(*pid)
	if err != nil {
		return err
	}
	var peak atomic.Int64
	peak.Store(before)
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if r, err := rss(*pid); err == nil && r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	var opened, closed atomic.Int64
	for range *sockets {
		wg.Go(func() {
			ok, err := bomb(*addr, frame, *wait)
			if ok {
				opened.Add(1)
			}
			if err == nil {
				closed.Add(1)
			}
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	time.Sleep(2 * time.Second) // lets the server's collector run before the last reading
	after, err := rss(*pid)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d sockets opened, %d closed by the server\n", opened.Load(), closed.Load())
	fmt.Fprintf(out, "dashboard RSS: before %d MB, highest %d MB, after %d MB\n", before>>10, peak.Load()>>10, after>>10)
	return nil
}

// bomb opens one websocket with permessage-deflate, sends frame and waits
// for the server to close the connection. It reports whether the handshake
// succeeded, and nil when the server closed the socket within wait.
func bomb(addr string, frame []byte, wait time.Duration) (bool, error) {
	c, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		return false, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(wait))
	fmt.Fprintf(c, "GET /ws HTTP/1.1\r\nHost: %s\r\nOrigin: http://%s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"+
		"Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover; server_no_context_takeover\r\n\r\n", addr, addr)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return false, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return false, fmt.Errorf("handshake answered %d", resp.StatusCode)
	}
	if _, err := c.Write(frame); err != nil {
		return true, err
	}
	// The server closes the socket (a close frame, then EOF or a reset,
	// since it leaves the rest of the message unread); a deadline that
	// passes means it kept the socket open.
	if _, err := io.Copy(io.Discard, br); err != nil {
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			return true, err
		}
	}
	return true, nil
}

// rss is the resident memory of process pid in KiB.
func rss(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmRSS in /proc/" + strconv.Itoa(pid) + "/status")
}
