package web

import (
	"errors"
	"math"
	"net/http"
	"slices"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/plan"
)

// planResponse is GET /api/v1/plan: the planner's whole answer for the same
// query as /plan, from the same computation as the page.
type planResponse struct {
	Inputs planInputs `json:"inputs"`
	// MaxParallelism is the number of key groups (defaulted says it is
	// Flink's default for the current parallelism).
	MaxParallelism          int           `json:"maxParallelism"`
	MaxParallelismDefaulted bool          `json:"maxParallelismDefaulted"`
	Now                     planSideJSON  `json:"now"`
	Target                  planSideJSON  `json:"target"`
	Moves                   planMovesJSON `json:"moves"`
	// Keyed is the keyed-state movement from the current to the target
	// parallelism.
	Keyed    assign.KeyedRescaleDiff `json:"keyed"`
	Capacity planCapacityJSON        `json:"capacity"`
	// Sizing holds the candidates, each with its predicted busiest
	// utilisation, and the autoscaler's choice.
	Sizing assign.Sizing `json:"sizing"`
	// Summary is the recommendation in words, as the page says it.
	Summary string `json:"summary"`
}

type planInputs struct {
	Topics      []assign.Topic `json:"topics"`
	Parallelism int            `json:"parallelism"`
	Target      int            `json:"target"`
	Start       string         `json:"start"`
	Strategy    string         `json:"strategy"`
	Comparison  bool           `json:"comparison"`
	History     []int          `json:"history"`
	HasRates    bool           `json:"hasRates"`
	Utilization float64        `json:"utilization"`
}

type planSideJSON struct {
	Parallelism int `json:"parallelism"`
	// Layout is "fresh", "restore" or the comparison strategy's name.
	Layout   string            `json:"layout"`
	Subtasks []planSubtaskJSON `json:"subtasks"`
	// PartitionSkew is over partitions per subtask, RateSkew over records/s
	// (zero without rates), KeyGroupSkew over key groups.
	PartitionSkew assign.Skew `json:"partitionSkew"`
	RateSkew      assign.Skew `json:"rateSkew"`
	KeyGroupSkew  assign.Skew `json:"keyGroupSkew"`
	// Uncertain lists partitions the restore model cannot place exactly.
	Uncertain []topicPartitionsJSON `json:"uncertain,omitempty"`
}

type planSubtaskJSON struct {
	Subtask int `json:"subtask"`
	// Partitions are the subtask's partitions in its reading order, a
	// topic named once for each run of its partitions.
	Partitions []topicPartitionsJSON `json:"partitions"`
	// Load is the sum of its partitions' rates, -1 without rates.
	Load      float64              `json:"load"`
	KeyGroups assign.KeyGroupRange `json:"keyGroups"`
}

type planMovesJSON struct {
	Fresh planRescaleJSON `json:"fresh"`
	// Restore is what a restore from a savepoint would move; null when not
	// modelled (a comparison strategy).
	Restore *planRescaleJSON `json:"restore"`
}

// The plan's partition lists name a topic once for each run of its
// partitions rather than once per partition: with 50,000 partitions of a
// long topic name, the names were nine tenths of the answer.

// topicPartitionsJSON is a run of one topic's partitions.
type topicPartitionsJSON struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// planRescaleJSON is assign.SourceRescaleDiff with its lists by topic.
type planRescaleJSON struct {
	FromParallelism int `json:"fromParallelism"`
	ToParallelism   int `json:"toParallelism"`
	// Moves are the partitions in both layouts whose subtask differs:
	// partitions[i] moves from from[i] to to[i].
	Moves         []topicMovesJSON `json:"moves"`
	Moved         int              `json:"moved"`
	Common        int              `json:"common"`
	MovedFraction float64          `json:"movedFraction"`
	// Added are the partitions only in the target (with their new
	// subtask), Removed those only in the current layout (with their old).
	Added   []topicPlacementsJSON `json:"added"`
	Removed []topicPlacementsJSON `json:"removed"`
}

// topicMovesJSON is a run of one topic's partition moves, by column.
type topicMovesJSON struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
	From       []int   `json:"from"`
	To         []int   `json:"to"`
}

// topicPlacementsJSON is a run of one topic's partitions with the subtask
// of each.
type topicPlacementsJSON struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
	Subtasks   []int   `json:"subtasks"`
}

// byTopic groups tps into runs of one topic, in order; never nil.
func byTopic(tps []assign.TopicPartition) []topicPartitionsJSON {
	out := []topicPartitionsJSON{}
	for _, tp := range tps {
		if n := len(out); n == 0 || out[n-1].Topic != tp.Topic {
			out = append(out, topicPartitionsJSON{Topic: tp.Topic})
		}
		out[len(out)-1].Partitions = append(out[len(out)-1].Partitions, tp.Partition)
	}
	return out
}

