package web

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/live"
)

// In the middle of an in-place rescale 4 → 6 the layout is not modelled,
// and the old readers' frozen ids leave the moved partitions' readers
// undetermined: the page draws each of those cells outlined (class unc),
// as the note under the prediction says.
func TestUndeterminedCellsAreOutlinedWhenNotModelled(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	fresh4 := func(tp assign.TopicPartition) int { o, _ := assign.KafkaSplitOwner(tp, 4); return o }
	res, err := assign.Restore(assign.RestoreInput{Topics: liveTopics, History: []int{4, 6}, ConnectorLine: assign.ConnectorLine5})
	if err != nil || !res.Exact {
		t.Fatalf("restore 4→6: %v (exact %v)", err, res.Exact)
	}
	o46 := func(tp assign.TopicPartition) int { o, _ := res.Assignment.OwnerOf(tp); return o }
	snap := withheldJob(at.Add(20 * time.Second))
	v := &snap.Jobs[0].Vertices[0]
	v.Parallelism, v.Subtasks = 6, subtasks(6)
	v.Subtasks[5].Status = "DEPLOYING"
	v.Kafka = sourceObs(o46)
	moved := map[string]bool{}
	for i := range v.Kafka.States {
		s := &v.Kafka.States[i]
		s.Evidence = flink.EvidenceCurrent
		tp := assign.TopicPartition{Topic: strings.ReplaceAll(s.Topic, "_", "."), Partition: s.Partition}
		if fresh4(tp) != o46(tp) {
			s.Evidence = flink.EvidenceUnconfirmed
			moved[tp.Topic+"-"+strconv.Itoa(int(tp.Partition))] = true
			old := *s
			old.Subtask = fresh4(tp)
			v.Kafka.States = append(v.Kafka.States, old)
		}
	}
	st.UpdateFlink(snap)
	vv, err := st.State().Vertex(tJob, tSource, live.VertexQuery{Highlight: -1})
	if err != nil || vv.Prediction == nil || vv.Prediction.Mode != live.ModeNone {
		t.Fatalf("vertex %v, prediction %+v: want not modelled mid-rescale", err, vv.Prediction)
	}
	ts := restoredServer(t, st, at, "")
	doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource, 200)
	outlined := 0
	doc.Find("[data-testid=pcell]").Each(func(_ int, c *goquery.Selection) {
		name := c.AttrOr("data-topic", "") + "-" + c.AttrOr("data-partition", "")
		switch {
		case moved[name] && !c.HasClass("unc"):
			t.Errorf("%s: reader undetermined, drawn without the outline (title %q)", name, c.AttrOr("title", ""))
		case moved[name]:
			outlined++
		case c.HasClass("unc"):
			t.Errorf("%s: reader determined, drawn outlined", name)
		}
	})
	if outlined != len(moved) || len(moved) == 0 {
		t.Errorf("%d outlined cells, want the %d moved partitions", outlined, len(moved))
	}
	if notes := doc.Find("[data-testid=prediction]").Text(); !strings.Contains(notes, "outlined") {
		t.Errorf("prediction section %q does not say undetermined cells are outlined", notes)
	}
}
