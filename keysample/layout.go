package keysample

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/internal/quote"
)

// LayoutTopKeys is how many of the heaviest keys a Layout places.
const LayoutTopKeys = 10

// Layout is the load of the sampled records per subtask at one parallelism.
// PerSubtask is exact for the sample (the key-group counts summed by the
// subtask that owns each key group); the key counts in TopKeys are
// Space-Saving estimates.
type Layout struct {
	Parallelism    int
	MaxParallelism int
	Records        int64
	// PerSubtask is the number of records each subtask would receive.
	PerSubtask []int64
	// Busiest is the subtask with the most records (the lowest index of
	// those tied).
	Busiest int
	// Share is the busiest subtask's share of the records, 0..1 (0 with no
	// records); an even spread gives 1/Parallelism.
	Share float64
	// TopKeys are the LayoutTopKeys heaviest keys with their subtask.
	TopKeys []KeyPlacement
}

// KeyPlacement is one heavy key and the subtask it lands on.
type KeyPlacement struct {
	Key     HeavyKey
	Subtask int
	// Share is the key's share of all records, Count/Records (an upper
	// estimate; (Count-ErrorBound)/Records is a lower one).
	Share float64
	// SubtaskShare is the key's share of its subtask's records, at most 1.
	SubtaskShare float64
}

// AtParallelism spreads the sample over p subtasks: the records per subtask
// from the exact key-group counts, and the subtask of each top key. The
// error is Flink's when p is not a parallelism the max parallelism allows.
func (s *Summary) AtParallelism(p int) (Layout, error) {
	if err := assign.CheckMaxParallelism(s.maxP, p); err != nil {
		return Layout{}, err
	}
	l := Layout{Parallelism: p, MaxParallelism: s.maxP, Records: s.records, PerSubtask: s.perSubtask(p)}
	for i, n := range l.PerSubtask {
		if n > l.PerSubtask[l.Busiest] {
			l.Busiest = i
		}
	}
	l.Share = ratio(l.PerSubtask[l.Busiest], s.records)
	for _, k := range s.Top(LayoutTopKeys) {
		sub := assign.OperatorIndex(s.maxP, p, k.KeyGroup)
		l.TopKeys = append(l.TopKeys, KeyPlacement{
			Key: k, Subtask: sub, Share: ratio(k.Count, s.records),
			SubtaskShare: min(1, ratio(k.Count, l.PerSubtask[sub])),
		})
	}
	return l, nil
}

