package kafka

import (
	"context"
	"testing"
	"time"
)

// partitionsOf returns how many partitions topic has in s.
func partitionsOf(s *Snapshot, topic string) int {
	for _, t := range s.Topics {
		if t.Name == topic {
			return len(t.Partitions)
		}
	}
	return -1
}

// TestHintMetadataReadsGrowthAtOnce: a topic grown in Kafka is seen on the
// poll after HintMetadata, not a minute later; without a hint the cached
// metadata is used. Hints are honoured at most once per poll interval and
// maxHints times while the metadata they read stays the same.
func TestHintMetadataReadsGrowthAtOnce(t *testing.T) {
	c, _, adm := newCluster(t)
	col, now := newTestCollector(t, c, Config{Topics: []string{"orders"}, PollInterval: 5 * time.Second})
	ctx := context.Background()
	poll := func() *Snapshot {
		s := col.PollOnce(ctx)
		*now = now.Add(5 * time.Second)
		return s
	}
	if s := poll(); partitionsOf(s, "orders") != 3 || !s.MetadataAt.Equal(t0) {
		t.Fatalf("first poll: orders has %d partitions, metadata at %v; want 3 at %v", partitionsOf(s, "orders"), s.MetadataAt, t0)
	}
	if _, err := adm.CreatePartitions(ctx, 2, "orders"); err != nil {
		t.Fatal(err)
	}
	if s := poll(); partitionsOf(s, "orders") != 3 {
		t.Fatalf("no hint, 5 s after the read: orders has %d partitions, want the cached 3", partitionsOf(s, "orders"))
	}
	col.HintMetadata()
	s := poll()
	if got := partitionsOf(s, "orders"); got != 5 {
		t.Errorf("the poll after a hint: orders has %d partitions, want 5", got)
	}
	if p := findPartition(t, s, "orders", 4); p.Err != nil || p.Stale {
		t.Errorf("the poll after a hint: orders-4 err %v stale %v, want its end offset read", p.Err, p.Stale)
	}
	if !s.MetadataAt.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("the poll after a hint: metadata at %v, want %v", s.MetadataAt, t0.Add(10*time.Second))
	}

	// A hint the metadata never answers (a topic this cluster does not
	// watch) forces maxHints reads, then waits for the minute.
	reads := 0
	last := s.MetadataAt
	for range 2 * maxHints {
		col.HintMetadata()
		s := poll()
		if !s.MetadataAt.Equal(last) {
			reads++
			last = s.MetadataAt
		}
		if elapsed := s.CollectedAt.Sub(t0); elapsed >= 10*time.Second+metadataRefresh {
			break
		}
	}
	if reads != maxHints {
		t.Errorf("hints on every poll with unchanged metadata: %d forced reads, want %d", reads, maxHints)
	}
}

// TestHintMetadataOncePerPollInterval: hints given faster than the poll
// interval force one read per interval.
func TestHintMetadataOncePerPollInterval(t *testing.T) {
	c, _, _ := newCluster(t)
	col, now := newTestCollector(t, c, Config{Topics: []string{"orders"}, PollInterval: 10 * time.Second})
	ctx := context.Background()
	col.PollOnce(ctx)
	var at []time.Time
	last := t0
	for range 8 {
		*now = now.Add(2 * time.Second)
		col.HintMetadata()
		s := col.PollOnce(ctx)
		if !s.MetadataAt.Equal(last) {
			at = append(at, s.MetadataAt)
			last = s.MetadataAt
		}
	}
	want := []time.Time{t0.Add(2 * time.Second), t0.Add(12 * time.Second)}
	if len(at) != len(want) || !at[0].Equal(want[0]) || !at[1].Equal(want[1]) {
		t.Errorf("forced reads at %v, want %v", at, want)
	}
}

// readAtOf returns topic's ReadAt in s.
func readAtOf(s *Snapshot, topic string) time.Time {
	for _, t := range s.Topics {
		if t.Name == topic {
			return t.ReadAt
		}
	}
	return time.Time{}
}

// TestFollowReadsGrowthOnEveryPoll: the partitions of a followed topic are
// read on every poll, so growth is in the next snapshot with its ReadAt;
// an unfollowed topic keeps the minute's cached metadata. A followed topic
// the metadata lacks (created since, with no topics configured) is added;
// a followed name Kafka does not know is left out, not listed as an error.
func TestFollowReadsGrowthOnEveryPoll(t *testing.T) {
	c, _, adm := newCluster(t)
	col, now := newTestCollector(t, c, Config{PollInterval: 5 * time.Second})
	ctx := context.Background()
	poll := func() *Snapshot {
		s := col.PollOnce(ctx)
		*now = now.Add(5 * time.Second)
		return s
	}
	poll()
	col.Follow([]string{"orders", "orders", "fresh", "no_such_topic"})
	if _, err := adm.CreatePartitions(ctx, 2, "orders", "other"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 4, 1, nil, "fresh"); err != nil {
		t.Fatal(err)
	}
	s := poll()
	if got := partitionsOf(s, "orders"); got != 5 {
		t.Errorf("followed topic grown 3 → 5: the next poll shows %d partitions", got)
	}
	if got, want := readAtOf(s, "orders"), t0.Add(5*time.Second); !got.Equal(want) {
		t.Errorf("followed topic: ReadAt %v, want the poll's %v", got, want)
	}
	if got := partitionsOf(s, "other"); got != 3 {
		t.Errorf("unfollowed topic grown 3 → 5: the next poll shows %d partitions, want the cached 3", got)
	}
	if got := readAtOf(s, "other"); !got.Equal(t0) || !s.MetadataAt.Equal(t0) {
		t.Errorf("unfollowed topic: ReadAt %v, metadata at %v; want both %v", got, s.MetadataAt, t0)
	}
	if got := partitionsOf(s, "fresh"); got != 4 {
		t.Errorf("followed topic created since the last read: %d partitions, want 4", got)
	}
	if got := partitionsOf(s, "no_such_topic"); got != -1 {
		t.Errorf("followed name unknown to Kafka is listed with %d partitions, want left out", got)
	}
	if s.Err != nil {
		t.Errorf("snapshot error %v, want none", s.Err)
	}
	if p := findPartition(t, s, "orders", 4); p.Err != nil || p.Stale {
		t.Errorf("orders-4 err %v stale %v, want its end offset read", p.Err, p.Stale)
	}
}

// TestFollowKeepsConfiguredTopicsOnly: with topics configured, a followed
// topic outside them is not read.
func TestFollowKeepsConfiguredTopicsOnly(t *testing.T) {
	c, _, adm := newCluster(t)
	col, now := newTestCollector(t, c, Config{Topics: []string{"orders"}, PollInterval: 5 * time.Second})
	ctx := context.Background()
	col.PollOnce(ctx)
	*now = now.Add(5 * time.Second)
	col.Follow([]string{"orders", "other"})
	if _, err := adm.CreatePartitions(ctx, 1, "orders", "other"); err != nil {
		t.Fatal(err)
	}
	s := col.PollOnce(ctx)
	if got := partitionsOf(s, "orders"); got != 4 {
		t.Errorf("configured, followed topic grown 3 → 4: %d partitions", got)
	}
	if got := partitionsOf(s, "other"); got != -1 {
		t.Errorf("topic outside the configured ones is listed with %d partitions", got)
	}
}
