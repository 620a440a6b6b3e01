package sandbox

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/twmb/franz-go/pkg/kgo"
)

// sqlRecording is sandbox/testdata/sql-payments-2.2.1.json: how Flink
// 2.2.1's planner names and plans payments-by-user (testdata/sqlgen).
type sqlRecording struct {
	Flink    string `json:"flink"`
	Vertices []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"vertices"`
	Operators []string `json:"operators"`
	Plan      struct {
		Plan json.RawMessage `json:"plan"`
	} `json:"plan"`
}

func readSQLRecording(t *testing.T) sqlRecording {
	t.Helper()
	raw, err := os.ReadFile("testdata/sql-payments-2.2.1.json")
	if err != nil {
		t.Fatal(err)
	}
	var rec sqlRecording
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatalf("testdata/sql-payments-2.2.1.json: %v", err)
	}
	if len(rec.Vertices) != 2 || len(rec.Operators) != 4 {
		t.Fatalf("recording has %d vertices and %d operators, want 2 and 4", len(rec.Vertices), len(rec.Operators))
	}
	return rec
}

func TestSQLKeyValue(t *testing.T) {
	q := &paymentsSQL
	for _, tc := range []struct {
		value   string
		want    string
		null    bool
		wantErr string
	}{
		{value: `{"user_id":"u-00042","region":"eu-west","amount":12.5,"ts":1}`, want: "u-00042"},
		{value: `{"region":"eu-west","user_id":"u-7"}`, want: "u-7"},
		{value: `{"user_id":"a\"b\u00e9"}`, want: `a"bé`},
		{value: `{"user_id" : "spaced"}`, want: "spaced"},
		{value: `{"region":"eu-west"}`, null: true},
		{value: `{"user_id":null}`, null: true},
		{value: `{"user_id":42}`, null: true, wantErr: "column user_id: 42 is not a JSON string"},
		{value: `not json`, null: true, wantErr: "record value is not a JSON object"},
	} {
		v, null, err := q.keyValue([]byte(tc.value))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("keyValue(%s) error = %v, want one containing %q", tc.value, err, tc.wantErr)
			}
			continue
		}
		if err != nil || null != tc.null || string(v) != tc.want {
			t.Errorf("keyValue(%s) = %q, %v, %v; want %q, %v, nil", tc.value, v, null, err, tc.want, tc.null)
		}
	}
}

// TestSQLKeyGroupIsTheKeyRows checks the routing against a key row written
// separately, for the key, a missing key (a null row) and bad values, and
// that routing a value the sandbox writes allocates nothing.
func TestSQLKeyGroupIsTheKeyRows(t *testing.T) {
	q := &paymentsSQL
	e := q.newKeyRowEncoder()
	want := func(key *string) int {
		typ, err := assign.ParseSQLType("STRING")
		if err != nil {
			t.Fatal(err)
		}
		w, err := assign.NewKeyRowEncoder(typ)
		if err != nil {
			t.Fatal(err)
		}
		if key == nil {
			err = w.AppendNull()
		} else {
			err = w.AppendString(*key)
		}
		if err != nil {
			t.Fatal(err)
		}
		h, err := w.HashCode()
		if err != nil {
			t.Fatal(err)
		}
		return assign.KeyGroupForHash(h, 128)
	}
	short, long := "u-00042", "a user id longer than seven bytes"
	for _, tc := range []struct {
		value string
		key   *string
		bad   bool
	}{
		{value: `{"user_id":"u-00042","amount":1}`, key: &short},
		{value: `{"user_id":"a user id longer than seven bytes"}`, key: &long},
		{value: `{"amount":1}`},
		{value: `{"user_id":[1]}`, bad: true},
		{value: `{`, bad: true},
	} {
		kg, err := q.keyGroup(e, []byte(tc.value), 128)
		if (err != nil) != tc.bad {
			t.Errorf("keyGroup(%s) error = %v, want error %v", tc.value, err, tc.bad)
		}
		if w := want(tc.key); kg != w {
			t.Errorf("keyGroup(%s) = %d, want %d", tc.value, kg, w)
		}
	}
	if kg, _ := q.keyGroup(e, []byte(`{"user_id":"u-00042"}`), 128); kg == assign.KeyGroupForHash(assign.StringHashCode(short), 128) {
		t.Errorf("key group %d of %q is also its Java String key group: pick a key that tells them apart", kg, short)
	}
	value := paymentValue(rand.New(rand.NewPCG(1, 2)), "u-01999", time.Now().UnixMilli())
	if n := testing.AllocsPerRun(100, func() { q.keyGroup(e, value, 128) }); n != 0 {
		t.Errorf("keyGroup of %s allocates %v times, want 0", value, n)
	}
}

