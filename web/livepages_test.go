package web

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

var pagesAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func okAge(seconds int64) live.Age {
	return live.Age{At: pagesAt, Seconds: seconds, State: live.StateOK}
}

func TestNewOverviewPage(t *testing.T) {
	ov := live.OverviewView{
		Endpoints: []live.EndpointSummary{
			{Name: "jm", URL: "http://jm:8081", FlinkVersion: "2.3.0", Jobs: 2, PollMillis: 412, Age: okAge(4),
				Cost:   live.PollCost{Requests: 412, Bytes: 3 << 20, Failed: 1},
				Budget: live.RequestBudget{MaxInFlight: 4, MaxRequestsPerSecond: 50, PauseMillis: 40_000, BackoffPolls: 2, BackoffReason: "slow"}},
			{Name: "new", URL: "http://new:8081", Age: live.Age{Stale: true, State: live.StateNotPolled}},
		},
		Jobs: []live.JobSummary{
			{Endpoint: "jm", ID: "j1", Name: "orders", State: "RUNNING", Vertices: 3, Lag: 12_345, MaxBusy: 0.534, Backpressure: "low", Drift: 2, RecordsLost: 2200,
				Concern: live.ConcernLosing, Focus: &live.Focus{VertexID: "v1", VertexName: "Source: orders", Subtask: 3},
				LagSeconds: 95, LagKind: kafka.TimeLagAtLeast, Trend: live.TrendGrowing},
			{Endpoint: "jm", ID: "j0", Name: "orders", State: "CANCELED", Vertices: 3, Lag: -1, MaxBusy: -1, LagSeconds: -1, RecordsLost: 40,
				ReplacedBy: &live.Replacement{Current: "j1", NewID: "j1", At: pagesAt}},
		},
		Clusters: []live.ClusterSummary{{Name: "prod", Topics: 2, Partitions: 18, Groups: 1, Rate: 3647.4, PollMillis: 1500,
			Age: live.Age{At: pagesAt, Seconds: 9, Stale: true, Err: "timeout", State: live.StateFailing}}},
		Topics: []live.TopicSummary{{Cluster: "prod", Name: "orders", Partitions: 12, Rate: 2.54, Groups: 1}},
	}
	got := newOverviewPage(pageLinks{base: "/s", embed: true}, ov)
	ms := pagesAt.UnixMilli()
	want := views.OverviewPage{
		Live: views.Live{Topic: "overview"},
		Endpoints: []views.EndpointRow{
			{Name: "jm", URL: "http://jm:8081", Version: "2.3.0", Jobs: "2", Dropped: views.Text{Key: "e/jm/dropped"},
				Poll:    views.Text{Key: "e/jm/poll", Text: "412 ms"},
				Cost:    views.Text{Key: "e/jm/cost", Text: "412 requests, 3.0 MiB, 1 failed"},
				Budget:  views.Text{Key: "e/jm/budget", Text: "4 in flight, 50/s"},
				Backoff: views.Text{Key: "e/jm/backoff", Text: "backing off after 2 slow polls: polls 40 s apart"},
				State:   views.BackendCell{Age: views.LiveAge{Key: "e/jm/age", At: ms, Text: "4 s ago"}}},
			{Name: "new", URL: "http://new:8081", Stale: true, Jobs: "–", Dropped: views.Text{Key: "e/new/dropped"},
				Poll: views.Text{Key: "e/new/poll", Text: "–"}, Cost: views.Text{Key: "e/new/cost", Text: "–"},
				Budget: views.Text{Key: "e/new/budget", Text: "–"}, Backoff: views.Text{Key: "e/new/backoff"},
				State: views.BackendCell{NotPolled: true, State: string(live.StateNotPolled)}},
		},
		Jobs: []views.JobRow{
			// The worst concern in words and colour, its subtask linked and
			// highlighted, the lag time with its trend; the replaced run
			// folded under the run that replaced it.
			{Name: "orders", ID: "j1", URL: "/s/jobs/j1", State: "RUNNING", Vertices: "3",
				Concern: views.Text{Key: "j/jm/j1/concern", Text: "losing records"}, Level: views.Meter{Key: "j/jm/j1/level", Value: "3"},
				Focus:   &views.Anchor{Text: "Source: orders · subtask 3", URL: "/s/jobs/j1/vertices/v1?highlight=subtask:3"},
				LagTime: views.Text{Key: "j/jm/j1/lagtime", Text: "≥ 1 m 35 s · growing"}, LagStep: views.Meter{Key: "j/jm/j1/lagstep", Value: "2"},
				Lag: views.Text{Key: "j/jm/j1/lag", Text: "12,345"}, Lost: views.Text{Key: "j/jm/j1/lost", Text: "≈ 2,200"}, Lossy: true,
				MaxBusy:      views.Text{Key: "j/jm/j1/busy", Text: "53%"},
				Backpressure: views.Text{Key: "j/jm/j1/bp", Text: "low"}, Drift: &views.Text{Key: "j/jm/j1/drift", Text: "2 partitions differ"},
				Earlier: []views.EarlierRun{{ID: "j0", URL: "/s/jobs/j0", State: "CANCELED", Note: "replaced by j1 at " + pagesAt.UTC().Format("2006-01-02 15:04:05Z"),
					Lost: "≈ 40 deleted unread"}}},
		},
		Clusters: []views.ClusterRow{{Name: "prod", Stale: true, Topics: "2", Partitions: "18", Groups: "1",
			Produced: views.Text{Key: "c/prod/rate", Text: "3,647/s"}, Poll: views.Text{Key: "c/prod/poll", Text: "1500 ms"},
			State: views.BackendCell{State: string(live.StateFailing), Age: views.LiveAge{Key: "c/prod/age", At: ms, Text: "9 s ago"}, Err: "timeout"}}},
		Topics: []views.TopicRow{{Name: "orders", URL: "/s/kafka/prod/topics/orders", Cluster: "prod", Partitions: "12", Groups: "1",
			Produced: views.Text{Key: "t/prod/orders", Text: "2.5/s"}}},
	}
	want.Shape = views.ShapeOf(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("newOverviewPage (-want +got):\n%s", diff)
	}
}

