package sqlplan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLineageTrace(t *testing.T) {
	l := lineage{
		ops: map[string][]Operator{
			"scan": ParseDescription("[1]:TableSourceScan(table=[[cat, db, `my t`]], fields=[`user name`, id, v])<br/>" +
				"+- [2]:Calc(select=[`user name` AS u, CAST(id AS VARCHAR(10)) AS cid, id, v], where=[(v &gt; 0)])<br/>" +
				"   +- [3]:Calc(select=[u AS `the user`, cid, `id` AS id2, v])<br/>"),
			"union": ParseDescription("[4]:Union(all=[true], union=[u, cid])"),
			"udf":   ParseDescription("MyProcessFunction"),
			// Flink 2.3's Kafka table source, named by the connector.
			"kafka": ParseDescription("Source: KafkaSource-default_catalog.default_database.events<br/>+- [2]:Calc(select=[user_id AS uid, LOWER(region) AS r])<br/>"),
			"users": ParseDescription("Source: KafkaSource-default_catalog.default_database.users<br/>"),
			"odd":   ParseDescription("Source: KafkaSource-cat.my.db.users<br/>"),
			"join":  ParseDescription("[5]:Calc(select=[uid])<br/>"),
		},
		inputs: map[string][]string{"union": {"scan", "scan"}, "udf": {"scan"}, "join": {"kafka"}},
	}
	for _, c := range []struct {
		vid, name string
		want      Source
	}{
		{"scan", "the user", Source{Table: "my t", Column: "user name", Vertex: "scan"}},
		{"scan", "id2", Source{Table: "my t", Column: "id", Vertex: "scan"}},
		{"scan", "v", Source{Table: "my t", Column: "v", Vertex: "scan"}},
		{"scan", "cid", Source{Expr: "CAST(id AS VARCHAR(10))", Vertex: "scan"}},
		{"scan", "nope", Source{}},
		{"union", "u", Source{}}, // two inputs: which one is not said
		{"udf", "u", Source{}},   // not a SQL operator
		{"kafka", "uid", Source{Table: "events", Column: "user_id", Vertex: "kafka"}},
		{"kafka", "r", Source{Expr: "LOWER(region)", Vertex: "kafka"}},
		{"join", "uid", Source{Table: "events", Column: "user_id", Vertex: "kafka"}},
		{"users", "user_id", Source{Table: "users", Column: "user_id", Vertex: "users"}},
		{"odd", "user_id", Source{}}, // cat.my.db.users: which dot ends the database is not said
	} {
		if got := l.trace(c.vid, c.name); !cmp.Equal(got, c.want) {
			t.Errorf("trace(%s, %q) = %+v, want %+v", c.vid, c.name, got, c.want)
		}
	}
}
