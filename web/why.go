package web

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/plan"
	"github.com/skewscope/skewscope/views"
)

// whyPanel writes a vertex's "why is it hot?" from the lines the store
// found: each line's sentences, every figure written once and marked with
// its provenance, and for a Kafka source a planner link at the
// parallelism that removes the cause when one is computed, judged as the
// restore from a savepoint a running job gets (and a fresh start's, when
// only that would, labelled as one). base is the route prefix; keyed the
// keyed vertex behind the source, whose figures the links carry (nil
// none); now dates figures of unknown age. Keys are the line's and the
// sentence's positions, which the view's shape fixes (live
// appendWhyShape).
//
// Without links the planner links are left out: a page built for its live
// update carries no link, and a planner link holds every partition's rate.
func whyPanel(base string, vv live.VertexView, keyed *live.VertexView, now time.Time, links bool) *views.WhyPanel {
	if vv.Why == nil || len(vv.Why.Lines) == 0 {
		return nil
	}
	w := &views.WhyPanel{Calm: true}
	for i, l := range vv.Why.Lines {
		c := views.WhyCause{Kind: l.Kind, Hot: l.Kind != live.WhyBalanced && l.Kind != live.WhyUnknown}
		for _, n := range l.Subtasks {
			c.Subtasks = append(c.Subtasks, strconv.Itoa(n))
		}
		w.Calm = w.Calm && !c.Hot
		for k, s := range whySentences(vv, l) {
			c.Clauses = append(c.Clauses, views.WhyClause{Kind: string(s.kind), Text: text("why/"+strconv.Itoa(i)+"/"+strconv.Itoa(k), s.text)})
		}
		// A slow checkpoint is about state, not the partitions' layout the
		// planner draws.
		if c.Hot && vv.Kafka && links && l.Kind != live.WhySlowCheckpoint && l.Kind != live.WhyWatermark {
			var kind live.Provenance
			c.Planner, kind = whyPlanner(base, vv, keyed, l, now)
			c.PlannerKind = string(kind)
			if rs := l.Rescale; rs != nil && rs.Fresh > 0 {
				c.Fresh = &views.Anchor{Text: fmt.Sprintf("open in planner at p = %d as a fresh start, which drops the source's offsets", rs.Fresh),
					URL: freshPlannerURL(base, vv, keyed, rs.Fresh, now)}
			}
		}
		w.Causes = append(w.Causes, c)
	}
	return w
}

type sentence struct {
	kind live.Provenance
	text string
}

// facts reads a line's figures by name.
type facts map[string]float64

func factsOf(l live.WhyLine) facts {
	f := facts{}
	for _, x := range l.Facts {
		f[x.Name] = x.Value
	}
	return f
}

func (f facts) has(name string) bool { _, ok := f[name]; return ok }

func pct(share float64) string { return format.Percent(100 * share) }

