package sample

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/collectors"
)

func newTestManager(t *testing.T, tc *testCluster, o ManagerOptions[string]) *Manager[string] {
	t.Helper()
	m := NewManager(o)
	m.opts = []kgo.Opt{tc.dial}
	t.Cleanup(m.Close)
	return m
}

// final reads ch to its close and returns the last progress.
func final(t *testing.T, ch <-chan Progress) Progress {
	t.Helper()
	var last Progress
	n := 0
	for p := range ch {
		last = p
		n++
	}
	if n == 0 {
		t.Fatal("subscription closed without a progress")
	}
	return last
}

// TestManagerLimitAndCancel: two samples run, a third is refused, and
// cancelling one makes room.
func TestManagerLimitAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newCluster(t, 2)
		m := newTestManager(t, tc, ManagerOptions[string]{}) // DefaultConcurrent
		live := Request{Topic: topic, Mode: ModeLive, Window: time.Minute}
		ctx := t.Context()
		a, err := m.Start(ctx, tc.cfg, live, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := m.Start(ctx, tc.cfg, live, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if a == b {
			t.Fatalf("two samples share the id %q", a)
		}
		if _, err := m.Start(ctx, tc.cfg, live, "", nil); !errors.Is(err, ErrTooMany) {
			t.Fatalf("third Start error = %v, want ErrTooMany", err)
		}

		chA, stopA := m.Subscribe(a)
		defer stopA()
		synctest.Wait()
		if p, ok := m.Progress(a); !ok || p.Done || p.Partitions != 2 {
			t.Errorf("Progress(a) = %+v, %v; want running on 2 partitions", p, ok)
		}
		if !m.Cancel(a) {
			t.Fatal("Cancel(a) = false, want true")
		}
		if p := final(t, chA); p.StoppedBy != StoppedCancelled || !p.Done {
			t.Errorf("a's last progress = %+v, want done, cancelled", p)
		}
		if p, ok := m.Progress(a); !ok || p.StoppedBy != StoppedCancelled {
			t.Errorf("Progress(a) after it ended = %+v, %v; want cancelled", p, ok)
		}
		if m.Cancel(a) {
			t.Error("Cancel(a) of a finished sample = true, want false")
		}
		c, err := m.Start(ctx, tc.cfg, live, "", nil)
		if err != nil {
			t.Fatalf("Start after a cancel: %v", err)
		}

		// b runs its window out with the records produced into it.
		chB, stopB := m.Subscribe(b)
		defer stopB()
		tc.produce(t, 0, 0, 4, 10)
		pb := final(t, chB)
		if pb.StoppedBy != StoppedComplete || pb.Records != 4 {
			t.Errorf("b's last progress = %+v, want complete with 4 records", pb)
		}
		m.Cancel(c)
		ch, _ := m.Subscribe(c)
		final(t, ch)

		// A finished sample's subscription has the final progress, closed.
		if p := final(t, func() <-chan Progress { ch, _ := m.Subscribe(b); return ch }()); p != pb {
			t.Errorf("Subscribe(b) after the end = %+v, want %+v", p, pb)
		}
		if _, ok := m.Progress("nope"); ok || m.Cancel("nope") {
			t.Error("Progress or Cancel of an unknown id reported it")
		}
		if ch, _ := m.Subscribe("nope"); len(ch) != 0 {
			t.Error("Subscribe(unknown) has a progress")
		} else if _, open := <-ch; open {
			t.Error("Subscribe(unknown) channel is open")
		}
	})
}

