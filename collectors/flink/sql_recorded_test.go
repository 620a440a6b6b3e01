package flink

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sqlRecordedJobs are the Flink SQL jobs whose REST answers the e2e tier
// records on every line (e2e/sql_test.go).
var sqlRecordedJobs = []string{"group-by-user", "group-by-account-region", "join-users"}

// sqlRecordedSources are the table columns each recorded job's key
// columns come from, per keyed input.
var sqlRecordedSources = map[string]string{
	"group-by-user":           "[events.user_id]",
	"group-by-account-region": "[events.account_id events.region]",
	"join-users":              "[events.user_id] [users.user_id]",
}

// TestSQLJobRecordings: the answers of real Flink SQL jobs (a GROUP BY on a
// STRING column, one on (BIGINT, STRING), a regular inner join; recorded
// from MiniClusters in testdata/flink/sql/<version>/<job>/) decode with the
// collector's own types: the job and its vertices, the plan with one keyed
// vertex whose HASH inputs are the SQL hash exchange, every node's
// description present and HTML as Flink sends it (lines joined by <br/>,
// the planner's operator with its key columns, a source its table), the
// keyed vertex's detail and its per-subtask numRecordsIn, which the
// manifest records as the data path's counts.
func TestSQLJobRecordings(t *testing.T) {
	for _, version := range versions {
		for _, job := range sqlRecordedJobs {
			t.Run(version+"/"+job, func(t *testing.T) {
				dir := filepath.Join("..", "testdata", "flink", "sql", version, job)
				if _, err := os.Stat(dir); err != nil {
					t.Fatalf("no recordings in %s (record them: SKEWSCOPE_RECORD=1 go test -tags e2e -run 'TestFlinkGroundTruth/.*/sql' ./e2e/): %v", dir, err)
				}
				checkSQLRecording(t, dir, version, job)
			})
		}
	}
}