// whySentences writes a line's sentences in the order of its figures.
func whySentences(vv live.VertexView, l live.WhyLine) []sentence {
	f := factsOf(l)
	p := vv.Parallelism
	var out []sentence
	add := func(kind live.Provenance, format string, args ...any) {
		out = append(out, sentence{kind, fmt.Sprintf(format, args...)})
	}
	switch l.Kind {
	case live.WhyHot:
		s := l.Subtasks[0]
		names := partitionNames(l.Partitions)
		if f.has(live.FactPartitionsShare) {
			add(live.Observed, "Subtask %d carries %s of the produced records, most of it from %s (%s).%s", s, pct(f[live.FactShare]), joinAnd(names), pct(f[live.FactPartitionsShare]), unknownRates(f))
		} else {
			add(live.Observed, "Subtask %d reads %s, which %s %s of the produced records.%s", s, joinAnd(names), plural(len(names), "carries", "carry"), pct(f[live.FactShare]), unknownRates(f))
		}
		if f.has(live.FactOnePartition) {
			add(live.Computed, "A partition is read by one subtask only, so no parallelism brings subtask %d below the %s of %s.", s, format.Rate(f[live.FactOnePartition]), names[0])
		}
		if pl := l.Placement; pl != nil {
			add(live.Computed, "%s", placementSentence(pl, len(l.Partitions), s))
		}
		out = append(out, loadSentences(f, "It", "")...)
		if rs := l.Rescale; rs != nil {
			out = append(out, rescaleSentence(rs, l.Partitions, p))
		}
		if l.More > 0 {
			add("", "%s like this.", moreSubtasks(l.More))
		}
	case live.WhyBehind:
		out = append(out, loadSentences(f, "Subtask "+strconv.Itoa(l.Subtasks[0]), unknownRates(f))...)
		if l.More > 0 {
			add("", "%s like this.", moreSubtasks(l.More))
		}
	case live.WhyIdle:
		n := int(f[live.FactPartitions])
		if n < p {
			add(live.Observed, "%s nothing: the source reads %d %s at p = %d.", subtasksVerb(l.Subtasks, "reads", "read"), n, plural(n, "partition", "partitions"), p)
		} else {
			add(live.Observed, "%s nothing.", subtasksVerb(l.Subtasks, "reads", "read"))
			if pl := l.Placement; pl != nil {
				add(live.Computed, "%s", reachSentence(pl))
			}
		}
	case live.WhyKeys, live.WhyRanges:
		s := l.Subtasks[0]
		busy := ""
		if f.has(live.FactBusy) {
			busy = " and is " + format.Ratio(f[live.FactBusy]) + " busy"
		}
		add(live.Observed, "Subtask %d receives %s of the records (%s of %s)%s.", s, pct(f[live.FactShare]), format.Rate(f[live.FactRecordsIn]), format.Rate(f[live.FactTotal]), busy)
		kg := l.KeyGroups
		size := kg.Size
		if l.Kind == live.WhyKeys {
			add(live.Computed, "It owns key groups %d–%d, %d of %d (%s): the imbalance is in the keys, not in the range sizes, which differ by at most one key group (%s).",
				kg.Start, kg.End, size, vv.MaxParallelism, pct(f[live.FactKeyGroupShare]), rangeSizes(f))
		} else {
			add(live.Computed, "It owns %d key groups (%d–%d) where the smallest range has %d (maxParallelism %d at p = %d): its share is what its range predicts, so the imbalance is in the range sizes.",
				size, kg.Start, kg.End, int(f[live.FactRangeMin]), vv.MaxParallelism, p)
			if l.Target > 0 {
				add(live.Computed, "At p = %d, which divides %d, every subtask owns %d.", l.Target, vv.MaxParallelism, vv.MaxParallelism/l.Target)
			}
		}
		if l.More > 0 {
			add("", "%s like this.", moreSubtasks(l.More))
		}
	case live.WhyKeyedIdle:
		add(live.Observed, "%s no records.", subtasksVerb(l.Subtasks, "receives", "receive"))
		add(live.Computed, "%s %s key groups, so no record received recently had its key in them.",
			plural(len(l.Subtasks), "It owns", "Each owns"), keyGroupCount(f))
	case live.WhyBackpressured:
		add(live.Observed, "%s backpressured up to %s of the time: waiting to send downstream.", subtasksVerb(l.Subtasks, "is", "are"), format.Ratio(f[live.FactBackPressured]))
		if pr := l.Peer; pr != nil {
			add(live.Observed, "%s", downstreamSentence(pr, f))
		}
	case live.WhyBackpressuring:
		upTo := ""
		if len(l.Subtasks) > 1 {
			upTo = "up to "
		}
		add(live.Observed, "%s %s%s busy and not backpressured.", subtasksVerb(l.Subtasks, "is", "are"), upTo, format.Ratio(f[live.FactBusy]))
		pr := l.Peer
		if pr.Relation == live.RelUpstream {
			add(live.Observed, "%s, which sends to it in the job plan, is backpressured up to %s of the time: it waits on this vertex.", views.Isolate(pr.Name), format.Ratio(f[live.FactPeerBackPressured]))
		} else {
			add(live.Observed, "%s, earlier in the job's plan order, is backpressured up to %s of the time (the job's edges are not known, so no link is claimed).", views.Isolate(pr.Name), format.Ratio(f[live.FactPeerBackPressured]))
		}
	case live.WhySlowCheckpoint:
		s := l.Subtasks[0]
		tail := "."
		if f.has(live.FactStateShare) {
			tail = fmt.Sprintf(": it holds %s of the vertex's state.", pct(f[live.FactStateShare]))
		}
		add(live.Observed, "Subtask %d's checkpoints take %s× the others' (%s against %s on average, checkpoint %d)%s", s,
			slowFactorText(f[live.FactSlowFactor]), format.Millis(int64(f[live.FactCheckpointMs])), format.Millis(int64(math.Round(f[live.FactOthersCheckpointMs]))),
			int64(f[live.FactCheckpointID]), tail)
	case live.WhyWatermark:
		if h := l.Holder; h != nil && vv.EventTime != nil {
			add(h.Kind, "%s", holderText(vv.Name, vv.EventTime))
		}
		if n := len(l.Partitions); n > 0 {
			ahead := format.Seconds(f[live.FactAheadMs] / 1000)
			if h := l.Holder; h != nil && len(h.Paused) > 0 {
				add(live.Computed, "The paused %s up to %s ahead of the source's lowest watermark.", plural(n, "partition here is", "partitions here are"), ahead)
			} else {
				add(live.Computed, "Watermark alignment pauses %s: %s up to %s ahead of the source's lowest watermark, so %s until the slowest split catches up.",
					joinAnd(partitionNames(l.Partitions)), plural(n, "it is", "they are"), ahead, plural(n, "it waits", "they wait"))
			}
		}
	case live.WhyBalanced:
		what := "carries %s of the produced records"
		if !vv.Kafka {
			what = "receives %s of the records"
		}
		tail := "."
		if f.has(live.FactBackPressured) {
			tail = ", and none is backpressured."
		}
		switch {
		case !f.has(live.FactMinShare) && vv.Kafka:
			add(live.Observed, "Nothing was produced on its partitions recently: there is no load to explain%s", tail)
		case !f.has(live.FactMinShare):
			add(live.Observed, "It received no records recently: there is no load to explain%s", tail)
		case p == 1:
			add(live.Observed, "One subtask: there is nothing to balance%s", tail)
		default:
			add(live.Observed, "No subtask stands out: each "+what+" at p = %d%s%s", shareRange(f[live.FactMinShare], f[live.FactMaxShare]), p, tail, unknownRates(f))
		}
	case live.WhyUnknown:
		var need []string
		for _, m := range l.Missing {
			need = append(need, missingText[m])
		}
		add("", "Not enough figures yet to say what makes it hot: this needs %s.", joinAnd(need))
	}
	return out
}

