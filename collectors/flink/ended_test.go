package flink

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// An ended job that shares its name with a running one (the run a restore
// replaced) is listed with the vertices of its job graph, read once and
// carried after; an ended job of another name is asked nothing, and one
// whose details fail is asked once.
func TestPollEndedJobVerticesReadOnce(t *testing.T) {
	const (
		replaced = "dddddddddddddddddddddddddddddddd"
		gone     = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
		other    = "ffffffffffffffffffffffffffffffff"
	)
	f := newFakeFlink(t, "2.2.1")
	srv := f.start()
	var o struct {
		Jobs []json.RawMessage `json:"jobs"`
	}
	if err := json.Unmarshal(f.recordedBody("jobs-overview"), &o); err != nil {
		t.Fatal(err)
	}
	extra := `{"jid":"%s","name":"%s","state":"FINISHED","start-time":1,"end-time":2,"duration":1,"last-modification":2,"tasks":{}}`
	o.Jobs = append(o.Jobs,
		json.RawMessage(fmt.Sprintf(extra, replaced, "skewscope-recording")),
		json.RawMessage(fmt.Sprintf(extra, gone, "skewscope-recording")),
		json.RawMessage(fmt.Sprintf(extra, other, "another-job")))
	list, _ := json.Marshal(o)
	f.setFault("/jobs/overview", func(w http.ResponseWriter, r *http.Request) { w.Write(list) })
	job := bytes.ReplaceAll(f.recordedBody("job"), []byte(f.jobID), []byte(replaced))
	job = bytes.Replace(job, []byte(`"RUNNING"`), []byte(`"FINISHED"`), 1)
	f.setFault("/jobs/"+replaced, func(w http.ResponseWriter, r *http.Request) { w.Write(job) })
	f.setFault("/jobs/"+gone, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"errors":["not found"]}`, http.StatusNotFound)
	})

	c := newTestCollector(t, Config{URL: srv.URL})
	var running JobSnapshot
	for poll := range 3 {
		s := c.PollOnce(context.Background())
		var ended *JobSnapshot
		for i := range s.Jobs {
			switch s.Jobs[i].ID {
			case f.jobID:
				running = s.Jobs[i]
			case replaced:
				ended = &s.Jobs[i]
			case gone, other:
				if len(s.Jobs[i].Vertices) != 0 {
					t.Errorf("poll %d: job %s has %d vertices, want none", poll, s.Jobs[i].ID, len(s.Jobs[i].Vertices))
				}
			}
		}
		if ended == nil || len(ended.Vertices) != len(running.Vertices) || len(ended.Vertices) == 0 {
			t.Fatalf("poll %d: ended job %+v, want the %d vertices of its job graph", poll, ended, len(running.Vertices))
		}
		for k, v := range ended.Vertices {
			r := running.Vertices[k]
			if v.ID != r.ID || v.Name != r.Name || v.Parallelism != r.Parallelism || v.Source != r.Source || v.Keyed != r.Keyed || v.Kafka != nil || len(v.Subtasks) != 0 {
				t.Errorf("poll %d: ended vertex %s %q p=%d source %v keyed %v, want %s %q p=%d source %v keyed %v and no figures",
					poll, v.ID, v.Name, v.Parallelism, v.Source, v.Keyed, r.ID, r.Name, r.Parallelism, r.Source, r.Keyed)
			}
		}
	}
	for id, want := range map[string]int{replaced: 1, gone: 1, other: 0} {
		if n := f.requests("/jobs/" + id); n != want {
			t.Errorf("details of ended job %s asked %d times in 3 polls, want %d", id, n, want)
		}
	}
}
