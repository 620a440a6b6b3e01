package kafka

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// logLines is a JSON log, safe for the collector's goroutines.
type logLines struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// take returns the lines logged at Warn and above since the last take.
func (l *logLines) take(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["level"] == "WARN" || m["level"] == "ERROR" {
			out = append(out, m)
		}
	}
	l.b.Reset()
	return out
}

// TestPollLogsRepeatedFailuresOnce: a poll in which every partition of 20
// topics × 100 fails logs one warning per kind of failure (end offsets,
// start offsets), each with the count and a few examples, not one per
// partition; so does the next poll.
func TestPollLogsRepeatedFailuresOnce(t *testing.T) {
	var topics []string
	for i := range 20 {
		topics = append(topics, fmt.Sprintf("t%02d", i))
	}
	const partitions = 20 * 100
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(100, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	// Every broker answers every ListOffsets with an error per partition.
	c.ControlKey(int16(kmsg.ListOffsets), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.ListOffsetsRequest)
		resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewListOffsetsResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.KafkaStorageError.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	var out logLines
	cfg := Config{Name: "test", Brokers: c.ListenAddrs()}
	col, err := newCollector(cfg, slog.New(slog.NewJSONHandler(&out, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(col.Close)

	for poll := 1; poll <= 2; poll++ {
		s := col.PollOnce(context.Background())
		failed := 0
		for _, tp := range s.Topics {
			for _, p := range tp.Partitions {
				if p.Err != nil {
					failed++
				}
			}
		}
		if failed != partitions {
			t.Fatalf("poll %d: %d partitions failed, want all %d", poll, failed, partitions)
		}
		lines := out.take(t)
		if len(lines) > 3 {
			t.Errorf("poll %d logged %d warnings, want one per kind of failure (at most 3)", poll, len(lines))
		}
		var counted []string
		for _, l := range lines {
			msg, _ := l["msg"].(string)
			n, _ := l["count"].(float64)
			ex, _ := l["examples"].([]any)
			if int(n) != partitions {
				continue
			}
			counted = append(counted, msg)
			if len(ex) == 0 || len(ex) > 3 || !strings.Contains(fmt.Sprint(ex[0]), "topic=t00 partition=") || !strings.Contains(fmt.Sprint(ex[0]), "KAFKA_STORAGE_ERROR") {
				t.Errorf("poll %d: %q examples %q, want up to 3 naming topic, partition and the error", poll, msg, ex)
			}
			if l["topic"] == nil || l["partition"] == nil || l["error"] == nil || l["cluster"] != "test" {
				t.Errorf("poll %d: %q = %v, want the first failure's cluster, topic, partition and error", poll, msg, l)
			}
		}
		// The first poll also reads log start offsets (they are re-read
		// once a minute): two kinds; the second only end offsets.
		if want := 3 - poll; len(counted) != want {
			t.Errorf("poll %d: warnings with count=%d: %q, want %d (all: %v)", poll, partitions, counted, want, lines)
		}
	}
}