var missingText = map[string]string{
	live.MissingPartitions: "the partitions it reads (Flink's metric ids)",
	live.MissingRates:      "the produce rate of every partition (two Kafka polls)",
	live.MissingRecordsIn:  "the records in of every subtask (Flink's metrics)",
	live.MissingKeyGroups:  "its maxParallelism",
}

// loadSentences are the busy, read and lag-growth figures of a source
// subtask, who its subject; note ends the first sentence's figures.
func loadSentences(f facts, who, note string) []sentence {
	var out []sentence
	produced := format.Rate(f[live.FactProduced])
	switch {
	case f.has(live.FactBusy) && f.has(live.FactRead):
		out = append(out, sentence{live.Observed, fmt.Sprintf("%s is %s busy and reads %s of the %s produced on its partitions.%s", who, format.Ratio(f[live.FactBusy]), format.Rate(f[live.FactRead]), produced, note)})
	case f.has(live.FactRead):
		out = append(out, sentence{live.Observed, fmt.Sprintf("%s reads %s of the %s produced on its partitions.%s", who, format.Rate(f[live.FactRead]), produced, note)})
	case f.has(live.FactBusy):
		out = append(out, sentence{live.Observed, fmt.Sprintf("%s is %s busy.", who, format.Ratio(f[live.FactBusy]))})
	}
	if f.has(live.FactLagGrowth) {
		t := "So it keeps up."
		if g := f[live.FactLagGrowth]; g > 0 {
			t = "So its lag grows by about " + format.Rate(g) + "."
		}
		out = append(out, sentence{live.Estimated, t})
	}
	return out
}