// TestManagerSink: the sink gets the records; a bad request is refused at
// Start with the field named; a panicking sink fails its sample only.
func TestManagerSink(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newCluster(t, 1)
		tc.produce(t, 0, 0, 5, 10)
		m := newTestManager(t, tc, ManagerOptions[string]{Concurrent: 1})
		ctx := t.Context()
		if _, err := m.Start(ctx, tc.cfg, Request{Topic: topic, Mode: ModeLast}, "", nil); err == nil {
			t.Error("Start(lastN 0) = nil error")
		} else if fe, ok := errors.AsType[collectors.FieldErrors](err); !ok || fe[0].Path != "lastN" {
			t.Errorf("Start(lastN 0) = %v, want a FieldErrors at lastN", err)
		}
		var n int
		id, err := m.Start(ctx, tc.cfg, Request{Topic: topic, Mode: ModeLast, LastN: 5}, "", func(Record) { n++ })
		if err != nil {
			t.Fatal(err)
		}
		ch, _ := m.Subscribe(id)
		if p := final(t, ch); p.Records != 5 || n != 5 || p.StoppedBy != StoppedComplete {
			t.Errorf("sample = %+v with %d records in the sink, want 5, complete", p, n)
		}

		id, err = m.Start(ctx, tc.cfg, Request{Topic: topic, Mode: ModeLast, LastN: 5}, "", func(Record) { panic("boom") })
		if err != nil {
			t.Fatal(err)
		}
		ch, _ = m.Subscribe(id)
		if p := final(t, ch); p.StoppedBy != StoppedError || p.Err == "" {
			t.Errorf("sample with a panicking sink = %+v, want error", p)
		}
	})
}

// TestManagerKeepsLast: the manager keeps the last Kept samples, running
// ones included; starting one more forgets the oldest finished one, never
// a running one, however old.
func TestManagerKeepsLast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newCluster(t, 1)
		m := newTestManager(t, tc, ManagerOptions[string]{Concurrent: 2})
		ctx := t.Context()
		old, err := m.Start(ctx, tc.cfg, Request{Topic: topic, Mode: ModeLive, Window: time.Minute}, "old", nil)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for i := range Kept + 1 {
			id, err := m.Start(ctx, tc.cfg, Request{Topic: topic, Mode: ModeLast, LastN: 1}, fmt.Sprint(i), nil)
			if err != nil {
				t.Fatal(err)
			}
			ch, _ := m.Subscribe(id)
			final(t, ch)
			ids = append(ids, id)
		}
		if p, ok := m.Progress(old); !ok || p.Done {
			t.Errorf("the oldest sample, still running: Progress = %+v, %v; want kept, running", p, ok)
		}
		for i, id := range ids {
			_, ok := m.Progress(id)
			if want := i >= 2; ok != want {
				t.Errorf("Progress(finished sample %d of %d) found = %v, want %v", i, len(ids), ok, want)
			}
		}
		list := m.List()
		if len(list) != Kept {
			t.Fatalf("List has %d samples, want %d", len(list), Kept)
		}
		// Newest first: the last finished one, …, the third, then the
		// running one started before them all.
		if list[0].ID != ids[len(ids)-1] || list[0].Value != fmt.Sprint(Kept) || list[Kept-1].ID != old || list[Kept-2].ID != ids[2] {
			t.Errorf("List order: first %s (%q), last two %s, %s; want %s first, then %s and %s last", list[0].ID, list[0].Value,
				list[Kept-2].ID, list[Kept-1].ID, ids[len(ids)-1], ids[2], old)
		}
		m.Cancel(old)
	})
}

// TestManagerInfo: ids are 16 hex digits, each its own; a sample's info
// holds its request, value and start from the manager's clock, its
// progress, and once done its end; Running counts the samples in flight.
func TestManagerInfo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newCluster(t, 2)
		tc.produce(t, 1, 0, 3, 10)
		m := newTestManager(t, tc, ManagerOptions[string]{Now: func() time.Time { return time.Now().Add(time.Hour) }})
		ctx := t.Context()
		t0 := time.Now()
		req := Request{Topic: topic, Mode: ModeLast, LastN: 10}
		live, err := m.Start(ctx, tc.cfg, Request{Topic: topic, Mode: ModeLive, Window: time.Minute}, "live", nil)
		if err != nil {
			t.Fatal(err)
		}
		id, err := m.Start(ctx, tc.cfg, req, "last", nil)
		if err != nil {
			t.Fatal(err)
		}
		hex := regexp.MustCompile(`^[0-9a-f]{16}$`)
		if !hex.MatchString(id) || !hex.MatchString(live) || id == live {
			t.Errorf("ids %q and %q, want two different ones of 16 hex digits", live, id)
		}
		if n := m.Running(); n != 2 {
			t.Errorf("Running = %d, want 2", n)
		}
		ch, _ := m.Subscribe(id)
		final(t, ch)
		got, ok := m.Get(id)
		if !ok {
			t.Fatal("Get of a finished sample: not found")
		}
		if got.ID != id || got.Value != "last" || !reflect.DeepEqual(got.Request, req) || !got.Started.Equal(t0.Add(time.Hour)) {
			t.Errorf("Get = %+v; want id %s, value last, the request, started an hour on (the manager's clock)", got, id)
		}
		if !got.Progress.Done || got.Progress.Records != 3 || got.Progress.Partitions != 2 || got.Finished.IsZero() || got.Finished.Before(got.Started) {
			t.Errorf("finished sample %+v; want done with 3 records of 2 partitions and an end after its start", got)
		}
		if n := m.Running(); n != 1 {
			t.Errorf("Running after one ended = %d, want 1", n)
		}
		if info, _ := m.Get(live); info.Progress.Done || !info.Finished.IsZero() {
			t.Errorf("running sample %+v; want not done, no end", info)
		}
		if _, ok := m.Get("0123456789abcdef"); ok {
			t.Error("Get of an unknown id found it")
		}
		if c := m.Concurrent(); c != DefaultConcurrent {
			t.Errorf("Concurrent = %d, want %d", c, DefaultConcurrent)
		}
	})
}

