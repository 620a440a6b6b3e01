package web

import (
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

// grownTopics are liveTopics after orders grew from 12 to 16 partitions.
var grownTopics = []assign.Topic{{Name: "orders", Partitions: 16}, {Name: "payments.v1", Partitions: 6}}

// sourceObsOf is sourceObs over topics.
func sourceObsOf(topics []assign.Topic, owner func(assign.TopicPartition) int) *flink.KafkaSourceObservation {
	var ids []string
	var vals []flink.Metric
	for _, tp := range assign.Partitions(topics) {
		o := owner(tp)
		base := fmt.Sprintf("%d.Source__Kafka_Source.KafkaSourceReader.topic.%s.partition.%d.", o, flink.SanitizeMetricName(tp.Topic), tp.Partition)
		ids = append(ids, base+"currentOffset", base+"committedOffset")
		vals = append(vals, flink.Metric{ID: base + "currentOffset", Raw: fmt.Sprint(1999 + 100*o)}, flink.Metric{ID: base + "committedOffset", Raw: "1500"})
	}
	obs := flink.ParseKafkaSourceMetricIDs(ids)
	obs.ApplyValues(vals)
	return obs
}

// guessedStore is liveStore after orders grew to 16 partitions at p = 4
// and the job was stopped with a savepoint and resubmitted at p = 6: the
// partitions discovered before the restore joined the saved split lists in
// an order skewscope cannot see, so every owner is the restore model's best
// guess. owner places the new job's partitions; nil puts each where the
// model's guess does.
func guessedStore(t *testing.T, at time.Time, owner func(tp assign.TopicPartition, guess int) int) *live.Store {
	t.Helper()
	st := liveStore(t, at)
	ks := &kafka.Snapshot{Cluster: "prod", CollectedAt: at.Add(20 * time.Second)}
	for _, tp := range grownTopics {
		topic := kafka.Topic{Name: tp.Name}
		for p := range tp.Partitions {
			topic.Partitions = append(topic.Partitions, kafka.Partition{Partition: int32(p), End: 3000 + int64(p)*100, Rate: 200, RateOK: true,
				Freshness: kafka.Freshness{UpdatedAt: ks.CollectedAt}})
		}
		ks.Topics = append(ks.Topics, topic)
	}
	st.UpdateKafka(ks)
	fresh4 := func(tp assign.TopicPartition) int { o, _ := assign.KafkaSplitOwner(tp, 4); return o }
	oldJob := func(state flink.JobState) flink.JobSnapshot {
		return flink.JobSnapshot{ID: tJob, Name: "orders <enrichment>", State: state, StartTime: at,
			Vertices: []flink.VertexSnapshot{{ID: tSource, Name: "Source: Kafka Source", Parallelism: 4, MaxParallelism: 128, Source: true,
				Kafka: sourceObsOf(grownTopics, fresh4), Subtasks: subtasks(4)}}}
	}
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at.Add(25 * time.Second), FlinkVersion: "2.2.1", Jobs: []flink.JobSnapshot{oldJob("RUNNING")}})
	restored := func(o func(assign.TopicPartition) int, collected time.Duration) {
		cur := flink.JobSnapshot{ID: tNewJob, Name: "orders <enrichment>", State: "RUNNING", StartTime: at.Add(40 * time.Second),
			Restored: &flink.RestoreInfo{CheckpointID: 7, IsSavepoint: true, ExternalPath: "s3://sp/savepoint-1"},
			Vertices: []flink.VertexSnapshot{{ID: tNewSource, Name: "Source: Kafka Source", Parallelism: 6, MaxParallelism: 128, Source: true,
				Kafka: sourceObsOf(grownTopics, o), Subtasks: subtasks(6)}}}
		st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at.Add(collected), FlinkVersion: "2.2.1", Jobs: []flink.JobSnapshot{cur, oldJob("FINISHED")}})
	}
	fresh6 := func(tp assign.TopicPartition) int { o, _ := assign.KafkaSplitOwner(tp, 6); return o }
	restored(fresh6, 45*time.Second)
	vv, err := st.State().Vertex(tNewJob, tNewSource, live.VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	guess := map[assign.TopicPartition]int{}
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			guess[assign.TopicPartition{Topic: c.Topic, Partition: c.Partition}] = c.Predicted
		}
	}
	if vv.Prediction == nil || len(guess) != 22 {
		t.Fatalf("restored source: prediction %+v over %d partitions, want 22 predicted", vv.Prediction, len(guess))
	}
	restored(func(tp assign.TopicPartition) int {
		if owner != nil {
			return owner(tp, guess[tp])
		}
		return guess[tp]
	}, 55*time.Second)
	return st
}

// rowMarks sums the rows' "vs prediction" marks by their words: "≈ 4 as
// guessed (uncertain)" adds 4 to "as guessed (uncertain)".
func rowMarks(t *testing.T, doc *goquery.Document) map[string]int {
	t.Helper()
	out := map[string]int{}
	doc.Find("[data-testid=row-vs]").Each(func(_ int, s *goquery.Selection) {
		mark, rest, _ := strings.Cut(strings.TrimSpace(s.Text()), " ")
		n, words, _ := strings.Cut(rest, " ")
		k, err := strconv.Atoi(n)
		if err != nil || mark == "✓" {
			t.Errorf("row mark %q: want a mark, a count and its words", s.Text())
			return
		}
		out[words] += k
	})
	return out
}

