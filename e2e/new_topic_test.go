//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	fcollect "github.com/skewscope/skewscope/collectors/flink"
)

// A brand-new topic read by a new job: the dashboard has read the broker's
// metadata before the topic exists, and polls the job from its first
// seconds, while Flink's metric ids name only the splits the readers have
// registered so far. No poll may call the layout exact unless it shows
// every partition of the topic under the subtask the data path says reads
// it, and once traffic flows every cell settles within settlePolls polls.

const (
	newTopicParts = 13
	newTopicP     = 3
	// newTopicPolls is how many polls are watched before any traffic.
	newTopicPolls = 6
)

func (e *lineEnv) testNewTopic(t *testing.T) {
	start := time.Now()
	d := newDashboard(t, e)
	d.pollOnce(t) // the metadata the dashboard holds has no such topic
	topic := assign.Topic{Name: "brand-new", Partitions: newTopicParts}
	out := assign.Topic{Name: "brand-new-out", Partitions: 1}
	e.kc.createTopics(t, topic, out)
	spec := jobSpec{Name: "skewscope-brand-new", Topics: []string{topic.Name}, Out: out.Name, Group: "skewscope-brand-new", SourceP: newTopicP, KeyedP: newTopicP}
	id := e.flink.submit(t, spec)
	defer func() {
		if err := e.flink.REST.cancel(id); err != nil {
			t.Errorf("cancel %s: %v", id, err)
		}
	}()
	// The plan names the source vertex as soon as the job is submitted;
	// the polls start then, while the readers are still being deployed.
	var src fcollect.Vertex
	deadline := time.Now().Add(60 * time.Second)
	for {
		j, err := e.flink.REST.job(id)
		if err == nil {
			if src, err = vertexNamed(j, "Source: Kafka Source"); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: no source vertex after 60 s: %v", id, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	d.waitVertex(t, id, src.ID)
	g := &growRun{e: e, d: d, jobID: id, srcID: src.ID, topic: topic.Name, grown: true}
	for i := range newTopicPolls {
		g.poll(t, fmt.Sprintf("new job, poll %d, no traffic", i+1))
		time.Sleep(fcollect.MinPollInterval)
	}
	if _, err := e.flink.REST.waitParallelism(id, newTopicP, 120*time.Second); err != nil {
		t.Fatal(err)
	}

	topics := []assign.Topic{topic}
	truth := e.kc.groundTruth(t, out.Name, "brand-new", topics, newTopicP, 120*time.Second)
	fresh, err := assign.FreshAssignment(topics, newTopicP)
	if err != nil {
		t.Fatal(err)
	}
	if !sameOwners(truth, ownerMap(fresh.Subtasks)) {
		t.Fatalf("new topic at p=%d: the data path shows%s\n  the fresh-start formula%s", newTopicP, layoutString(ownersLayout(truth, newTopicP)), layoutString(ownersLayout(ownerMap(fresh.Subtasks), newTopicP)))
	}
	stop := e.kc.flow(t, uniformFlow(topics, 1))
	n, last := g.settle(t, "traffic flowing", truth, settlePolls)
	stop()
	for _, p := range g.polls {
		if msg := exactButWrong(p, truth); msg != "" {
			t.Errorf("poll %d (%s): %s", p.n, p.what, msg)
		}
	}
	var jv struct {
		Vertices []struct {
			ID         string `json:"id"`
			Partitions int    `json:"partitions"`
		} `json:"vertices"`
	}
	d.getJSON(t, "/api/v1/jobs/"+id, &jv)
	for _, v := range jv.Vertices {
		if v.ID == src.ID && v.Partitions != newTopicParts {
			t.Errorf("job JSON: source partitions %d, want %d", v.Partitions, newTopicParts)
		}
	}
	if pr := last.vv.Prediction; pr == nil || pr.Headline.Kind != "exact" {
		t.Errorf("settled view: prediction %+v, want headline exact", pr)
	}
	t.Logf("Flink %s, new topic ×%d read by a new job at p=%d: settled %d polls into traffic; %d polls in all, took %s",
		e.flink.Version, newTopicParts, newTopicP, n, len(g.polls), time.Since(start).Round(time.Second))
}

// waitVertex polls until the dashboard answers for the vertex (Flink lists
// the job), at most 60 s.
func (d *dashboard) waitVertex(t *testing.T, jobID, vertexID string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		d.pollOnce(t)
		resp, err := d.hc.Get(d.srv.URL + "/api/v1/jobs/" + jobID + "/vertices/" + vertexID)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dashboard does not answer for vertex %s of job %s after 60 s: %s", vertexID, jobID, resp.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
