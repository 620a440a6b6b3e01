package live

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

// withoutEvaluations is st with every reader's evaluation dropped, so
// that its views read each partition's lag from the time tables.
func withoutEvaluations(st *State) *State {
	c := &State{picture: st.picture}
	c.srcStatus = make(map[vertexKey]sourceStatus, len(st.srcStatus))
	for k, ss := range st.srcStatus {
		parts := make(map[topicPart]readStatus, len(ss.parts))
		for tp, rs := range ss.parts {
			rs.eval = lagEval{}
			parts[tp] = rs
		}
		c.srcStatus[k] = sourceStatus{cluster: ss.cluster, parts: parts, byTopic: indexReads(parts)}
	}
	return c
}

// A source's lag in time, taken from the readers' evaluations, is what
// the time tables give, through idle stretches, positions that stand
// still, tables too short to hold the position (a lower bound, held up by
// the reader's anchor), Kafka polls between Flink polls, and a Flink poll
// that fails (the positions stay the last good poll's while the tables
// move on, and the evaluations no longer answer).
func TestReaderEvaluationsAnswerAsTheTables(t *testing.T) {
	now := t0
	s := New(Options{Now: func() time.Time { return now }, TimeTableSize: 4})
	topics := []assign.Topic{{Name: "orders", Partitions: 6}}
	end := []int64{1000, 1000, 1000, 1000, 1000, 1000}
	pos := []int64{990, 1000, 500, 10, 999, 700}
	flinkAt := func(at time.Time, err error) {
		v := sourceVertex("src", 3, topics, freshOwner(3), func(tp assign.TopicPartition) int64 { return pos[tp.Partition] - 1 })
		fs := flinkSnap(at, flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{v}})
		fs.Err = err
		s.UpdateFlink(fs)
	}
	kafkaAt := func(at time.Time) { s.UpdateKafka(kafkaSnap(at, map[string][]int64{"orders": end})) }
	// check compares the views and returns how many partitions the
	// evaluations answer for.
	check := func(step string) (answered int) {
		t.Helper()
		st := s.State()
		got, err := st.Vertex("aa", "src", VertexQuery{Highlight: -1})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		want, err := withoutEvaluations(st).Vertex("aa", "src", VertexQuery{Highlight: -1})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if !reflect.DeepEqual(got, want) {
			for i, r := range got.Subtasks {
				for k, c := range r.Partitions {
					w := want.Subtasks[i].Partitions[k]
					if !reflect.DeepEqual(c, w) {
						t.Errorf("%s: %s from the evaluation:\n%+v\nfrom the table:\n%+v", step, c.Label, c, w)
					}
				}
			}
			t.Fatalf("%s: the views differ", step)
		}
		for _, ss := range st.srcStatus {
			for tp, rs := range ss.parts {
				if ti := st.topicIdx["prod"][tp.topic]; ti != nil && rs.eval.gen == ti.gen {
					answered++
				}
			}
		}
		return answered
	}
	step := func(d time.Duration) { now = now.Add(d) }
	kafkaAt(now)
	flinkAt(now, nil)
	check("first polls")
	for i := range 12 {
		step(5 * time.Second)
		// Partitions 0–2 take records every poll, 3 and 4 every third
		// poll (idle between), 5 never.
		for p := range 3 {
			end[p] += 100
		}
		if i%3 == 0 {
			end[3] += 40
			end[4] += 40
		}
		kafkaAt(now)
		// After a good Flink poll, the Kafka poll evaluates every
		// reader again; after the failed one, none.
		want := len(end)
		if i == 8 {
			want = 0
		}
		if n := check(fmt.Sprintf("kafka poll %d", i)); n != want {
			t.Errorf("kafka poll %d: the evaluations answer for %d partitions, want %d", i, n, want)
		}
		step(time.Second)
		// Partition 0 keeps up, 1 stands still, 2 reads slowly, 3 not
		// at all (the table soon no longer holds its position).
		pos[0] = end[0]
		pos[2] += 30
		var err error
		if i == 7 {
			err = errors.New("flink: connection refused")
		}
		flinkAt(now, err)
		check(fmt.Sprintf("flink poll %d", i))
		step(2 * time.Second)
		check("later view")
	}
}
