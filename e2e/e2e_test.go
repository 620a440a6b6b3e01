//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/live"
)

// lineEnv is one Flink line's broker, cluster and Kafka client.
type lineEnv struct {
	line  flinkLine
	kafka *kafkaBroker
	kc    *kafkaClient
	flink *flinkCluster
	dash  *dashboard // skewscope's own store, collectors and pages (dashboard_test.go)
}

// TestFlinkGroundTruth runs every check against each Flink line in turn:
// a fresh broker and MiniCluster per line.
func TestFlinkGroundTruth(t *testing.T) {
	buildJob(t)
	for _, line := range selectedLines(t) {
		t.Run("flink-"+line.Name, func(t *testing.T) {
			start := time.Now()
			env := &lineEnv{line: line}
			env.kafka = startKafka(t)
			env.kc = newKafkaClient(t, env.kafka.Bootstrap)
			env.flink = startFlink(t, line, env.kafka.Bootstrap)
			env.dash = newDashboard(t, env)
			t.Run("fresh-source-assignment", env.testFresh)
			t.Run("keyed-routing", env.testRouting)
			t.Run("partition-discovery", env.testDiscovery)
			t.Run("restore-rescale", env.testRestore)
			t.Run("lifecycle", env.testLifecycle)
			t.Run("growth-rescale", env.testGrowthRescale)
			t.Run("new-topic", env.testNewTopic)
			t.Run("why-target", env.testWhyTarget)
			t.Run("eventtime", env.testEventTime)
			t.Run("sql", env.testSQL)
			t.Logf("Flink %s: broker and cluster start plus all checks took %s", env.flink.Version, time.Since(start).Round(time.Second))
		})
	}
}

// ---------------------------------------------------------------------------
// Fresh-start source assignment.

type freshCase struct {
	topics []assign.Topic
	p      int
}

func freshCases() []freshCase {
	t12 := []assign.Topic{{Name: "t12", Partitions: 12}}
	four := []assign.Topic{{Name: "orders", Partitions: 3}, {Name: "payments", Partitions: 3}, {Name: "clicks", Partitions: 3}, {Name: "user-events", Partitions: 3}}
	return []freshCase{
		{t12, 1}, {t12, 4}, {t12, 5}, {t12, 8}, {t12, 16},
		{four, 8},
		{[]assign.Topic{{Name: "t7", Partitions: 7}}, 3},
	}
}

func topicNames(ts []assign.Topic) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

func topicsString(ts []assign.Topic) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s×%d", t.Name, t.Partitions)
	}
	return strings.Join(parts, ", ")
}

func (e *lineEnv) testFresh(t *testing.T) {
	created := map[string]bool{}
	e.kc.createTopics(t, assign.Topic{Name: "fresh-out", Partitions: 1})
	for i, c := range freshCases() {
		t.Run(fmt.Sprintf("%s/p%d", strings.Join(topicNames(c.topics), "+"), c.p), func(t *testing.T) {
			for _, tp := range c.topics {
				if !created[tp.Name] {
					e.kc.createTopics(t, tp)
					created[tp.Name] = true
				}
			}
			spec := jobSpec{Name: fmt.Sprintf("fresh-%d", i), Topics: topicNames(c.topics), Out: "fresh-out",
				Group: fmt.Sprintf("fresh-%d", i), SourceP: c.p, KeyedP: c.p}
			id := e.flink.submit(t, spec)
			defer func() {
				if err := e.flink.REST.cancel(id); err != nil {
					t.Errorf("cancel %s: %v", id, err)
				}
			}()
			e.kc.pokePartitions(t, fmt.Sprint(i), c.topics...)
			pred, err := assign.FreshAssignment(c.topics, c.p)
			if err != nil {
				t.Fatal(err)
			}
			predicted := sortedLayout(pred.Subtasks, c.p)
			obs, err := e.flink.REST.observeSource(id, c.topics, c.p, true, 90*time.Second)
			t.Logf("Flink %s, fresh start, topics %s, source parallelism %d (job %s)\n  predicted (assign.FreshAssignment):%s\n  observed (REST currentOffset metric ids, %d ids on the vertex, operator %q):%s",
				e.flink.Version, topicsString(c.topics), c.p, id, layoutString(predicted), obs.IDCount, obs.Operator, layoutString(obs.Subtasks))
			if err != nil {
				t.Fatalf("observe: %v", err)
			}
			if i == 0 {
				t.Logf("sample ids: %q", obs.Sample)
			}
			if !sameLayout(predicted, obs.Subtasks) {
				t.Errorf("MISMATCH: observed fresh-start assignment differs from assign.FreshAssignment")
			} else {
				t.Logf("MATCH")
			}
			e.dash.check(t, dashWant{jobID: id, vertex: obs.Vertex, group: spec.Group, topics: c.topics, p: c.p,
				observed: obs.Subtasks, predicted: predicted, mode: "fresh"})
		})
	}
}

