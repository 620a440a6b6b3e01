// Package sqlplan reads what a Flink SQL job tells about its keys: the
// operator descriptions of its job plan (GET /jobs/:id/plan) and the
// CREATE TABLE statements of its tables.
//
// A vertex description names the SQL operators chained in the vertex, the
// first of them the one that receives the vertex's input exchange:
//
//	[6]:GroupAggregate(groupBy=[user_id], select=[user_id, COUNT(*) AS EXPR$1])<br/>+- sink[7]: Writer<br/>
//
// ParseDescription splits it into Operators with their bracketed arguments
// and key columns; KeyOf says which columns the vertex is keyed by. A join
// names its keys only as a condition over its output row
// (where=[(user_id = user_id0)]), whose right-hand names Calcite has made
// unique: VertexKeys reads the whole plan and maps them back through the
// join's inputs. Phases finds the two-phase aggregations
// (LocalGroupAggregate feeding GlobalGroupAggregate, and the window
// variants) of a plan.
//
// Where Flink writes a key that is not a column of the user's table (an
// expression the planner computed into $f6, or the bucket of a split
// distinct aggregate), the key is reported with Named false: skewscope says
// that it cannot name it rather than guess.
//
// ParseCreateTable reads a CREATE TABLE statement's columns, their SQL types
// (assign.ParseSQLType, with an error per column whose type cannot be a
// key), its WITH options and the Kafka connector's key and value formats.
//
// The recorded plans in testdata/ were written by Flink's own planner and
// JsonPlanGenerator on each Flink line (make sqlplans); the tests read them.
package sqlplan
