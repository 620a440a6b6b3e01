package web

import (
	"testing"

	"github.com/gorilla/websocket"
)

// A change goes to the subscribers that were sent the update it follows;
// one that subscribed since, or subscribed again, gets the whole update,
// which is encoded only when somebody needs it.
func TestHubPublishChange(t *testing.T) {
	f := newHubFixture(t, HubOptions{})
	a := f.mustDial(t)
	subscribe(t, a, "v")
	publish := func(seq, base uint64) {
		t.Helper()
		if err := f.hub.PublishChange("v", seq, base, map[string]any{"full": seq}, map[string]any{"change": seq}); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(c *websocket.Conn, name, want string) {
		t.Helper()
		if got := string(readRaw(t, c)); got != `{"topic":"v","data":`+want+`}` {
			t.Errorf("%s got %s, want data %s", name, got, want)
		}
	}
	if err := f.hub.PublishChange("v", 1, 0, map[string]any{"full": 1}, nil); err != nil {
		t.Fatal(err)
	}
	expect(a, "a", `{"full":1}`)
	publish(2, 1)
	expect(a, "a", `{"change":2}`)
	b := f.mustDial(t)
	subscribe(t, b, "v")
	publish(3, 2)
	expect(a, "a", `{"change":3}`)
	expect(b, "b, new", `{"full":3}`)
	// A subscribe message asks for whole updates again.
	subscribe(t, a, "v")
	publish(4, 3)
	expect(a, "a, subscribed again", `{"full":4}`)
	expect(b, "b", `{"change":4}`)
	// A change that follows an update nobody was sent goes whole to all.
	publish(6, 5)
	expect(a, "a after a gap", `{"full":6}`)
	expect(b, "b after a gap", `{"full":6}`)
	// Update 1 (no change), four changes and the whole updates 3, 4 and
	// 6: update 2 went only as a change, and was never encoded whole.
	if s := f.hub.Stats(); s.Encoded != 8 {
		t.Errorf("encoded %d messages, want 8", s.Encoded)
	}
}

// A change waiting for a client is replaced by the next update of its
// topic; the client never sees the update that change follows, so it
// gets the next one whole.
func TestHubChangeAfterAReplacedUpdateIsWhole(t *testing.T) {
	h := &Hub{opts: HubOptions{ClientBuffer: 4}}
	c := &client{h: h, pending: make(map[string]outgoing), seen: map[string]uint64{"v": 1}, notify: make(chan struct{}, 1)}
	change := func(seq uint64) publication {
		return publication{topic: "v", pm: &websocket.PreparedMessage{}, full: &lazyMessage{h: h, topic: "v", v: seq}, seq: seq, base: seq - 1}
	}
	if !c.offerUpdate(change(2)) || c.pending["v"].pm == nil {
		t.Fatal("the change after the update the client was sent is not queued as a change")
	}
	if !c.offerUpdate(change(3)) || c.pending["v"].pm != nil {
		t.Fatal("the change after a replaced one is queued as a change")
	}
	if out := c.take(); len(out) != 1 || out[0].seq != 3 || c.seen["v"] != 3 {
		t.Fatalf("took %+v, seen %d", out, c.seen["v"])
	}
	if !c.offerUpdate(change(4)) || c.pending["v"].pm == nil {
		t.Error("the change after the whole update taken is not queued as a change")
	}
	// Subscribing again turns a waiting change into the whole update.
	c.forget()
	if c.pending["v"].pm != nil || len(c.seen) != 0 {
		t.Error("a change still waits after the client subscribed again")
	}
}
