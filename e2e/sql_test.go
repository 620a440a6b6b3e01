//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/assign"
	fcollect "github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka/sample"
	"github.com/skewscope/skewscope/keysample"
	"github.com/skewscope/skewscope/sqlplan"
)

// Flink SQL jobs in the MiniCluster (FlinkE2E's submitSql, SqlJob.java):
// a GROUP BY on a STRING column, a GROUP BY on a composite (BIGINT, STRING)
// key and a regular inner join of two topics, each reading json records
// of a topic with a skewed (Zipf) key distribution through Flink's Kafka
// table source. A SQL hash exchange keys its records by the BinaryRowData
// of the key columns, so the key group of a record is
// murmurHash(BinaryRowData.hashCode()) % maxP.
//
// The oracle is the data path: each keyed subtask's numRecordsIn (the
// GroupAggregate's or Join's task, whose every input record arrives
// through the hash exchange: mini-batch is off, so there is no local
// pre-aggregation), read once the topics are fully read. The prediction
// reads the topics back with the dashboard's read-only sampler, decodes
// each json value as Flink's json format does for the columns used
// (sqlKeyOf), writes the key row with assign.KeyRowEncoder and counts it
// per key group in a keysample.Summary, which spreads the key groups over
// the subtasks as the sample page does. A sample of the whole topics must
// predict every subtask's records exactly; a sample of the last 10 % of
// each partition within three standard errors of the sampled share.
//
// The REST answers of each job (its detail, its plan and the keyed
// vertex's detail and numRecordsIn) are recorded for the collector's unit
// tests as the event-time scenarios are: with SKEWSCOPE_RECORD=1 into
// collectors/testdata/flink/sql/<flink-version>/<job>/, otherwise to a
// temp directory, compared in format with the committed ones.

const (
	sqlRecordingsRoot = "../collectors/testdata/flink/sql"
	sqlP              = 4 // every operator of the SQL jobs
	sqlEvents         = 30000
	sqlUsers          = 300 // distinct user_id values
	sqlAccounts       = 200 // distinct account_id values
	sqlSeed           = 25
)

var (
	sqlEventsTopic = assign.Topic{Name: "sql-events", Partitions: 6}
	sqlUsersTopic  = assign.Topic{Name: "sql-users", Partitions: 2}
)

// sqlKeyOf turns one record value into the BinaryRowData.hashCode of the
// key row its SQL job's hash exchange routes it by. Each job has its own,
// so that the product's SQL key spec can later take its place.
type sqlKeyOf func(value []byte) (hash int32, err error)

// sqlInput is one topic a SQL job reads and the key its exchange uses.
type sqlInput struct {
	topic   assign.Topic
	records int
	// table is the input's CREATE TABLE statement, as a user pastes it
	// into the sample form.
	table string
	keyOf func() sqlKeyOf
	// control, when set, keys the record as the DataStream API would key
	// the same column (a Java String's hashCode): a prediction the job
	// must not match, or the oracle could not tell the two apart.
	control func() sqlKeyOf
}

// sqlJob is one SQL job: statements with {bootstrap} and {group} for the
// broker and a consumer group of its own.
type sqlJob struct {
	name       string
	what       string
	keyColumns []string
	keyTypes   []string
	statements []string
	inputs     []sqlInput
}

// sqlEventsTable is the events topic as a Kafka table in json.
func sqlEventsTable(name string) string {
	return `CREATE TABLE ` + name + ` (
  user_id STRING,
  account_id BIGINT,
  region STRING,
  amount BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '` + sqlEventsTopic.Name + `',
  'properties.bootstrap.servers' = '{bootstrap}',
  'properties.group.id' = '{group}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
)`
}

// sqlUsersTable is the users topic as a Kafka table in json.
var sqlUsersTable = `CREATE TABLE users (
  user_id STRING,
  tier STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '` + sqlUsersTopic.Name + `',
  'properties.bootstrap.servers' = '{bootstrap}',
  'properties.group.id' = '{group}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
)`

