package live

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

// TestOnUnlistedNamesSourcesMissingPartitions: a running source whose
// metric ids name every partition the Kafka metadata has is not reported;
// after the topic grows in Kafka (and before Flink's ids list the new
// partitions) it is, on the Kafka update and on the next Flink update.
func TestOnUnlistedNamesSourcesMissingPartitions(t *testing.T) {
	var mu sync.Mutex
	var told []string
	s := New(Options{Now: func() time.Time { return t0 }, OnUnlisted: func(endpoint, job, vertex string) {
		mu.Lock()
		told = append(told, endpoint+"/"+job+"/"+vertex)
		mu.Unlock()
	}})
	got := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := told
		told = nil
		return out
	}
	s.UpdateKafka(kafkaSnap(t0, ends(1000)))
	job := func(topics []assign.Topic) flink.JobSnapshot {
		v := sourceVertex("src", 4, topics, freshOwner(4), func(assign.TopicPartition) int64 { return 10 })
		return flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{v}}
	}
	s.UpdateFlink(flinkSnap(t0, job(testTopics)))
	if g := got(); len(g) != 0 {
		t.Fatalf("every partition named: told %v, want nothing", g)
	}

	grown := ends(1000)
	grown["orders"] = append(grown["orders"], 1000, 1000) // orders now has 14
	s.UpdateKafka(kafkaSnap(t0.Add(time.Second), grown))
	if g := got(); !slices.Equal(g, []string{"jm/aa/src"}) {
		t.Errorf("after orders grew in Kafka: told %v, want [jm/aa/src]", g)
	}
	s.UpdateFlink(flinkSnap(t0.Add(2*time.Second), job(testTopics)))
	if g := got(); !slices.Equal(g, []string{"jm/aa/src"}) {
		t.Errorf("Flink still lists 12: told %v, want [jm/aa/src]", g)
	}
	s.UpdateFlink(flinkSnap(t0.Add(3*time.Second), job([]assign.Topic{{Name: "orders", Partitions: 14}, testTopics[1]})))
	if g := got(); len(g) != 0 {
		t.Errorf("Flink lists all 14: told %v, want nothing", g)
	}
}

// TestOnUnknownPartitionsNamesClustersMissingPartitions: when a source's
// metric ids name a partition the Kafka metadata does not have (the topic
// grew, or was created, after the metadata was read) the store names the
// cluster, on the Flink update and on the next Kafka update while the
// metadata still lacks it; once the metadata has it, nothing.
func TestOnUnknownPartitionsNamesClustersMissingPartitions(t *testing.T) {
	var mu sync.Mutex
	var told []string
	s := New(Options{Now: func() time.Time { return t0 }, OnUnknownPartitions: func(cluster string) {
		mu.Lock()
		told = append(told, cluster)
		mu.Unlock()
	}})
	got := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := told
		told = nil
		return out
	}
	job := func(topics []assign.Topic) flink.JobSnapshot {
		v := sourceVertex("src", 4, topics, freshOwner(4), func(assign.TopicPartition) int64 { return 10 })
		return flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{v}}
	}
	s.UpdateKafka(kafkaSnap(t0, ends(1000)))
	s.UpdateFlink(flinkSnap(t0, job(testTopics)))
	if g := got(); len(g) != 0 {
		t.Fatalf("the metadata has every partition named: told %v, want nothing", g)
	}
	grown := []assign.Topic{{Name: "orders", Partitions: 14}, testTopics[1]}
	s.UpdateFlink(flinkSnap(t0.Add(time.Second), job(grown)))
	if g := got(); !slices.Equal(g, []string{"prod"}) {
		t.Errorf("Flink names orders-12 and -13, the metadata 12: told %v, want [prod]", g)
	}
	s.UpdateKafka(kafkaSnap(t0.Add(2*time.Second), ends(1000)))
	if g := got(); !slices.Equal(g, []string{"prod"}) {
		t.Errorf("the metadata still lists 12: told %v, want [prod]", g)
	}
	more := ends(1000)
	more["orders"] = append(more["orders"], 1000, 1000)
	s.UpdateKafka(kafkaSnap(t0.Add(3*time.Second), more))
	s.UpdateFlink(flinkSnap(t0.Add(4*time.Second), job(grown)))
	if g := got(); len(g) != 0 {
		t.Errorf("the metadata lists all 14: told %v, want nothing", g)
	}
}
