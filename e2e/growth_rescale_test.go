//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/assign"
	fcollect "github.com/skewscope/skewscope/collectors/flink"
	kcollect "github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
)

// Partitions added to a topic, then an in-place rescale within 10 s of the
// growth (adaptive scheduler): a dashboard that follows the job from its
// fresh start polls it throughout. Whether the source discovered the new
// partitions before the checkpoint the rescale restores (so that the
// restore deals them out) or after it (the hash rule at the new
// parallelism) depends on Flink's timing; the data path says which, and
// the dashboard must never call a layout exact that lists fewer
// partitions than the source reads or puts one elsewhere than its reader.
// Once traffic flows every cell settles within settlePolls polls, and
// drift is 0 when the data path matches the restore model.

// growCase is one growth-then-rescale scenario: a job at 3 over a topic
// of 4 partitions, grown to 6, then rescaled in place to 2 after
// pollsBefore polls (one a second) at the old parallelism.
type growCase struct {
	name        string
	topic       string
	pollsBefore int
}

// growCases: a rescale a few seconds after the growth (the source has
// discovered the new partitions and, most likely, checkpointed them) and
// one right after it (most likely restored from a checkpoint without
// them). The two restore models differ on both topics.
var growCases = []growCase{
	{name: "after-discovery", topic: "grow-rescale", pollsBefore: 3},
	{name: "at-once", topic: "grow-rescale-now", pollsBefore: 0},
}

const (
	// growRSFrom, growRSTo are the parallelism of the fresh start and of
	// the in-place rescale after the growth; growRSFromParts and
	// growRSToParts the topic's partitions before and after it.
	growRSFrom      = 3
	growRSTo        = 2
	growRSFromParts = 4
	growRSToParts   = 6
)

const (
	// growRSWindow bounds the time from the growth to the rescale request.
	growRSWindow = 10 * time.Second
	// settlePolls is how many of the dashboard's polls, once traffic flows,
	// may pass before every cell is settled.
	settlePolls = 3
	// growRSPolls is how many polls are watched once traffic flows.
	growRSPolls = 4
)

// growPoll is one poll of the growth scenario: the vertex JSON, the
// partitions each collector's snapshot names and the HTML headline.
type growPoll struct {
	n        int
	what     string
	vv       live.VertexView
	flinkTPs map[assign.TopicPartition]bool // named by the Flink snapshot's metric ids
	kafkaTPs map[assign.TopicPartition]bool // listed by the Kafka snapshot's metadata
	htmlKind string
	// afterGrowth is set on the polls taken after the topic grew.
	afterGrowth bool
}

func (e *lineEnv) testGrowthRescale(t *testing.T) {
	start := time.Now()
	flink := startFlinkScheduler(t, e.line, e.kafka.Bootstrap, "adaptive")
	for _, c := range growCases {
		t.Run(c.name, func(t *testing.T) { e.runGrowthRescale(t, flink, c) })
	}
	t.Logf("Flink %s, growth then in-place rescale, %d cases (cluster start included) took %s", flink.Version, len(growCases), time.Since(start).Round(time.Second))
}

