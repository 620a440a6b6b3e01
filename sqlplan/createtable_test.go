package sqlplan

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/skewscope/skewscope/assign"
)

const kafkaOrders = `-- the orders topic, keyed by order id
CREATE TABLE IF NOT EXISTS ` + "`cat`.`db`.`orders`" + ` (
  ` + "`k_order_id`" + ` BIGINT NOT NULL,
  user_id STRING COMMENT 'who ordered',
  ` + "`region name`" + ` VARCHAR(20),
  amount DECIMAL(10, 2),
  tags ARRAY<STRING>,
  address ROW<street STRING, zip INT>,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
  ` + "`partition`" + ` INT METADATA VIRTUAL,
  amount_cents AS CAST(amount * 100 AS BIGINT), /* computed */
  proc AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,
  CONSTRAINT pk PRIMARY KEY (k_order_id) NOT ENFORCED
) COMMENT 'orders'
WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'key.format' = 'raw',
  'key.fields' = 'k_order_id',
  'key.fields-prefix' = 'k_',
  'value.format' = 'json',
  'value.fields-include' = 'EXCEPT_KEY',
  'json.timestamp-format.standard' = 'it''s ISO-8601'
);`

func TestParseCreateTable(t *testing.T) {
	tb, err := ParseCreateTable(kafkaOrders)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Name != "cat.db.orders" {
		t.Errorf("Name = %q, want cat.db.orders", tb.Name)
	}
	type col struct {
		Name, TypeText, Type string
		Unsupported          bool
		Computed             bool
		Expr                 string
		Metadata, Virtual    bool
		MetadataKey, Comment string
	}
	var got []col
	for _, c := range tb.Columns {
		g := col{Name: c.Name, TypeText: c.TypeText, Computed: c.Computed, Expr: c.Expr,
			Metadata: c.Metadata, Virtual: c.Virtual, MetadataKey: c.MetadataKey, Comment: c.Comment}
		var u *assign.UnsupportedSQLTypeError
		switch {
		case c.Computed:
		case c.TypeErr == nil:
			g.Type = c.Type.String()
		case errors.As(c.TypeErr, &u):
			g.Unsupported = true
			if !strings.Contains(c.TypeErr.Error(), "column "+c.Name) {
				t.Errorf("column %s: error %q does not name the column", c.Name, c.TypeErr)
			}
		default:
			t.Errorf("column %s: %v", c.Name, c.TypeErr)
		}
		got = append(got, g)
	}
	want := []col{
		{Name: "k_order_id", TypeText: "BIGINT NOT NULL", Type: "BIGINT NOT NULL"},
		{Name: "user_id", TypeText: "STRING", Type: "VARCHAR(2147483647)", Comment: "who ordered"},
		{Name: "region name", TypeText: "VARCHAR(20)", Type: "VARCHAR(20)"},
		{Name: "amount", TypeText: "DECIMAL(10, 2)", Type: "DECIMAL(10, 2)"},
		{Name: "tags", TypeText: "ARRAY<STRING>", Unsupported: true},
		{Name: "address", TypeText: "ROW<street STRING, zip INT>", Unsupported: true},
		{Name: "ts", TypeText: "TIMESTAMP_LTZ(3)", Type: "TIMESTAMP(3) WITH LOCAL TIME ZONE", Metadata: true, Virtual: true, MetadataKey: "timestamp"},
		{Name: "partition", TypeText: "INT", Type: "INT", Metadata: true, Virtual: true},
		{Name: "amount_cents", Computed: true, Expr: "CAST(amount * 100 AS BIGINT)"},
		{Name: "proc", Computed: true, Expr: "PROCTIME()"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("columns (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"k_order_id"}, tb.PrimaryKey); d != "" {
		t.Errorf("PrimaryKey (-want +got):\n%s", d)
	}
	if got := tb.Options["json.timestamp-format.standard"]; got != "it's ISO-8601" {
		t.Errorf("option with '' = %q", got)
	}
	if len(tb.OptionKeys) != 8 || tb.OptionKeys[0] != "connector" {
		t.Errorf("OptionKeys = %v", tb.OptionKeys)
	}
	for _, c := range []struct{ name, got, want string }{
		{"Connector", tb.Connector(), "kafka"},
		{"ValueFormat", tb.ValueFormat(), "json"},
		{"KeyFormat", tb.KeyFormat(), "raw"},
		{"KeyFieldsPrefix", tb.KeyFieldsPrefix(), "k_"},
		{"ValueFieldsInclude", tb.ValueFieldsInclude(), "EXCEPT_KEY"},
	} {
		if c.got != c.want {
			t.Errorf("%s() = %q, want %q", c.name, c.got, c.want)
		}
	}
	kf, err := tb.KeyFormatFields()
	if err != nil || !cmp.Equal(kf, []string{"order_id"}) {
		t.Errorf("KeyFormatFields() = %v, %v, want [order_id]", kf, err)
	}
	if d := cmp.Diff([]string{"user_id", "region name", "amount", "tags", "address"}, tb.ValueFields()); d != "" {
		t.Errorf("ValueFields (-want +got):\n%s", d)
	}
}

func TestCreateTableKafkaParts(t *testing.T) {
	for _, tc := range []struct {
		name, stmt             string
		valueFormat            string
		keyFields, valueFields []string
		keyFormatErr           string
	}{
		{
			name:        "format alone, value has everything",
			stmt:        "CREATE TABLE t (a INT, b STRING) WITH ('connector'='kafka', 'format'='json')",
			valueFormat: "json", valueFields: []string{"a", "b"},
		},
		{
			name:        "several key fields, value keeps them (ALL)",
			stmt:        "CREATE TABLE t (a INT, b STRING, c DOUBLE) WITH ('connector'='kafka', 'key.format'='json', 'key.fields'='a; b', 'value.format'='avro')",
			valueFormat: "avro", keyFields: []string{"a", "b"}, valueFields: []string{"a", "b", "c"},
		},
		{
			name:        "upsert-kafka: the primary key",
			stmt:        "CREATE TABLE t (a INT, b STRING, PRIMARY KEY (a) NOT ENFORCED) WITH ('connector'='upsert-kafka', 'key.format'='json', 'value.format'='json', 'value.fields-include'='except_key')",
			valueFormat: "json", keyFields: []string{"a"}, valueFields: []string{"b"},
		},
		{
			name:      "key field without the prefix",
			stmt:      "CREATE TABLE t (a INT, k_b STRING) WITH ('key.fields'='a', 'key.fields-prefix'='k_')",
			keyFields: []string{"a"}, valueFields: []string{"a", "k_b"},
			keyFormatErr: "key field a does not start with key.fields-prefix",
		},
		{
			name:      "key field that is computed",
			stmt:      "CREATE TABLE t (a INT, b AS a + 1) WITH ('key.fields'='b')",
			keyFields: []string{"b"}, valueFields: []string{"a"},
			keyFormatErr: "key field b is not a physical column of table t",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb, err := ParseCreateTable(tc.stmt)
			if err != nil {
				t.Fatal(err)
			}
			if got := tb.ValueFormat(); got != tc.valueFormat {
				t.Errorf("ValueFormat() = %q, want %q", got, tc.valueFormat)
			}
			if d := cmp.Diff(tc.keyFields, tb.KeyFields(), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("KeyFields (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.valueFields, tb.ValueFields(), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("ValueFields (-want +got):\n%s", d)
			}
			_, err = tb.KeyFormatFields()
			if tc.keyFormatErr == "" && err != nil || tc.keyFormatErr != "" && (err == nil || !strings.Contains(err.Error(), tc.keyFormatErr)) {
				t.Errorf("KeyFormatFields() error = %v, want %q", err, tc.keyFormatErr)
			}
		})
	}
}

func TestParseCreateTableErrors(t *testing.T) {
	for _, tc := range []struct{ stmt, want string }{
		{"CREATE TABLE t (\n  a INT,\n  b STRING", "CREATE TABLE: expected ')' after column list, found the end at 3:11"},
		{"CREATE TABLE t (\n  a INT\n  b STRING)", "CREATE TABLE: expected ',' or ')' after column a, found 'b' at 3:3"},
		{"SELECT 1", "CREATE TABLE: expected CREATE at the start, found 'SELECT' at 1:1"},
		{"CREATE VIEW v", "CREATE TABLE: expected TABLE after CREATE, found 'VIEW' at 1:8"},
		{"CREATE TABLE (a INT)", "CREATE TABLE: expected the table name after CREATE TABLE, found '(' at 1:14"},
		{"CREATE TABLE t (a INT, a STRING)", "CREATE TABLE: column a given twice, found 'a' at 1:24"},
		{"CREATE TABLE t (a)", "CREATE TABLE: expected a type or AS after column a, found ')' at 1:18"},
		{"CREATE TABLE t (a DECIMAL(10, 2)", "CREATE TABLE: expected ')' after column list, found the end at 1:33"},
		{"CREATE TABLE t (a ROW<b INT", "CREATE TABLE: expected the rest of column a's type, found the end at 1:28"},
		{"CREATE TABLE t (a INT) WITH ('connector' 'kafka')", "CREATE TABLE: expected '=' after option key 'connector', found string 'kafka' at 1:42"},
		{"CREATE TABLE t (a INT) WITH (connector = 'kafka')", "CREATE TABLE: expected an option key in single quotes in WITH (...), found 'connector' at 1:30"},
		{"CREATE TABLE t (a INT) WITH ('a' = 'b', 'a' = 'c')", "CREATE TABLE: option 'a' given twice at 1:41"},
		{"CREATE TABLE t (a INT) WITH ('a' = 'b", "CREATE TABLE: unclosed ' string at 1:36"},
		{"CREATE TABLE t (`a INT)", "CREATE TABLE: unclosed ` identifier at 1:17"},
		{"CREATE TABLE t (a INT) /* open", "CREATE TABLE: unclosed /* comment at 1:24"},
		{"CREATE TABLE t (a INT, PRIMARY KEY (a))", "CREATE TABLE: expected NOT (PRIMARY KEY ... NOT ENFORCED), found ')' at 1:39"},
		{"CREATE TABLE t (a INT, WATERMARK FOR a AS)", "CREATE TABLE: expected the watermark expression, found ')' at 1:42"},
		{"CREATE TABLE t (a INT) extra", "CREATE TABLE: expected WITH, COMMENT, PARTITIONED BY, LIKE or the end of the statement, found 'extra' at 1:24"},
		{"CREATE TABLE t (\n  é INT,\n  b STRING METADATA FROM 1)", "CREATE TABLE: expected a string after METADATA FROM, found '1' at 3:26"},
	} {
		_, err := ParseCreateTable(tc.stmt)
		var se *SyntaxError
		if err == nil || !errors.As(err, &se) || err.Error() != tc.want {
			t.Errorf("ParseCreateTable(%q) error = %v, want %s", tc.stmt, err, tc.want)
		}
	}
}

func TestParseCreateTableForms(t *testing.T) {
	for _, tc := range []struct {
		name, stmt string
		cols       []string // name: type text
		pk         []string
	}{
		{"keywords as column names", "create temporary table t (watermark INT, `primary` STRING, constraint BIGINT, WATERMARK FOR watermark AS watermark)", []string{"watermark: INT", "primary: STRING", "constraint: BIGINT"}, nil},
		{"inline primary key", "CREATE TABLE t (id BIGINT PRIMARY KEY NOT ENFORCED COMMENT 'x', v STRING)", []string{"id: BIGINT", "v: STRING"}, []string{"id"}},
		{"multi-word types", "CREATE TABLE t (a TIMESTAMP(3) WITH LOCAL TIME ZONE, b DOUBLE PRECISION NOT NULL, c CHARACTER VARYING(5), d INTERVAL DAY TO SECOND)", []string{"a: TIMESTAMP(3) WITH LOCAL TIME ZONE", "b: DOUBLE PRECISION NOT NULL", "c: CHARACTER VARYING(5)", "d: INTERVAL DAY TO SECOND"}, nil},
		{"nested types", "CREATE TABLE t (m MAP<STRING, ARRAY<ROW<`a,b` INT, c DECIMAL(3, 1)>>>, n INT)", []string{"m: MAP<STRING, ARRAY<ROW<`a,b` INT, c DECIMAL(3, 1)>>>", "n: INT"}, nil},
		{"partitioned, distributed, no options", "CREATE TABLE t (a INT, b INT) PARTITIONED BY (a) DISTRIBUTED BY HASH(b) INTO 4 BUCKETS;", []string{"a: INT", "b: INT"}, nil},
		{"LIKE", "CREATE TABLE t (a INT) WITH ('x' = 'y') LIKE src (EXCLUDING ALL)", []string{"a: INT"}, nil},
		{"no column list", "CREATE TABLE t WITH ('connector' = 'kafka')", nil, nil},
		{"comments everywhere", "CREATE /* c */ TABLE t ( -- c\n a INT -- c\n , b /* c */ STRING )", []string{"a: INT", "b: STRING"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb, err := ParseCreateTable(tc.stmt)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range tb.Columns {
				got = append(got, c.Name+": "+c.TypeText)
			}
			if d := cmp.Diff(tc.cols, got); d != "" {
				t.Errorf("columns (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.pk, tb.PrimaryKey); d != "" {
				t.Errorf("PrimaryKey (-want +got):\n%s", d)
			}
		})
	}
}

// TestParseCreateTableRecorded reads the statements the recorded plans'
// tables were created with.
func TestParseCreateTableRecorded(t *testing.T) {
	for _, stmt := range []string{
		"CREATE TABLE clicks (\n  user_id STRING,\n  region_id BIGINT,\n  item STRING,\n  amount DOUBLE,\n  ts TIMESTAMP(3),\n  pt AS PROCTIME(),\n  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND\n) WITH ('connector' = 'datagen')",
		"CREATE TABLE quoted (`user name` STRING, `order` BIGINT, `v` DOUBLE) WITH ('connector' = 'datagen')",
	} {
		tb, err := ParseCreateTable(stmt)
		if err != nil {
			t.Fatalf("ParseCreateTable(%q): %v", stmt, err)
		}
		for _, c := range tb.Columns {
			if !c.Computed && c.TypeErr != nil {
				t.Errorf("%s: column %s: %v", tb.Name, c.Name, c.TypeErr)
			}
		}
	}
}

func FuzzParseCreateTable(f *testing.F) {
	for _, s := range []string{
		kafkaOrders,
		"CREATE TABLE t (a INT, b ROW<c INT>, WATERMARK FOR a AS a) WITH ('k' = 'v')",
		"CREATE TABLE t (", "CREATE TABLE t (a DECIMAL(", "CREATE TABLE `", "CREATE TABLE t (a INT) WITH ('",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stmt string) {
		tb, err := ParseCreateTable(stmt)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Col < 1 {
				t.Errorf("ParseCreateTable(%q) error %v: not a SyntaxError with a position", stmt, err)
			}
			return
		}
		seen := map[string]bool{}
		for _, c := range tb.Columns {
			if seen[c.Name] {
				t.Errorf("ParseCreateTable(%q): column %q twice", stmt, c.Name)
			}
			seen[c.Name] = true
			if !c.Computed && c.TypeText == "" {
				t.Errorf("ParseCreateTable(%q): column %q has no type", stmt, c.Name)
			}
		}
		tb.KeyFields()
		tb.ValueFields()
		_, _ = tb.KeyFormatFields()
	})
}

// TestParseLargeInputs reads inputs far larger than real ones, deeply
// nested: both parsers are linear in their input (a quadratic step would
// make this test run for minutes, not milliseconds).
func TestParseLargeInputs(t *testing.T) {
	const n = 20000
	var b strings.Builder
	b.WriteString("CREATE TABLE t (")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("c" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "_" + strconv.Itoa(i) + " ROW<a INT, b ARRAY<STRING>>")
	}
	b.WriteString(", d AS " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + ")")
	tb, err := ParseCreateTable(b.String())
	if err != nil || len(tb.Columns) != n+1 {
		t.Fatalf("ParseCreateTable(%d columns) = %d columns, %v", n+1, len(tb.Columns), err)
	}
	if _, err := ParseCreateTable("CREATE TABLE t (a ROW" + strings.Repeat("<", n)); err == nil {
		t.Errorf("ParseCreateTable(unclosed nesting) = nil error")
	}

	desc := "Join(joinType=[InnerJoin], where=[" + strings.Repeat("(", n) + "a = a0" + strings.Repeat(")", n) +
		strings.Repeat(" AND (a = a0)", n) + "], select=[a, a0])" + strings.Repeat("<br/>+- Calc(select=[a])", n)
	k, ok := KeyOf(desc)
	if !ok || len(k.Columns) != 2 || len(k.Columns[0]) != n+1 {
		t.Errorf("KeyOf(large join) = %d key columns, %v", len(k.Columns), ok)
	}
	ParseDescription(strings.Repeat("[", n) + strings.Repeat("(", n) + strings.Repeat("'", n) + strings.Repeat("+- ", n))
}