// placementSentence says which rule put n partitions on subtask s.
func placementSentence(pl *live.WhyPlacement, n, s int) string {
	all := plural(n, "it", "both")
	if n > 2 {
		all = "all " + strconv.Itoa(n)
	}
	if pl.Model == live.ModeRestore {
		return fmt.Sprintf("The restore model (p %s) puts %s on subtask %d: a restore deals the saved split lists out to the subtasks in contiguous runs.", historyArrows(pl.History), all, s)
	}
	return fmt.Sprintf("At p = %d Flink's owner rule, (start index + partition) mod p, puts %s on subtask %d: %s.", pl.Parallelism, all, s, startsText(pl.Topics, false))
}

// startsText names the topics' start indexes: "“orders” starts at subtask
// 3", "“clicks” and “pageviews” both start at subtask 1", "“a” starts at
// subtask 5 and “b” at 4"; counts adds the partition counts.
func startsText(ts []live.WhyTopic, counts bool) string {
	names := make([]string, len(ts))
	same := true
	for i, t := range ts {
		names[i] = t.Name
		same = same && t.Start == ts[0].Start
	}
	labels := quoteAll(names)
	if counts {
		for i, t := range ts {
			labels[i] += " (" + strconv.Itoa(t.Partitions) + " " + plural(t.Partitions, "partition", "partitions") + ")"
		}
	}
	if len(ts) > 1 && same {
		return startTogether(labels, ts[0].Start)
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = labels[i] + " at " + strconv.Itoa(t.Start)
	}
	parts[0] = labels[0] + " starts at subtask " + strconv.Itoa(ts[0].Start)
	return joinAnd(parts)
}

// reachSentence explains idle subtasks by the topics' start indexes.
func reachSentence(pl *live.WhyPlacement) string {
	return fmt.Sprintf("At p = %d %s, so together they reach %s only.", pl.Parallelism, startsText(pl.Topics, true), subtaskSpans(pl.Reached))
}

func downstreamSentence(pr *live.WhyPeer, f facts) string {
	name := views.Isolate(pr.Name)
	busy := format.Ratio(f[live.FactPeerBusy])
	switch {
	case pr.Relation == live.RelLater:
		return fmt.Sprintf("%s, later in the job's plan order, has subtask %d %s busy and is not backpressured (the job's edges are not known, so no link is claimed).", name, pr.Subtask, busy)
	case !pr.Culprit:
		return fmt.Sprintf("It sends to %s in the job plan, whose busiest subtask %d is %s busy: no vertex downstream is both busy and free of backpressure.", name, pr.Subtask, busy)
	case len(pr.Via) > 0:
		via := make([]string, len(pr.Via))
		for i, v := range pr.Via {
			via[i] = views.Isolate(v)
		}
		return fmt.Sprintf("Downstream in the job plan, past %s (backpressured too), %s has subtask %d %s busy and no subtask backpressured: that is where the backpressure starts.", joinAnd(via), name, pr.Subtask, busy)
	}
	return fmt.Sprintf("It sends to %s in the job plan, which has subtask %d %s busy and no subtask backpressured: that is where the backpressure starts.", name, pr.Subtask, busy)
}

