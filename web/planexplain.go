package web

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/strategy"
	"github.com/skewscope/skewscope/views"
)

// explainSkew says in plain words why the target layout is uneven.
func explainSkew(f *planForm, pl assign.Plan, st strategy.Strategy) []views.WhySentence {
	var out []views.WhySentence
	side := pl.Target
	p := side.Parallelism
	if pl.HasRates && side.RateSkew.Total > 0 {
		type pr struct {
			tp assign.TopicPartition
			r  float64
		}
		// The three hottest partitions, without sorting them all.
		hotter := func(a, b pr) bool {
			return cmp.Or(cmp.Compare(b.r, a.r), cmp.Compare(a.tp.Topic, b.tp.Topic), cmp.Compare(a.tp.Partition, b.tp.Partition)) < 0
		}
		var all []pr
		for tp, r := range f.req.Rates {
			x := pr{tp, r}
			i := len(all)
			for i > 0 && hotter(x, all[i-1]) {
				i--
			}
			if i < 3 {
				all = slices.Insert(all, i, x)
				if len(all) > 3 {
					all = all[:3]
				}
			}
		}
		total := side.RateSkew.Total
		nParts := 0
		for _, t := range f.req.Topics {
			nParts += t.Partitions
		}
		mean := total / float64(nParts)
		var hot []pr
		share := 0.0
		for _, x := range all {
			if len(hot) == 3 || x.r < 2*mean {
				break
			}
			hot = append(hot, x)
			share += x.r
		}
		if len(hot) > 0 {
			names := make([]string, len(hot))
			owners := make([]string, 0, len(hot))
			seen := map[int]bool{}
			for i, h := range hot {
				names[i] = fmt.Sprintf("%s-%d (%s rec/s)", views.Isolate(h.tp.Topic), h.tp.Partition, format.Num(h.r))
				if o, ok := side.Assignment.OwnerOf(h.tp); ok && !seen[o] {
					seen[o] = true
					owners = append(owners, strconv.Itoa(o))
				}
			}
			verb := "carries"
			if len(hot) > 1 {
				verb = "carry"
			}
			where := "subtask " + joinAnd(owners)
			if len(owners) > 1 {
				where = "subtasks " + joinAnd(owners)
			}
			out = append(out, views.WhySentence{Hot: true, Text: fmt.Sprintf("%s %s %s of all traffic. A subtask that owns one of them is the bottleneck whatever the parallelism: at p = %d they sit on %s.",
				joinAnd(names), verb, format.Percent(100*share/total), p, where)})
			floor := hot[0].r
			if side.RateSkew.Max <= floor*1.0001 {
				out = append(out, views.WhySentence{Text: fmt.Sprintf("At p = %d the busiest subtask carries %s rec/s, which is the hottest partition alone: more subtasks cannot bring it lower. Spreading the hot keys, or more partitions for %s, can.", p, format.Num(side.RateSkew.Max), views.Isolate(hot[0].tp.Topic))})
			} else {
				out = append(out, views.WhySentence{Text: fmt.Sprintf("More subtasks cannot bring the busiest one below %s rec/s (the hottest partition); at p = %d it carries %s rec/s.", format.Num(floor), p, format.Num(side.RateSkew.Max))})
			}
		}
	}
	// Partition counts per subtask: report start-index collisions only when
	// the layout is uneven beyond the unavoidable (counts within one).
	counts := side.Assignment.Counts()
	lo, hi := math.Inf(1), 0.0
	for _, c := range counts {
		lo, hi = min(lo, c), max(hi, c)
	}
	unevenCounts := hi-lo > 1
	if unevenCounts && !st.Comparison && pl.Start == assign.StartFresh {
		starts := map[int][]string{}
		for _, t := range f.req.Topics {
			si, _ := assign.KafkaStartIndex(t.Name, p)
			starts[si] = append(starts[si], t.Name)
		}
		keys := make([]int, 0, len(starts))
		for si := range starts {
			keys = append(keys, si)
		}
		slices.Sort(keys)
		for _, si := range keys {
			names := starts[si]
			if len(names) < 2 {
				continue
			}
			out = append(out, views.WhySentence{Hot: true, Text: fmt.Sprintf("%s at p = %d (Flink gives each topic its own start index, (hash(topic)·31 & 0x7FFFFFFF) mod p), so their partitions pile onto the same subtasks.", startTogether(quoteAll(names), si), p)})
		}
	}
	if unevenCounts && pl.Start == assign.StartRestore && !st.Comparison {
		out = append(out, views.WhySentence{Hot: true, Text: fmt.Sprintf("After the restore subtasks read between %.0f and %.0f partitions: the saved split lists are dealt out in contiguous chunks, so partitions of one topic stay together instead of being spread by the start-index rule.", lo, hi)})
	} else if unevenCounts && st.Comparison {
		out = append(out, views.WhySentence{Hot: true, Text: fmt.Sprintf("Under %s subtasks read between %.0f and %.0f partitions.", st.Label, lo, hi)})
	} else if unevenCounts && len(out) == 0 {
		out = append(out, views.WhySentence{Hot: true, Text: fmt.Sprintf("Subtasks read between %.0f and %.0f partitions at p = %d: each topic's partitions are dealt from that topic's own start index, so the topics' remainders land on overlapping subtasks.", lo, hi, p)})
	}
	if idle := side.PartitionSkew.Idle; idle > 0 {
		nParts := 0
		for _, t := range f.req.Topics {
			nParts += t.Partitions
		}
		// Which ones, from the layout (computed): a reader without a split
		// emits no watermark, and without idleness it holds back every
		// event-time operator downstream.
		var none []int
		for i, parts := range side.Assignment.Subtasks {
			if len(parts) == 0 {
				none = append(none, i)
			}
		}
		which := ""
		if len(none) > 0 {
			which = " (" + subtaskList(none) + ")"
		}
		watermark := fmt.Sprintf("At p = %d, %d %s%s read nothing: they emit no watermark, so without idleness (WatermarkStrategy.withIdleness, or scan.watermark.idle-timeout in SQL) the job's watermark stops and event-time windows never fire.", p, idle, plural(idle, "subtask", "subtasks"), which)
		if nParts < p {
			out = append(out, views.WhySentence{Hot: true, Text: fmt.Sprintf("%d of %d source subtasks read nothing: there are only %d partitions. %s Set an idle timeout in the watermark strategy, or lower the source parallelism.", idle, p, nParts, watermark)})
		} else {
			out = append(out, views.WhySentence{Hot: true, Text: fmt.Sprintf("%d of %d source subtasks read no partition although there are %d partitions, because of where each topic's partitions start. %s", idle, p, nParts, watermark)})
		}
	}
	if kg := side.KeyGroupSkew; kg.MaxOverMean > 1.1 {
		big, small := 0, 0
		hi := (pl.MaxParallelism + p - 1) / p
		for _, r := range side.Ranges {
			if r.Size() == hi {
				big++
			} else {
				small++
			}
		}
		out = append(out, views.WhySentence{Hot: true, Text: fmt.Sprintf("Key groups split unevenly at p = %d: %d subtasks own %d key groups and %d own %d (max/mean %s). A parallelism that divides %d spreads keyed state evenly.", p, big, hi, small, hi-1, format.Factor(kg.MaxOverMean), pl.MaxParallelism)})
	}
	if len(out) == 0 {
		out = append(out, views.WhySentence{Text: fmt.Sprintf("At p = %d partition counts differ by at most one between subtasks and key groups are split as evenly as %d allows.", p, pl.MaxParallelism)})
	}
	return out
}