func (e *lineEnv) runGrowthRescale(t *testing.T, flink *flinkCluster, c growCase) {
	start := time.Now()
	d := newDashboardAt(t, e, flink.REST.base)
	beforeT := assign.Topic{Name: c.topic, Partitions: growRSFromParts}
	afterT := assign.Topic{Name: c.topic, Partitions: growRSToParts}
	out := assign.Topic{Name: c.topic + "-out", Partitions: 1}
	job := jobSpec{Name: "skewscope-" + c.topic, Topics: []string{c.topic}, Out: out.Name, Group: "skewscope-" + c.topic, SourceP: growRSFrom, KeyedP: growRSFrom}
	e.kc.createTopics(t, beforeT, out)
	from := job.SourceP
	id := flink.submit(t, job)
	defer func() {
		if err := flink.REST.cancel(id); err != nil {
			t.Errorf("cancel %s: %v", id, err)
		}
	}()
	j, err := flink.REST.waitParallelism(id, from, 120*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	src, err := vertexNamed(j, "Source: Kafka Source")
	if err != nil {
		t.Fatal(err)
	}
	g := &growRun{e: e, d: d, jobID: id, srcID: src.ID, topic: c.topic}

	// 1. The fresh start: the dashboard follows the job from here.
	before := []assign.Topic{beforeT}
	truth := e.kc.groundTruth(t, out.Name, "grs-fresh", before, from, 120*time.Second)
	fresh, err := assign.FreshAssignment(before, from)
	if err != nil {
		t.Fatal(err)
	}
	if !sameOwners(truth, ownerMap(fresh.Subtasks)) {
		t.Fatalf("fresh start at %d: the data path shows%s\n  the fresh-start formula%s", from, layoutString(ownersLayout(truth, from)), layoutString(ownersLayout(ownerMap(fresh.Subtasks), from)))
	}
	stop := e.kc.flow(t, uniformFlow(before, 1))
	n, _ := g.settle(t, "fresh start", truth, 30)
	stop()
	t.Logf("fresh start at %d settled on the dashboard after %d polls", from, n)

	// 2. A checkpoint at the current parallelism, then the growth, then
	// (within growRSWindow) the in-place rescale.
	last, err := flink.REST.latestCheckpoint(id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := flink.REST.waitCheckpointOf(id, lifeVertices*from, last, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	grown := []assign.Topic{afterT}
	e.kc.growTopic(t, afterT)
	grewAt := time.Now()
	g.grown = true
	// Polls at the old parallelism while the source discovers the
	// partitions (every 2 s), then the rescale.
	for i := 0; i < c.pollsBefore; i++ {
		time.Sleep(fcollect.MinPollInterval)
		g.poll(t, fmt.Sprintf("after the growth, before the rescale (%s after it)", time.Since(grewAt).Round(100*time.Millisecond)))
	}
	if err := flink.REST.rescale(id, growRSTo); err != nil {
		t.Fatalf("rescale %d → %d: %v", from, growRSTo, err)
	}
	if since := time.Since(grewAt); since > growRSWindow {
		t.Fatalf("the rescale was requested %s after the growth, not within %s: the scenario did not run", since.Round(100*time.Millisecond), growRSWindow)
	}
	t.Logf("grew %s %d → %d partitions, rescale %d → %d requested %s later", c.topic, growRSFromParts, growRSToParts, from, growRSTo, time.Since(grewAt).Round(100*time.Millisecond))
	rescaledFrom := len(g.polls)
	// Polls while the job restarts at the new parallelism, no traffic.
	for len(g.polls)-rescaledFrom < 3 {
		time.Sleep(fcollect.MinPollInterval)
		g.poll(t, "after the rescale request, no traffic")
	}
	if _, err := flink.REST.waitParallelism(id, growRSTo, 180*time.Second); err != nil {
		t.Fatalf("rescale %d → %d: %v", from, growRSTo, err)
	}
	time.Sleep(fcollect.MinPollInterval)
	g.poll(t, fmt.Sprintf("running at %d, no traffic", growRSTo))

	// 3. The data path at the new parallelism (written after every
	// partition is discoverable: each must come back).
	truth = e.kc.groundTruth(t, out.Name, "grs-rescaled", grown, growRSTo, 120*time.Second)
	modelA, err := assign.Restore(assign.RestoreInput{Topics: grown, History: []int{from, growRSTo}, ConnectorLine: e.line.ConnectorLine})
	if err != nil {
		t.Fatal(err)
	}
	modelB, err := assign.Restore(assign.RestoreInput{Topics: before, History: []int{from, growRSTo}, ConnectorLine: e.line.ConnectorLine, NewTopics: grown})
	if err != nil {
		t.Fatal(err)
	}
	matches := ""
	switch {
	case sameOwners(truth, ownerMap(modelA.Assignment.Subtasks)) && len(modelA.Uncertain) == 0:
		matches = "the restore model with the new partitions in the checkpoint (discovered at p=" + fmt.Sprint(from) + ")"
	case sameOwners(truth, ownerMap(modelB.Assignment.Subtasks)) && len(modelB.Uncertain) == 0:
		matches = "the restore model with the new partitions discovered after the restore (the hash rule at p=" + fmt.Sprint(growRSTo) + ")"
	}
	t.Logf("Flink %s, growth %d → %d then in-place rescale %d → %d (job %s)\n  data path:%s\n  model, discovered before the checkpoint:%s\n  model, discovered after the restore:%s\n  data path matches: %s",
		flink.Version, growRSFromParts, growRSToParts, from, growRSTo, id,
		layoutString(ownersLayout(truth, growRSTo)), layoutString(sortedLayout(modelA.Assignment.Subtasks, growRSTo)),
		layoutString(sortedLayout(modelB.Assignment.Subtasks, growRSTo)), cmpOr(matches, "neither"))
	if matches == "" {
		t.Errorf("MISMATCH: the data path after growth and rescale matches neither restore model")
	}

	// 4. Traffic flows: every cell settles within settlePolls polls.
	stop = e.kc.flow(t, uniformFlow(grown, 1))
	trafficFrom := len(g.polls)
	for i := 0; i < growRSPolls; i++ {
		time.Sleep(fcollect.MinPollInterval)
		g.poll(t, fmt.Sprintf("traffic flowing, poll %d", i+1))
	}
	stop()

	// Every poll: never exact with a partition missing or misplaced; no
	// drift after the rescale when the data path matches the model.
	for i, p := range g.polls {
		if p.vv.Parallelism != growRSTo {
			g.checkOldParallelism(t, p, from, grown)
			continue
		}
		if msg := exactButWrong(p, judged(truth, p)); msg != "" {
			t.Errorf("poll %d (%s): %s", p.n, p.what, msg)
		}
		if pr := p.vv.Prediction; matches != "" && pr != nil && pr.Drift != 0 {
			t.Errorf("poll %d (%s): drift %d although the data path matches %s: %q", p.n, p.what, pr.Drift, matches, fmt.Sprint(pr.Headline.Verdicts))
		}
		if i >= trafficFrom && i-trafficFrom+1 >= settlePolls {
			if why := unsettled(p.vv, truth); why != "" {
				t.Errorf("poll %d of the traffic (%s): not settled %d polls after traffic began: %s", i-trafficFrom+1, p.what, settlePolls, why)
			}
		}
	}
	lastPoll := g.polls[len(g.polls)-1]
	t.Logf("growth then rescale: %d polls; last: headline %s %q, mode %s history %v, drift %d, missing %d, unknown to Kafka %d\n  dashboard layout:%s",
		len(g.polls), lastPoll.vv.Prediction.Headline.Kind, fmt.Sprint(lastPoll.vv.Prediction.Headline.Verdicts), lastPoll.vv.Prediction.Mode, lastPoll.vv.Prediction.History,
		lastPoll.vv.Prediction.Drift, lastPoll.vv.Prediction.Missing, lastPoll.vv.Prediction.UnknownToKafka, layoutString(jsonLayout(lastPoll.vv, growRSTo)))
	t.Logf("Flink %s, growth then in-place rescale, case %s, took %s", flink.Version, c.name, time.Since(start).Round(time.Second))
}

// growRun is the dashboard's view of the growth scenario, poll by poll.
type growRun struct {
	e            *lineEnv
	d            *dashboard
	jobID, srcID string
	topic        string // the topic that grows
	grown        bool   // set once the topic has grown
	polls        []growPoll
}

// poll polls Flink, then Kafka, once and keeps the vertex JSON, what each
// snapshot names and the HTML page's headline kind.
func (g *growRun) poll(t *testing.T, what string) growPoll {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fs := g.d.fcol.PollOnce(ctx)
	ks := g.d.kcol.PollOnce(ctx)
	p := growPoll{n: len(g.polls) + 1, what: what, afterGrowth: g.grown, flinkTPs: flinkNamed(fs, g.jobID, g.srcID), kafkaTPs: kafkaListed(ks, g.topic)}
	g.d.getJSON(t, "/api/v1/jobs/"+g.jobID+"/vertices/"+g.srcID, &p.vv)
	p.htmlKind = g.d.headlineKind(t, g.jobID, g.srcID)
	if pr := p.vv.Prediction; pr != nil {
		t.Logf("poll %d (%s): parallelism %d, %d cells (%d undetermined), Flink names %d, Kafka lists %d; headline %s (page %q) %q; mode %s history %v drift %d missing %d unknownToKafka %d",
			p.n, what, p.vv.Parallelism, cellCount(p.vv), undeterminedCount(p.vv), len(p.flinkTPs), len(p.kafkaTPs), pr.Headline.Kind, p.htmlKind, fmt.Sprint(pr.Headline.Verdicts), pr.Mode, pr.History, pr.Drift, pr.Missing, pr.UnknownToKafka)
	} else {
		t.Logf("poll %d (%s): parallelism %d, %d cells, no prediction", p.n, what, p.vv.Parallelism, cellCount(p.vv))
	}
	if pr := p.vv.Prediction; pr != nil && (p.htmlKind == string(live.BasisExact)) != (pr.Headline.Kind == live.BasisExact) {
		t.Errorf("poll %d (%s): the page's headline says %q, the JSON's %q", p.n, what, p.htmlKind, pr.Headline.Kind)
	}
	g.polls = append(g.polls, p)
	return p
}

// settle polls until every cell sits under its reader in truth and the
// partition set is settled, at most max polls; it returns the polls taken
// and fails t when the view does not settle.
func (g *growRun) settle(t *testing.T, what string, truth map[assign.TopicPartition]int, max int) (int, growPoll) {
	t.Helper()
	var p growPoll
	for n := 1; n <= max; n++ {
		time.Sleep(fcollect.MinPollInterval)
		p = g.poll(t, what)
		if unsettled(p.vv, truth) == "" {
			return n, p
		}
	}
	t.Fatalf("%s: the dashboard did not settle in %d polls: %s", what, max, unsettled(p.vv, truth))
	return max, p
}

// checkOldParallelism judges a poll taken before the rescale took effect:
// the source reads the old partitions where the data path put them and
// the new ones, once discovered, by the hash rule at from (the
// partition-discovery check proves the rule); an exact headline must
// show every partition either side names, each under that owner.
func (g *growRun) checkOldParallelism(t *testing.T, p growPoll, from int, grown []assign.Topic) {
	t.Helper()
	pr := p.vv.Prediction
	if pr == nil || pr.Headline.Kind != live.BasisExact {
		return
	}
	a, err := assign.FreshAssignment(grown, from)
	if err != nil {
		t.Fatal(err)
	}
	owners := ownerMap(a.Subtasks)
	if msg := exactButWrong(p, judged(owners, p)); msg != "" {
		t.Errorf("poll %d (%s), at p=%d: %s", p.n, p.what, from, msg)
	}
}

// judged is what a poll is judged against: every partition of owners
// once the topic has grown (Kafka's metadata of a topic a running source
// reads is read on every poll, so a poll after the growth knows of the new
// partitions even before Flink names them), knownOwners before.
func judged(owners map[assign.TopicPartition]int, p growPoll) map[assign.TopicPartition]int {
	if p.afterGrowth {
		return owners
	}
	return knownOwners(owners, p)
}

// knownOwners keeps the partitions of owners that the poll's Flink or
// Kafka snapshot names. A partition neither names is not read yet by the
// data path either (Flink registers a split's metrics when it assigns the
// split), and no dashboard can show it.
func knownOwners(owners map[assign.TopicPartition]int, p growPoll) map[assign.TopicPartition]int {
	out := map[assign.TopicPartition]int{}
	for tp, o := range owners {
		if p.flinkTPs[tp] || p.kafkaTPs[tp] {
			out[tp] = o
		}
	}
	return out
}

// exactButWrong says how a poll whose headline is exact contradicts the
// owners (every partition the source reads, by its reader): a partition
// not shown, shown twice, undetermined or under another subtask, or a
// partition set the view itself calls unsettled. "" when the headline is
// not exact or nothing contradicts it.
func exactButWrong(p growPoll, owners map[assign.TopicPartition]int) string {
	pr := p.vv.Prediction
	if pr == nil || pr.Headline.Kind != live.BasisExact {
		return ""
	}
	var bad []string
	if pr.Missing != 0 || pr.UnknownToKafka != 0 {
		bad = append(bad, fmt.Sprintf("missing %d, unknown to Kafka %d", pr.Missing, pr.UnknownToKafka))
	}
	bad = append(bad, cellProblems(p.vv, owners)...)
	if len(bad) == 0 {
		return ""
	}
	return fmt.Sprintf("headline exact (%q) while %s", fmt.Sprint(pr.Headline.Verdicts), strings.Join(bad, "; "))
}

// unsettled says what keeps a view from settled: a cell not under its
// reader, undetermined, a partition missing or shown twice, an unsettled
// partition set, drift. "" when settled.
func unsettled(vv live.VertexView, owners map[assign.TopicPartition]int) string {
	bad := cellProblems(vv, owners)
	if undeterminedCount(vv) > 0 {
		bad = append(bad, fmt.Sprintf("%d cells undetermined", undeterminedCount(vv)))
	}
	switch pr := vv.Prediction; {
	case pr == nil:
		bad = append(bad, "no prediction")
	case pr.Missing != 0 || pr.UnknownToKafka != 0 || pr.Drift != 0:
		bad = append(bad, fmt.Sprintf("missing %d, unknown to Kafka %d, drift %d (%q)", pr.Missing, pr.UnknownToKafka, pr.Drift, fmt.Sprint(pr.Headline.Verdicts)))
	}
	return strings.Join(bad, "; ")
}

// cellProblems lists the partitions of owners that the view does not show
// exactly once under their reader, and cells of partitions not in owners.
func cellProblems(vv live.VertexView, owners map[assign.TopicPartition]int) []string {
	seen := map[assign.TopicPartition]int{}
	var bad []string
	for _, row := range vv.Subtasks {
		for _, c := range row.Partitions {
			tp := assign.TopicPartition{Topic: c.Topic, Partition: c.Partition}
			seen[tp]++
			o, ok := owners[tp]
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("%s shown under %d is not read by the source", tp.SplitID(), row.Subtask))
			case c.OwnerUndetermined:
			case row.Subtask != o:
				bad = append(bad, fmt.Sprintf("%s shown under %d, read by %d", tp.SplitID(), row.Subtask, o))
			}
		}
	}
	var missing []string
	for tp := range owners {
		if seen[tp] != 1 {
			missing = append(missing, fmt.Sprintf("%s shown %d times", tp.SplitID(), seen[tp]))
		}
	}
	slices.Sort(missing)
	return append(bad, missing...)
}

func cellCount(vv live.VertexView) int {
	n := 0
	for _, r := range vv.Subtasks {
		n += len(r.Partitions)
	}
	return n
}

func undeterminedCount(vv live.VertexView) int {
	n := 0
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			if c.OwnerUndetermined {
				n++
			}
		}
	}
	return n
}