// rescaleSentence says where a restore from a savepoint parts a hot
// line's partitions ps at what load, or why none does and what would.
func rescaleSentence(rs *live.WhyRescale, ps []live.WhyPartition, p int) sentence {
	them := plural(len(ps), "it", "they")
	kind := live.Computed
	if rs.Capacity > 0 {
		kind = live.Estimated // the capacity is estimated from busy ratios
	}
	path := func(q int) string { return historyArrows(append(slices.Clone(rs.History), q)) }
	busiest := func(u float64, at int) string {
		t := fmt.Sprintf("the busiest, subtask %d, needs about %s of a subtask's capacity (%s at 100%% busy)", at, pct(u), format.Rate(rs.Capacity))
		if u > assign.DefaultTargetUtilization && u <= 1 && pct(u) != pct(assign.DefaultTargetUtilization) {
			t += fmt.Sprintf(", within it but above the %s the planner sizes by", pct(assign.DefaultTargetUtilization))
		}
		return t
	}
	switch {
	case rs.Target > 0 && rs.Capacity > 0:
		return sentence{kind, fmt.Sprintf("Restored from a savepoint at p = %d (p %s, the path a running job takes), %s land on different subtasks and %s.", rs.Target, path(rs.Target), them, busiest(rs.Utilization, rs.Busiest))}
	case rs.Target > 0:
		return sentence{kind, fmt.Sprintf("Restored from a savepoint at p = %d (p %s, the path a running job takes), %s land on different subtasks; its load is not judged: no subtask's capacity can be estimated from its busy ratio yet.", rs.Target, path(rs.Target), them)}
	case rs.None == live.NoTargetPlanner:
		return sentence{"", fmt.Sprintf("No rescale target is judged: the planner draws at most %s subtasks, the current %d and the target together, so none above p = %d fits (/api/v1/assignment computes any layout).", format.Int(int64(plan.MaxSubtasks)), p, p)}
	case rs.None == live.NoTargetHistory:
		return sentence{"", "No rescale target is computed: the job was restored before skewscope saw it and its parallelism history is not known, so where a restore puts the partitions is not either (add ?history=P0,P1,… to model it)."}
	case rs.None == live.NoTargetPartition:
		hot := rs.Partition
		t := fmt.Sprintf("No parallelism carries the load: %s alone needs %s of a source subtask's capacity (%s of %s), and a partition is read by one subtask.",
			views.Isolate(hot.Topic)+"-"+strconv.Itoa(int(hot.Partition)), pct(hot.Rate/rs.Capacity), format.Rate(hot.Rate), format.Rate(rs.Capacity))
		if rs.Apart > 0 {
			t += fmt.Sprintf(" A restore at p = %d would put %s on different subtasks, with that subtask still over its capacity.", rs.Apart, plural(len(ps), "it", "them"))
		}
		t += fmt.Sprintf(" More partitions for %s would spread its records (a fresh start or any parallelism would not).", quoteAll([]string{hot.Topic})[0])
		return sentence{kind, t}
	}
	var t string
	if rs.None == live.NoTargetCapacity {
		t = fmt.Sprintf("No restore from a savepoint up to p = %d carries the load where it parts them: at p = %d (p %s) %s land on different subtasks, but %s.", rs.Limit, rs.Apart, path(rs.Apart), them, busiest(rs.Utilization, rs.Busiest))
	} else if rs.Limit <= p {
		t = fmt.Sprintf("No rescale above p = %d puts %s on different subtasks: p = %d is the source's limit (its partition count, beyond which subtasks only idle, or its max parallelism).", p, plural(len(ps), "it", "them"), rs.Limit)
	} else {
		t = fmt.Sprintf("No restore from a savepoint up to p = %d puts %s on different subtasks: a restore deals the saved split lists out in contiguous runs, and these stay in one.", rs.Limit, plural(len(ps), "it", "them"))
	}
	if rs.Fresh > 0 {
		cost := "re-reading every retained record when it starts from the earliest offsets, or skipping the records not yet read when it starts from the latest"
		if rs.Lag >= 0 {
			cost = fmt.Sprintf("re-reading every retained record when it starts from the earliest offsets, or skipping the %s records not yet read when it starts from the latest", format.Int(rs.Lag))
		}
		load := ""
		if rs.Capacity > 0 {
			load = fmt.Sprintf(", the busiest at about %s of its capacity", pct(rs.FreshUtilization))
		}
		t += fmt.Sprintf(" A fresh start at p = %d would part them%s, but it drops the source's offsets state (a new source uid, restored with --allowNonRestoredState): the source starts again from its configured starting offsets, %s.", rs.Fresh, load, cost)
	} else {
		t += " Nor would a fresh start: more partitions would."
	}
	return sentence{kind, t}
}