// rescaleJSON is d with its lists grouped by topic.
func rescaleJSON(d assign.SourceRescaleDiff) planRescaleJSON {
	out := planRescaleJSON{FromParallelism: d.FromParallelism, ToParallelism: d.ToParallelism,
		Moved: d.Moved, Common: d.Common, MovedFraction: d.MovedFraction,
		Moves: []topicMovesJSON{}, Added: placementsJSON(d.Added), Removed: placementsJSON(d.Removed)}
	for _, m := range d.Moves {
		if n := len(out.Moves); n == 0 || out.Moves[n-1].Topic != m.Partition.Topic {
			out.Moves = append(out.Moves, topicMovesJSON{Topic: m.Partition.Topic})
		}
		r := &out.Moves[len(out.Moves)-1]
		r.Partitions, r.From, r.To = append(r.Partitions, m.Partition.Partition), append(r.From, m.From), append(r.To, m.To)
	}
	return out
}

func placementsJSON(ps []assign.PartitionPlacement) []topicPlacementsJSON {
	out := []topicPlacementsJSON{}
	for _, p := range ps {
		if n := len(out); n == 0 || out[n-1].Topic != p.Partition.Topic {
			out = append(out, topicPlacementsJSON{Topic: p.Partition.Topic})
		}
		r := &out[len(out)-1]
		r.Partitions, r.Subtasks = append(r.Partitions, p.Partition.Partition), append(r.Subtasks, p.Subtask)
	}
	return out
}

type planCapacityJSON struct {
	Source assign.CapacityEstimate `json:"source"`
	Keyed  assign.CapacityEstimate `json:"keyed"`
	// SourceRates is where the source subtasks' records/s come from
	// ("observed", "estimated"), "" when no busy ratios were given.
	SourceRates string `json:"sourceRates,omitempty"`
	// KeyGroupLoadKind is "estimated" when key-group loads were spread
	// from records in, "" when none are known.
	KeyGroupLoadKind string `json:"keyGroupLoadKind,omitempty"`
	// Autoscaler is the Flink autoscaler's computation for each vertex
	// with busy ratios, from the same figures.
	Autoscaler []planScalerJSON `json:"autoscaler"`
}

// planScalerJSON is assign.AutoscalerResult for one vertex, with figures
// that can be infinite (a band without an upper end) as null.
type planScalerJSON struct {
	Vertex string `json:"vertex"`
	// Lag is the records pending for the vertex that the catch-up term
	// reads (the source's backlog; 0 when none was given), CatchUpRate
	// Lag / catch-up.duration.
	Lag                float64          `json:"lag"`
	CatchUpRate        *float64         `json:"catchUpRate"`
	TargetCapacity     *float64         `json:"targetCapacity"`
	ScaleFactor        *float64         `json:"scaleFactor"`
	Computed           int              `json:"computed"`
	Aligned            assign.Alignment `json:"aligned"`
	ScaleUpThreshold   *float64         `json:"scaleUpThreshold"`
	ScaleDownThreshold *float64         `json:"scaleDownThreshold"`
	OutsideBand        bool             `json:"outsideBand"`
	Parallelism        int              `json:"parallelism"`
	Steps              []string         `json:"steps"`
}

// finite is v, or nil when it is infinite or NaN (JSON has neither).
func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}

// servePlanJSON answers GET /api/v1/plan.
func (s *Server) servePlanJSON(w http.ResponseWriter, r *http.Request) error {
	vals := r.URL.Query()
	if vals.Has("embed") || vals.Has("color") || vals.Has("highlight") {
		vals = cloneValues(vals)
		vals.Del("embed")
	}
	f := parsePlanForm(vals)
	s.attachSample(f)
	if err := firstFieldError(f); err != nil {
		return err
	}
	res, err := f.req.Compute(f.sample)
	if err != nil {
		return computeError(err)
	}
	return writeJSON(w, http.StatusOK, newPlanResponse(f, res))
}