// flinkNamed is the set of partitions the source's metric ids name in a
// Flink snapshot.
func flinkNamed(fs *fcollect.Snapshot, jobID, vertexID string) map[assign.TopicPartition]bool {
	out := map[assign.TopicPartition]bool{}
	for _, j := range fs.Jobs {
		for _, v := range j.Vertices {
			if j.ID != jobID || v.ID != vertexID || v.Kafka == nil {
				continue
			}
			for _, st := range v.Kafka.States {
				out[assign.TopicPartition{Topic: st.Topic, Partition: st.Partition}] = true
			}
		}
	}
	return out
}

// kafkaListed is the set of topic's partitions a Kafka snapshot lists.
func kafkaListed(ks *kcollect.Snapshot, topic string) map[assign.TopicPartition]bool {
	out := map[assign.TopicPartition]bool{}
	for _, tp := range ks.Topics {
		if tp.Name != topic {
			continue
		}
		for _, p := range tp.Partitions {
			out[assign.TopicPartition{Topic: tp.Name, Partition: p.Partition}] = true
		}
	}
	return out
}

// headlineKind is the vertex page's headline kind (data-testid
// headline-kind), "" when the page has none.
func (d *dashboard) headlineKind(t *testing.T, jobID, vertexID string) string {
	t.Helper()
	resp, err := d.hc.Get(d.srv.URL + "/jobs/" + jobID + "/vertices/" + vertexID)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ToLower(strings.TrimSpace(doc.Find(`[data-testid="headline-kind"]`).First().Text()))
}