// candidateNote is the short "alignment" note of a candidate: what it
// divides and how many subtasks idle (its roles say whether it is the
// autoscaler's choice, the target or the current parallelism).
func candidateNote(c assign.Candidate, f *planForm, maxP int) string {
	var parts []string
	total := 0
	for _, t := range f.req.Topics {
		total += t.Partitions
	}
	if c.DividesMaxParallelism {
		parts = append(parts, fmt.Sprintf("divides %d key groups", maxP))
	}
	if c.DividesPartitions && total > 0 {
		parts = append(parts, fmt.Sprintf("divides %d partitions", total))
	}
	if c.Idle > 0 {
		parts = append(parts, fmt.Sprintf("%d idle", c.Idle))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

func formula(f *planForm, pl assign.Plan, st strategy.Strategy) (views.Formula, []string) {
	var notes []string
	if st.Comparison {
		return views.Formula{Text: st.Label, Source: st.Source}, notes
	}
	fm := views.Formula{
		Text:   "owner = ((hash(topic)·31 & 0x7FFFFFFF) mod p + partition) mod p; key group = murmurHash(hash(key)) mod maxParallelism; subtask = keyGroup·p / maxParallelism",
		Source: "KafkaSourceEnumerator.getSplitOwner (flink-connector-kafka 3.0–5.0); KeyGroupRangeAssignment and MathUtils.murmurHash (Flink 1.10–2.2)",
	}
	if pl.MaxParallelismDefaulted {
		notes = append(notes, fmt.Sprintf("Max parallelism %d is Flink's default for p = %d. A job restored from a savepoint keeps the max parallelism it was started with; set it explicitly (pipeline.max-parallelism) before the first savepoint.", pl.MaxParallelism, f.req.Parallelism))
	}
	if pl.Restore != nil {
		fm.Source += "; restore: " + pl.Restore.Source
	}
	switch {
	case pl.Start != assign.StartRestore:
		notes = append(notes, fmt.Sprintf("A job stopped with a savepoint at p = %d and restored at p = %d does not get this layout: its saved split lists are dealt out in contiguous chunks. Choose \"Restore from savepoint\" to see that layout.", f.req.Parallelism, f.req.Target))
	case pl.Restore != nil:
		notes = append(notes, pl.Restore.Notes...)
	}
	return fm, notes
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// startTogether says that the topics labelled (two or more) start at the
// same subtask: "“clicks” and “pageviews” both start at subtask 1".
func startTogether(labels []string, start int) string {
	all := "all"
	if len(labels) == 2 {
		all = "both"
	}
	return joinAnd(labels) + " " + all + " start at subtask " + strconv.Itoa(start)
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "“" + views.Isolate(x) + "”"
	}
	return out
}