func TestNewVertexPageSource(t *testing.T) {
	vv := live.VertexView{
		Endpoint: "jm", Cluster: "prod", JobID: "j1", JobName: "orders", ID: "v1", Name: "Source", Parallelism: 2, MaxParallelism: 128,
		SparkTimes: []float64{1000, 1010, 1240},
		Source:     true, Kafka: true, Topics: []string{"orders", "pay"}, Color: "lag", Thresholds: [3]float64{1000, 20000, 80000}, LagTimeSteps: [3]float64{10, 60, 300},
		Group:      &live.GroupLink{Name: "enrich", Found: live.GroupConfigured},
		Flink:      okAge(3),
		KafkaAge:   &live.Age{At: pagesAt, Seconds: 5, Stale: true, State: live.StateFailing},
		Figures:    []live.Figure{{Name: live.FigureTotalLag, Value: 1201, Kind: live.Observed, Subtask: -1}},
		Prediction: &live.Prediction{Mode: "fresh", Drift: 1, Headline: live.Headline{Kind: "exact", Exact: 3, Verdicts: live.Tally{Match: 2, Drift: 1}}},
		Subtasks: []live.SubtaskRow{
			{Subtask: 0, Rate: 12.4, RecordsOut: 11, Lag: 1201, LagSeconds: 200, LagKind: kafka.TimeLagAtLeast, Busy: 0.25, SparkLag: []float64{1, 2}, SparkRate: []float64{5, 12.4}, Drift: 1, Highlight: true,
				RecordsLost: 2200, CatchUp: live.CatchUpUnknown, Trend: live.TrendGrowing, Concern: live.ConcernLosing,
				Partitions: []live.PartitionCell{
					{Topic: "orders", Partition: 0, Label: "o0", Lag: 1200, Predicted: 0, Level: 1,
						Reading: live.Reading{State: live.ReaderLost, Trend: live.TrendGrowing, CatchUp: live.CatchUpUnknown,
							Lost: &live.Loss{Records: 2200, FirstSeen: pagesAt.Add(41 * time.Minute), LastSeen: pagesAt.Add(43 * time.Minute), Behind: 300}}},
					{Topic: "pay", Partition: 1, Label: "p1", Lag: 1, Predicted: 1, Level: 0,
						Reading: live.Reading{State: live.ReaderOK, Trend: live.TrendShrinking, CatchUp: live.CatchUpETA, CatchUpSeconds: 0.5}},
				}},
			{Subtask: 1, Rate: -1, RecordsOut: -1, Lag: -1, Busy: -1, CatchUp: live.CatchUpUnknown, Trend: live.TrendUnknown, SparkLag: []float64{math.NaN(), 3},
				Partitions: []live.PartitionCell{{Topic: "orders", Partition: 1, Label: "o1", Lag: -1, Predicted: 1, Uncertain: true, OwnerUndetermined: true, Candidates: []int{0, 1},
					Reading: live.Reading{State: live.ReaderUnknown, Trend: live.TrendUnknown, CatchUp: live.CatchUpUnknown}}}},
		},
		Concern: live.ConcernLosing, Worst: 0,
	}
	got := newVertexPage(vertexPageInput{links: pageLinks{base: ""}, topic: "vertex:j1/v1", sandboxRestore: "/sandbox/restore"}, vv)
	ms := pagesAt.UnixMilli()
	kafkaAge := views.LiveAge{Key: "age:kafka", At: ms, Text: "5 s ago"}
	want := views.VertexPage{
		Live:    views.Live{Topic: "vertex:j1/v1", Stale: true},
		Cluster: "prod", Job: views.Anchor{Text: "orders", URL: "/jobs/j1"}, Name: "Source", Parallelism: "2",
		Group:  &views.Group{Name: "enrich", How: "from configuration"},
		Topics: []views.Anchor{{Text: "orders", URL: "/kafka/prod/topics/orders"}, {Text: "pay", URL: "/kafka/prod/topics/pay"}},
		Bar:    views.LiveBar{Stale: true, State: "stale", Flink: views.LiveAge{Key: "age", At: ms, Text: "3 s ago"}, Kafka: &kafkaAge},
		Figures: []views.FigureCard{{Label: "Total lag", Kind: string(live.Observed),
			Text: views.Text{Key: "f/0/value", Text: "1.2k records"}, Note: views.Text{Key: "f/0/note", Text: "log end − (Flink currentOffset + 1)"},
			Level: views.Meter{Key: "f/0/level", Value: "0"}}},
		Prediction:     &views.PredictionCard{Drift: true, Kind: "exact", KindClass: "v-exact", Summary: views.Text{Key: "pr/summary", Text: "1 of 3 partitions are not where a fresh start puts them. Usual causes: the job was restored from a checkpoint or savepoint taken at another parallelism (Flink keeps restored splits where they are), or the source is not a KafkaSource."}, Counts: views.Text{Key: "pr/counts", Text: "Cells: 2 as predicted · 1 not as predicted"}},
		SandboxRestore: &views.SandboxRestore{Action: "/sandbox/restore", Job: "orders", Parallelism: "4"},
		LagMethod:      true,
		Grid: &views.SourceGrid{Color: "lag", Legend: [4]string{"< 10 s", "< 1 min", "< 5 min", "≥ 5 min"}, LegendNote: "time behind; where it is unknown, records: <1.0k, <20k, <80k, ≥80k",
			Labels: []views.CellLabel{{Prefix: "o", Topic: "orders"}, {Prefix: "p", Topic: "pay"}}, Values: "its lag in records",
			SparkAxis:   views.Spark{Key: "spark/t", Values: []float64{1000, 1010, 1240}},
			SparkWindow: [2]views.Text{{Key: "spark/window/lag", Text: "last 4 min"}, {Key: "spark/window/rate", Text: "last 4 min"}},
			Rows: []views.SourceRow{
				{Subtask: "0", ID: "subtask-0", Highlight: true, Drift: true, Lossy: true,
					Cells: []views.GridCell{
						{Topic: "orders", Partition: "0", Label: "o0", Lost: true, Title: "orders-0 · predicted here", Live: views.LiveCell{Key: "c0.0", Level: 1, Text: "1.2k", State: "st-lost",
							Title: "lost · ≈ 2,200 records deleted unread between 12:41:00 and 12:43:00 UTC (observed) · 300 records below the log start now · catch up: not estimated while records are deleted unread"}},
						{Topic: "pay", Partition: "1", Label: "p1", Miss: true, Predicted: 1, Title: "pay-1 · predicted on subtask 1", Live: views.LiveCell{Key: "c1.1", Level: 0, Text: "1", State: "st-ok",
							Title: "ok · catch up: ≈ 1 s · shrinking (estimated)"}},
					},
					Rate: views.Text{Key: "s/0/rate", Text: "12/s"}, RecordsOut: views.Text{Key: "s/0/out", Text: "11/s"},
					Lag: views.Text{Key: "s/0/lag", Text: "1,201"}, Lost: views.Text{Key: "s/0/lost", Text: "≈ 2,200 deleted unread"},
					LostWhen: views.Text{Key: "s/0/lostwhen", Text: "between 12:41:00 and 12:43:00 UTC"},
					Concern:  views.Text{Key: "s/0/concern", Text: "losing records"}, Level: views.Meter{Key: "s/0/level", Value: "3"},
					LagTime: views.Text{Key: "s/0/lagtime", Text: "≥ 3 m 20 s"}, CatchUp: views.Text{Key: "s/0/catchup", Text: "–"},
					Busy: views.Meter{Key: "s/0/meter", Value: "0.250"}, BusyText: views.Text{Key: "s/0/busy", Text: "25%"},
					SparkLag:  views.Spark{Key: "s/0/spark/lag", Values: []float64{1, 2}, Max: 3, Label: "lag, last 4 min, scale 0 to 3 records"},
					SparkRate: views.Spark{Key: "s/0/spark/rate", Values: []float64{5, 12.4}, Max: 12.4, Label: "records out per second, last 4 min, scale 0 to 12/s"},
					Vs:        views.Text{Key: "s/0/vs", Text: "✗ 1 not as predicted"}},
				{Subtask: "1", ID: "subtask-1",
					Cells: []views.GridCell{{Topic: "orders", Partition: "1", Label: "o1", Uncertain: true, Predicted: 1,
						Title: "orders-1 · predicted here · listed under subtasks 0, 1 in Flink's metric ids: reader not determined",
						Live:  views.LiveCell{Key: "c0.1", Level: 0, Text: "–", State: "st-unknown"}}},
					Rate: views.Text{Key: "s/1/rate", Text: "–"}, RecordsOut: views.Text{Key: "s/1/out", Text: "–"},
					Lag: views.Text{Key: "s/1/lag", Text: "–"}, Lost: views.Text{Key: "s/1/lost"},
					LostWhen: views.Text{Key: "s/1/lostwhen"},
					Concern:  views.Text{Key: "s/1/concern", Text: "ok"}, Level: views.Meter{Key: "s/1/level", Value: "0"},
					LagTime: views.Text{Key: "s/1/lagtime", Text: "–"}, CatchUp: views.Text{Key: "s/1/catchup", Text: "–"},
					Busy: views.Meter{Key: "s/1/meter", Value: "0"}, BusyText: views.Text{Key: "s/1/busy", Text: "–"},
					SparkLag:  views.Spark{Key: "s/1/spark/lag", Values: []float64{-1, 3}, Max: 3, Label: "lag, last 4 min, scale 0 to 3 records"},
					SparkRate: views.Spark{Key: "s/1/spark/rate", Values: []float64{}, Max: 12.4, Label: "records out per second, last 4 min, scale 0 to 12/s"},
					Vs:        views.Text{Key: "s/1/vs", Text: "~ 1 reader not determined"}},
			}},
		// The first screen: the highlighted subtask's state, copied from
		// its row; no why line names it and the page has no plan link.
		Brief: &views.Brief{Subtask: "0", Row: "subtask-0", From: "highlighted by the link",
			Level: views.Copy{Key: "s/0/level", Text: "3"}, Concern: views.Copy{Key: "s/0/concern", Text: "losing records"},
			Lag: views.Copy{Key: "s/0/lag", Text: "1,201"}, LagTime: views.Copy{Key: "s/0/lagtime", Text: "≥ 3 m 20 s"},
			Lost: views.Copy{Key: "s/0/lost", Text: "≈ 2,200 deleted unread"}, LostWhen: views.Copy{Key: "s/0/lostwhen", Text: "between 12:41:00 and 12:43:00 UTC"},
			CatchUp: views.Copy{Key: "s/0/catchup", Text: "–"}},
		Worst: "0",
	}
	want.Shape = views.ShapeOf(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("newVertexPage (-want +got):\n%s", diff)
	}
	if _, err := views.UpdateOf(got); err != nil {
		t.Error(err)
	}
	// Embedded, the page offers no sandbox form; another colouring shows rates.
	vv.Color = "rate"
	vv.Subtasks[0].Partitions[0].Rate = 4900
	emb := newVertexPage(vertexPageInput{links: pageLinks{embed: true}, sandboxRestore: "/sandbox/restore"}, vv)
	if emb.SandboxRestore != nil || emb.Job.URL != "/jobs/j1" || !emb.Grid.ByRate || emb.Grid.Rows[0].Cells[0].Live.Text != "4.9k" {
		t.Errorf("embedded rate page: form %v, job link %q, by rate %t, cell %q", emb.SandboxRestore, emb.Job.URL, emb.Grid.ByRate, emb.Grid.Rows[0].Cells[0].Live.Text)
	}
}

