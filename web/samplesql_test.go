package web

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/keysample"
	"github.com/skewscope/skewscope/live"
)

// paymentsTable is the CREATE TABLE statement of the fixture's topic, as
// a Flink SQL job declares it.
const paymentsTable = `CREATE TABLE payments (
  account_id BIGINT,
  region STRING,
  amount DOUBLE,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp'
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = 'broker:9092',
  'format' = 'json'
)`

// A sample of a SQL table's topic reads each value as Flink's json format
// does and routes the key row of (account_id BIGINT, region STRING): the
// records per key group and subtask equal the produced records' key rows
// routed by assign; records whose key column does not fit are counted by
// a reason naming the column.
func TestSampleSQLTableIsExact(t *testing.T) {
	typ := func(s string) assign.SQLType {
		tp, err := assign.ParseSQLType(s)
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	enc, err := assign.NewKeyRowEncoder(typ("BIGINT"), typ("STRING"))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(25, 3))
	z := rand.NewZipf(r, 1.3, 1, 400)
	regions := []string{"eu-west", "us-east", "ap-south-1", "später"}
	wantSub, wantJava := make([]int64, 4), make([]int64, 4)
	var rs []*kgo.Record
	const n, bad = 6000, 37
	for i := range n {
		acct := int64(z.Uint64()) * 7919
		region := regions[acct%int64(len(regions))]
		v := fmt.Sprintf(`{"account_id":%d,"region":%q,"amount":%d.5}`, acct, region, i%100)
		enc.Reset()
		_ = enc.AppendInt(acct)
		_ = enc.AppendString(region)
		if i%9 == 0 {
			// A null region: its key row has the null bit set.
			v = fmt.Sprintf(`{"account_id":%d,"region":null}`, acct)
			enc.Reset()
			_ = enc.AppendInt(acct)
			_ = enc.AppendNull()
		}
		h, _ := enc.HashCode()
		wantSub[assign.OperatorIndex(128, 4, assign.KeyGroupForHash(h, 128))]++
		wantJava[assign.OperatorIndex(128, 4, assign.KeyGroupForHash(assign.StringHashCode(fmt.Sprint(acct)), 128))]++
		rs = append(rs, &kgo.Record{Topic: "orders", Partition: int32(i % 3), Value: []byte(v)})
	}
	for i := range bad {
		rs = append(rs, &kgo.Record{Topic: "orders", Partition: int32(i % 3), Value: []byte(`{"account_id":"acct-` + fmt.Sprint(i) + `","region":"eu"}`)})
	}
	fx := &sampleFixture{brokers: ordersCluster(t, 3, rs)}
	fx.srv = fx.serve(t, nil)

	// The form as a SQL vertex's page opens it: the key columns filled in.
	doc := getDoc(t, fx.srv.URL+"/kafka/prod/topics/orders/sample?type=sql&keyColumns="+url.QueryEscape("account_id, region")+"&parallelism=4", 200)
	if v, _ := doc.Find(`[data-testid="in-keycolumns"]`).Attr("value"); v != "account_id, region" {
		t.Errorf("the form's key columns %q", v)
	}
	if _, open := doc.Find(`[data-testid="sample-sql"]`).Attr("open"); !open {
		t.Errorf("the SQL fields are closed on a form opened for a SQL key")
	}

	id := fx.start(t, url.Values{"type": {"sql"}, "keyColumns": {"account_id, region"}, "table": {paymentsTable},
		"n": {"1000000"}, "parallelism": {"4"}, "maxParallelism": {"128"}})
	sr := fx.wait(t, id)
	if sr.Records != n || sr.Progress.StoppedBy != "complete" {
		t.Fatalf("sample keyed %d records (%s), want %d", sr.Records, sr.Progress.StoppedBy, n)
	}
	for i := range wantSub {
		if sr.Now.PerSubtask[i] != wantSub[i] {
			t.Errorf("subtask %d: sampled %d records, the key rows route %d there", i, sr.Now.PerSubtask[i], wantSub[i])
		}
	}
	if fmt.Sprint(wantSub) == fmt.Sprint(wantJava) {
		t.Fatalf("the fixture cannot tell key rows from Java Strings: %v", wantSub)
	}
	var unreadable int64
	for _, e := range sr.Errors {
		unreadable += e.Count
		if !strings.Contains(e.Message, "account_id") {
			t.Errorf("unreadable records' reason %q does not name the column", e.Message)
		}
	}
	if unreadable != bad {
		t.Errorf("%d records counted unreadable (%+v), want %d", unreadable, sr.Errors, bad)
	}
	if !strings.HasPrefix(sr.TopKeys[0].Key, "[") {
		t.Errorf("top key %q, want a composite key's JSON array", sr.TopKeys[0].Key)
	}
	page := getDoc(t, fx.srv.URL+"/samples/"+id, 200)
	if ctx := page.Find(".context").Text(); !strings.Contains(ctx, "value as json, key (account_id BIGINT, region STRING)") {
		t.Errorf("sample page context %q does not say how keys are read", ctx)
	}
}

