package web

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/skewscope/skewscope/internal/wsframe"
)

// TestHubBoundsInflatedMessages: a compressed subscribe message whose frame
// is under ReadLimit but inflates to 4 MB (spaces are valid JSON) closes its
// connection with 1009 and counts a bad subscriber, and the server reads at
// most ReadLimit+1 bytes of it instead of inflating it whole.
func TestHubBoundsInflatedMessages(t *testing.T) {
	f := newHubFixture(t, HubOptions{EnableCompression: true})
	msg := []byte(`{"subscribe":["a"` + strings.Repeat(" ", 4_000_000) + `]}`)
	frame := wsframe.Deflated(msg)
	if len(frame) > defaultReadLimit {
		t.Fatalf("the %d-byte frame is over the read limit itself; the test needs one under it", len(frame))
	}
	var raw net.Conn
	d := &websocket.Dialer{HandshakeTimeout: 10 * time.Second, EnableCompression: true,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			raw = c
			return c, err
		}}
	c, resp, err := f.dial(t, f.origin, d)
	if err != nil {
		t.Fatal(err)
	}
	if ext := resp.Header.Get("Sec-Websocket-Extensions"); !strings.Contains(ext, "permessage-deflate") {
		t.Fatalf("Sec-Websocket-Extensions = %q, want permessage-deflate", ext)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := raw.Write(frame); err != nil {
		t.Fatal(err)
	}
	err = expectClosed(t, c)
	if !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
		t.Errorf("closed with %v, want close 1009", err)
	}
	waitFor(t, "bad subscriber counted", 5*time.Second, func() bool { return f.hub.Stats().BadSubscribers == 1 })
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d-byte frame inflating to %d bytes: the hub read %d bytes of it; %d bytes allocated meanwhile", len(frame), len(msg), f.hub.Stats().InboundBytes, alloc)
	if got := f.hub.Stats().InboundBytes; got > defaultReadLimit+1 {
		t.Errorf("the hub read %d bytes of the inflated message, want at most ReadLimit+1 = %d", got, defaultReadLimit+1)
	}
	if alloc > 1<<20 {
		t.Errorf("%d bytes allocated while refusing the message, want under 1 MiB (it inflates to %d)", alloc, len(msg))
	}
	waitFor(t, "connection released", 5*time.Second, func() bool { return f.hub.Stats().Connections == 0 })
}

// TestHubBoundsTopicsPerAddress: the sockets of one client address watch
// at most MaxTopicsPerClient distinct topics between them; a subscription
// past that is refused with 1008 naming the bound, a topic already watched
// from the address costs nothing, and another address is unaffected.
func TestHubBoundsTopicsPerAddress(t *testing.T) {
	f := newHubFixture(t, HubOptions{MaxTopicsPerClient: 4, MaxTopics: 3})
	a := f.mustDial(t)
	subscribe(t, a, "t1", "t2", "t3")
	b := f.mustDial(t)
	subscribe(t, b, "t1", "t2", "t4") // t1, t2 shared: 4 distinct
	subscribe(t, b, "t3", "t4")       // replaces b's topics: still 4
	c := f.mustDial(t)
	if err := c.WriteJSON(map[string][]string{"subscribe": {"t1", "t5"}}); err != nil {
		t.Fatal(err)
	}
	err := expectClosed(t, c)
	ce, ok := err.(*websocket.CloseError)
	if !ok || ce.Code != websocket.ClosePolicyViolation || !strings.Contains(ce.Text, "at most 4") {
		t.Fatalf("5th distinct topic from one address: %v, want close 1008 naming the bound of 4", err)
	}
	if f.hub.Subscribed("t5") {
		t.Error("t5 is watched after its subscription was refused")
	}
	if got := f.hub.Stats().TopicsRefused; got != 1 {
		t.Errorf("TopicsRefused = %d, want 1", got)
	}
	// The refused socket held t1: the others still get its updates.
	if err := f.hub.Publish("t1", 1); err != nil {
		t.Fatal(err)
	}
	if got := readRaw(t, a); !bytes.Contains(got, []byte(`"t1"`)) {
		t.Errorf("a got %s, want the t1 update", got)
	}
	// Leaving a topic frees its place for the address.
	subscribe(t, b, "t3")
	subscribe(t, a, "t1", "t2", "t5")
}

// TestHubBoundsTopicsPerAddressCountsAddress: the bound is per address, not
// per hub: sockets from two addresses each watch their own two topics.
func TestHubBoundsTopicsPerAddressCountsAddress(t *testing.T) {
	f := newHubFixture(t, HubOptions{MaxTopicsPerClient: 2, ClientAddress: func(r *http.Request) string { return r.Header.Get("X-Test-Client") }})
	dialAs := func(addr string) *websocket.Conn {
		c, _, err := (&websocket.Dialer{HandshakeTimeout: 10 * time.Second}).Dial(f.wsURL(), http.Header{"Origin": {f.origin}, "X-Test-Client": {addr}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	subscribe(t, dialAs("x"), "a", "b")
	subscribe(t, dialAs("y"), "c", "d")
	c := dialAs("x")
	c.WriteJSON(map[string][]string{"subscribe": {"e"}})
	if err := expectClosed(t, c); !websocket.IsCloseError(err, websocket.ClosePolicyViolation) {
		t.Errorf("3rd topic from address x: %v, want close 1008", err)
	}
}

// TestHubBoundsTopicsInTotal: the hub holds at most MaxHubTopics distinct
// topics; a subscription that would add one past that is refused with 1008
// naming the bound, while subscribing to a topic already held still works.
func TestHubBoundsTopicsInTotal(t *testing.T) {
	f := newHubFixture(t, HubOptions{MaxHubTopics: 5, MaxTopics: 16, MaxTopicsPerClient: -1})
	var topics []string
	for i := range 5 {
		topics = append(topics, fmt.Sprint("vertex:j/v:history=", i))
	}
	subscribe(t, f.mustDial(t), topics...)
	subscribe(t, f.mustDial(t), topics[:2]...)
	c := f.mustDial(t)
	c.WriteJSON(map[string][]string{"subscribe": {topics[0], "vertex:j/v:history=9"}})
	err := expectClosed(t, c)
	ce, ok := err.(*websocket.CloseError)
	if !ok || ce.Code != websocket.ClosePolicyViolation || !strings.Contains(ce.Text, "at most 5") {
		t.Fatalf("6th distinct topic in the hub: %v, want close 1008 naming the bound of 5", err)
	}
	if got := len(f.hub.Topics("")); got != 5 {
		t.Errorf("%d topics held, want 5", got)
	}
}