func TestNewVertexPageKeyed(t *testing.T) {
	vv := live.VertexView{JobID: "j1", JobName: "orders", ID: "v2", Name: "Window", Parallelism: 3, MaxParallelism: 128, Keyed: true, Flink: okAge(1),
		Subtasks: []live.SubtaskRow{
			{Subtask: 0, KeyGroups: &live.KeyGroupSpan{Start: 0, End: 42, Size: 43}, RecordsIn: 5, RecordsOut: 5, Busy: 0.1, BackPressured: 0, StateSize: 3 << 20, Concern: live.ConcernSkewed,
				Checkpoint: &live.SubtaskCheckpoint{DurationMs: 412, SyncMs: 12, AsyncMs: 400, AlignmentMs: 7, StartDelayMs: 15, EndToEndMs: 440, Unaligned: true}},
			{Subtask: 1, KeyGroups: &live.KeyGroupSpan{Start: 43, End: 85, Size: 43}, RecordsIn: -1, RecordsOut: -1, Busy: -1, BackPressured: -1, StateSize: -1},
		}, Worst: 0,
		Checkpoint: &live.VertexCheckpoint{ID: 9, CompletedAt: pagesAt.Add(-3 * time.Second), Age: okAge(1), Slowest: 0, SlowFactor: 3}}
	got := newVertexPage(vertexPageInput{links: pageLinks{base: "/s"}}, vv)
	want := &views.SubtaskTable{
		Keyed:      true,
		Checkpoint: views.Text{Key: "ckpt/of", Text: "checkpoint 9, completed 4 s ago"},
		Strip: &views.KeyGroupBar{Label: "key groups 0–127", Segments: []views.KeyGroupSegment{
			{Class: "k0", Title: "subtask 0: key groups 0–42 (43)", X: "0.000%", Width: "33.594%", Label: "0"},
			{Class: "k1", Title: "subtask 1: key groups 43–85 (43)", X: "33.594%", Width: "33.594%", Label: "1"},
		}},
		Rows: []views.SubtaskTableRow{
			{Subtask: "0", ID: "subtask-0", KeyGroups: "0–42", KeyGroupSize: "(43)",
				In: views.Text{Key: "s/0/in", Text: "5.0/s"}, Out: views.Text{Key: "s/0/out", Text: "5.0/s"},
				Busy: views.Meter{Key: "s/0/meter", Value: "0.100"}, BusyText: views.Text{Key: "s/0/busy", Text: "10%"},
				BackPressured: views.Text{Key: "s/0/bp", Text: "0%"}, State: views.Text{Key: "s/0/state", Text: "3.0 MiB"},
				Concern: views.Text{Key: "s/0/concern", Text: "skewed"}, Level: views.Meter{Key: "s/0/level", Value: "1"},
				Checkpoint: views.Text{Key: "s/0/ckpt", Text: "412 ms"}, Alignment: views.Text{Key: "s/0/align", Text: "7 ms (unaligned)"},
				StartDelay: views.Text{Key: "s/0/delay", Text: "15 ms"}, Slowest: true},
			{Subtask: "1", ID: "subtask-1", KeyGroups: "43–85", KeyGroupSize: "(43)",
				In: views.Text{Key: "s/1/in", Text: "–"}, Out: views.Text{Key: "s/1/out", Text: "–"},
				Busy: views.Meter{Key: "s/1/meter", Value: "0"}, BusyText: views.Text{Key: "s/1/busy", Text: "–"},
				BackPressured: views.Text{Key: "s/1/bp", Text: "–"}, State: views.Text{Key: "s/1/state", Text: "–"},
				Concern: views.Text{Key: "s/1/concern", Text: "ok"}, Level: views.Meter{Key: "s/1/level", Value: "0"},
				Checkpoint: views.Text{Key: "s/1/ckpt", Text: "–"}, Alignment: views.Text{Key: "s/1/align", Text: "–"}, StartDelay: views.Text{Key: "s/1/delay", Text: "–"}},
		},
		Lookup: &views.KeyLookupForm{Action: "/s/keys", Parallelism: "3", MaxParallelism: "128"},
	}
	if diff := cmp.Diff(want, got.Table); diff != "" {
		t.Errorf("newVertexPage keyed table (-want +got):\n%s", diff)
	}
	// The brief names the skewed subtask (the vertex's worst), with its
	// busy, backpressure and records in copied from its row.
	wantBrief := &views.Brief{Subtask: "0", Row: "subtask-0", From: "needs a look most of 3 subtasks",
		Level: views.Copy{Key: "s/0/level", Text: "1"}, Concern: views.Copy{Key: "s/0/concern", Text: "skewed"},
		Busy: views.Copy{Key: "s/0/busy", Text: "10%"}, In: views.Copy{Key: "s/0/in", Text: "5.0/s"}, BackPressured: views.Copy{Key: "s/0/bp", Text: "0%"}}
	if diff := cmp.Diff(wantBrief, got.Brief); diff != "" {
		t.Errorf("newVertexPage keyed brief (-want +got):\n%s", diff)
	}
	// Figures older than the latest checkpoint say so.
	vv.Checkpoint.Age = live.Age{At: pagesAt, Seconds: 40, Stale: true}
	if got := newVertexPage(vertexPageInput{links: pageLinks{base: "/s"}}, vv).Table.Checkpoint.Text; got != "checkpoint 9, read 40 s ago (a newer one could not be read)" {
		t.Errorf("stale checkpoint note %q", got)
	}
	vv.Checkpoint = nil
	if got := newVertexPage(vertexPageInput{links: pageLinks{base: "/s"}}, vv).Table; got.Checkpoint.Text != "no checkpoint read" || got.Rows[0].Slowest {
		t.Errorf("no checkpoint: note %q, subtask 0 slowest %v", got.Checkpoint.Text, got.Rows[0].Slowest)
	}
}

