package live

import (
	"math"
	"testing"
	"time"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/format"
)

// retentionPoll is lossPoll with orders' retention at 2 minutes.
func retentionPoll(at time.Time, end, start int64) *kafka.Snapshot {
	ks := lossPoll(at, end, start)
	for i := range ks.Topics {
		if ks.Topics[i].Name == "orders" {
			ks.Topics[i].Retention = kafka.Retention{
				Time:          kafka.RetentionLimit{Value: 120000, Known: true},
				Bytes:         kafka.RetentionLimit{Value: -1, Known: true, Infinite: true},
				CleanupPolicy: "delete", Freshness: kafka.Freshness{UpdatedAt: t0},
			}
		}
	}
	return ks
}

// A source reading orders-0 at half the rate it is written falls behind by
// half a second each second; with a 2-minute retention, Kafka deletes its
// records unread from 240 s on. The time to retention is given before
// then, counts down to the loss, and no record is lost while it is.
func TestTimeToRetentionWarnsBeforeTheLoss(t *testing.T) {
	now := t0
	s := New(Options{Now: func() time.Time { return now }})
	const produced, read = 100, 50 // records/s
	firstWarn, firstLoss := time.Duration(-1), time.Duration(-1)
	var warnAt100 float64
	for sec := 0; sec <= 300; sec += 10 {
		at := t0.Add(time.Duration(sec) * time.Second)
		now = at
		end := int64(produced * sec)
		start := max(0, int64(produced*(sec-120))) // deleted 2 minutes after written
		pos := int64(read * sec)
		s.UpdateKafka(retentionPoll(at, end, start))
		s.UpdateFlink(flinkSnap(at, lossJob(pos, end)))
		vv, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
		if err != nil {
			t.Fatal(err)
		}
		c, row := orders0(t, vv)
		if c.RetentionSeconds != 120 {
			t.Fatalf("at %d s: orders-0 retention %v s, want 120", sec, c.RetentionSeconds)
		}
		lost := c.Reading.Lost != nil && c.Reading.Lost.Records > 0
		if lost && firstLoss < 0 {
			firstLoss = time.Duration(sec) * time.Second
		}
		if row.TimeToRetentionSeconds > 0 && firstWarn < 0 {
			firstWarn = time.Duration(sec) * time.Second
			if lost {
				t.Errorf("at %d s: the first warning came with the loss", sec)
			}
		}
		if sec == 100 {
			f := figure(t, vv, FigureTimeToRetention)
			if f.Kind != Estimated || f.Subtask != row.Subtask || f.Partition != "orders-0" || f.Seconds != 120 || format.Seconds(f.Value) != "2 m 20 s" {
				t.Errorf("at 100 s: time-to-retention figure %+v, want subtask %d past orders-0's 120 s in 2 m 20 s, estimated", f, row.Subtask)
			}
			if r := figure(t, vv, FigureRetention); r.Kind != Observed || r.Value != 120 {
				t.Errorf("at 100 s: retention figure %+v", r)
			}
			warnAt100 = row.TimeToRetentionSeconds
			if row.RetentionPartition != "orders-0" || row.RetentionSeconds != 120 {
				t.Errorf("at 100 s: row retention %q %v, want orders-0 at 120 s", row.RetentionPartition, row.RetentionSeconds)
			}
		}
		// The other partitions are caught up: no time to retention.
		for _, r := range vv.Subtasks {
			for _, o := range r.Partitions {
				if (o.Topic != "orders" || o.Partition != 0) && o.TimeToRetentionSeconds != -1 {
					t.Fatalf("at %d s: %s-%d time to retention %v, want -1 (not growing)", sec, o.Topic, o.Partition, o.TimeToRetentionSeconds)
				}
			}
		}
		if len(vv.Retention) == 0 || vv.Retention[0].Topic != "orders" || *vv.Retention[0].RetentionMs != 120000 || !vv.Retention[0].Deletes {
			t.Fatalf("at %d s: vertex retention %+v, want orders at 120000 ms, deleting", sec, vv.Retention)
		}
	}
	if firstWarn < 0 || firstLoss < 0 || firstWarn >= firstLoss {
		t.Fatalf("first warning at %v, first loss at %v: want a warning before the loss", firstWarn, firstLoss)
	}
	// At 100 s the lag time is 50 s and grows by 0.5 s/s: 140 s to 120 s.
	if math.Abs(warnAt100-140) > 15 {
		t.Errorf("time to retention at 100 s = %v s, want about 140 (the loss starts at 240 s)", warnAt100)
	}
	t.Logf("first warning at %v, first record lost at %v", firstWarn, firstLoss)

	tv, err := s.State().Topic("prod", "orders")
	if err != nil || tv.Retention == nil || *tv.Retention.RetentionMs != 120000 || tv.Retention.Basis != "observed" {
		t.Errorf("Topic(orders).Retention = %+v, %v; want 120000 ms observed", tv.Retention, err)
	}
}

func TestTimeToRetention(t *testing.T) {
	growing := Reading{Trend: TrendGrowing, PositionRate: 50, ProducedRate: 100}
	for _, tc := range []struct {
		name      string
		lag       float64
		kind      kafka.TimeLagKind
		rd        Reading
		retention float64
		want      float64
	}{
		{"half speed", 60, kafka.TimeLagInterpolated, growing, 120, 120},
		{"stalled", 60, kafka.TimeLagAtLeast, Reading{Trend: TrendGrowing, PositionRate: 0, ProducedRate: 100}, 120, 60},
		{"past it", 130, kafka.TimeLagInterpolated, growing, 120, 0},
		{"steady", 60, kafka.TimeLagInterpolated, Reading{Trend: TrendSteady, PositionRate: 100, ProducedRate: 100}, 120, -1},
		{"no retention", 60, kafka.TimeLagInterpolated, growing, 0, -1},
		{"lag time unknown", 0, kafka.TimeLagUnknown, growing, 120, -1},
	} {
		if got := timeToRetention(tc.lag, tc.kind, tc.rd, tc.retention); got != tc.want {
			t.Errorf("%s: timeToRetention = %v, want %v", tc.name, got, tc.want)
		}
	}
}
