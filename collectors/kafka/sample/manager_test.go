package sample

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/collectors"
)

func newTestManager(t *testing.T, tc *testCluster, max int) *Manager {
	t.Helper()
	m := NewManager(max)
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
		m := newTestManager(t, tc, 0) // DefaultConcurrent
		live := Request{Topic: topic, Mode: ModeLive, Window: time.Minute}
		ctx := t.Context()
		a, err := m.Start(ctx, tc.cfg, live, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := m.Start(ctx, tc.cfg, live, nil)
		if err != nil {
			t.Fatal(err)
		}
		if a == b {
			t.Fatalf("two samples share the id %q", a)
		}
		if _, err := m.Start(ctx, tc.cfg, live, nil); !errors.Is(err, ErrTooMany) {
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
		c, err := m.Start(ctx, tc.cfg, live, nil)
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
		m := newTestManager(t, tc, 1)
		ctx := t.Context()
		if _, err := m.Start(ctx, tc.cfg, Request{Topic: topic, Mode: ModeLast}, nil); err == nil {
			t.Error("Start(lastN 0) = nil error")
		} else if fe, ok := errors.AsType[collectors.FieldErrors](err); !ok || fe[0].Path != "lastN" {
			t.Errorf("Start(lastN 0) = %v, want a FieldErrors at lastN", err)
		}
		var n int
		id, err := m.Start(ctx, tc.cfg, Request{Topic: topic, Mode: ModeLast, LastN: 5}, func(Record) { n++ })
		if err != nil {
			t.Fatal(err)
		}
		ch, _ := m.Subscribe(id)
		if p := final(t, ch); p.Records != 5 || n != 5 || p.StoppedBy != StoppedComplete {
			t.Errorf("sample = %+v with %d records in the sink, want 5, complete", p, n)
		}

		id, err = m.Start(ctx, tc.cfg, Request{Topic: topic, Mode: ModeLast, LastN: 5}, func(Record) { panic("boom") })
		if err != nil {
			t.Fatal(err)
		}
		ch, _ = m.Subscribe(id)
		if p := final(t, ch); p.StoppedBy != StoppedError || p.Err == "" {
			t.Errorf("sample with a panicking sink = %+v, want error", p)
		}
	})
}

// TestManagerKeepsLastFinished: only the last KeepFinished finished
// samples are remembered.
func TestManagerKeepsLastFinished(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newCluster(t, 1)
		m := newTestManager(t, tc, 1)
		var ids []string
		for range KeepFinished + 2 {
			id, err := m.Start(context.Background(), tc.cfg, Request{Topic: topic, Mode: ModeLast, LastN: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ch, _ := m.Subscribe(id)
			final(t, ch)
			ids = append(ids, id)
		}
		for i, id := range ids {
			_, ok := m.Progress(id)
			if want := i >= 2; ok != want {
				t.Errorf("Progress(sample %d of %d) found = %v, want %v", i, len(ids), ok, want)
			}
		}
	})
}