func TestNewJobAndTopicPages(t *testing.T) {
	jv := live.JobView{Endpoint: "jm", ID: "j1", Name: "orders", State: "RUNNING", Restarts: -1, Age: okAge(2),
		Restored: &live.Restored{Savepoint: true, Path: "s3://sp/1"},
		Vertices: []live.VertexSummary{{ID: "v1", Name: "Source", Parallelism: 4, MaxParallelism: 128, Source: true, Kafka: true,
			Skew: 37.4, Busiest: 2, MaxBusy: 0.9, Backpressure: "high", Lag: 10, PredictionMode: live.ModeInferred,
			Concern: live.ConcernGrowing, Worst: 2, LagSeconds: 400, LagKind: kafka.TimeLagInterpolated, Trend: live.TrendGrowing},
			{ID: "v2", Name: "Window", Parallelism: 2, MaxParallelism: 128, Keyed: true, Skew: -1, Busiest: -1, MaxBusy: -1, Lag: -1, LagSeconds: -1}}}
	got := newJobPage(pageLinks{}, jv, nil)
	want := views.JobPage{
		Live:     views.Live{Topic: "job:j1"},
		Endpoint: "jm", Name: "orders", ID: "j1", State: "RUNNING",
		Bar:      views.LiveBar{State: "live", Flink: views.LiveAge{Key: "age", At: pagesAt.UnixMilli(), Text: "2 s ago"}},
		Restored: "Restored from a savepoint (s3://sp/1). After a restore at another parallelism, Flink keeps each partition with the splits it restored, not where a fresh start would put it.",
		Vertices: []views.JobVertexRow{{Name: "Source", URL: "/jobs/j1/vertices/v1", Parallelism: "4", MaxParallelism: "128", Kind: "Kafka source",
			Concern: views.Text{Key: "v/v1/concern", Text: "lag growing"}, Level: views.Meter{Key: "v/v1/level", Value: "2"},
			LagTime: views.Text{Key: "v/v1/lagtime", Text: "6 m 40 s · growing"}, LagStep: views.Meter{Key: "v/v1/lagstep", Value: "3"},
			Skew: views.Text{Key: "v/v1/skew", Text: "37%"}, Busiest: views.Text{Key: "v/v1/busiest", Text: "#2 · 90%"},
			Backpressure: views.Text{Key: "v/v1/bp", Text: "high"}, Lag: views.Text{Key: "v/v1/lag", Text: "10"},
			Lost:  views.Text{Key: "v/v1/lost", Text: "0"},
			Drift: views.Text{Key: "v/v1/drift", Text: "as predicted (inferred history)"}, Watermark: views.Text{Key: "v/v1/wm", Text: "–"}},
			{Name: "Window", URL: "/jobs/j1/vertices/v2", Parallelism: "2", MaxParallelism: "128", Kind: "keyed",
				Concern: views.Text{Key: "v/v2/concern", Text: "ok"}, Level: views.Meter{Key: "v/v2/level", Value: "0"},
				LagTime: views.Text{Key: "v/v2/lagtime", Text: "–"}, LagStep: views.Meter{Key: "v/v2/lagstep", Value: "0"},
				Skew: views.Text{Key: "v/v2/skew", Text: "–"}, Busiest: views.Text{Key: "v/v2/busiest", Text: "–"},
				Backpressure: views.Text{Key: "v/v2/bp", Text: "–"}, Lag: views.Text{Key: "v/v2/lag", Text: "–"},
				Lost: views.Text{Key: "v/v2/lost", Text: "–"}, Drift: views.Text{Key: "v/v2/drift"}, Watermark: views.Text{Key: "v/v2/wm", Text: "–"}}},
	}
	want.Shape = views.ShapeOf(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("newJobPage (-want +got):\n%s", diff)
	}

	tv := live.TopicView{Cluster: "prod", Name: "orders", Rate: 100, Age: okAge(1),
		Groups: []live.TopicGroup{{Name: "enrich", State: "Stable", States: []live.StateCount{{State: live.ReaderStalled, Count: 1}}},
			{Name: "audit", RecordsLost: 2200, States: []live.StateCount{{State: live.ReaderLost, Count: 1}, {State: live.ReaderOK, Count: 11}}}},
		Partitions: []live.TopicPartitionRow{{Partition: 0, Start: 0, End: 1000, Rate: 10, Groups: []live.GroupOffset{
			{Committed: 900, Lag: 100, LagSeconds: 12, LagKind: kafka.TimeLagAtLeast, Reading: live.Reading{State: live.ReaderStalled}},
			{Committed: 400, Lag: 600, LagSeconds: 30, LagKind: kafka.TimeLagInterpolated, Reading: live.Reading{State: live.ReaderLost,
				Lost: &live.Loss{Records: 2200, FirstSeen: pagesAt, LastSeen: pagesAt.Add(2 * time.Minute)}}},
		}}, {Partition: 1, Start: 0, End: 10, Rate: 0, Groups: []live.GroupOffset{
			{Committed: -1, Lag: -1, LagKind: kafka.TimeLagUnknown, Reading: live.Reading{State: live.ReaderUnknown}},
			{Committed: 10, Lag: 0, LagKind: kafka.TimeLagCaughtUp, Reading: live.Reading{State: live.ReaderCaughtUp}},
		}}}}
	tp := newTopicPage(pageLinks{}, tv)
	wantRows := []views.TopicTableRow{{Partition: "0", Start: views.Text{Key: "p/0/start", Text: "0"}, End: views.Text{Key: "p/0/end", Text: "1,000"},
		Produced: views.Text{Key: "p/0/rate", Text: "10/s"},
		Groups: []views.GroupLag{
			{Lag: views.Text{Key: "p/0/g/0/lag", Text: "100"}, LagTime: views.Text{Key: "p/0/g/0/time", Text: "≥ 12 s"}, Reader: views.Text{Key: "p/0/g/0/reader", Text: "stalled"}},
			{Lag: views.Text{Key: "p/0/g/1/lag", Text: "600"}, LagTime: views.Text{Key: "p/0/g/1/time", Text: "30 s"},
				Reader: views.Text{Key: "p/0/g/1/reader", Text: "lost · ≈ 2,200 deleted unread between 12:00:00 and 12:02:00 UTC"}, Lost: true}}},
		{Partition: "1", Start: views.Text{Key: "p/1/start", Text: "0"}, End: views.Text{Key: "p/1/end", Text: "10"},
			Produced: views.Text{Key: "p/1/rate", Text: "0.0/s"},
			Groups: []views.GroupLag{
				{Lag: views.Text{Key: "p/1/g/0/lag", Text: "–"}, LagTime: views.Text{Key: "p/1/g/0/time", Text: "–"}, Reader: views.Text{Key: "p/1/g/0/reader", Text: "–"}},
				{Lag: views.Text{Key: "p/1/g/1/lag", Text: "0"}, LagTime: views.Text{Key: "p/1/g/1/time", Text: "0 s"}, Reader: views.Text{Key: "p/1/g/1/reader", Text: "caught up"}}}}}
	if diff := cmp.Diff(wantRows, tp.Rows); diff != "" {
		t.Errorf("newTopicPage rows (-want +got):\n%s", diff)
	}
	wantGroups := []views.TopicGroupHead{
		{Name: "enrich", State: "Stable", Title: "Stable: the group's members have their partitions and consume",
			Readers: views.Text{Key: "g/0/readers", Text: "1 stalled"}, Lost: views.Text{Key: "g/0/lost"}},
		{Name: "audit", State: "–", Readers: views.Text{Key: "g/1/readers", Text: "1 lost · 11 ok"}, Lost: views.Text{Key: "g/1/lost", Text: "≈ 2,200 deleted unread"}, Lossy: true}}
	if diff := cmp.Diff(wantGroups, tp.Groups); diff != "" {
		t.Errorf("newTopicPage groups (-want +got):\n%s", diff)
	}
	if tp.Topic != topicTopic("prod", "orders") || tp.Produced.Text != "100/s" {
		t.Errorf("topic page topic %q, produced %q", tp.Topic, tp.Produced.Text)
	}
}