// perSubtask sums the key-group counts by the subtask owning each key group
// at parallelism p (1 <= p <= maxP).
func (s *Summary) perSubtask(p int) []int64 {
	out := make([]int64, p)
	for kg, n := range s.keyGroups {
		out[assign.OperatorIndex(s.maxP, p, kg)] += n
	}
	return out
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Verdict says in words, over parallelisms From..To, which keys make a
// subtask hot and what rescaling can do about it, with the figures behind
// the sentences.
type Verdict struct {
	// Sentences are the verdict, most important first.
	Sentences []string
	// Current is the job's parallelism (0 if it was not a valid one).
	Current int
	// From and To are the range of parallelisms judged, after cutting it
	// to 1..MaxParallelism.
	From, To int
	Records  int64
	// Loads has the busiest subtask per parallelism From..To.
	Loads []ParallelismLoad
	// HotKeys are the heaviest keys (up to three) that carry more than the
	// even share at To, which no parallelism in the range spreads.
	HotKeys []HotKey
	// Separations are for the two and the three heaviest keys.
	Separations []Separation
}

// ParallelismLoad is the busiest subtask at one parallelism.
type ParallelismLoad struct {
	Parallelism int
	Busiest     int
	// Share is the busiest subtask's share of the records.
	Share float64
	// Imbalance is Share × Parallelism: 1 for an even spread.
	Imbalance float64
}

// HotKey is a key heavier than any subtask's even share in the range.
type HotKey struct {
	Key HeavyKey
	// Share is Count/Records; MinShare is (Count-ErrorBound)/Records.
	Share, MinShare float64
	// Subtasks is the key's subtask at each parallelism From..To.
	Subtasks []int
}

// Separation says at which parallelisms some of the heaviest keys land on
// pairwise different subtasks.
type Separation struct {
	Keys []HeavyKey
	// SameKeyGroup is true when two of the keys share a key group, so that
	// no parallelism separates them.
	SameKeyGroup bool
	// Apart are the parallelisms in From..To that put every key on a
	// subtask of its own; Together the others.
	Apart, Together []int
}

// Verdict judges the sample at the job's current parallelism and over the
// parallelisms fromP..toP (cut to 1..max parallelism; a reversed range is
// turned round), for example:
//
//	key "customer-42" alone carries 31% of the records: no parallelism
//	spreads it; it lands on subtask 5 at every p between 6 and 11
//
// and which parallelisms put the two and the three heaviest keys on
// different subtasks.
func (s *Summary) Verdict(current, fromP, toP int) Verdict {
	if fromP > toP {
		fromP, toP = toP, fromP
	}
	v := Verdict{From: min(max(fromP, 1), s.maxP), To: min(max(toP, 1), s.maxP), Records: s.records}
	if v.From != fromP || v.To != toP {
		v.say("parallelism runs from 1 to the max parallelism %d: the range %d–%d is cut to %d–%d", s.maxP, fromP, toP, v.From, v.To)
	}
	if assign.CheckMaxParallelism(s.maxP, current) == nil {
		v.Current = current
	}
	if s.records == 0 {
		v.say("no records sampled yet")
		return v
	}
	ps := make([]int, 0, v.To-v.From+1)
	for p := v.From; p <= v.To; p++ {
		ps = append(ps, p)
		per := s.perSubtask(p)
		busiest := 0
		for i, n := range per {
			if n > per[busiest] {
				busiest = i
			}
		}
		share := ratio(per[busiest], s.records)
		v.Loads = append(v.Loads, ParallelismLoad{Parallelism: p, Busiest: busiest, Share: share, Imbalance: share * float64(p)})
	}

	if v.Current > 0 {
		l, _ := s.AtParallelism(v.Current)
		v.say("at the current parallelism %d, subtask %d is the busiest with %s of the records, %s its even share of %s",
			v.Current, l.Busiest, pct(l.Share), times(l.Share*float64(v.Current)), pct(1/float64(v.Current)))
	}

	top := s.Top(3)
	even := 1 / float64(v.To)
	for _, k := range top {
		share := ratio(k.Count, s.records)
		if share <= even {
			continue
		}
		h := HotKey{Key: k, Share: share, MinShare: ratio(k.Count-k.ErrorBound, s.records)}
		for _, p := range ps {
			h.Subtasks = append(h.Subtasks, assign.OperatorIndex(s.maxP, p, k.KeyGroup))
		}
		v.HotKeys = append(v.HotKeys, h)
		carries := pct(share)
		if k.ErrorBound > 0 {
			carries += " (at least " + pct(h.MinShare) + ")"
		}
		v.say("key %s alone carries %s of the records: no parallelism spreads it; it lands on %s", quote.Clip(k.Text), carries, placements(ps, h.Subtasks))
	}
	if len(v.HotKeys) == 0 && len(top) > 0 {
		v.say("no key carries more than the even share at p = %d (%s): the heaviest, %s, carries %s", v.To, pct(even), quote.Clip(top[0].Text), pct(ratio(top[0].Count, s.records)))
	}

	for n := 2; n <= len(top); n++ {
		sep := s.separation(top[:n], ps)
		v.Separations = append(v.Separations, sep)
		v.say("%s", sep.sentence(v.From, v.To))
	}

	v.sayLoads(s)
	return v
}

// sayLoads says which parallelism gives the busiest subtask the least of
// the records, and which spreads them most evenly when that is an option
// worth taking. Evenness alone is no finding: few subtasks are always even
// (p = 1 perfectly, p = 2 nearly), because each takes many keys, yet every
// one of them is busier. So the most even p is offered only when it also
// takes load off the busiest subtask of today (the current parallelism, or
// the range's smallest without one) and is not the current parallelism.
func (v *Verdict) sayLoads(s *Summary) {
	lowest := v.Loads[0]
	for _, l := range v.Loads[1:] {
		if l.Share < lowest.Share {
			lowest = l
		}
	}
	// The smallest p within 1 % of the lowest share: more subtasks than
	// that cost without relief.
	for _, l := range v.Loads {
		if l.Share <= lowest.Share*1.01 {
			lowest = l
			break
		}
	}
	ref := v.Loads[0]
	if v.Current > 0 {
		per := s.perSubtask(v.Current)
		ref = ParallelismLoad{Parallelism: v.Current, Share: ratio(slices.Max(per), s.records)}
	}
	switch {
	case lowest.Parallelism == v.Current || lowest.Share >= ref.Share:
		v.say("no p in %d–%d gives the busiest subtask less than %s of the records, its share at p = %d", v.From, v.To, pct(ref.Share), ref.Parallelism)
	default:
		v.say("the busiest subtask carries the least at p = %d: subtask %d, %s of the records (%s the even share), against %s at p = %d",
			lowest.Parallelism, lowest.Busiest, pct(lowest.Share), times(lowest.Imbalance), pct(ref.Share), ref.Parallelism)
	}
	even, ok := ParallelismLoad{}, false
	for _, l := range v.Loads {
		if l.Parallelism > 1 && (!ok || l.Imbalance < even.Imbalance) {
			even, ok = l, true
		}
	}
	if !ok || even.Parallelism == lowest.Parallelism || even.Parallelism == v.Current || even.Share >= ref.Share {
		return
	}
	v.say("the most even spread in %d–%d is at p = %d: the busiest subtask, %d, carries %s of the records (%s the even share), less than the %s at p = %d",
		v.From, v.To, even.Parallelism, even.Busiest, pct(even.Share), times(even.Imbalance), pct(ref.Share), ref.Parallelism)
}

func (v *Verdict) say(format string, args ...any) {
	v.Sentences = append(v.Sentences, fmt.Sprintf(format, args...))
}

// separation finds the parallelisms ps at which keys land on pairwise
// different subtasks.
func (s *Summary) separation(keys []HeavyKey, ps []int) Separation {
	sep := Separation{Keys: keys}
	for i := range keys {
		for j := range i {
			if keys[i].KeyGroup == keys[j].KeyGroup {
				sep.SameKeyGroup = true
			}
		}
	}
	for _, p := range ps {
		apart := true
		seen := map[int]bool{}
		for _, k := range keys {
			sub := assign.OperatorIndex(s.maxP, p, k.KeyGroup)
			if seen[sub] {
				apart = false
			}
			seen[sub] = true
		}
		if apart {
			sep.Apart = append(sep.Apart, p)
		} else {
			sep.Together = append(sep.Together, p)
		}
	}
	return sep
}

func (sep Separation) sentence(from, to int) string {
	names := make([]string, len(sep.Keys))
	for i, k := range sep.Keys {
		names[i] = quote.Clip(k.Text)
	}
	var who string
	if len(names) == 2 {
		who = "the two heaviest keys, " + names[0] + " and " + names[1] + ","
	} else {
		who = "the three heaviest keys, " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + ","
	}
	switch {
	case sep.SameKeyGroup:
		return who + " share a key group: no parallelism separates them"
	case len(sep.Together) == 0:
		return who + " are on different subtasks at every p between " + strconv.Itoa(from) + " and " + strconv.Itoa(to)
	case len(sep.Apart) == 0:
		return who + " share a subtask at every p between " + strconv.Itoa(from) + " and " + strconv.Itoa(to)
	}
	return who + " are on different subtasks at p = " + runs(sep.Apart) + " and share one at p = " + runs(sep.Together)
}

// placements says where a key lands over the parallelisms ps.
func placements(ps, subs []int) string {
	same := true
	for _, s := range subs {
		same = same && s == subs[0]
	}
	if same {
		if len(ps) == 1 {
			return fmt.Sprintf("subtask %d at p = %d", subs[0], ps[0])
		}
		return fmt.Sprintf("subtask %d at every p between %d and %d", subs[0], ps[0], ps[len(ps)-1])
	}
	var parts []string
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && subs[j+1] == subs[i] {
			j++
		}
		parts = append(parts, fmt.Sprintf("subtask %d at p = %s", subs[i], runs(ps[i:j+1])))
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// runs writes ascending ints with consecutive runs joined: "6, 7, 9–11".
func runs(xs []int) string {
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, strconv.Itoa(xs[i]))
		case j == i+1:
			parts = append(parts, strconv.Itoa(xs[i]), strconv.Itoa(xs[j]))
		default:
			parts = append(parts, strconv.Itoa(xs[i])+"–"+strconv.Itoa(xs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// pct writes a share 0..1 as a percentage, as the sample page's tables do
// (format.Percent): "31%", "0.8%".
func pct(x float64) string { return format.Percent(100 * x) }

func times(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) + "×" }