// TestSQLJobAsFlinkPlansIt checks the fake JobManager's answers for
// payments-by-user against the plan Flink 2.2.1's planner wrote for its
// statements, and that its keyed subtasks' counts are what routing each
// record's user_id as a SQL key row predicts, not as a Java String.
func TestSQLJobAsFlinkPlansIt(t *testing.T) {
	rec := readSQLRecording(t)
	sb := startSandbox(t, Options{})
	c := newFlinkClient(t, sb)
	info := jobNamed(t, sb, paymentsJob)

	t.Run("rest", func(t *testing.T) {
		st, body := fetch(t, sb.FlinkURL()+"jobs/"+info.ID)
		if st != 200 {
			t.Fatalf("GET /jobs/%s = %d", info.ID, st)
		}
		var details struct {
			Name     string `json:"name"`
			Vertices []struct {
				ID, Name string
			} `json:"vertices"`
			Plan json.RawMessage `json:"plan"`
		}
		if err := json.Unmarshal(body, &details); err != nil {
			t.Fatal(err)
		}
		if details.Name != paymentsJob || len(details.Vertices) != 2 {
			t.Fatalf("job %q with %d vertices, want %q with 2", details.Name, len(details.Vertices), paymentsJob)
		}
		for i, id := range []string{info.SourceVertexID, info.KeyedVertexID} {
			if v := details.Vertices[i]; v.ID != id || v.Name != rec.Vertices[i].Name {
				t.Errorf("vertex %d = %s %q, want %s %q", i, v.ID, v.Name, id, rec.Vertices[i].Name)
			}
		}
		// The recorded plan, its ids (Flink's hashes of the stream
		// graph, the job id the recorder gave) replaced by ours: every
		// other byte of meaning is Flink's.
		var recPlan struct {
			JID string `json:"jid"`
		}
		if err := json.Unmarshal(rec.Plan.Plan, &recPlan); err != nil {
			t.Fatal(err)
		}
		want := strings.NewReplacer(
			recPlan.JID, info.ID, rec.Vertices[0].ID, info.SourceVertexID, rec.Vertices[1].ID, info.KeyedVertexID,
		).Replace(string(rec.Plan.Plan))
		_, planBody := fetch(t, sb.FlinkURL()+"jobs/"+info.ID+"/plan")
		var plan struct {
			Plan json.RawMessage `json:"plan"`
		}
		if err := json.Unmarshal(planBody, &plan); err != nil {
			t.Fatal(err)
		}
		for name, got := range map[string]json.RawMessage{"/plan": plan.Plan, "/jobs/:id plan": details.Plan} {
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(want), &w); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s =\n%s\nwant (Flink %s's, ids replaced)\n%s", name, got, rec.Flink, want)
			}
		}
		// The keyed input, read through the collector's client.
		p, err := c.JobPlan(t.Context(), info.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range p.Nodes {
			if n.ID != info.KeyedVertexID {
				continue
			}
			if len(n.Inputs) != 1 || n.Inputs[0].ID != info.SourceVertexID || n.Inputs[0].ShipStrategy != "HASH" {
				t.Errorf("keyed node inputs = %+v, want one HASH input from %s", n.Inputs, info.SourceVertexID)
			}
			if !strings.HasPrefix(n.Description, "[4]:GroupAggregate(groupBy=[user_id], ") {
				t.Errorf("keyed node description = %q", n.Description)
			}
		}
		// The Kafka source reader's metrics are scoped by the source
		// operator's own name, as Flink scopes them.
		ids, err := c.VertexMetricIDs(t.Context(), info.ID, info.SourceVertexID)
		if err != nil {
			t.Fatal(err)
		}
		scope := ".Source__payments[1].KafkaSourceReader.topic.payments.partition."
		if !slices.ContainsFunc(ids, func(id string) bool { return strings.Contains(id, scope) }) {
			t.Errorf("source vertex metric ids lack N%s…", scope)
		}
	})

	t.Run("key rows predict the keyed counts", func(t *testing.T) {
		keyedCountsPredicted(t, sb, info)
	})
}

