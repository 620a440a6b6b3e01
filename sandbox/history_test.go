package sandbox

import (
	"net/http"
	"strings"
	"testing"

	"github.com/skewscope/skewscope/assign"
)

// TestFinishedJobsExpire: each restore finishes a job; like Flink's job
// store (jobstore.max-capacity) the sandbox keeps only the newest
// maxFinishedPerName finished jobs of each name, so repeated restores do not
// grow memory without bound. Older ones leave the REST job list and their
// /jobs/:id answers 404.
func TestFinishedJobsExpire(t *testing.T) {
	sb := startSandbox(t, Options{})
	const name = "clickstream-sessions"
	first := jobNamed(t, sb, name)
	otherJobs := len(sb.AllJobs()) - 1
	restores := maxFinishedPerName + 3
	var finished []string // ids in finishing order
	for i := range restores {
		cur := jobNamed(t, sb, name)
		finished = append(finished, cur.ID)
		if err := sb.Restore(name, 2+i%3); err != nil {
			t.Fatalf("Restore(%q) #%d error = %v", name, i+1, err)
		}
	}
	if finished[0] != first.ID {
		t.Fatalf("first finished job = %s, want %s", finished[0], first.ID)
	}
	all := sb.AllJobs()
	if got, want := len(all), otherJobs+1+maxFinishedPerName; got != want {
		t.Errorf("after %d restores len(AllJobs()) = %d, want %d (the other jobs, the running one and %d finished)", restores, got, want, maxFinishedPerName)
	}
	kept := map[string]bool{}
	for _, j := range all {
		kept[j.ID] = true
	}
	for i, id := range finished {
		if want := i >= restores-maxFinishedPerName; kept[id] != want {
			t.Errorf("finished job #%d (%s) kept = %v, want %v", i+1, id, kept[id], want)
		}
	}
	resp, err := http.Get(sb.FlinkURL() + "jobs/" + first.ID)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /jobs/%s (expired) = %d, want 404", first.ID, resp.StatusCode)
	}
	last := finished[len(finished)-1]
	resp, err = http.Get(sb.FlinkURL() + "jobs/" + last)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /jobs/%s (newest finished) = %d, want 200", last, resp.StatusCode)
	}
}

// TestRestoreRefusedBeforeStopping: the sandbox models a job's splits after
// at most assign.MaxRestoreHistory parallelisms, so the restore that would
// need more is refused with a message, and refused before anything stops:
// the job goes on running under its id.
func TestRestoreRefusedBeforeStopping(t *testing.T) {
	sb := startSandbox(t, Options{})
	const name = "clickstream-sessions"
	for i := range assign.MaxRestoreHistory {
		if err := sb.Restore(name, 2+i%3); err != nil {
			t.Fatalf("Restore(%q) #%d error = %v", name, i+1, err)
		}
	}
	before := jobNamed(t, sb, name)
	err := sb.Restore(name, 3)
	if err == nil || !strings.Contains(err.Error(), "history") {
		t.Fatalf("Restore(%q) #%d error = %v, want a refusal naming the history", name, assign.MaxRestoreHistory+1, err)
	}
	after := jobNamed(t, sb, name)
	if after.ID != before.ID || after.State != "RUNNING" {
		t.Errorf("after the refused restore the job is %s %s, want %s RUNNING", after.ID, after.State, before.ID)
	}
	if err := sb.Restore(name, 0); err == nil {
		t.Errorf("Restore(%q, 0) error = nil, want parallelism out of range", name)
	}
	if again := jobNamed(t, sb, name); again.ID != before.ID || again.State != "RUNNING" {
		t.Errorf("after Restore(0) the job is %s %s, want %s RUNNING", again.ID, again.State, before.ID)
	}
}