func checkSQLRecording(t *testing.T, dir, version, job string) {
	var m struct {
		FlinkVersion string `json:"flinkVersion"`
		Variant      string `json:"variant"`
		Job          struct {
			Name        string `json:"name"`
			Parallelism int    `json:"parallelism"`
		} `json:"job"`
		Inputs []struct {
			Topic   string `json:"topic"`
			Records int64  `json:"records"`
		} `json:"inputs"`
		KeyedVertex string `json:"keyedVertex"`
		Expected    struct {
			KeyColumns []string `json:"keyColumns"`
			NumRecords []int64  `json:"numRecordsInPerSubtask"`
		} `json:"expected"`
		Recordings map[string]recEntry `json:"recordings"`
	}
	readJSON(t, filepath.Join(dir, "manifest.json"), &m)
	if m.FlinkVersion != version || m.Variant != job {
		t.Fatalf("manifest is for Flink %s, %s", m.FlinkVersion, m.Variant)
	}
	jobID := m.Recordings["job"].Vars["jobid"]
	if jobID == "" || m.KeyedVertex == "" || m.Job.Parallelism < 1 || len(m.Expected.KeyColumns) == 0 {
		t.Fatalf("manifest lacks the job id, keyed vertex, parallelism or key columns: %+v", m)
	}
	p := m.Job.Parallelism

	var j Job
	readJSON(t, filepath.Join(dir, "job.json"), &j)
	if j.ID != jobID || j.Name != m.Job.Name || j.State != "RUNNING" {
		t.Errorf("job: id %s, name %q, state %s; want %s, %q, RUNNING", j.ID, j.Name, j.State, jobID, m.Job.Name)
	}
	var keyedV *Vertex
	for i := range j.Vertices {
		if j.Vertices[i].ID == m.KeyedVertex {
			keyedV = &j.Vertices[i]
		}
	}
	if keyedV == nil {
		t.Fatalf("job lists no vertex %s", m.KeyedVertex)
	}
	if keyedV.Parallelism != p || keyedV.MaxParallelism != 128 || keyedV.Status != "RUNNING" {
		t.Errorf("keyed vertex %q: parallelism %d, max parallelism %d, %s; want %d, 128, RUNNING", keyedV.Name, keyedV.Parallelism, keyedV.MaxParallelism, keyedV.Status, p)
	}

	var wire struct {
		Plan *Plan `json:"plan"`
	}
	readJSON(t, filepath.Join(dir, "job-plan.json"), &wire)
	plan := wire.Plan
	if plan == nil || plan.JobID != jobID || len(plan.Nodes) != len(j.Vertices) {
		t.Fatalf("plan: %+v; want job %s with %d nodes", plan, jobID, len(j.Vertices))
	}
	if got := KeyedVertices(plan); !slices.Equal(got, []string{m.KeyedVertex}) {
		t.Errorf("keyed vertices of the plan %v, want [%s]", got, m.KeyedVertex)
	}
	for _, n := range plan.Nodes {
		// JsonPlanGenerator escapes the description as HTML and joins its
		// lines with <br/>: the planner's chained operators, one a line.
		d := n.Description
		if d == "" || strings.Contains(d, "\n") || !strings.HasSuffix(d, "<br/>") || strings.Contains(d, "&lt;br/&gt;") {
			t.Errorf("node %s: description %q is not a <br/>-joined HTML description", n.ID, d)
		}
		// A SQL source names its table: as the planner's TableSourceScan
		// on 1.20 and 2.2, as the Kafka connector's source
		// ("KafkaSource-<catalog>.<database>.<table>") on 2.3.
		if len(n.Inputs) == 0 && !strings.Contains(d, "TableSourceScan(table=[[default_catalog, default_database, ") &&
			!strings.HasPrefix(d, "Source: KafkaSource-default_catalog.default_database.") {
			t.Errorf("source node %s: description %q names no table", n.ID, d)
		}
	}
	// The collector traces each input's key columns to the columns of
	// the table that input reads, in a source vertex: through the
	// planner's TableSourceScan on 1.20 and 2.2, and through the Kafka
	// connector's source name on 2.3.
	if k := SQLKeys(plan)[m.KeyedVertex]; k == nil {
		t.Errorf("no SQL key for the keyed vertex %s", m.KeyedVertex)
	} else if got, want := tracedSources(t, version+" "+job, plan, k), sqlRecordedSources[job]; got != want {
		t.Errorf("key sources %s, want %s", got, want)
	}

	var keyedNode PlanNode
	for _, n := range plan.Nodes {
		if n.ID == m.KeyedVertex {
			keyedNode = n
		}
	}
	wantInputs := len(m.Inputs)
	if len(keyedNode.Inputs) != wantInputs {
		t.Errorf("keyed node has %d inputs, want %d", len(keyedNode.Inputs), wantInputs)
	}
	for _, in := range keyedNode.Inputs {
		if in.ShipStrategy != "HASH" {
			t.Errorf("keyed node input from %s: ship strategy %q, want HASH", in.ID, in.ShipStrategy)
		}
	}
	want := "GroupAggregate(groupBy=[" + strings.Join(m.Expected.KeyColumns, ", ") + "]"
	if strings.HasPrefix(job, "join-") {
		want = "Join(joinType=[InnerJoin], where=[(" + m.Expected.KeyColumns[0] + " = "
	}
	if !strings.Contains(keyedNode.Description, want) {
		t.Errorf("keyed node description %q does not contain %q", keyedNode.Description, want)
	}

	var vd VertexDetails
	readJSON(t, filepath.Join(dir, "vertex-keyed.json"), &vd)
	if vd.ID != m.KeyedVertex || vd.Parallelism != p || len(vd.Subtasks) != p {
		t.Errorf("keyed vertex detail: id %s, parallelism %d, %d subtasks; want %s, %d", vd.ID, vd.Parallelism, len(vd.Subtasks), m.KeyedVertex, p)
	}
	for i, s := range vd.Subtasks {
		if s.Subtask != i || s.Status != "RUNNING" {
			t.Errorf("keyed subtask %d: %d %s", i, s.Subtask, s.Status)
		}
	}

	b, err := os.ReadFile(filepath.Join(dir, "vertex-keyed-metrics-values.json"))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := decodeMetrics(b)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]int64, p)
	for _, mt := range ms {
		i, name, ok := strings.Cut(mt.ID, ".")
		k, err := strconv.Atoi(i)
		if !ok || err != nil || name != "numRecordsIn" || k < 0 || k >= p {
			t.Fatalf("unexpected metric %q", mt.ID)
		}
		v, ok := mt.Int64()
		if !ok {
			t.Fatalf("%s: %q is not a count", mt.ID, mt.Raw)
		}
		got[k] = v
	}
	var sum, produced int64
	for _, n := range got {
		sum += n
	}
	for _, in := range m.Inputs {
		produced += in.Records
	}
	if !slices.Equal(got, m.Expected.NumRecords) || sum != produced {
		t.Errorf("numRecordsIn per subtask %v (sum %d), manifest %v, records produced %d", got, sum, m.Expected.NumRecords, produced)
	}
}