// Each wrong SQL field of the sample form is named.
func TestSampleSQLBadInput(t *testing.T) {
	fx := newSampleFixture(t, 10)
	for _, tc := range []struct {
		form  url.Values
		field string
		want  string
	}{
		{url.Values{"type": {"sql"}, "table": {paymentsTable}}, "keyColumns", "name the key columns"},
		{url.Values{"type": {"sql"}, "keyColumns": {"account_id"}}, "table", "CREATE TABLE statement"},
		{url.Values{"type": {"sql"}, "keyColumns": {"nope"}, "table": {paymentsTable}}, "keyColumns", "nope: not a column"},
		{url.Values{"type": {"sql"}, "keyColumns": {"ts"}, "table": {paymentsTable}}, "keyColumns", "metadata column"},
		{url.Values{"type": {"sql"}, "keyColumns": {"account_id BIGINT"}, "table": {paymentsTable}}, "keyColumns", "names alone"},
		{url.Values{"type": {"sql"}, "keyColumns": {"a"}, "table": {"CREATE TABLE t (\n  a INT\n  b INT\n) WITH ('format' = 'json')"}}, "table", "at 3:"},
		{url.Values{"type": {"sql"}, "keyColumns": {"tags"}, "table": {"user_id STRING, tags ARRAY<STRING>"}}, "keyColumns", "ARRAY"},
		{url.Values{"type": {"sql"}, "keyColumns": {"a"}, "table": {"a INT\n b INT"}}, "table", "at 2:"},
		{url.Values{"type": {"sql"}, "keyColumns": {"a"}, "table": {"a INT"}, "format": {"parquet"}}, "format", "parquet"},
	} {
		tc.form.Set("parallelism", "4")
		resp, err := http.PostForm(fx.srv.URL+"/kafka/prod/topics/orders/sample", tc.form)
		if err != nil {
			t.Fatal(err)
		}
		doc := docOf(t, resp)
		msg := doc.Find(`[data-error-for="` + tc.field + `"]`).Text()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
			t.Errorf("form %v: %d, %s message %q, want 400 naming %q", tc.form, resp.StatusCode, tc.field, msg, tc.want)
		}
	}
}

