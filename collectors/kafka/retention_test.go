package kafka

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func alterTopic(t *testing.T, adm *kadm.Client, topic string, kv map[string]string) {
	t.Helper()
	var cs []kadm.AlterConfig
	for k, v := range kv {
		cs = append(cs, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: &v})
	}
	rs, err := adm.AlterTopicConfigs(context.Background(), cs, topic)
	if err == nil {
		for _, r := range rs {
			err = r.Err
		}
	}
	if err != nil {
		t.Fatalf("alter %s configs: %v", topic, err)
	}
}

func topicOf(t *testing.T, s *Snapshot, name string) Topic {
	t.Helper()
	for _, tp := range s.Topics {
		if tp.Name == name {
			return tp
		}
	}
	t.Fatalf("snapshot has no topic %q", name)
	return Topic{}
}

// The collector reads each topic's retention settings from the brokers,
// at most once a minute, and carries them with their age.
func TestCollectorReadsRetention(t *testing.T) {
	c, _, adm := newCluster(t)
	alterTopic(t, adm, "orders", map[string]string{"retention.ms": "120000", "retention.bytes": "1048576"})
	alterTopic(t, adm, "other", map[string]string{"retention.ms": "-1", "cleanup.policy": "compact"})
	var describes atomic.Int32
	c.ControlKey(int16(kmsg.DescribeConfigs), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		describes.Add(1)
		return nil, nil, false
	})

	col, now := newTestCollector(t, c, Config{Topics: []string{"orders", "other"}})
	s := col.PollOnce(context.Background())
	if s.Err != nil {
		t.Fatalf("PollOnce() err = %v", s.Err)
	}
	r := topicOf(t, s, "orders").Retention
	if d, ok := r.Duration(); !ok || d != 2*time.Minute {
		t.Errorf("orders retention = %v, %v (%+v); want 2m0s, true", d, ok, r)
	}
	if r.Bytes != (RetentionLimit{Value: 1 << 20, Known: true}) || r.CleanupPolicy != "delete" || r.UpdatedAt != t0 {
		t.Errorf("orders retention = %+v; want 1 MiB, delete, read at t0", r)
	}
	o := topicOf(t, s, "other").Retention
	if _, ok := o.Duration(); ok || !o.Time.Infinite || o.CleanupPolicy != "compact" || o.Deletes() {
		t.Errorf("other retention = %+v; want infinite, compact, no deletion", o)
	}

	// 30 s later: not re-read, aged.
	*now = t0.Add(30 * time.Second)
	s = col.PollOnce(context.Background())
	if r := topicOf(t, s, "orders").Retention; r.Age != 30*time.Second || r.Stale {
		t.Errorf("retention after 30 s = age %v stale %v, want 30s, false", r.Age, r.Stale)
	}
	if n := describes.Load(); n != 1 {
		t.Errorf("DescribeConfigs requests after 2 polls in 30 s = %d, want 1", n)
	}
	// A minute after the read: re-read, and a change is seen.
	alterTopic(t, adm, "orders", map[string]string{"retention.ms": "600000"})
	*now = t0.Add(61 * time.Second)
	s = col.PollOnce(context.Background())
	if d, _ := topicOf(t, s, "orders").Retention.Duration(); d != 10*time.Minute || describes.Load() != 2 {
		t.Errorf("retention after a minute = %v with %d reads, want 10m0s with 2", d, describes.Load())
	}
}

// A failed read keeps the last values, stale, with the error.
func TestCollectorRetentionReadFails(t *testing.T) {
	c, _, adm := newCluster(t)
	alterTopic(t, adm, "orders", map[string]string{"retention.ms": "120000"})
	col, now := newTestCollector(t, c, Config{Topics: []string{"orders"}})
	col.PollOnce(context.Background())
	var refused atomic.Int32
	c.ControlKey(int16(kmsg.DescribeConfigs), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		refused.Add(1)
		resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
		for _, rr := range req.(*kmsg.DescribeConfigsRequest).Resources {
			r := kmsg.NewDescribeConfigsResponseResource()
			r.ResourceName, r.ResourceType, r.ErrorCode = rr.ResourceName, rr.ResourceType, 29 // topic authorization failed
			resp.Resources = append(resp.Resources, r)
		}
		return resp, nil, true
	})
	*now = t0.Add(2 * time.Minute)
	s := col.PollOnce(context.Background())
	r := topicOf(t, s, "orders").Retention
	if d, ok := r.Duration(); !ok || d != 2*time.Minute || !r.Stale || r.Err == nil || r.Age != 2*time.Minute {
		t.Errorf("retention after a failed read = %v %v %+v; want the last 2m0s, stale, with an error, 2m old", d, ok, r)
	}
	// A refusing broker is asked again a minute later, not at every poll.
	*now = t0.Add(2*time.Minute + 10*time.Second)
	s = col.PollOnce(context.Background())
	if r := topicOf(t, s, "orders").Retention; refused.Load() != 1 || !r.Stale || r.Age != 2*time.Minute+10*time.Second {
		t.Errorf("10 s after a refused read: %d reads, retention %+v; want 1 read, the old values stale and aged", refused.Load(), r)
	}
}

func TestParseRetentionValues(t *testing.T) {
	sp := func(s string) *string { return &s }
	for _, tc := range []struct {
		v       *string
		present bool
		want    RetentionLimit
		errHas  string
	}{
		{sp("120000"), true, RetentionLimit{Value: 120000, Known: true}, ""},
		{sp("-1"), true, RetentionLimit{Value: -1, Known: true, Infinite: true}, ""},
		{sp("-5"), true, RetentionLimit{}, "negative"},
		{sp("2m"), true, RetentionLimit{}, "not a whole number"},
		{sp("99999999999999999999"), true, RetentionLimit{}, "not a whole number"},
		{nil, true, RetentionLimit{}, "without a value"},
		{nil, false, RetentionLimit{}, "not reported"},
	} {
		got := parseLimit("retention.ms", tc.v, tc.present)
		if tc.errHas == "" {
			if got != tc.want {
				t.Errorf("parseLimit(%v) = %+v, want %+v", tc.v, got, tc.want)
			}
			continue
		}
		if got.Known || got.Err == nil || !strings.Contains(got.Err.Error(), tc.errHas) {
			t.Errorf("parseLimit(%v) = %+v, want unknown with %q", tc.v, got, tc.errHas)
		}
	}
	if _, err := parsePolicy(func() *string { s := "delete,shred"; return &s }(), true); err == nil {
		t.Error("parsePolicy(delete,shred) = nil error, want one naming the value")
	}
	if p, err := parsePolicy(func() *string { s := "compact, delete"; return &s }(), true); err != nil || p != "compact,delete" {
		t.Errorf("parsePolicy(compact, delete) = %q, %v; want compact,delete", p, err)
	}
}
