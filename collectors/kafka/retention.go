package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// retentionRefresh is how often each topic's retention settings are
// re-read: they change rarely, and one DescribeConfigs per minute for the
// watched topics costs the brokers little. A change of the watched topic
// set reads them at once.
const retentionRefresh = time.Minute

// retentionBatchSize bounds the topics of one DescribeConfigs request.
const retentionBatchSize = 500

// Retention is a topic's retention settings as its brokers report them
// (DescribeConfigs: retention.ms, retention.bytes, cleanup.policy). Every
// value is validated here: a value that does not parse, or is negative
// other than Kafka's -1 for "no limit", is unknown, with the reason.
type Retention struct {
	Time  RetentionLimit // retention.ms, in milliseconds
	Bytes RetentionLimit // retention.bytes, per partition
	// CleanupPolicy is cleanup.policy's words ("delete", "compact" or
	// both, comma-separated); "" unknown, PolicyErr says why.
	CleanupPolicy string
	PolicyErr     error
	// Err is set when the topic's settings could not be read this time
	// (the request failed or the topic is unknown); the last values read
	// are kept, marked stale. Freshness.UpdatedAt is zero before the
	// first good read.
	Err error
	Freshness
}

// RetentionLimit is one retention setting.
type RetentionLimit struct {
	// Value is the limit (milliseconds or bytes), meaningful when Known and
	// not Infinite.
	Value int64
	Known bool
	// Infinite is Kafka's -1: no limit of this kind.
	Infinite bool
	Err      error // Err says why the value is unknown.
}

// Deletes reports whether the topic's cleanup policy deletes old records
// (delete alone or with compact); false when the policy is unknown.
func (r Retention) Deletes() bool {
	for p := range strings.SplitSeq(r.CleanupPolicy, ",") {
		if strings.TrimSpace(p) == "delete" {
			return true
		}
	}
	return false
}

// Duration is the time limit as a duration, ok only when it is known,
// finite and the policy deletes records.
func (r Retention) Duration() (time.Duration, bool) {
	if !r.Time.Known || r.Time.Infinite || !r.Deletes() || r.Time.Value > int64(math.MaxInt64/time.Millisecond) {
		return 0, false
	}
	return time.Duration(r.Time.Value) * time.Millisecond, true
}

// parseLimit validates a retention.ms or retention.bytes value.
func parseLimit(key string, v *string, present bool) RetentionLimit {
	switch {
	case !present:
		return RetentionLimit{Err: fmt.Errorf("%s: not reported", key)}
	case v == nil:
		return RetentionLimit{Err: fmt.Errorf("%s: reported without a value", key)}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(*v), 10, 64)
	switch {
	case err != nil:
		return RetentionLimit{Err: fmt.Errorf("%s: %q is not a whole number", key, clip(*v))}
	case n == -1:
		return RetentionLimit{Known: true, Infinite: true, Value: -1}
	case n < 0:
		return RetentionLimit{Err: fmt.Errorf("%s: %d is negative (only -1, no limit, is allowed)", key, n)}
	}
	return RetentionLimit{Known: true, Value: n}
}

// parsePolicy validates cleanup.policy: a comma-separated list of
// "delete" and "compact".
func parsePolicy(v *string, present bool) (string, error) {
	switch {
	case !present:
		return "", errors.New("cleanup.policy: not reported")
	case v == nil:
		return "", errors.New("cleanup.policy: reported without a value")
	}
	var out []string
	for p := range strings.SplitSeq(*v, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		if p != "delete" && p != "compact" {
			return "", fmt.Errorf("cleanup.policy: %q is not delete or compact", clip(*v))
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return strings.Join(out, ","), nil
}

// clip bounds a broker's value quoted in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// retentionOf validates one topic's configs.
func retentionOf(rc kadm.ResourceConfig, now time.Time) Retention {
	byKey := map[string]kadm.Config{}
	for _, c := range rc.Configs {
		byKey[c.Key] = c
	}
	get := func(k string) (*string, bool) { c, ok := byKey[k]; return c.Value, ok }
	r := Retention{Freshness: Freshness{UpdatedAt: now}}
	v, ok := get("retention.ms")
	r.Time = parseLimit("retention.ms", v, ok)
	v, ok = get("retention.bytes")
	r.Bytes = parseLimit("retention.bytes", v, ok)
	v, ok = get("cleanup.policy")
	r.CleanupPolicy, r.PolicyErr = parsePolicy(v, ok)
	return r
}

// refreshRetention re-reads the retention settings of names when they are
// due (once a retentionRefresh, or when the topic set changed). A failed
// read keeps each topic's last values, marked stale with the error, until
// the next read is due. It only reads (DescribeConfigs).
func (c *Collector) refreshRetention(ctx context.Context, now time.Time, names []string) error {
	due := !slices.Equal(names, c.retentionNames) || c.retentionAt.IsZero() ||
		now.Sub(c.retentionAt) >= retentionRefresh || now.Before(c.retentionAt)
	if !due || len(names) == 0 {
		c.ageRetention(now)
		return nil
	}
	// Batches bound each answer: a broker sends every config of every
	// topic asked for (some 30 each).
	var errs []error
	got := map[string]kadm.ResourceConfig{}
	for batch := range slices.Chunk(names, retentionBatchSize) {
		rcs, err := c.adm.DescribeTopicConfigs(ctx, batch...)
		if err != nil {
			errs = append(errs, err)
		}
		for _, rc := range rcs {
			got[rc.Name] = rc
		}
	}
	err := errors.Join(errs...)
	next := make(map[string]Retention, len(names))
	for _, name := range names {
		rc, ok := got[name]
		switch {
		case ok && rc.Err == nil:
			next[name] = retentionOf(rc, now)
			continue
		case ok:
			err := fmt.Errorf("topic %q configs: %w", name, rc.Err)
			next[name] = staleRetention(c.retention[name], now, err)
		default:
			next[name] = staleRetention(c.retention[name], now, fmt.Errorf("topic %q configs: %w", name, cmp.Or(err, errors.New("no answer"))))
		}
	}
	// A failed read is retried a retentionRefresh later too: a broker that
	// refuses DescribeConfigs (no ACL) is not asked at every poll.
	c.retention, c.retentionAt, c.retentionNames = next, now, slices.Clone(names)
	return err
}

// ageRetention sets each kept value's age for a poll that did not re-read.
func (c *Collector) ageRetention(now time.Time) {
	for _, name := range slices.Sorted(maps.Keys(c.retention)) {
		r := c.retention[name]
		if !r.UpdatedAt.IsZero() {
			r.Age = now.Sub(r.UpdatedAt)
		}
		c.retention[name] = r
	}
}

func staleRetention(last Retention, now time.Time, err error) Retention {
	last.Err, last.Stale = err, true
	if last.UpdatedAt.IsZero() {
		last.Time = RetentionLimit{Err: err}
		last.Bytes = RetentionLimit{Err: err}
		last.PolicyErr = err
	} else {
		last.Age = now.Sub(last.UpdatedAt)
	}
	return last
}