// ---------------------------------------------------------------------------
// Partitions added while the job runs.

func (e *lineEnv) testDiscovery(t *testing.T) {
	before := []assign.Topic{{Name: "grow", Partitions: 4}}
	after := []assign.Topic{{Name: "grow", Partitions: 10}}
	const p = 3
	e.kc.createTopics(t, before...)
	e.kc.createTopics(t, assign.Topic{Name: "grow-out", Partitions: 1})
	id := e.flink.submit(t, jobSpec{Name: "discovery", Topics: topicNames(before), Out: "grow-out", Group: "discovery", SourceP: p, KeyedP: p})
	defer func() {
		if err := e.flink.REST.cancel(id); err != nil {
			t.Errorf("cancel %s: %v", id, err)
		}
	}()
	e.kc.pokePartitions(t, "1", before...)
	for _, step := range []struct {
		what   string
		topics []assign.Topic
	}{{"at start", before}, {"after growing the topic while the job runs (discovery every 2 s)", after}} {
		if step.topics[0].Partitions != before[0].Partitions {
			e.kc.growTopic(t, step.topics[0])
			e.kc.pokePartitions(t, "2", step.topics...)
		}
		pred, err := assign.FreshAssignment(step.topics, p)
		if err != nil {
			t.Fatal(err)
		}
		predicted := sortedLayout(pred.Subtasks, p)
		obs, err := e.flink.REST.observeSource(id, step.topics, p, true, 90*time.Second)
		t.Logf("Flink %s, partition discovery %s: %s at source parallelism %d (job %s)\n  predicted (assign.KafkaSplitOwner per partition):%s\n  observed:%s",
			e.flink.Version, step.what, topicsString(step.topics), p, id, layoutString(predicted), layoutString(obs.Subtasks))
		if err != nil {
			t.Fatalf("observe: %v", err)
		}
		if !sameLayout(predicted, obs.Subtasks) {
			t.Errorf("MISMATCH %s", step.what)
		} else {
			t.Logf("MATCH")
		}
	}
}

// ---------------------------------------------------------------------------
// Keyed routing.

// routingKeys returns at least n distinct valid-UTF-8 keys: ASCII, Latin-1
// (Java's compact-string path), other BMP scripts, supplementary characters
// (emoji, surrogate pairs in Java), ZWJ sequences, flags, combining marks,
// control characters, the empty string and long keys.
func routingKeys(n int) []string {
	seen := map[string]bool{}
	var keys []string
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, k := range []string{"", " ", "\x00", "\t\n", "a", "A", "Aa", "BB", "polygenelubricants", "\uffff", "\u00ff", "\u0100",
		strings.Repeat("x", 2000), strings.Repeat("é", 1000), strings.Repeat("🔑", 500)} {
		add(k)
	}
	patterns := []string{
		"user-%d", "%d", "order:%06d", "Schlüssel-%d", "ключ-%d", "键%d", "مفتاح-%d", "מפתח-%d", "κλειδί %d",
		"ÿ%dß", "🔑%d", "%d😀😀", "👩‍💻-%d", "🇩🇪🇫🇷%d", "𝄞%d", "e\u0301%d", "%d\u200b", "カギ%d", "🧪%d🚀",
	}
	for i := 0; len(keys) < n; i++ {
		add(fmt.Sprintf(patterns[i%len(patterns)], i))
	}
	return keys
}

type routingCase struct {
	name    string
	keyedP  int
	maxP    int // 0: default
	sourceP int
}