// whyPlanner is a source line's planner link: at the target parallelism
// when one is computed, else at the current one; both as a restore from a
// savepoint continuing the source's history, with its figures.
func whyPlanner(base string, vv live.VertexView, keyed *live.VertexView, l live.WhyLine, now time.Time) (*views.Anchor, live.Provenance) {
	if max(l.Target, vv.Parallelism)+vv.Parallelism > plan.MaxSubtasks {
		return nil, "" // the planner would refuse it: the sentence says why
	}
	if l.Target <= 0 {
		return &views.Anchor{Text: "open in planner with these rates", URL: plannerURL(base, vv, keyed, vv.Parallelism, now)}, ""
	}
	var what string
	switch l.Kind {
	case live.WhyHot:
		what = plural(len(l.Partitions), "it lands", "they land") + " on different subtasks"
	case live.WhyIdle:
		what = "every subtask reads a partition"
	default:
		what = "this changes"
	}
	return &views.Anchor{Text: fmt.Sprintf("open in planner at p = %d, restored from a savepoint, where %s", l.Target, what), URL: plannerURL(base, vv, keyed, l.Target, now)}, live.Computed
}

func partitionNames(ps []live.WhyPartition) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = views.Isolate(p.Topic) + "-" + strconv.Itoa(int(p.Partition))
	}
	return out
}

// slowFactorText writes how many times slower: "4", "2.5".
func slowFactorText(x float64) string {
	if x >= 10 {
		return strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	}
	return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func moreSubtasks(n int) string {
	return "And " + strconv.Itoa(n) + " more " + plural(n, "subtask", "subtasks")
}

// unknownRates says, after a sentence, that partitions without a known
// rate are not counted; "" when every rate is known.
func unknownRates(f facts) string {
	n := int(f[live.FactUnknownRates])
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" The %s of %d %s not known yet and not counted.", plural(n, "rate", "rates"), n, plural(n, "partition is", "partitions are"))
}

// shareRange is "20–29%", or "25%" when both ends read the same.
func shareRange(lo, hi float64) string {
	a, b := pct(lo), pct(hi)
	if a == b {
		return a
	}
	return strings.TrimSuffix(a, "%") + "–" + b
}

// keyGroupCount is "32" or "32 or 33": the key groups a subtask owns.
func keyGroupCount(f facts) string {
	lo, hi := int(f[live.FactRangeMin]), int(f[live.FactRangeMax])
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return strconv.Itoa(lo) + " or " + strconv.Itoa(hi)
}

func rangeSizes(f facts) string {
	lo, hi := int(f[live.FactRangeMin]), int(f[live.FactRangeMax])
	if lo == hi {
		return strconv.Itoa(lo) + " each"
	}
	return strconv.Itoa(lo) + " or " + strconv.Itoa(hi)
}

// subtasksVerb is "Subtask 3 reads" or "Subtasks 0 and 3 read", with the
// subtasks in order and runs written as spans.
func subtasksVerb(xs []int, one, many string) string {
	if len(xs) == 1 {
		return "Subtask " + strconv.Itoa(xs[0]) + " " + one
	}
	return "S" + subtaskSpans(xs)[1:] + " " + many
}

// subtaskSpans is "subtask 3", "subtasks 0 and 3" or "subtasks 0, 3 and
// 5–9", in order.
func subtaskSpans(xs []int) string {
	s := slices.Sorted(slices.Values(xs))
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, strconv.Itoa(s[i]))
		case j == i+1:
			parts = append(parts, strconv.Itoa(s[i]), strconv.Itoa(s[j]))
		default:
			parts = append(parts, strconv.Itoa(s[i])+"–"+strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	if len(s) == 1 {
		return "subtask " + parts[0]
	}
	return "subtasks " + joinAnd(parts)
}

// historyArrows writes a parallelism history as "4 → 8".
func historyArrows(h []int) string { return joinIntsBy(h, " → ") }