// After a restore that follows partition growth, every owner is the restore
// model's best guess. The headline, its counts, the Assignment figure and
// the rows judge each partition once: none of them says "as predicted" or
// "not determined" of what the others call guessed.
func TestRestoredVertexHeadlineCountsAreTheRowsMarks(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var moved assign.TopicPartition
	for _, tc := range []struct {
		name       string
		owner      func(tp assign.TopicPartition, guess int) int
		counts     string
		summary    string
		rows       map[string]int
		assignment string
	}{
		{
			name:       "every partition where the model guesses",
			counts:     "Cells: 22 as guessed (uncertain)",
			summary:    "22 of 22 partitions are where the restore model for 4→6 puts them, as its best guess: the model cannot place them exactly",
			rows:       map[string]int{"as guessed (uncertain)": 22},
			assignment: "22 / 22 partitions · uncertain · restore · 22 as guessed",
		},
		{
			name: "one partition elsewhere than the guess",
			owner: func(tp assign.TopicPartition, guess int) int {
				if tp == (assign.TopicPartition{Topic: "orders", Partition: 13}) {
					moved = tp
					return (guess + 1) % 6
				}
				return guess
			},
			counts:     "Cells: 21 as guessed (uncertain) · 1 not as guessed (uncertain)",
			summary:    "21 of 22 partitions are where the restore model for 4→6 puts them, as its best guess: the model cannot place them exactly; 1 elsewhere than its best guess (not counted as drift)",
			rows:       map[string]int{"as guessed (uncertain)": 21, "not as guessed (uncertain)": 1},
			assignment: "21 / 22 partitions · uncertain · restore · 21 as guessed · 1 not as guessed",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := guessedStore(t, at, tc.owner)
			ts := restoredServer(t, st, at, "")
			path := "/jobs/" + tNewJob + "/vertices/" + tNewSource
			doc := getDoc(t, ts.URL+path, http.StatusOK)
			if got := doc.Find("[data-testid=headline-counts]").Text(); got != tc.counts {
				t.Errorf("headline counts %q, want %q", got, tc.counts)
			}
			if got := doc.Find("[data-testid=prediction-summary]").Text(); got != tc.summary {
				t.Errorf("summary %q, want %q", got, tc.summary)
			}
			if got := doc.Find("[data-testid=headline-kind]").Text(); got != string(live.BasisUncertain) {
				t.Errorf("headline kind %q, want uncertain", got)
			}
			got := rowMarks(t, doc)
			// A row shows its weakest verdict: the row holding the moved
			// partition shows it alone.
			if tc.owner != nil {
				got["as guessed (uncertain)"] += countOnRowOf(t, st, moved) - 1
			}
			if !maps.Equal(got, tc.rows) {
				t.Errorf("rows' marks %v, want %v", got, tc.rows)
			}
			var figure string
			doc.Find("[data-testid=figure]").Each(func(_ int, s *goquery.Selection) {
				if s.Find(".flabel").Text() == "Assignment" {
					figure = s.Find(".fvalue").Text() + " · " + strings.TrimPrefix(s.Find(".fnote").Text(), "observed · ")
				}
			})
			if figure != tc.assignment {
				t.Errorf("Assignment figure %q, want %q", figure, tc.assignment)
			}

			// The JSON counts the same verdicts; the live update carries
			// the same words.
			vv, err := st.State().Vertex(tNewJob, tNewSource, live.VertexQuery{Highlight: -1})
			if err != nil {
				t.Fatal(err)
			}
			var sum live.Tally
			for _, r := range vv.Subtasks {
				rt := live.TallyOf(r.Partitions, r.Subtask)
				sum.Match, sum.Guessed, sum.NotGuessed = sum.Match+rt.Match, sum.Guessed+rt.Guessed, sum.NotGuessed+rt.NotGuessed
				sum.Undetermined, sum.Drift, sum.NotModelled = sum.Undetermined+rt.Undetermined, sum.Drift+rt.Drift, sum.NotModelled+rt.NotModelled
			}
			pr := vv.Prediction
			if pr.Headline.Verdicts != sum || pr.Matched != sum.Placed() || pr.Drift != 0 || pr.UncertainDiffer != sum.NotGuessed {
				t.Errorf("JSON headline verdicts %+v, matched %d, drift %d, uncertainDiffer %d; the rows' cells judge %+v",
					pr.Headline.Verdicts, pr.Matched, pr.Drift, pr.UncertainDiffer, sum)
			}
			u, err := views.UpdateOf(newVertexPage(vertexPageInput{links: pageLinks{}}, vv))
			if err != nil {
				t.Fatal(err)
			}
			texts := map[string]string{}
			for _, e := range u.T {
				texts[e.Key] = e.Value
			}
			if texts["pr/counts"] != tc.counts || texts["pr/summary"] != tc.summary {
				t.Errorf("live update counts %q, summary %q; the page %q, %q", texts["pr/counts"], texts["pr/summary"], tc.counts, tc.summary)
			}
		})
	}
}

// countOnRowOf counts the partitions on the row that shows tp.
func countOnRowOf(t *testing.T, st *live.Store, tp assign.TopicPartition) int {
	t.Helper()
	vv, err := st.State().Vertex(tNewJob, tNewSource, live.VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			if c.Topic == tp.Topic && c.Partition == tp.Partition {
				return len(r.Partitions)
			}
		}
	}
	t.Fatalf("%v is on no row", tp)
	return 0
}