// TestNewVertexPageReaderStates: every reader state gives a cell its class
// and its title's words, and each time to catch up its text, in the cell's
// title and the subtask's column.
func TestNewVertexPageReaderStates(t *testing.T) {
	lost := &live.Loss{Records: 2200, FirstSeen: pagesAt.Add(41 * time.Minute), LastSeen: pagesAt.Add(43 * time.Minute)}
	for _, tc := range []struct {
		name      string
		reading   live.Reading
		wantClass string
		wantTitle string // after "orders-0 · predicted here · "
		wantRow   string // the subtask's catch-up column
	}{
		{"ok, catching up", live.Reading{State: live.ReaderOK, Trend: live.TrendShrinking, CatchUp: live.CatchUpETA, CatchUpSeconds: 200},
			"st-ok", "ok · catch up: ≈ 3 m 20 s · shrinking (estimated)", "≈ 3 m 20 s · shrinking"},
		{"caught up", live.Reading{State: live.ReaderCaughtUp, Trend: live.TrendSteady, CatchUp: live.CatchUpCaughtUp},
			"st-caught-up", "", "caught up"},
		{"lag growing", live.Reading{State: live.ReaderWarning, Trend: live.TrendGrowing, CatchUp: live.CatchUpNever},
			"st-warning", "lag growing · catch up: never at this rate · growing (estimated)", "never at this rate · growing"},
		{"keeping pace", live.Reading{State: live.ReaderOK, Trend: live.TrendSteady, CatchUp: live.CatchUpSteady},
			"st-ok", "", "keeps pace"},
		{"stalled", live.Reading{State: live.ReaderStalled, Trend: live.TrendGrowing, CatchUp: live.CatchUpNever},
			"st-stalled", "stalled · catch up: never at this rate · growing (estimated)", "never at this rate · growing"},
		{"stopped", live.Reading{State: live.ReaderStopped, Trend: live.TrendUnknown, CatchUp: live.CatchUpUnknown},
			"st-stopped", "stopped · catch up: – (estimated)", "–"},
		{"rewind", live.Reading{State: live.ReaderRewind, Trend: live.TrendUnknown, CatchUp: live.CatchUpUnknown},
			"st-rewind", "rewind · catch up: – (estimated)", "–"},
		{"unknown", live.Reading{State: live.ReaderUnknown, Trend: live.TrendUnknown, CatchUp: live.CatchUpUnknown},
			"st-unknown", "", "–"},
		{"lost", live.Reading{State: live.ReaderLost, Trend: live.TrendGrowing, CatchUp: live.CatchUpUnknown, Lost: lost},
			"st-lost", "lost · ≈ 2,200 records deleted unread between 12:41:00 and 12:43:00 UTC (observed) · catch up: not estimated while records are deleted unread", "–"},
		{"lost earlier, ok now", live.Reading{State: live.ReaderOK, Trend: live.TrendShrinking, CatchUp: live.CatchUpETA, CatchUpSeconds: 30, Lost: lost},
			"st-ok", "ok · ≈ 2,200 records deleted unread between 12:41:00 and 12:43:00 UTC (observed) · catch up: ≈ 30 s · shrinking (estimated)", "≈ 30 s · shrinking"},
		{"below the log start, not counted yet", live.Reading{State: live.ReaderLost, Trend: live.TrendUnknown, CatchUp: live.CatchUpUnknown, Lost: &live.Loss{Behind: 40}},
			"st-lost", "lost · 40 records below the log start now · catch up: not estimated while records are deleted unread", "–"},
	} {
		c := live.PartitionCell{Topic: "orders", Partition: 0, Label: "o0", Lag: 500, Predicted: 0, Reading: tc.reading}
		r := live.SubtaskRow{Subtask: 0, Lag: 500, RecordsOut: 10, Rate: 10, Busy: -1, Partitions: []live.PartitionCell{c},
			CatchUp: tc.reading.CatchUp, CatchUpSeconds: tc.reading.CatchUpSeconds, Trend: tc.reading.Trend}
		if tc.reading.Lost != nil {
			r.RecordsLost = tc.reading.Lost.Records
		}
		vv := live.VertexView{JobID: "j1", ID: "v1", Kafka: true, Source: true, Color: "lag", Topics: []string{"orders"}, Subtasks: []live.SubtaskRow{r}}
		row := newVertexPage(vertexPageInput{}, vv).Grid.Rows[0]
		cell := row.Cells[0]
		if cell.Live.State != tc.wantClass || cell.Live.Title != tc.wantTitle || cell.Title != "orders-0 · predicted here" {
			t.Errorf("%s: cell class %q, title %q; want %q, %q", tc.name, cell.Live.State, cell.Live.Title, tc.wantClass, tc.wantTitle)
		}
		if row.CatchUp.Text != tc.wantRow {
			t.Errorf("%s: catch-up column %q, want %q", tc.name, row.CatchUp.Text, tc.wantRow)
		}
		wantLost := tc.reading.Lost != nil && tc.reading.Lost.Records > 0
		if cell.Lost != wantLost || row.Lossy != wantLost || (row.Lost.Text != "") != wantLost {
			t.Errorf("%s: cell lost %v, row lossy %v, row lost %q; want lost marked %v", tc.name, cell.Lost, row.Lossy, row.Lost.Text, wantLost)
		}
	}
	// An idle subtask has nothing to catch up on.
	idle := newVertexPage(vertexPageInput{}, live.VertexView{Kafka: true, Color: "lag", Subtasks: []live.SubtaskRow{{Subtask: 0, Busy: -1, CatchUp: live.CatchUpUnknown}}})
	if got := idle.Grid.Rows[0].CatchUp.Text; got != "–" {
		t.Errorf("idle subtask catch up %q, want –", got)
	}
}