func sqlJobs(users, events int) []sqlJob {
	ev := sqlInput{topic: sqlEventsTopic, records: events, table: sqlEventsTable("events")}
	byUser := ev
	byUser.keyOf, byUser.control = newUserKeyOf, newUserJavaKeyOf
	byAccount := ev
	byAccount.keyOf = newAccountRegionKeyOf
	us := sqlInput{topic: sqlUsersTopic, records: users, table: sqlUsersTable, keyOf: newUserKeyOf, control: newUserJavaKeyOf}
	return []sqlJob{
		{
			name: "group-by-user", what: "GROUP BY user_id (STRING)",
			keyColumns: []string{"user_id"}, keyTypes: []string{"STRING"},
			statements: []string{
				sqlEventsTable("events"),
				`CREATE TABLE per_user (user_id STRING, n BIGINT) WITH ('connector' = 'blackhole')`,
				`INSERT INTO per_user SELECT user_id, COUNT(*) FROM events GROUP BY user_id`,
			},
			inputs: []sqlInput{byUser},
		},
		{
			name: "group-by-account-region", what: "GROUP BY account_id (BIGINT), region (STRING)",
			keyColumns: []string{"account_id", "region"}, keyTypes: []string{"BIGINT", "STRING"},
			statements: []string{
				sqlEventsTable("events"),
				`CREATE TABLE per_account_region (account_id BIGINT, region STRING, n BIGINT, total BIGINT) WITH ('connector' = 'blackhole')`,
				`INSERT INTO per_account_region SELECT account_id, region, COUNT(*), SUM(amount) FROM events GROUP BY account_id, region`,
			},
			inputs: []sqlInput{byAccount},
		},
		{
			name: "join-users", what: "events JOIN users ON user_id (STRING), a regular inner join",
			keyColumns: []string{"user_id"}, keyTypes: []string{"STRING"},
			statements: []string{
				sqlEventsTable("events"),
				sqlUsersTable,
				`CREATE TABLE enriched (user_id STRING, amount BIGINT, tier STRING) WITH ('connector' = 'blackhole')`,
				`INSERT INTO enriched SELECT e.user_id, e.amount, u.tier FROM events AS e JOIN users AS u ON e.user_id = u.user_id`,
			},
			inputs: []sqlInput{byUser, us},
		},
	}
}

// newUserKeyOf is the key of a GROUP BY user_id or a join on it: a row of
// one nullable STRING column.
func newUserKeyOf() sqlKeyOf {
	enc := mustKeyRowEncoder("STRING")
	return func(value []byte) (int32, error) {
		f, err := sqlJSONFields(value)
		if err != nil {
			return 0, err
		}
		enc.Reset()
		if err := sqlAppendString(enc, f, "user_id"); err != nil {
			return 0, err
		}
		return enc.HashCode()
	}
}

// newAccountRegionKeyOf is the key of GROUP BY account_id, region: a row
// of (BIGINT, STRING), both nullable, in the order of the aggregate's
// input (the table's column order), which the plan's groupBy=[…] shows.
func newAccountRegionKeyOf() sqlKeyOf {
	enc := mustKeyRowEncoder("BIGINT", "STRING")
	return func(value []byte) (int32, error) {
		f, err := sqlJSONFields(value)
		if err != nil {
			return 0, err
		}
		enc.Reset()
		if err := sqlAppendBigInt(enc, f, "account_id"); err != nil {
			return 0, err
		}
		if err := sqlAppendString(enc, f, "region"); err != nil {
			return 0, err
		}
		return enc.HashCode()
	}
}

// newUserJavaKeyOf hashes user_id as a Java String, as a DataStream keyBy
// of the String would: the wrong rule for a SQL job.
func newUserJavaKeyOf() sqlKeyOf {
	return func(value []byte) (int32, error) {
		var v struct {
			UserID string `json:"user_id"`
		}
		if err := json.Unmarshal(value, &v); err != nil {
			return 0, err
		}
		return assign.StringHashCode(v.UserID), nil
	}
}

