package live

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/internal/flinkreplay"
)

// TestRecordedLifecycleThroughTheStore replays what a real Flink (1.20.5,
// 2.2.1, 2.3.0) served while one job lived under one job id: a fresh start
// at 4, in-place rescales by the adaptive scheduler to 6 and to 3, and a
// failover, each seen by a first poll (Flink's REST can still serve the
// pre-restart metrics), a poll after Flink refreshed them and one after
// traffic. Through the real collector and the store, the vertex view must
// never place a partition away from the subtask the job's own records
// showed reading it, never count drift, follow the history [4] → [4,6] →
// [4,6,3], keep it through the failover, and say nothing untrue.
func TestRecordedLifecycleThroughTheStore(t *testing.T) {
	root := filepath.Join("..", "collectors", "testdata", "flink", "lifecycle")
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatalf("lifecycle recordings: %v", err)
	}
	n := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		n++
		t.Run(d.Name(), func(t *testing.T) {
			m, err := flinkreplay.Load(filepath.Join(root, d.Name()))
			if err != nil {
				t.Fatal(err)
			}
			replayLifecycle(t, m)
		})
	}
	if n < 3 {
		t.Errorf("%d lifecycle recordings, want 1.20, 2.2 and 2.3", n)
	}
}

func replayLifecycle(t *testing.T, m *flinkreplay.Manifest) {
	rs := &flinkreplay.Server{Errorf: t.Errorf}
	srv := httptest.NewServer(rs)
	t.Cleanup(srv.Close)
	c, err := flink.NewCollector(flink.Config{Name: "jm", URL: srv.URL, PollInterval: flink.MinPollInterval, RequestTimeout: 10 * time.Second},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	s := New(Options{})
	var wantEvents []string
	for i := range m.Steps {
		st := &m.Steps[i]
		rs.Set(st)
		snap := c.PollOnce(context.Background())
		s.UpdateFlink(snap)
		if len(snap.Jobs) != 1 {
			t.Fatalf("%s: %d jobs", st.Name, len(snap.Jobs))
		}
		j := snap.Jobs[0]
		var src *flink.VertexSnapshot
		for k := range j.Vertices {
			if j.Vertices[k].Kafka != nil {
				src = &j.Vertices[k]
			}
		}
		if src == nil {
			t.Fatalf("%s: no Kafka source vertex", st.Name)
		}
		vv, err := s.State().Vertex(j.ID, src.ID, VertexQuery{Highlight: -1})
		if err != nil {
			t.Fatal(err)
		}
		pr := vv.Prediction
		wantMode := ModeRestore
		if len(st.History) == 1 {
			wantMode = ModeFresh
		}
		hist := st.History
		if wantMode == ModeFresh {
			hist = nil
		}
		if pr.Mode != wantMode || !slices.Equal(pr.History, hist) || pr.Drift != 0 {
			t.Errorf("%s (%s): mode %s history %v drift %d (%s), want %s %v and no drift", st.Name, st.What, pr.Mode, pr.History, pr.Drift, says(pr), wantMode, st.History)
		}
		noFalseNote(t, pr)
		truth := map[assign.TopicPartition]int{}
		for topic, owners := range st.Owners {
			for p, o := range owners {
				truth[assign.TopicPartition{Topic: topic, Partition: int32(p)}] = o
			}
		}
		cells, undetermined := 0, 0
		for _, r := range vv.Subtasks {
			for _, c := range r.Partitions {
				cells++
				tp := assign.TopicPartition{Topic: c.Topic, Partition: c.Partition}
				want, ok := truth[tp]
				switch {
				case !ok:
					t.Errorf("%s: %v is shown but the job's records do not list it", st.Name, tp)
				case c.OwnerUndetermined:
					undetermined++
					// Listed under several subtasks: the reader is one of them.
					// Listed only in ids that predate the restart: any subtask
					// may read it, and the cell is where the model puts it.
					if (c.Candidates != nil && !slices.Contains(c.Candidates, want)) || c.Basis != BasisUncertain ||
						(c.Candidates == nil && r.Subtask != want) {
						t.Errorf("%s: %v undetermined on subtask %d with candidates %v (basis %s); its reader is %d", st.Name, tp, r.Subtask, c.Candidates, c.Basis, want)
					}
				case r.Subtask != want:
					t.Errorf("%s: %v shown on subtask %d as determined; the job's records show %d", st.Name, tp, r.Subtask, want)
				}
			}
		}
		// Every partition is shown once at every step: after a scale-down
		// Flink drops the removed subtasks' ids before the new readers
		// list theirs, and such a partition must not vanish.
		if cells != len(truth) {
			t.Errorf("%s: %d cells for %d partitions", st.Name, cells, len(truth))
		}
		settled := !strings.HasSuffix(st.Name, "-first-poll")
		if settled && (undetermined > 0 || cells != len(truth)) {
			t.Errorf("%s: %d of %d partitions shown, %d undetermined; after Flink's metric refresh every reader is known", st.Name, cells, len(truth), undetermined)
		}
		if settled && pr.Headline.Kind != BasisExact {
			t.Errorf("%s: headline %+v, want exact", st.Name, pr.Headline)
		}
		switch {
		case i == 0:
			wantEvents = []string{"start:0→" + strconv.Itoa(st.Parallelism)}
		case st.Parallelism != m.Steps[i-1].Parallelism:
			wantEvents = append(wantEvents, "rescale:"+strconv.Itoa(m.Steps[i-1].Parallelism)+"→"+strconv.Itoa(st.Parallelism))
		}
		want := strings.Join(wantEvents, " ")
		if st.Scenario == "failover" && st.Name != "failover-before" {
			want += " failover:" + strconv.Itoa(st.Parallelism) + "→" + strconv.Itoa(st.Parallelism)
		}
		if got := eventKinds(vv); settled && got != want {
			t.Errorf("%s: lineage %s, want %s", st.Name, got, want)
		}
	}
}