// uniformFlow is n records per tick for every partition of topics.
func uniformFlow(topics []assign.Topic, n int) map[assign.TopicPartition]int {
	out := map[assign.TopicPartition]int{}
	for _, tp := range assign.Partitions(topics) {
		out[tp] = n
	}
	return out
}

// flow writes perTick[tp] records to each partition every 200 ms until
// stopped, keyed "flow-<topic>-<partition>-<n>-<i>" and tagged "-" (no
// output reader counts them). After a topic grew, the client's metadata
// may lag the partition count: it is refreshed and the tick retried.
func (k *kafkaClient) flow(t *testing.T, perTick map[assign.TopicPartition]int) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var ferr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			var recs []*kgo.Record
			for tp, m := range perTick {
				for i := range m {
					recs = append(recs, &kgo.Record{Topic: tp.Topic, Partition: tp.Partition,
						Key: []byte(fmt.Sprintf("flow-%s-%d-%d-%d", tp.Topic, tp.Partition, n, i)), Value: []byte("-")})
				}
			}
			err := k.cl.ProduceSync(ctx, recs...).FirstErr()
			switch {
			case ctx.Err() != nil:
				return
			case err != nil && strings.Contains(err.Error(), "invalid record partitioning choice"):
				k.cl.ForceMetadataRefresh()
			case err != nil:
				ferr = err
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
		if ferr != nil {
			t.Errorf("producing traffic: %v", ferr)
		}
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