func mustKeyRowEncoder(types ...string) *assign.KeyRowEncoder {
	ts := make([]assign.SQLType, len(types))
	for i, s := range types {
		t, err := assign.ParseSQLType(s)
		if err != nil {
			panic(err)
		}
		ts[i] = t
	}
	enc, err := assign.NewKeyRowEncoder(ts...)
	if err != nil {
		panic(err)
	}
	return enc
}

// sqlJSONFields splits a json object into its fields, by exact name as
// Flink's json format matches them.
func sqlJSONFields(value []byte) (map[string]json.RawMessage, error) {
	var f map[string]json.RawMessage
	if err := json.Unmarshal(value, &f); err != nil {
		return nil, fmt.Errorf("record value is not a json object: %v", err)
	}
	return f, nil
}

// sqlAppendString appends column col of a STRING column: a missing field
// or json null is SQL NULL (the json format's default,
// json.fail-on-missing-field = false); a json string is its text.
func sqlAppendString(enc *assign.KeyRowEncoder, f map[string]json.RawMessage, col string) error {
	raw, ok := f[col]
	if !ok || string(raw) == "null" {
		return enc.AppendNull()
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("column %s (STRING): want a json string or null, got %s", col, clip(string(raw), 40))
	}
	return enc.AppendString(s)
}

// sqlAppendBigInt appends column col of a BIGINT column: missing or null
// is SQL NULL; a json integer in the BIGINT range its value.
func sqlAppendBigInt(enc *assign.KeyRowEncoder, f map[string]json.RawMessage, col string) error {
	raw, ok := f[col]
	if !ok || string(raw) == "null" {
		return enc.AppendNull()
	}
	v, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil {
		return fmt.Errorf("column %s (BIGINT): want a json integer or null, got %s", col, clip(string(raw), 40))
	}
	return enc.AppendInt(v)
}

// sqlUserID names user i: short (inline, ≤ 7 bytes) and long (variable
// part) ids, ASCII and not, the 7- and 8-byte boundary (用户2, 用户14) and
// the empty string.
func sqlUserID(i int) string {
	if i == 0 {
		return ""
	}
	switch i % 6 {
	case 0:
		return fmt.Sprintf("u%d", i)
	case 1:
		return fmt.Sprintf("user-%06d", i)
	case 2:
		return fmt.Sprintf("用户%d", i)
	case 3:
		return fmt.Sprintf("é%d", i)
	case 4:
		return fmt.Sprintf("Łódź-%d", i)
	default:
		return fmt.Sprintf("🔑%d", i)
	}
}

// sqlAccountID is account i: negative and positive ids and the BIGINT
// extremes.
func sqlAccountID(i int) int64 {
	switch i {
	case 3:
		return math.MaxInt64
	case 5:
		return math.MinInt64
	}
	return int64(i)*1_000_003 - 50_000_000
}

var sqlRegions = []string{"eu", "eu", "eu", "us-east-1", "us-east-1", "ap-südost-1", "日本", ""}