func (e *lineEnv) testRouting(t *testing.T) {
	in := assign.Topic{Name: "keys-in", Partitions: 6}
	keys := routingKeys(12_000)
	e.kc.createTopics(t, in)
	e.kc.produceKeys(t, in, keys, "k")
	cases := []routingCase{
		{name: "default-maxP", keyedP: 3, sourceP: 2},
		{name: "explicit-maxP", keyedP: 7, maxP: 100, sourceP: 2},
	}
	// Both jobs run at once (3 + 7 slots of 16): they read the same input
	// with their own group ids and write their own output topics.
	ids := make([]string, len(cases))
	for i, c := range cases {
		out := assign.Topic{Name: "keys-out-" + c.name, Partitions: 3}
		e.kc.createTopics(t, out)
		ids[i] = e.flink.submit(t, jobSpec{Name: "routing-" + c.name, Topics: []string{in.Name}, Out: out.Name,
			Group: "routing-" + c.name, SourceP: c.sourceP, KeyedP: c.keyedP, MaxP: c.maxP})
	}
	defer func() {
		for _, id := range ids {
			if err := e.flink.REST.cancel(id); err != nil {
				t.Errorf("cancel %s: %v", id, err)
			}
		}
	}()
	observed := make([][]int, len(cases))
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			observed[i] = e.checkRouting(t, ids[i], "keys-out-"+c.name, keys, "k", c.keyedP, c.maxP, 1)
		})
	}
	// A key sample of the input predicts what each keyed subtask received:
	// exactly from the whole topic, within its stated bound from 10 %.
	for i, c := range cases {
		if observed[i] != nil {
			t.Run(c.name+"/key-sample", func(t *testing.T) { e.checkKeySample(t, in, len(keys), observed[i], c.keyedP, c.maxP) })
		}
	}
	// Key bytes that are not valid UTF-8: the job decodes them with
	// new String(bytes, UTF_8), which replaces malformed input with U+FFFD;
	// assign.StringHashCode documents the same replacement.
	bad := invalidUTF8Keys()
	e.kc.produceKeys(t, in, bad, "x")
	for i, c := range cases {
		t.Run(c.name+"/invalid-utf8", func(t *testing.T) {
			e.checkRouting(t, ids[i], "keys-out-"+c.name, bad, "x", c.keyedP, c.maxP, 0)
		})
	}
}

// invalidUTF8Keys are byte strings a producer may send as keys that are
// not valid UTF-8: stray continuation and invalid lead bytes, truncated
// sequences (alone and followed by ASCII), UTF-8-encoded surrogates,
// overlong forms and code points above U+10FFFF.
func invalidUTF8Keys() []string {
	return []string{
		"\xff", "\xfe", "a\xffb", "ok\x80", "\x80\x80",
		"\xe2\x82", "\xe2\x82A", "x\xe2\x82", "\xf0\x9f\x98", "\xf0\x9f\x98!", "\xf0\x9f", "\xc3",
		"\xed\xa0\x80", "\xed\xbf\xbf\xed\xa0\x80",
		"\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xf0\x80\x80\x80",
		"\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xf8\x88\x80\x80\x80",
	}
}

