package web

import (
	"fmt"
	"slices"
	"strings"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/plan"
	"github.com/skewscope/skewscope/views"
)

// sizingSummary is the recommendation in one sentence, and its kind.
func sizingSummary(f *planForm, res *plan.Result) (string, string) {
	sz := res.Sizing
	if sz.Recommended == 0 {
		return "No parallelism is recommended: " + sz.Need + ".", "computed"
	}
	var c assign.Candidate
	for _, x := range sz.Candidates {
		if x.Parallelism == sz.Recommended {
			c = x
		}
	}
	if sz.Basis == "capacity" {
		return fmt.Sprintf("Recommended: p = %d, the smallest parallelism at which every subtask stays under %s of its capacity (busiest at %s).",
			sz.Recommended, format.Percent(100*sz.Utilization), utilText(c.Utilization)), "estimated"
	}
	return fmt.Sprintf("Recommended: p = %d, the smallest parallelism whose busiest subtask carries no more than the busiest at your target p = %d. Give busy ratios or a capacity to size by capacity instead.",
		sz.Recommended, f.req.Target), "computed"
}

// planAnswer is the top of the plan: the recommendation, or why none
// is, and then the verdict on the target shown under the layout the
// candidates are judged by.
func planAnswer(f *planForm, res *plan.Result) views.PlanAnswer {
	var a views.PlanAnswer
	a.Summary, a.SummaryKind = sizingSummary(f, res)
	sz, st := res.Sizing, res.Strategy
	i := slices.IndexFunc(sz.Candidates, func(c assign.Candidate) bool { return c.Parallelism == f.req.Target })
	if i < 0 {
		return a
	}
	c := sz.Candidates[i]
	a.Meets = c.Meets
	a.TargetKind = "computed"
	if sz.Basis == "capacity" {
		a.TargetKind = "estimated"
	}
	how := "a fresh start"
	switch {
	case st.Comparison:
		how = st.Label + "'s own layout"
	case sz.Layout == "restore":
		how = fmt.Sprintf("restored from a savepoint taken at p = %d", f.req.Parallelism)
	}
	var what string
	switch {
	case f.req.Target == sz.Recommended:
		what = "the recommended parallelism"
	case slices.Contains(c.Roles, assign.RoleBest) && sz.Recommended == 0:
		what = "the lowest busiest subtask any parallelism reaches"
	case f.req.Target == f.req.Parallelism:
		what = "the current parallelism"
	default:
		what = "your target"
	}
	a.Target = fmt.Sprintf("Shown: p = %d → %d (%s), %s: %s.", f.req.Parallelism, f.req.Target, how, what, c.Verdict)
	return a
}

// capacityLines say what a subtask can process and where the figure comes
// from.
func capacityLines(res *plan.Result) []views.KindLine {
	var out []views.KindLine
	line := func(who string, ce assign.CapacityEstimate, rates string) {
		switch ce.Kind {
		case "given":
			out = append(out, views.KindLine{Kind: "given", Text: fmt.Sprintf("A %s subtask processes %s records/s at 100%% busy.", who, format.Num(ce.PerSubtask))})
		case "observed":
			from := "its records/s over its busy ratio"
			if rates == "estimated" {
				from = "its partitions' produced records/s over its busy ratio"
			}
			t := fmt.Sprintf("A %s subtask processes about %s records/s at 100%% busy: the median over %d subtasks of %s (%s–%s), as the autoscaler computes a true processing rate.",
				who, format.Num(ce.PerSubtask), ce.Used, from, format.Num(ce.Min), format.Num(ce.Max))
			if len(ce.Notes) > 0 {
				t += " Left out: " + strings.Join(ce.Notes, "; ") + "."
			}
			out = append(out, views.KindLine{Kind: "estimated", Text: t})
		}
	}
	line("source", res.Capacity.Source, res.Capacity.SourceRates)
	line("keyed", res.Capacity.Keyed, "")
	if sl := res.Capacity.Sampled; sl != nil {
		out = append(out, views.KindLine{Kind: "sampled", Text: fmt.Sprintf("Each key group's records/s is its share of key sample %s of %s (%s records, taken %s) times the keyed vertex's records in: the keys were routed exactly as Flink routes them, so a hot key shows in its own key group.",
			sl.ID, sl.Topic, format.Int(sl.Records), sl.At.UTC().Format("15:04:05 MST"))})
	} else if res.Capacity.KeyGroupLoad != nil {
		out = append(out, views.KindLine{Kind: "estimated", Text: "Each key group's records/s is its keyed subtask's records in, spread evenly over the subtask's key groups: a hot key inside a range is not visible from Flink's metrics; a key sample (\"sample keys\" on the keyed vertex's page) shows it."})
	}
	if len(out) > 0 {
		out = append(out, views.KindLine{Kind: "given", Text: fmt.Sprintf("Target utilisation %s (the autoscaler's default is 70%%): the share of a subtask's capacity a plan may use, keeping the rest for peaks, catch-up after a restart and checkpoints.", format.Percent(100*res.Sizing.Utilization))})
	}
	return out
}

// autoscalerLine compares the autoscaler's choice with the layout it gets.
func autoscalerLine(f *planForm, res *plan.Result) string {
	sz := res.Sizing
	if sz.AutoscalerChoice == 0 {
		return ""
	}
	var t string
	if len(res.Capacity.Scaler) == 0 {
		a := sz.Autoscaler[0]
		t = fmt.Sprintf("For a computed target of %d (your target) the Flink autoscaler's default %s alignment runs p = %d (%s).", a.Target, a.Mode, a.Parallelism, a.Note)
	} else {
		var parts []string
		for _, sc := range res.Capacity.Scaler {
			r := sc.Result
			why := ""
			switch {
			case r.Parallelism == f.req.Parallelism && r.Computed != f.req.Parallelism:
				why = " (its true processing rate is inside its utilisation band, so it does not rescale)"
			case r.Aligned.Parallelism != r.Computed:
				why = " (" + r.Aligned.Note + ")"
			}
			parts = append(parts, fmt.Sprintf("for the %s vertex it computes %d from a scale factor of %.3g and runs p = %d%s", sc.Vertex, r.Computed, r.ScaleFactor, r.Parallelism, why))
		}
		t = "The Flink autoscaler, from the same busy ratios and rates (its defaults: MAX busy time, 70% utilisation target, BALANCED alignment): " + strings.Join(parts, "; ") + "."
	}
	for _, c := range sz.Candidates {
		if c.Parallelism != sz.AutoscalerChoice || c.Utilization < 0 {
			continue
		}
		if !c.Meets {
			t += fmt.Sprintf(" It assumes the load spreads evenly; at p = %d under the real layout the %s.", c.Parallelism, lowerFirst(c.Verdict))
		} else {
			t += fmt.Sprintf(" At p = %d the real layout keeps every subtask under the target (%s).", c.Parallelism, lowerFirst(c.Verdict))
		}
	}
	return t
}

// lowerFirst lower-cases a sentence's first letter.
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