// sqlProduce writes the events and users topics: sqlEvents events whose
// user and account are Zipf-distributed (s = 1.1 over a shuffled order of
// ids, so the hottest ids are of every kind), whose region is one of
// sqlRegions, json null or missing; and one to three user records for two
// users in three. Records go round-robin over each topic's partitions,
// without a record key. It returns the users topic's record count.
func (e *lineEnv) sqlProduce(t *testing.T) int {
	t.Helper()
	e.kc.createTopics(t, sqlEventsTopic, sqlUsersTopic)
	r := rand.New(rand.NewPCG(sqlSeed, sqlSeed))
	userZipf := rand.NewZipf(r, 1.1, 1, sqlUsers-1)
	accountZipf := rand.NewZipf(r, 1.1, 1, sqlAccounts-1)
	userOrder, accountOrder := r.Perm(sqlUsers), r.Perm(sqlAccounts)
	var recs []*kgo.Record
	nullRegion, missingRegion, missingAccount := 0, 0, 0
	add := func(tp assign.Topic, n int, v map[string]any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Topic: tp.Name, Partition: int32(n % tp.Partitions), Value: b})
	}
	for n := range sqlEvents {
		v := map[string]any{
			"user_id":    sqlUserID(userOrder[userZipf.Uint64()]),
			"account_id": sqlAccountID(accountOrder[accountZipf.Uint64()]),
			"amount":     r.IntN(1000),
		}
		switch k := r.IntN(len(sqlRegions) + 2); {
		case k < len(sqlRegions):
			v["region"] = sqlRegions[k]
		case k == len(sqlRegions):
			v["region"] = nil
			nullRegion++
		default:
			missingRegion++
		}
		if r.IntN(100) == 0 {
			delete(v, "account_id")
			missingAccount++
		}
		add(sqlEventsTopic, n, v)
	}
	users := 0
	for i := range sqlUsers {
		if i%3 == 2 {
			continue
		}
		for range 1 + r.IntN(3) {
			add(sqlUsersTopic, users, map[string]any{"user_id": sqlUserID(i), "tier": []string{"gold", "silver", "bronze"}[r.IntN(3)]})
			users++
		}
	}
	start := time.Now()
	e.kc.produce(t, recs)
	t.Logf("produced %d json records to %s (%d partitions; region null in %d, missing in %d, account_id missing in %d) and %d to %s (%d) in %s",
		sqlEvents, sqlEventsTopic.Name, sqlEventsTopic.Partitions, nullRegion, missingRegion, missingAccount,
		users, sqlUsersTopic.Name, sqlUsersTopic.Partitions, time.Since(start).Round(10*time.Millisecond))
	return users
}

// testSQL runs each SQL job on the line's cluster and checks that the
// key rows predict its keyed subtasks' records.
func (e *lineEnv) testSQL(t *testing.T) {
	start := time.Now()
	users := e.sqlProduce(t)
	for _, j := range sqlJobs(users, sqlEvents) {
		t.Run(j.name, func(t *testing.T) { e.runSQLJob(t, j) })
	}
	t.Logf("Flink %s: the SQL jobs took %s (topics produced, three jobs planned, run, checked and recorded)", e.flink.Version, time.Since(start).Round(100*time.Millisecond))
}

func (e *lineEnv) runSQLJob(t *testing.T, j sqlJob) {
	start := time.Now()
	name := "sql-" + j.name
	kv := []string{"name", name, "p", fmt.Sprint(sqlP)}
	for i, s := range j.statements {
		s = strings.NewReplacer("{bootstrap}", e.kafka.Bootstrap, "{group}", name).Replace(s)
		kv = append(kv, fmt.Sprintf("s%d", i), s)
	}
	reply, err := e.flink.proc.command(180*time.Second, "submitSql", kv...)
	if err != nil {
		t.Fatalf("submit SQL job %s: %v", j.name, err)
	}
	id, ok := strings.CutPrefix(reply, "jobId=")
	if !ok {
		t.Fatalf("submit SQL job %s: unexpected reply %q", j.name, reply)
	}
	defer func() {
		if err := e.flink.REST.cancel(id); err != nil {
			t.Errorf("cancel %s: %v", id, err)
		}
	}()
	if err := e.flink.REST.waitRunning(id, 120*time.Second); err != nil {
		t.Fatalf("SQL job %s (%s): %v", j.name, id, err)
	}
	submitted := time.Since(start)
	keyed, maxP, sqlKey := e.sqlKeyedVertex(t, id, j)
	total := 0
	for _, in := range j.inputs {
		total += in.records
	}
	observed := e.sqlWaitRead(t, id, keyed, total, 120*time.Second)
	read := time.Since(start)
	predicted := e.checkSQLKeySample(t, j, observed, maxP, sqlKey)
	e.recordSQL(t, j, id, keyed, observed, predicted, maxP)
	t.Logf("Flink %s, %s: planned and running in %s, topics read in %s, checked and recorded in %s", e.flink.Version, j.name,
		submitted.Round(100*time.Millisecond), (read - submitted).Round(100*time.Millisecond), (time.Since(start) - read).Round(100*time.Millisecond))
}

