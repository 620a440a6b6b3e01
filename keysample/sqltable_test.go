package keysample

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/sqlplan"
)

// A table's CREATE TABLE statement says which part of the record holds the
// key and how it is read.
func TestSQLTableKey(t *testing.T) {
	parse := func(stmt string) sqlplan.Table {
		t.Helper()
		tb, err := sqlplan.ParseCreateTable(stmt)
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	value := parse(`CREATE TABLE events (
  user_id STRING,
  account_id BIGINT,
  tags ARRAY<STRING>,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  day AS CAST(ts AS DATE)
) WITH ('connector' = 'kafka', 'topic' = 'events', 'format' = 'json', 'json.ignore-parse-errors' = 'true', 'properties.group.id' = 'g')`)
	o, err := SQLTableKey(value, []string{"account_id", "user_id"})
	if err != nil {
		t.Fatal(err)
	}
	want := SQLKeyOptions{From: "value", Format: "json", Key: []string{"account_id", "user_id"},
		Columns: []SQLColumn{{"user_id", "STRING"}, {"account_id", "BIGINT"}, {"tags", "ARRAY<STRING>"}},
		Options: map[string]string{"json.ignore-parse-errors": "true"}}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("value-keyed table (-want +got):\n%s", diff)
	}
	spec, err := ParseSQLKeySpec(o)
	if err != nil {
		t.Fatal(err)
	}
	k, err := spec.Key(nil, []byte(`{"user_id":"u1","account_id":7,"tags":["a"]}`))
	if err != nil || k.Text != `[7,"u1"]` {
		t.Errorf("key of a record: %+v, %v", k, err)
	}

	keyed := parse(`CREATE TABLE orders (k_id BIGINT, region STRING, amount DOUBLE) WITH (
  'connector' = 'kafka', 'key.format' = 'csv', 'key.fields' = 'k_id', 'key.fields-prefix' = 'k_',
  'key.csv.field-delimiter' = ';', 'value.format' = 'json', 'value.fields-include' = 'EXCEPT_KEY', 'value.json.fail-on-missing-field' = 'true')`)
	o, err = SQLTableKey(keyed, []string{"k_id"})
	if err != nil {
		t.Fatal(err)
	}
	want = SQLKeyOptions{From: "key", Format: "csv", Key: []string{"id"}, Columns: []SQLColumn{{"id", "BIGINT"}},
		Options: map[string]string{"csv.field-delimiter": ";"}}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("record-key table (-want +got):\n%s", diff)
	}
	o, err = SQLTableKey(keyed, []string{"region"})
	if err != nil {
		t.Fatal(err)
	}
	want = SQLKeyOptions{From: "value", Format: "json", Key: []string{"region"}, Columns: []SQLColumn{{"region", "STRING"}, {"amount", "DOUBLE"}},
		Options: map[string]string{"json.fail-on-missing-field": "true"}}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("value of a record-key table (-want +got):\n%s", diff)
	}

	for _, tt := range []struct {
		tb   sqlplan.Table
		key  []string
		want string
	}{
		{value, []string{"nope"}, "key column nope: not a column of table events"},
		{value, []string{"tags"}, "key column tags"},
		{value, []string{"ts"}, "metadata column"},
		{value, []string{"day"}, "computed column"},
		{keyed, []string{"k_id", "region"}, "some are read from the record key"},
		{value, nil, "name at least one"},
		{parse(`CREATE TABLE x (a INT) WITH ('connector' = 'kafka')`), []string{"a"}, "no format or value.format"},
	} {
		if _, err := SQLTableKey(tt.tb, tt.key); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("SQLTableKey(%s, %v) = %v, want an error naming %q", tt.tb.Name, tt.key, err, tt.want)
		}
	}
}