// checkRouting reads the job's output until every key tagged tagPrefix<i>
// has been routed, and compares each (key, subtask) with
// OperatorIndex(M, p, KeyGroupForHash(StringHashCode(key), M)), the Java
// hashCode the job saw with StringHashCode, and M and p with what the keyed
// subtask and REST report. With wantCount > 0 it also checks the per-key
// state count (2 after a restore proves the state moved with the key).
func (e *lineEnv) checkRouting(t *testing.T, jobID, out string, keys []string, tagPrefix string, p, maxP int, wantCount int64) []int {
	t.Helper()
	m := maxP
	mDesc := fmt.Sprintf("explicit %d", maxP)
	if m == 0 {
		var err error
		if m, err = assign.DefaultMaxParallelism(p); err != nil {
			t.Fatal(err)
		}
		mDesc = fmt.Sprintf("default, assign.DefaultMaxParallelism(%d) = %d", p, m)
	}
	d, err := e.flink.REST.job(jobID)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := vertexNamed(d, "Key Router")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]*route, len(keys))
	remaining := len(keys)
	var bad []string
	err = e.kc.readRoutes(t, out, 180*time.Second, func(r route) bool {
		tag, ok := strings.CutPrefix(r.Tag, tagPrefix)
		if !ok {
			return false
		}
		var i int
		if _, err := fmt.Sscanf(tag, "%d", &i); err != nil || i < 0 || i >= len(keys) {
			bad = append(bad, fmt.Sprintf("unknown tag %q", r.Tag))
			return false
		}
		if got[i] == nil {
			remaining--
		} else if got[i].Subtask != r.Subtask {
			bad = append(bad, fmt.Sprintf("key %q routed to subtasks %d and %d", keys[i], got[i].Subtask, r.Subtask))
		}
		rc := r
		got[i] = &rc
		return remaining == 0
	})
	if err != nil {
		t.Fatalf("%v: %d of %d keys routed", err, len(keys)-remaining, len(keys))
	}
	predCount := make([]int, p)
	obsCount := make([]int, p)
	var mism, hashMism, cfgMism, countMism []string
	for i, key := range keys {
		r := got[i]
		h := assign.StringHashCode(key)
		kg := assign.KeyGroupForHash(h, m)
		want := assign.OperatorIndex(m, p, kg)
		predCount[want]++
		if r.Subtask >= 0 && r.Subtask < p {
			obsCount[r.Subtask]++
		}
		if r.Hash != h {
			hashMism = append(hashMism, fmt.Sprintf("%+q: Java hashCode %d, assign.StringHashCode %d", key, r.Hash, h))
		}
		if r.Subtask != want {
			mism = append(mism, fmt.Sprintf("%+q: hash %d, key group %d, predicted subtask %d, observed %d", key, h, kg, want, r.Subtask))
		}
		if r.Parallelism != p || r.MaxP != m {
			cfgMism = append(cfgMism, fmt.Sprintf("%+q: job reports parallelism %d max %d", key, r.Parallelism, r.MaxP))
		}
		if wantCount > 0 && r.Count != wantCount {
			countMism = append(countMism, fmt.Sprintf("%+q: state count %d on subtask %d", key, r.Count, r.Subtask))
		}
	}
	nonASCII, supplementary := 0, 0
	for _, k := range keys {
		for _, c := range k {
			if c >= 0x80 {
				nonASCII++
				break
			}
		}
		for _, c := range k {
			if c >= 0x10000 {
				supplementary++
				break
			}
		}
	}
	t.Logf("Flink %s, keyed routing (job %s): %d distinct keys (%d non-ASCII, %d with supplementary characters such as emoji), keyed parallelism %d, maxParallelism %s; REST vertex %q parallelism %d maxParallelism %d\n  predicted keys per subtask: %v\n  observed keys per subtask:  %v\n  subtask mismatches: %d, hashCode mismatches: %d",
		e.flink.Version, jobID, len(keys), nonASCII, supplementary, p, mDesc, kv.Name, kv.Parallelism, kv.MaxParallelism, predCount, obsCount, len(mism), len(hashMism))
	if kv.Parallelism != p || kv.MaxParallelism != m {
		t.Errorf("REST vertex parallelism %d maxParallelism %d, want %d and %d", kv.Parallelism, kv.MaxParallelism, p, m)
	}
	for _, group := range []struct {
		what string
		l    []string
	}{{"routing mismatches", mism}, {"hashCode mismatches", hashMism}, {"parallelism/maxParallelism reported by the keyed subtask", cfgMism}, {"state count mismatches", countMism}, {"bad output", bad}} {
		if len(group.l) > 0 {
			t.Errorf("%d %s, first: %s", len(group.l), group.what, strings.Join(group.l[:min(len(group.l), 10)], "; "))
		}
	}
	if len(mism)+len(hashMism)+len(cfgMism)+len(countMism)+len(bad) == 0 {
		t.Logf("MATCH: all %d keys on the predicted subtask", len(keys))
	}
	return obsCount
}

// ---------------------------------------------------------------------------
// Restore with rescale.

type restoreCase struct {
	topics   []assign.Topic
	from, to int
	// growTo > 0: after the restore, grow topics[0] to this many
	// partitions and check the model's NewTopics placement.
	growTo int
	// dash: the line's dashboard follows the case (fresh start, restore,
	// growth) and a second dashboard infers its history.
	dash bool
}

func (e *lineEnv) testRestore(t *testing.T) {
	cases := []restoreCase{
		{[]assign.Topic{{Name: "restore12", Partitions: 12}}, 4, 6, 16, true},
		{[]assign.Topic{{Name: "restore12c", Partitions: 12}}, 6, 4, 15, true},
		{[]assign.Topic{{Name: "restore12d", Partitions: 12}}, 3, 7, 17, true},
		{[]assign.Topic{{Name: "restore12b", Partitions: 12}}, 8, 3, 0, false},
		{[]assign.Topic{{Name: "orders", Partitions: 3}, {Name: "payments", Partitions: 3}, {Name: "clicks", Partitions: 3}, {Name: "user-events", Partitions: 3}}, 8, 5, 0, false},
	}
	for ci, c := range cases {
		t.Run(fmt.Sprintf("%s/%dto%d", topicsString(c.topics), c.from, c.to), func(t *testing.T) {
			e.runRestore(t, ci, c)
		})
	}
}

