// Package plan is the rescale planner's domain: what a plan asks (a
// Request), the rules a request must meet, and the plan computed from it
// (a Result). The planner page (/plan), the JSON API (/api/v1/plan), "plan
// a rescale" on a live vertex and the why panel's planner links all go
// through it, so that they accept the same inputs and answer alike.
//
// # A request
//
// A Request is a Kafka source as the planner models it: its topics with
// their partition counts, optional produced rates per partition, the
// current and the target parallelism, the max parallelism (0: Flink's
// default), whether the target starts fresh or is restored from a
// savepoint (Mode), and the partition assignment strategy. The source's
// parallelism History tells the restore model how the job got to its
// current layout. Optional capacity inputs size the job by capacity
// instead of by layout alone: per current subtask a busy ratio (Busy) and
// the records/s it read (Observed), or a Capacity per subtask; the same
// for the keyed vertex behind the source (KeyedIn, KeyedBusy,
// KeyedCapacity); a target Utilization; the source's Backlog per partition
// and each topic's Retention. State gives the keyed state per subtask.
//
// # From a URL and back
//
// A plan is a URL, so that it can be bookmarked or put into a ticket.
// FromQuery reads a request from a query (?topic=orders:12&parallelism=4
// &target=6 ...) and reports every bad field in Errors, keyed by the
// query parameter, with a message that says what was wrong; the fields it
// could read are still set. Request.Query is the canonical query of a
// request, defaults left out, which FromQuery reads back to the same
// request. Code that links to the planner builds a Request and calls Query
// rather than writing parameters by hand; Validate checks such a request
// against the same rules FromQuery applies.
//
// # Computing
//
// Compute turns a valid request into a Result: the layouts now and at the
// target with their skew and the partition and key-group moves
// (assign.MakePlanAfterRestores), the capacity the inputs imply
// (assign.EstimateCapacity, assign.SpreadKeyGroupLoad and the autoscaler's
// assign.ScaleTargetParallelism) and the candidate parallelisms with a
// recommendation (assign.Size). A key Sample, when the caller has one,
// gives the keyed load per key group. A request whose inputs do not fit
// together (a sample over other key groups, a layout assign cannot make)
// fails with a *FieldError naming the parameter to change. The package
// holds no words for the page: web renders a Result as HTML or JSON.
package plan
