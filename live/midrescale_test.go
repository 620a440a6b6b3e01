package live

import (
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

// While an in-place rescale deploys its subtasks, the vertex already
// reports the new parallelism and the new readers' metric ids, but the
// lineage moves on only once every subtask runs. The page must not judge
// the new readers against the layout of the old parallelism: no drift, no
// exact headline, until the step is recorded.
func TestMidRescaleIsNotJudgedAgainstTheOldParallelism(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	cur := func(assign.TopicPartition) int64 { return 50 }
	s.UpdateFlink(flinkSnap(t0, job("aa", nil, sourceVertex("src", 4, testTopics, freshOwner(4), cur))))
	wantExact(t, mustVertex(t, s, "aa", "src"), ModeFresh, nil)

	o46 := restoreOwner(t, assign.RestoreInput{Topics: testTopics, History: []int{4, 6}, ConnectorLine: assign.ConnectorLine5})
	mid := sourceVertex("src", 6, testTopics, o46, cur)
	mid.Subtasks[5].Status = "DEPLOYING"
	s.UpdateFlink(flinkSnap(t0.Add(10*time.Second), job("aa", nil, mid)))
	vv := mustVertex(t, s, "aa", "src")
	pr := vv.Prediction
	if pr.Drift != 0 || pr.Headline.Kind == BasisExact {
		t.Errorf("mid-rescale 4 → 6: mode %s history %v drift %d headline %s %q; want no drift and no exact headline", pr.Mode, pr.History, pr.Drift, pr.Headline.Kind, says(pr))
	}
	for _, r := range vv.Subtasks {
		if r.Drift != 0 {
			t.Errorf("mid-rescale: subtask %d drift %d", r.Subtask, r.Drift)
		}
	}

	ck := &flink.RestoreInfo{CheckpointID: 12, At: t0.Add(15 * time.Second)}
	s.UpdateFlink(flinkSnap(t0.Add(20*time.Second), job("aa", ck, sourceVertex("src", 6, testTopics, o46, cur))))
	wantExact(t, mustVertex(t, s, "aa", "src"), ModeRestore, []int{4, 6})
}
