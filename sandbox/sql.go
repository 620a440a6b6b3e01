package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/skewscope/skewscope/assign"
)

// paymentsJob is the sandbox's Flink SQL job: it reads payments and
// aggregates them per user.
const paymentsJob = "payments-by-user"

// sqlJob is what makes a sandbox job a Flink SQL job: the names and plan
// descriptions Flink gives its two vertices, and the column of the record
// value its keyed exchange keys by.
type sqlJob struct {
	// sourceVertex and keyedVertex are the JobGraph's vertex names (the
	// chained operators' names joined by " -> "), sourceOperator and
	// keyedOperator the names of the operators the metrics are scoped
	// by, sourceDescription and keyedDescription the plan's node
	// descriptions (the operator tree, "<br/>" a line, "+- " a child).
	sourceVertex, sourceOperator, sourceDescription string
	keyedVertex, keyedOperator, keyedDescription    string
	// keyColumn is the GROUP BY column: a STRING field of the record
	// value, read as Flink's json format reads it.
	keyColumn string
	// fastPrefix is how a value the sandbox writes starts: the key
	// column first, as a JSON string.
	fastPrefix []byte
}

// paymentsSQL is payments-by-user,
//
//	CREATE TABLE payments (
//	  user_id STRING, region STRING, amount DOUBLE, ts BIGINT,
//	  rowtime AS TO_TIMESTAMP_LTZ(ts, 3),
//	  WATERMARK FOR rowtime AS rowtime - INTERVAL '1' SECOND
//	) WITH ('connector' = 'kafka', 'topic' = 'payments', 'format' = 'json', ...);
//	CREATE TABLE user_totals (user_id STRING, n BIGINT, total DOUBLE) WITH ('connector' = 'blackhole');
//	INSERT INTO user_totals SELECT user_id, COUNT(*), SUM(amount) FROM payments GROUP BY user_id
//
// named and described as Flink 2.2.1's planner names and describes it:
// sandbox/testdata/sql-payments-2.2.1.json was written by Flink's own
// planner and JsonPlanGenerator for these statements (sandbox/testdata/sqlgen),
// and the test compares the fake JobManager's answers with it. The Kafka table source takes the watermark
// (SupportsWatermarkPushDown), so the scan's description carries it and no
// WatermarkAssigner follows; the Calc keeps the two columns the aggregate
// reads; the blackhole sink's writer is chained to the aggregate.
var paymentsSQL = sqlJob{
	sourceVertex:   "Source: payments[1] -> Calc[2]",
	sourceOperator: "Source: payments[1]",
	sourceDescription: "[1]:TableSourceScan(table=[[default_catalog, default_database, payments, " +
		"watermark=[-(TO_TIMESTAMP_LTZ(ts, 3), 1000:INTERVAL SECOND)], watermarkEmitStrategy=[on-periodic]]], " +
		"fields=[user_id, region, amount, ts])<br/>+- [2]:Calc(select=[user_id, amount])<br/>",
	keyedVertex:      "GroupAggregate[4] -> user_totals[5]: Writer",
	keyedOperator:    "GroupAggregate[4]",
	keyedDescription: "[4]:GroupAggregate(groupBy=[user_id], select=[user_id, COUNT(*) AS EXPR$1, SUM(amount) AS EXPR$2])<br/>+- user_totals[5]: Writer<br/>",
	keyColumn:        "user_id",
	fastPrefix:       []byte(`{"user_id":"`),
}

// newKeyRowEncoder returns an encoder of the job's key rows: one STRING
// column.
func (q *sqlJob) newKeyRowEncoder() *assign.KeyRowEncoder {
	t, err := assign.ParseSQLType("STRING")
	if err != nil {
		panic(err) // a constant type
	}
	e, err := assign.NewKeyRowEncoder(t)
	if err != nil {
		panic(err)
	}
	return e
}

// keyGroup is the key group of a record value: its key column's key row
// (a null when the value has no such field, or a null one), hashed by
// BinaryRowData.hashCode, then murmurHash % maxP. A value that is not a
// JSON object, or whose key does not fit a key row, is routed as the null
// key, with an error saying why.
//
// Mirrors the hash exchange of a SQL GROUP BY: the planner's
// BinaryRowDataKeySelector (KeySelectorUtil.getRowDataSelector) projects
// the key columns into a BinaryRowData, and KeyGroupStreamPartitioner
// routes it by KeyGroupRangeAssignment.assignToKeyGroup, whose hash is the
// row's hashCode.
func (q *sqlJob) keyGroup(e *assign.KeyRowEncoder, value []byte, maxP int) (int, error) {
	e.Reset()
	v, null, err := q.keyValue(value)
	if err == nil && !null {
		// A key of up to 32 bytes is converted on the stack: no
		// allocation.
		err = e.AppendString(string(v))
	}
	if err != nil || null {
		e.Reset()
		if nerr := e.AppendNull(); nerr != nil && err == nil {
			err = nerr
		}
	}
	h, herr := e.HashCode()
	if herr != nil && err == nil {
		err = herr
	}
	return assign.KeyGroupForHash(h, maxP), err
}

// keyValue returns the key column of a JSON record value as Flink's json
// format reads it into a STRING column (JsonToRowDataConverters
// .convertToString): a JSON string's text, null for a missing or null
// field. The sandbox writes the key as a string; any other kind is
// refused (Flink would write its JSON text). The values the sandbox writes
// start with the key as a plain JSON string and are read without decoding
// the rest.
func (q *sqlJob) keyValue(value []byte) (v []byte, null bool, err error) {
	if rest, ok := bytes.CutPrefix(value, q.fastPrefix); ok {
		if end := bytes.IndexByte(rest, '"'); end >= 0 && bytes.IndexByte(rest[:end], '\\') < 0 {
			return rest[:end], false, nil
		}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(value, &fields); err != nil {
		return nil, true, fmt.Errorf("record value is not a JSON object: %v", err)
	}
	raw, ok := fields[q.keyColumn]
	if !ok {
		return nil, true, nil
	}
	raw = bytes.TrimSpace(raw)
	switch {
	case bytes.Equal(raw, []byte("null")):
		return nil, true, nil
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, true, fmt.Errorf("column %s: %v", q.keyColumn, err)
		}
		return []byte(s), false, nil
	}
	return nil, true, fmt.Errorf("column %s: %.20s is not a JSON string", q.keyColumn, raw)
}