// An alert's link highlights a subtask: its row repeats the why panel's
// line about it, as copies that the panel's own update keeps current.
func TestHighlightedRowShowsItsWhy(t *testing.T) {
	line := live.WhyLine{Kind: live.WhyBehind, Subtasks: []int{1},
		Facts: []live.WhyFact{obs(live.FactProduced, 50), obs(live.FactUnknownRates, 0), obs(live.FactRead, 30), {Name: live.FactLagGrowth, Value: 20, Kind: live.Estimated}}}
	vv := live.VertexView{JobID: "j1", ID: "v1", Parallelism: 2, Kafka: true, Source: true, Topics: []string{"orders"}, Color: "lag", Flink: okAge(1),
		Subtasks: []live.SubtaskRow{
			{Subtask: 0, Lag: 1, Rate: -1, RecordsOut: -1, Busy: -1, Partitions: []live.PartitionCell{{Topic: "orders", Partition: 0, Lag: 1, Predicted: 0}}},
			{Subtask: 1, Lag: 900, Rate: -1, RecordsOut: -1, Busy: -1, Highlight: true, Partitions: []live.PartitionCell{{Topic: "orders", Partition: 1, Lag: 900, Predicted: 1}}},
		},
		Why: &live.WhyView{Lines: []live.WhyLine{line}}}
	p := newVertexPage(vertexPageInput{topic: "vertex:j1/v1"}, vv)
	want := []views.WhyCopy{
		{Kind: string(live.Observed), Text: views.Copy{Key: "why/0/0", Text: "Subtask 1 reads 30/s of the 50/s produced on its partitions."}},
		{Kind: string(live.Estimated), Text: views.Copy{Key: "why/0/1", Text: "So its lag grows by about 20/s."}},
	}
	if diff := cmp.Diff(want, p.Grid.Rows[1].Why); diff != "" {
		t.Errorf("highlighted row's why (-want +got):\n%s", diff)
	}
	if p.Grid.Rows[0].Why != nil {
		t.Errorf("a row that is not highlighted repeats %v", p.Grid.Rows[0].Why)
	}
	if emb := newVertexPage(vertexPageInput{links: pageLinks{embed: true}}, vv); emb.Grid.Rows[1].Why != nil {
		t.Errorf("an embedded page repeats the why under the row: %v", emb.Grid.Rows[1].Why)
	}
	// The page shows the copies under the row, and the update (which the
	// publisher builds without the highlight) carries their texts.
	doc, _ := renderComponent(t, views.Vertex(views.Layout{}, p))
	pub := vv
	pub.Subtasks = slices.Clone(vv.Subtasks)
	pub.Subtasks[1].Highlight = false
	checkUpdateMatchesPage(t, doc, updateOf(t, newVertexPage(vertexPageInput{topic: "vertex:j1/v1"}, pub)))
	if got := doc.Find(`[data-testid=subtask-row][data-subtask="1"] + [data-testid=row-why]`).Text(); !strings.Contains(got, "Subtask 1 reads 30/s") {
		t.Errorf("the row after subtask 1's is %q, want its why", got)
	}
}