// The verdict of a sample started from a SQL vertex says what the
// aggregation's phases do to the heaviest key of the busiest subtask.
func TestSQLPhaseLines(t *testing.T) {
	const maxP, p = 128, 4
	hotKG := 0
	for kg := range maxP {
		if assign.OperatorIndex(maxP, p, kg) == 2 {
			hotKG = kg
			break
		}
	}
	snap := func(k *live.SQLKeyView, mode string) sampleSnapshot {
		f := &sampleForm{Type: "sql", maxP: maxP, p: p, sqlVertex: k}
		f.req.Mode = mode
		s := sampleSnapshot{Form: f, Records: 10000,
			Top: []keysample.HeavyKey{{Text: "cold", KeyGroup: 0, Count: 3000}, {Text: "u-42", KeyGroup: hotKG, Count: 2500}},
			Now: &keysample.Layout{Parallelism: p, Busiest: 2}}
		s.Progress.Elapsed = 10 * time.Second
		return s
	}
	lines := func(s sampleSnapshot) string {
		var b strings.Builder
		for _, l := range sqlPhaseLines(s) {
			b.WriteString(l.Kind + ": " + l.Text + "\n")
		}
		return b.String()
	}
	two := &live.SQLKeyView{Operator: "GlobalGroupAggregate", Columns: [][]string{{"user_id"}}, Named: true, TwoPhase: true, Phase: "global", InputParallelism: 8, MiniBatchMs: 2000}
	got := lines(snap(two, "live"))
	for _, w := range []string{
		"computed: The plan aggregates in two phases (LocalGroupAggregate → GlobalGroupAggregate): each of the 8 upstream subtasks folds the records of \"u-42\" in a mini-batch (2,000 ms) into one",
		"subtask 2 receives at most one record of \"u-42\" per mini-batch from each, not its 25% of the records",
		// 250 records/s of "u-42"; 8 subtasks × 0.5 batches/s = 4/s reach it.
		"estimated: At the sampled 250/s of \"u-42\", the local phase absorbs about 98% of its records: at most 4.0/s still reach subtask 2.",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("two-phase lines\n%s\nlack %q", got, w)
		}
	}
	one := &live.SQLKeyView{Operator: "GroupAggregate", Columns: [][]string{{"user_id"}}, Named: true, InputParallelism: 4}
	got = lines(snap(one, "live"))
	for _, w := range []string{
		"Subtask 2 aggregates key \"u-42\" (25% of the records) alone: a single-phase GroupAggregate",
		"at most 4 records of \"u-42\" per second would reach subtask 2 instead of the sampled 250/s (about 98% fewer)",
		"Split distinct (table.optimizer.distinct-agg.split.enabled = true)",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("single-phase lines\n%s\nlack %q", got, w)
		}
	}
	if got := lines(snap(one, "last")); strings.Contains(got, "instead of the sampled") {
		t.Errorf("a last-N sample has no rate, yet: %s", got)
	}
	if got := lines(snap(&live.SQLKeyView{Operator: "Join", Named: true, Columns: [][]string{{"a"}, {"a"}}}, "live")); got != "" {
		t.Errorf("a join: %s", got)
	}
	if got := lines(snap(nil, "live")); got != "" {
		t.Errorf("a sample not started from a SQL vertex: %s", got)
	}
}

// An avro-confluent table's records name their writer schema by id; with
// the cluster's schema registry configured the sample reads it there.
func TestSampleSQLAvroConfluentFromRegistry(t *testing.T) {
	const schema = `{"type":"record","name":"Payment","fields":[{"name":"user_id","type":"string"},{"name":"amount","type":"double"}]}`
	var hits atomic.Int64
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path != "/schemas/ids/7" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error_code":40403,"message":"Schema not found"}`))
			return
		}
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		_ = json.NewEncoder(w).Encode(map[string]string{"schema": schema})
	}))
	defer reg.Close()
	sch := avro.MustParse(schema)
	st, _ := assign.ParseSQLType("STRING")
	enc, _ := assign.NewKeyRowEncoder(st)
	want := make([]int64, 3)
	var rs []*kgo.Record
	for i := range 900 {
		user := fmt.Sprintf("user-%d", i%37*i%11)
		body, err := avro.Marshal(sch, map[string]any{"user_id": user, "amount": 1.5})
		if err != nil {
			t.Fatal(err)
		}
		v := append([]byte{0, 0, 0, 0, 7}, body...)
		if i%100 == 0 {
			v[4] = 9 // a schema id the registry does not have
		} else {
			enc.Reset()
			_ = enc.AppendString(user)
			h, _ := enc.HashCode()
			want[assign.OperatorIndex(128, 3, assign.KeyGroupForHash(h, 128))]++
		}
		rs = append(rs, &kgo.Record{Topic: "orders", Partition: int32(i % 2), Value: v})
	}
	fx := &sampleFixture{brokers: ordersCluster(t, 2, rs)}
	fx.srv = fx.serve(t, func(o *Options) { o.KafkaClusters[0].SchemaRegistry = reg.URL })
	id := fx.start(t, url.Values{"type": {"sql"}, "keyColumns": {"user_id"}, "format": {"avro-confluent"},
		"table": {"user_id STRING, amount DOUBLE"}, "n": {"100000"}, "parallelism": {"3"}, "maxParallelism": {"128"}})
	sr := fx.wait(t, id)
	for i := range want {
		if sr.Now.PerSubtask[i] != want[i] {
			t.Errorf("subtask %d: sampled %d, the key rows route %d there", i, sr.Now.PerSubtask[i], want[i])
		}
	}
	if len(sr.Errors) != 1 || sr.Errors[0].Count != 9 || !strings.Contains(sr.Errors[0].Message, "9") {
		t.Errorf("records of an unknown schema id: %+v, want 9 counted under a reason naming id 9", sr.Errors)
	}
	if n := hits.Load(); n > 4 {
		t.Errorf("%d registry requests for two schema ids: each id is fetched once", n)
	}
}