// keyedCountsPredicted lets the job read some payments, stops it where it
// is, reads every record it has read from the topic and routes each value's
// user_id as the SQL job does (a key row written by assign.KeyRowEncoder):
// the per key group and per keyed subtask counts of the job, and the keyed
// vertex's numRecordsIn on the REST API, are that prediction exactly, and
// routing the same user ids as Java Strings predicts something else.
func keyedCountsPredicted(t *testing.T, sb *Sandbox, info JobInfo) {
	sb.mu.Lock()
	var j *job
	for _, jj := range sb.jobs {
		if jj.id == info.ID {
			j = jj
		}
	}
	sb.mu.Unlock()
	const enough = 1500
	poll(t, 60*time.Second, func() error {
		j.mu.Lock()
		defer j.mu.Unlock()
		var n int64
		for _, kt := range j.keyed {
			n += kt.in
		}
		if n < enough {
			return fmt.Errorf("%s has routed %d records, want ≥ %d", j.spec.name, n, enough)
		}
		return nil
	})
	// The job's goroutines end here: its counters and split offsets stay
	// as they are, and each record read was counted with its offset.
	j.halt()
	j.mu.Lock()
	next := map[int32]int64{}
	for tp, sp := range j.splits {
		if tp.Topic != topicPayments {
			t.Fatalf("split %s is not of %s", tp.SplitID(), topicPayments)
		}
		next[tp.Partition] = max(sp.next, 0)
	}
	kgGot := slices.Clone(j.kgRecords)
	var subGot []int64
	for _, kt := range j.keyed {
		subGot = append(subGot, kt.in)
	}
	maxP, p := j.spec.maxP, len(j.keyed)
	j.mu.Unlock()

	// Read what the job read, from the start of each partition.
	parts := map[int32]kgo.Offset{}
	for part, n := range next {
		if n > 0 {
			parts[part] = kgo.NewOffset().AtStart()
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(sb.KafkaBrokers()...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topicPayments: parts}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	typ, err := assign.ParseSQLType("STRING")
	if err != nil {
		t.Fatal(err)
	}
	e, err := assign.NewKeyRowEncoder(typ)
	if err != nil {
		t.Fatal(err)
	}
	kgSQL, kgJava := make([]int64, maxP), make([]int64, maxP)
	read := map[int32]int64{}
	remaining := len(parts)
	for remaining > 0 {
		fs := cl.PollFetches(t.Context())
		if t.Context().Err() != nil {
			t.Fatal(t.Context().Err())
		}
		fs.EachError(func(topic string, part int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, part, err) })
		for _, r := range fs.Records() {
			if r.Offset >= next[r.Partition] {
				continue
			}
			if r.Offset != read[r.Partition] {
				t.Fatalf("%s-%d: read offset %d, want %d (records deleted?)", r.Topic, r.Partition, r.Offset, read[r.Partition])
			}
			if len(r.Key) != 0 {
				t.Fatalf("%s-%d@%d has key %q, want none", r.Topic, r.Partition, r.Offset, r.Key)
			}
			var row struct {
				UserID *string `json:"user_id"`
			}
			if err := json.Unmarshal(r.Value, &row); err != nil || row.UserID == nil {
				t.Fatalf("%s-%d@%d: value %s: no user_id (%v)", r.Topic, r.Partition, r.Offset, r.Value, err)
			}
			e.Reset()
			if err := e.AppendString(*row.UserID); err != nil {
				t.Fatal(err)
			}
			h, err := e.HashCode()
			if err != nil {
				t.Fatal(err)
			}
			kgSQL[assign.KeyGroupForHash(h, maxP)]++
			kgJava[assign.KeyGroupForHash(assign.StringHashCode(*row.UserID), maxP)]++
			if read[r.Partition]++; read[r.Partition] == next[r.Partition] {
				remaining--
			}
		}
	}
	perSubtask := func(kgs []int64) []int64 {
		out := make([]int64, p)
		for kg, n := range kgs {
			out[assign.OperatorIndex(maxP, p, kg)] += n
		}
		return out
	}
	subSQL, subJava := perSubtask(kgSQL), perSubtask(kgJava)
	t.Logf("records read %v; keyed subtasks: job %v, key rows %v, Java Strings %v", read, subGot, subSQL, subJava)
	if !slices.Equal(kgGot, kgSQL) {
		t.Errorf("per key group counts of the job differ from the key rows' prediction:\n got %v\nwant %v", kgGot, kgSQL)
	}
	if !slices.Equal(subGot, subSQL) {
		t.Errorf("keyed subtask counts = %v, key rows predict %v", subGot, subSQL)
	}
	if slices.Equal(subSQL, subJava) {
		t.Errorf("the key rows and the Java Strings predict the same counts %v: the test does not tell the SQL path apart", subSQL)
	}
	// The dashboard's view: the keyed vertex's numRecordsIn per subtask.
	c := newFlinkClient(t, sb)
	var ids []string
	for i := range p {
		ids = append(ids, fmt.Sprintf("%d.numRecordsIn", i))
	}
	poll(t, 20*time.Second, func() error {
		// The job's details refresh the metric store (fetcher.go).
		if _, err := c.Job(t.Context(), info.ID); err != nil {
			return err
		}
		ms, err := c.VertexMetrics(t.Context(), info.ID, info.KeyedVertexID, ids)
		if err != nil {
			return err
		}
		got := make([]int64, p)
		for _, m := range ms {
			var i int
			if _, err := fmt.Sscanf(m.ID, "%d.numRecordsIn", &i); err != nil || i >= p {
				return fmt.Errorf("metric id %q", m.ID)
			}
			got[i] = int64(m.Value)
		}
		if !slices.Equal(got, subSQL) {
			return fmt.Errorf("keyed numRecordsIn = %v, key rows predict %v", got, subSQL)
		}
		return nil
	})
}