func (e *lineEnv) runRestore(t *testing.T, ci int, c restoreCase) {
	e.kc.createTopics(t, c.topics...)
	outA := assign.Topic{Name: fmt.Sprintf("restore-out-%d-a", ci), Partitions: 2}
	outB := assign.Topic{Name: fmt.Sprintf("restore-out-%d-b", ci), Partitions: 2}
	e.kc.createTopics(t, outA, outB)
	keys := routingKeys(3000)
	group := fmt.Sprintf("restore-%d", ci)
	names := topicNames(c.topics)

	// 1. Fresh start at `from`.
	a := jobSpec{Name: group + "-a", Topics: names, Out: outA.Name, Group: group, SourceP: c.from, KeyedP: c.from}
	idA := e.flink.submit(t, a)
	stopped := false
	defer func() {
		if !stopped {
			e.flink.REST.cancel(idA)
		}
	}()
	e.kc.produceKeys(t, c.topics[0], keys, "a")
	e.kc.pokePartitions(t, "a", c.topics...)
	fresh, err := assign.FreshAssignment(c.topics, c.from)
	if err != nil {
		t.Fatal(err)
	}
	obsA, err := e.flink.REST.observeSource(idA, c.topics, c.from, true, 90*time.Second)
	t.Logf("Flink %s, before the savepoint: %s at source parallelism %d (job %s)\n  predicted (assign.FreshAssignment):%s\n  observed:%s",
		e.flink.Version, topicsString(c.topics), c.from, idA, layoutString(sortedLayout(fresh.Subtasks, c.from)), layoutString(obsA.Subtasks))
	if err != nil {
		t.Fatalf("observe before savepoint: %v", err)
	}
	if !sameLayout(sortedLayout(fresh.Subtasks, c.from), obsA.Subtasks) {
		t.Errorf("MISMATCH before the savepoint: fresh-start assignment differs from assign.FreshAssignment")
	}
	e.checkRouting(t, idA, outA.Name, keys, "a", c.from, 0, 1)
	// The dashboard sees job A (its lineage starts here) and, after the
	// restore, job B under the same name.
	dashboardChecked := c.dash
	if dashboardChecked {
		e.dash.check(t, dashWant{jobID: idA, vertex: obsA.Vertex, group: group, topics: c.topics, p: c.from,
			observed: obsA.Subtasks, predicted: sortedLayout(fresh.Subtasks, c.from), mode: "fresh"})
	}
	// A completed checkpoint first, so the source has committed offsets
	// and the savepoint is not the first snapshot.
	deadline := time.Now().Add(60 * time.Second)
	for {
		n, err := e.flink.REST.checkpointsCompleted(idA)
		if err == nil && n >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no completed checkpoint after 60 s (%v)", err)
		}
		time.Sleep(500 * time.Millisecond)
	}

	// 2. Stop with a savepoint through REST.
	spDir := workDir(t, "savepoint")
	loc, err := e.flink.REST.stopWithSavepoint(idA, "file://"+spDir)
	if err != nil {
		t.Fatalf("stop with savepoint: %v", err)
	}
	stopped = true
	t.Logf("stopped job %s with savepoint %s", idA, loc)

	// 3. Restore at `to`.
	// Same name as job A, as an operator restores a job; the dashboard
	// follows a job's parallelism history by name.
	b := jobSpec{Name: a.Name, Topics: names, Out: outB.Name, Group: group, SourceP: c.to, KeyedP: c.to, Savepoint: loc}
	idB := e.flink.submit(t, b)
	defer func() {
		if err := e.flink.REST.cancel(idB); err != nil {
			t.Errorf("cancel %s: %v", idB, err)
		}
	}()
	e.kc.pokePartitions(t, "b", c.topics...)
	obsB, obsErr := e.flink.REST.observeSource(idB, c.topics, c.to, true, 90*time.Second)

	res, err := assign.Restore(assign.RestoreInput{Topics: c.topics, History: []int{c.from, c.to}, ConnectorLine: e.line.ConnectorLine})
	if err != nil {
		t.Fatal(err)
	}
	def, err := assign.RestoreAssignment(c.topics, c.from, c.to)
	if err != nil {
		t.Fatal(err)
	}
	predicted := sortedLayout(res.Assignment.Subtasks, c.to)
	formula, _ := assign.FreshAssignment(c.topics, c.to)
	t.Logf("Flink %s, restore %s from %d to %d (job %s from %s)\n  predicted (assign.Restore, connector line %s; exact=%v, uncertain=%v):%s\n  model's pieces per new subtask: %v\n  model's split lists in Flink order (unsorted):%s\n  assign.RestoreAssignment (defaults, connector line 5) same as above: %v\n  fresh-start formula at %d, for contrast:%s\n  observed (REST currentOffset metric ids):%s",
		e.flink.Version, topicsString(c.topics), c.from, c.to, idB, loc,
		res.ConnectorLine, res.Exact, splitIDs(res.Uncertain), layoutString(predicted), res.Pieces, layoutString(res.Assignment.Subtasks),
		sameLayout(predicted, sortedLayout(def.Assignment.Subtasks, c.to)),
		c.to, layoutString(sortedLayout(formula.Subtasks, c.to)), layoutString(obsB.Subtasks))
	if obsErr != nil {
		t.Fatalf("observe after restore: %v", obsErr)
	}
	uncertain := map[assign.TopicPartition]bool{}
	for _, tp := range res.Uncertain {
		uncertain[tp] = true
	}
	predOwner := ownerMap(predicted)
	obsOwner := ownerMap(obsB.Subtasks)
	var wrong, wrongUncertain []string
	for _, tp := range assign.Partitions(c.topics) {
		if predOwner[tp] == obsOwner[tp] {
			continue
		}
		d := fmt.Sprintf("%s predicted on %d, observed on %d", tp.SplitID(), predOwner[tp], obsOwner[tp])
		if uncertain[tp] {
			wrongUncertain = append(wrongUncertain, d)
		} else {
			wrong = append(wrong, d)
		}
	}
	switch {
	case len(wrong) > 0:
		t.Errorf("MISMATCH with the restore model on partitions it calls certain: %s", strings.Join(wrong, "; "))
	case len(wrongUncertain) > 0:
		t.Logf("observed differs from the model's best guess only on partitions it marks uncertain: %s", strings.Join(wrongUncertain, "; "))
	default:
		t.Logf("MATCH: observed restore layout equals the model")
	}
	var inferredDash *dashboard // started after the restore, before the growth
	if dashboardChecked {
		w := dashWant{jobID: idB, vertex: obsB.Vertex, group: group, topics: c.topics, p: c.to, observed: obsB.Subtasks, predicted: predicted,
			mode: "restore", history: []int{c.from, c.to}, historyFrom: live.HistoryObserved}
		t.Run("dashboard-lineage", func(t *testing.T) { e.dash.check(t, w) })
		w.query, w.historyFrom = fmt.Sprintf("?history=%d", c.from), live.HistoryFromURL
		t.Run("dashboard-history-param", func(t *testing.T) { e.dash.check(t, w) })
		if lifecycleDashboardChecks {
			// A dashboard that never saw job A infers its history from the
			// restored layout (before any partition is discovered: the
			// inference models every partition as there from the start).
			inferredDash = newDashboard(t, e) // lives on through the growth
			t.Run("dashboard-inferred", func(t *testing.T) {
				inferredDash.checkInferred(t, idB, obsB.Vertex, []int{c.from, c.to})
			})
		}
	}

	// 4. Keyed state moved with the keys: the same keys again, count 2,
	// routed for the new parallelism.
	e.kc.produceKeys(t, c.topics[0], keys, "b")
	e.checkRouting(t, idB, outB.Name, keys, "b", c.to, 0, 2)

	// 5. Partitions discovered after the restore: the hash rule at the new
	// parallelism, on top of the restored layout.
	if c.growTo == 0 {
		return
	}
	grown := []assign.Topic{{Name: c.topics[0].Name, Partitions: c.growTo}}
	e.kc.growTopic(t, grown[0])
	e.kc.pokePartitions(t, "c", grown...)
	resG, err := assign.Restore(assign.RestoreInput{Topics: c.topics, History: []int{c.from, c.to}, ConnectorLine: e.line.ConnectorLine, NewTopics: grown})
	if err != nil {
		t.Fatal(err)
	}
	predG := sortedLayout(resG.Assignment.Subtasks, c.to)
	obsG, err := e.flink.REST.observeSource(idB, grown, c.to, true, 90*time.Second)
	t.Logf("Flink %s, after the restore, %s grown to %d partitions (job %s)\n  predicted (assign.Restore with NewTopics; exact=%v, uncertain=%v):%s\n  observed:%s",
		e.flink.Version, c.topics[0].Name, c.growTo, idB, resG.Exact, splitIDs(resG.Uncertain), layoutString(predG), layoutString(obsG.Subtasks))
	if err != nil {
		t.Fatalf("observe after growing: %v", err)
	}
	if !sameLayout(predG, obsG.Subtasks) {
		t.Errorf("MISMATCH: placement of partitions discovered after the restore differs from assign.Restore")
	} else {
		t.Logf("MATCH")
	}
	if lifecycleDashboardChecks && dashboardChecked {
		d, err := e.flink.REST.job(idB)
		if err != nil {
			t.Fatal(err)
		}
		src, err := vertexNamed(d, "Source: Kafka Source")
		if err != nil {
			t.Fatal(err)
		}
		history := []int{c.from, c.to}
		t.Run("dashboard-restore-lineage", func(t *testing.T) {
			// Kafka's metadata names the new partitions on the next poll;
			// the source's metric-id list is read again when it lacks them.
			e.dash.pollUntilCells(t, idB, src.ID, c.growTo)
			e.dash.checkRestoreLineage(t, idA, idB, a.Name, src.Name, src.ID, history)
		})
		// The dashboard started after the restore saw the topic at its
		// restored size: the new partitions were found after the restore,
		// at c.to, whatever history it inferred.
		if inferredDash != nil {
			t.Run("dashboard-inferred-growth", func(t *testing.T) {
				vv := inferredDash.pollUntilCells(t, idB, src.ID, c.growTo)
				checkPrediction(t, "dashboard started after the restore, after the growth", vv, "inferred", history, "inferred")
				if got := lifeLayout(vv, c.to); !sameLayout(got, obsG.Subtasks) {
					t.Errorf("dashboard started after the restore, after the growth: layout%s\n  observed:%s", layoutString(got), layoutString(obsG.Subtasks))
				}
			})
		}
		// A dashboard started after the restore and the growth cannot tell
		// the restored partitions from the discovered ones: whatever it
		// says, it must not be a confident layout other than the reader's.
		t.Run("dashboard-started-after-growth", func(t *testing.T) {
			late := newDashboard(t, e)
			vv := late.pollUntilCells(t, idB, src.ID, c.growTo)
			pr := vv.Prediction
			if pr == nil {
				t.Logf("late dashboard: no prediction")
				return
			}
			t.Logf("late dashboard: mode %s history %v drift %d headline %s %q", pr.Mode, pr.History, pr.Drift, pr.Headline.Kind, fmt.Sprint(pr.Headline.Verdicts))
			if got := lifeLayout(vv, c.to); !sameLayout(got, obsG.Subtasks) {
				t.Errorf("late dashboard: observed layout%s\n  harness:%s", layoutString(got), layoutString(obsG.Subtasks))
			}
			if (pr.Headline.Kind == "exact" || pr.Headline.Kind == "inferred") && pr.Drift != 0 {
				t.Errorf("late dashboard: headline %s (%q) with drift %d: a confident model the readers contradict", pr.Headline.Kind, fmt.Sprint(pr.Headline.Verdicts), pr.Drift)
			}
			if pr.Drift != 0 {
				t.Errorf("late dashboard: drift %d (%q) where the evidence cannot tell which partitions were restored", pr.Drift, fmt.Sprint(pr.Headline.Verdicts))
			}
		})
	}
}

func splitIDs(tps []assign.TopicPartition) []string {
	out := make([]string, len(tps))
	for i, tp := range tps {
		out[i] = tp.SplitID()
	}
	return out
}

func ownerMap(subtasks [][]assign.TopicPartition) map[assign.TopicPartition]int {
	m := map[assign.TopicPartition]int{}
	for i, l := range subtasks {
		for _, tp := range l {
			m[tp] = i
		}
	}
	return m
}