// sqlKeyedVertex returns the job's one vertex with a hash input (the
// GroupAggregate or the Join), its max parallelism and its SQL key as the
// collector reads it from the plan Flink serves, which must name the
// job's key columns for every input.
func (e *lineEnv) sqlKeyedVertex(t *testing.T, id string, sj sqlJob) (string, int, *fcollect.SQLKey) {
	t.Helper()
	plan, err := e.flink.REST.fc.JobPlan(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	keyed := fcollect.KeyedVertices(plan)
	var d []string
	for _, n := range plan.Nodes {
		d = append(d, n.Description)
	}
	if len(keyed) != 1 {
		t.Fatalf("want one keyed vertex in the plan, got %d: %q", len(keyed), d)
	}
	sk := fcollect.SQLKeys(plan)[keyed[0]]
	if sk == nil || !sk.Named || len(sk.Columns) != len(sj.inputs) {
		t.Fatalf("the collector reads the SQL key %+v from the plan, want %v on each of %d inputs: %q", sk, sj.keyColumns, len(sj.inputs), d)
	}
	for _, cols := range sk.Columns {
		if !slices.Equal(cols, sj.keyColumns) {
			t.Fatalf("the collector reads key columns %v from the plan, want %v: %q", sk.Columns, sj.keyColumns, d)
		}
	}
	// Each input's key columns trace back through the plan to the columns
	// of the table that input scans, in a vertex with no input: what a
	// sample started from the vertex reads from that input's topic.
	scans := map[string]bool{}
	for _, n := range plan.Nodes {
		if len(n.Inputs) == 0 {
			scans[n.ID] = true
		}
	}
	if len(sk.Sources) != len(sj.inputs) {
		t.Fatalf("the collector traces the key of %d inputs, want %d: %+v", len(sk.Sources), len(sj.inputs), sk.Sources)
	}
	for i, side := range sk.Sources {
		tb, err := sqlplan.ParseCreateTable(sj.inputs[i].table)
		if err != nil {
			t.Fatal(err)
		}
		for k, src := range side {
			if src.Table != tb.Name || src.Column != sj.keyColumns[k] || src.Computed() || !scans[src.Vertex] {
				t.Fatalf("input %d key column %s traced to %+v, want column %s of table %s in a source vertex: %q", i, sj.keyColumns[k], src, sj.keyColumns[k], tb.Name, d)
			}
		}
	}
	t.Logf("plan: keyed by %v (SQL, %s), traced to %+v", sk.Columns, sk.Operator, sk.Sources)
	j, err := e.flink.REST.job(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range j.Vertices {
		if v.ID == keyed[0] {
			if v.Parallelism != sqlP {
				t.Fatalf("keyed vertex %q runs at parallelism %d, want %d", v.Name, v.Parallelism, sqlP)
			}
			want, _ := assign.DefaultMaxParallelism(sqlP)
			if v.MaxParallelism != want {
				t.Fatalf("keyed vertex %q has max parallelism %d, want Flink's default %d", v.Name, v.MaxParallelism, want)
			}
			t.Logf("keyed vertex %q (parallelism %d, max parallelism %d)", v.Name, v.Parallelism, v.MaxParallelism)
			return v.ID, v.MaxParallelism, sk
		}
	}
	t.Fatalf("keyed vertex %s of the plan is not among the job's vertices", keyed[0])
	return "", 0, nil
}

// productKeySpec is the key spec the sample form builds for input i of a
// SQL job: the table's CREATE TABLE statement and the key columns the
// plan names for that input.
func productKeySpec(t *testing.T, in sqlInput, cols []string) keysample.KeySpec {
	t.Helper()
	tb, err := sqlplan.ParseCreateTable(in.table)
	if err != nil {
		t.Fatal(err)
	}
	o, err := keysample.SQLTableKey(tb, cols)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := keysample.ParseSQLKeySpec(o)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// sqlWaitRead waits until the keyed vertex's subtasks have received total
// records in all (numRecordsIn, per subtask) and the counts held still for
// two metric refreshes; it returns them.
func (e *lineEnv) sqlWaitRead(t *testing.T, jobID, vertexID string, total int, timeout time.Duration) []int {
	t.Helper()
	ids := perSubtask(sqlP, "numRecordsIn")
	deadline := time.Now().Add(timeout)
	var last []int
	stable := 0
	for time.Now().Before(deadline) {
		vals, err := e.flink.REST.metricValues(jobID, vertexID, ids)
		counts := make([]int, sqlP)
		sum, complete := 0, err == nil
		for i, id := range ids {
			v, ok := vals[id]
			n, perr := strconv.ParseFloat(v, 64)
			if !ok || perr != nil {
				complete = false
				continue
			}
			counts[i] = int(n)
			sum += int(n)
		}
		if complete && sum > total {
			t.Fatalf("the keyed subtasks received %d records (%v), more than the %d produced", sum, counts, total)
		}
		if complete && sum == total {
			if slices.Equal(counts, last) {
				stable++
			} else {
				stable = 0
			}
			if stable >= 2 {
				return counts
			}
		}
		last = counts
		time.Sleep(700 * time.Millisecond)
	}
	t.Fatalf("the keyed subtasks did not receive all %d records within %s: numRecordsIn %v", total, timeout, last)
	return nil
}

// checkSQLKeySample samples each input topic of j with the read-only
// sampler, keys each record as the sample page does (the product's SQL key
// spec, from the table's CREATE TABLE statement and the key columns the
// collector read from the plan; the test's own sqlKeyOf must agree on
// every record) and counts the key rows in a keysample.Summary, then
// compares the records per keyed subtask with observed as checkPrediction
// does. It returns the whole-topic prediction.
func (e *lineEnv) checkSQLKeySample(t *testing.T, j sqlJob, observed []int, maxP int, sk *fcollect.SQLKey) []int64 {
	t.Helper()
	var control *keysample.Summary
	run := func(fraction int) *keysample.Summary {
		sum := keysample.NewSummary(4096, maxP)
		if fraction == 1 && j.inputs[0].control != nil {
			control = keysample.NewSummary(16, maxP)
		}
		for ii, in := range j.inputs {
			spec := productKeySpec(t, in, sk.Columns[ii])
			keyOf := in.keyOf()
			disagree := 0
			var controlOf sqlKeyOf
			if control != nil {
				controlOf = in.control()
			}
			e.sampleLast(t, in.topic, in.records, fraction, func(r sample.Record) {
				k, ok := addKey(sum, spec, r)
				if !ok {
					return
				}
				if h, err := keyOf(r.Value); err != nil || h != k.Hash {
					disagree++
				}
				if controlOf != nil {
					if h, err := controlOf(r.Value); err == nil {
						control.Add(keysample.Key{Text: strconv.Itoa(int(h)), Hash: h})
					}
				}
			})
			if disagree > 0 {
				t.Errorf("%s: the product's key spec (%s) and the test's own key rows disagree on %d records", in.topic.Name, spec, disagree)
			}
		}
		if errs := sum.Errors(); len(errs) > 0 {
			t.Fatalf("records whose key row could not be written: %v", errs)
		}
		return sum
	}
	full := run(1)
	predicted := e.checkPrediction(t, "SQL "+j.what+", key rows ("+strings.Join(j.keyTypes, ", ")+") of all records", "numRecordsIn", full, run(10), sqlP, observed)
	if control != nil {
		lc, err := control.AtParallelism(sqlP)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("  control: %s hashed as a Java String (a DataStream keyBy) would predict %v", strings.Join(j.keyColumns, ", "), lc.PerSubtask)
		if samePerSubtask(lc.PerSubtask, observed) {
			t.Errorf("the Java String hash predicts the same records per subtask as the key rows: the data cannot tell the two rules apart")
		}
	}
	return predicted
}

// sqlManifest is a SQL job's manifest.json.
type sqlManifest struct {
	FlinkVersion string           `json:"flinkVersion"`
	Line         string           `json:"line"`
	Variant      string           `json:"variant"`
	What         string           `json:"what"`
	Recorder     string           `json:"recorder"`
	Job          map[string]any   `json:"job"`
	Statements   []string         `json:"statements"`
	Inputs       []map[string]any `json:"inputs"`
	KeyedVertex  string           `json:"keyedVertex"`
	Expected     map[string]any   `json:"expected"`
	recScrub
}

// recordSQL fetches the job, its plan and the keyed vertex's detail and
// numRecordsIn, and writes them (SKEWSCOPE_RECORD=1) or compares their
// format with the committed recordings. The vertex detail's per-subtask
// read-records must agree with numRecordsIn.
func (e *lineEnv) recordSQL(t *testing.T, j sqlJob, jobID, keyed string, observed []int, predicted []int64, maxP int) {
	t.Helper()
	rc := &recorder{t: t, rest: e.flink.REST}
	v := vars("jobid", jobID)
	rc.fetch("job", "/jobs/{jobid}", v, nil)
	rc.fetch("job-plan", "/jobs/{jobid}/plan", v, nil)
	kv := vars("jobid", jobID, "vertexid", keyed)
	detail := rc.fetch("vertex-keyed", "/jobs/{jobid}/vertices/{vertexid}", kv, nil)
	rc.fetch("vertex-keyed-metrics-values", "/jobs/{jobid}/vertices/{vertexid}/metrics", kv, q("get", strings.Join(perSubtask(sqlP, "numRecordsIn"), ",")))

	var d struct {
		Subtasks []struct {
			Subtask int `json:"subtask"`
			Metrics struct {
				ReadRecords int64 `json:"read-records"`
			} `json:"metrics"`
		} `json:"subtasks"`
	}
	if err := json.Unmarshal(rc.byName("vertex-keyed").body, &d); err != nil || detail == nil {
		t.Fatalf("vertex detail: %v", err)
	}
	read := make([]int, sqlP)
	for _, s := range d.Subtasks {
		if s.Subtask >= 0 && s.Subtask < sqlP {
			read[s.Subtask] = int(s.Metrics.ReadRecords)
		}
	}
	if !slices.Equal(read, observed) {
		t.Errorf("the vertex detail's read-records per subtask %v differ from numRecordsIn %v", read, observed)
	}

	var inputs []map[string]any
	for _, in := range j.inputs {
		inputs = append(inputs, map[string]any{"topic": in.topic.Name, "partitions": in.topic.Partitions, "records": in.records})
	}
	m := sqlManifest{
		FlinkVersion: e.flink.Version, Line: e.line.Name, Variant: j.name, What: j.what,
		Recorder: "SKEWSCOPE_RECORD=1 SKEWSCOPE_E2E_LINES=" + e.line.Name + " go test -tags e2e -count=1 -run 'TestFlinkGroundTruth/flink-" + e.line.Name + "/sql' ./e2e/ (e2e/sql_test.go)",
		Job: map[string]any{
			"name": "sql-" + j.name, "parallelism": sqlP, "maxParallelism": fmt.Sprintf("%d (Flink's default)", maxP),
			"miniBatch": "off (table.exec.mini-batch.enabled=false, Flink's default)",
			"submitted": "StreamTableEnvironment in streaming mode, the statements below in order, the INSERT attached as a DataStream (SqlJob.java)",
		},
		Statements:  j.statements,
		Inputs:      inputs,
		KeyedVertex: keyed,
		Expected: map[string]any{
			"keyColumns": j.keyColumns, "keyTypes": j.keyTypes,
			"numRecordsInPerSubtask": observed, "predictedPerSubtask": predicted,
			"rule": "key group = murmurHash(BinaryRowData.hashCode() of the key row) % maxParallelism, subtask = keyGroup * parallelism / maxParallelism; numRecordsIn counts every input record of the keyed vertex (both inputs of a join)",
		},
		recScrub: recScrub{ScrubNote: "As in ../../<flink-version>/manifest.json: only host-specific values are scrubbed; ids, timestamps and metric values are as Flink sent them. " +
			"Recorded once every input record had reached the keyed vertex (the sum of numRecordsIn equal to the records produced, unchanged over two metric refreshes), the job still RUNNING. " +
			"{bootstrap} and {group} in the statements stand for the broker's address and the job's name."},
	}
	e.keepRecordings(t, sqlRecordingsRoot, j.name, &m, rc.recs, "")
}