func cloneValues(v map[string][]string) map[string][]string {
	out := make(map[string][]string, len(v))
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// firstFieldError is the form's first bad field (in query order of the
// fields) as an API error, nil when the form is valid.
func firstFieldError(f *planForm) error {
	return firstError(f.Errors, "topics", "parallelism", "target", "maxParallelism", "mode", "strategy", "color", "history", "rates", "state",
		"busy", "observed", "capacity", "keyedIn", "keyedBusy", "keyedCapacity", "utilization", "sample")
}

// firstError is a form's first bad field as an API error: the first of
// order that has a message, else the first by name; nil when there is none.
func firstError(errs map[string]string, order ...string) error {
	if len(errs) == 0 {
		return nil
	}
	for _, k := range order {
		if m, ok := errs[k]; ok {
			return badInput(k, "%s", m)
		}
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return badInput(keys[0], "%s", errs[keys[0]])
}

func newPlanResponse(f *planForm, res *plan.Result) planResponse {
	pl, st := res.Plan, res.Strategy
	resp := planResponse{
		Inputs: planInputs{
			Topics: f.req.Topics, Parallelism: f.req.Parallelism, Target: f.req.Target, Start: string(pl.Start),
			Strategy: st.Name, Comparison: st.Comparison, History: f.req.PlanHistory(), HasRates: pl.HasRates,
			Utilization: res.Sizing.Utilization,
		},
		MaxParallelism: pl.MaxParallelism, MaxParallelismDefaulted: pl.MaxParallelismDefaulted,
		Keyed: pl.Keyed, Sizing: res.Sizing,
		Capacity: planCapacityJSON{Source: res.Capacity.Source, Keyed: res.Capacity.Keyed, SourceRates: res.Capacity.SourceRates},
		Moves:    planMovesJSON{Fresh: rescaleJSON(pl.MovesFresh)},
	}
	switch {
	case res.Capacity.Sampled != nil:
		resp.Capacity.KeyGroupLoadKind = "sampled"
	case res.Capacity.KeyGroupLoad != nil:
		resp.Capacity.KeyGroupLoadKind = "estimated"
	}
	resp.Capacity.Autoscaler = []planScalerJSON{}
	for _, sc := range res.Capacity.Scaler {
		r := sc.Result
		resp.Capacity.Autoscaler = append(resp.Capacity.Autoscaler, planScalerJSON{
			Vertex: sc.Vertex, Lag: sc.Lag, CatchUpRate: finite(r.CatchUpRate), TargetCapacity: finite(r.TargetCapacity), ScaleFactor: finite(r.ScaleFactor),
			Computed: r.Computed, Aligned: r.Aligned, ScaleUpThreshold: finite(r.ScaleUpThreshold),
			ScaleDownThreshold: finite(r.ScaleDownThreshold), OutsideBand: r.OutsideBand, Parallelism: r.Parallelism, Steps: r.Steps,
		})
	}
	resp.Summary, _ = sizingSummary(f, res)
	if pl.Restore != nil {
		mr := rescaleJSON(pl.MovesRestore)
		resp.Moves.Restore = &mr
	}
	layout := func(restored bool) string {
		switch {
		case st.Comparison:
			return st.Name
		case restored:
			return "restore"
		}
		return "fresh"
	}
	resp.Now = planSide(pl.Now, layout(res.NowRestore != nil))
	if res.NowRestore != nil {
		resp.Now.Uncertain = uncertainJSON(res.NowRestore.Uncertain)
	}
	resp.Target = planSide(pl.Target, layout(pl.Start == assign.StartRestore))
	if pl.Start == assign.StartRestore && pl.Restore != nil {
		resp.Target.Uncertain = uncertainJSON(pl.Restore.Uncertain)
	}
	return resp
}

func planSide(s assign.PlanSide, layout string) planSideJSON {
	out := planSideJSON{Parallelism: s.Parallelism, Layout: layout, PartitionSkew: s.PartitionSkew, RateSkew: s.RateSkew, KeyGroupSkew: s.KeyGroupSkew}
	out.Subtasks = make([]planSubtaskJSON, s.Parallelism)
	for i := range out.Subtasks {
		st := planSubtaskJSON{Subtask: i, Partitions: byTopic(s.Assignment.Subtasks[i]), Load: -1, KeyGroups: s.Ranges[i]}
		if s.Load != nil {
			st.Load = s.Load[i]
		}
		out.Subtasks[i] = st
	}
	return out
}

// uncertainJSON is the uncertain partitions by topic, nil (omitted) when
// there are none.
func uncertainJSON(tps []assign.TopicPartition) []topicPartitionsJSON {
	if len(tps) == 0 {
		return nil
	}
	return byTopic(tps)
}

// computeError is an error of plan.Request.Compute for the handlers: an
// input that does not fit is the client's, named by its field.
func computeError(err error) error {
	var fe *plan.FieldError
	if errors.As(err, &fe) {
		return badInput(fe.Field, "%s", fe.Msg)
	}
	return err
}