// TestManagerOnProgress: OnProgress hears each sample's progress, as the
// manager recorded it, with its value, and last its final progress after
// every record; Close returns after the last call, and then refuses new
// samples while the finished ones stay readable.
func TestManagerOnProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newCluster(t, 1)
		tc.produce(t, 0, 0, 5, 10)
		var mu sync.Mutex
		heard := map[string][]Info[string]{}
		var m *Manager[string]
		m = newTestManager(t, tc, ManagerOptions[string]{OnProgress: func(i Info[string]) {
			mu.Lock()
			defer mu.Unlock()
			if got, _ := m.Get(i.ID); got.Progress != i.Progress {
				t.Errorf("OnProgress told %+v, the manager has %+v", i.Progress, got.Progress)
			}
			heard[i.ID] = append(heard[i.ID], i)
		}})
		ctx := t.Context()
		records := 0
		last, err := m.Start(ctx, tc.cfg, Request{Topic: topic, Mode: ModeLast, LastN: 5}, "last", func(Record) { records++ })
		if err != nil {
			t.Fatal(err)
		}
		live, err := m.Start(ctx, tc.cfg, Request{Topic: topic, Mode: ModeLive, Window: time.Minute}, "live", nil)
		if err != nil {
			t.Fatal(err)
		}
		ch, _ := m.Subscribe(last)
		final(t, ch)
		synctest.Wait()
		m.Close()

		mu.Lock()
		defer mu.Unlock()
		for id, want := range map[string]string{last: "last", live: "live"} {
			hs := heard[id]
			if len(hs) < 2 {
				t.Fatalf("%s: OnProgress heard %d progresses, want at least a running one and the final one", want, len(hs))
			}
			for i, h := range hs {
				if h.ID != id || h.Value != want || h.Progress.Done != (i == len(hs)-1) {
					t.Errorf("%s: call %d of %d = %+v; want its id and value, done on the last call only", want, i, len(hs), h)
				}
			}
			end := hs[len(hs)-1]
			if end.Finished.IsZero() {
				t.Errorf("%s: the last call has no end time: %+v", want, end)
			}
			if got, _ := m.Get(id); got.Progress != end.Progress {
				t.Errorf("%s: Get after Close = %+v, want the final progress %+v", want, got.Progress, end.Progress)
			}
		}
		if p := heard[last][len(heard[last])-1].Progress; p.StoppedBy != StoppedComplete || p.Records != 5 || records != 5 {
			t.Errorf("last 5: final %+v with %d records in the sink, want complete with 5", p, records)
		}
		if p := heard[live][len(heard[live])-1].Progress; p.StoppedBy != StoppedCancelled {
			t.Errorf("live sample at Close: final %+v, want cancelled", p)
		}
		if _, err := m.Start(ctx, tc.cfg, Request{Topic: topic, Mode: ModeLast, LastN: 5}, "", nil); !errors.Is(err, ErrClosed) {
			t.Errorf("Start after Close = %v, want ErrClosed", err)
		}
		if n := m.Running(); n != 0 {
			t.Errorf("Running after Close = %d", n)
		}
	})
}
