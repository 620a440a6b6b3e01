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
		},
		inputs: map[string][]string{"union": {"scan", "scan"}, "udf": {"scan"}},
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
	} {
		if got := l.trace(c.vid, c.name); !cmp.Equal(got, c.want) {
			t.Errorf("trace(%s, %q) = %+v, want %+v", c.vid, c.name, got, c.want)
		}
	}
}
