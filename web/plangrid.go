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
	"github.com/skewscope/skewscope/views"
)

type gridContext struct {
	f         *planForm
	topicIdx  map[string]int
	maxRate   float64
	hasRates  bool
	highlight highlight
	maxP      int
	// bands are the partitions' rate bands by topic index and partition,
	// for compact grids (nil without rates).
	bands [][]uint8
}

// rateBands fills gc.bands when the plan has rates and its grids are
// compact: a slice lookup per cell instead of a map lookup.
func (gc *gridContext) rateBands() {
	total := 0
	for _, t := range gc.f.req.Topics {
		total += t.Partitions
	}
	if !gc.hasRates || total <= compactCells {
		return
	}
	gc.bands = make([][]uint8, len(gc.f.req.Topics))
	for i, t := range gc.f.req.Topics {
		gc.bands[i] = make([]uint8, t.Partitions)
	}
	for tp, r := range gc.f.req.Rates {
		if t, ok := gc.topicIdx[tp.Topic]; ok && int(tp.Partition) < len(gc.bands[t]) {
			gc.bands[t][tp.Partition] = uint8(rateBand(r, gc.maxRate))
		}
	}
}

// highlight is a parsed ?highlight=subtask:N or partition:TOPIC:N.
type highlight struct {
	subtask   int // -1: none
	partition *assign.TopicPartition
}

func parseHighlight(s string) highlight {
	h := highlight{subtask: -1}
	switch {
	case strings.HasPrefix(s, "subtask:"):
		if n, err := strconv.Atoi(s[len("subtask:"):]); err == nil && n >= 0 {
			h.subtask = n
		}
	case strings.HasPrefix(s, "partition:"):
		rest := s[len("partition:"):]
		if i := strings.LastIndexByte(rest, ':'); i > 0 {
			if n, err := strconv.Atoi(rest[i+1:]); err == nil && n >= 0 {
				h.partition = &assign.TopicPartition{Topic: rest[:i], Partition: int32(n)}
			}
		}
	}
	return h
}

func (gc gridContext) grid(id, title string, side assign.PlanSide, mode string, moved, unc map[assign.TopicPartition]bool) views.PlanGrid {
	g := views.PlanGrid{ID: id, Title: title, Parallelism: side.Parallelism, Mode: mode}
	total := 0
	for _, ps := range side.Assignment.Subtasks {
		total += len(ps)
	}
	g.Compact = total > compactCells
	load := side.Assignment.Counts()
	sk := side.PartitionSkew
	g.Unit = "partitions"
	if gc.hasRates {
		load, sk, g.Unit = side.Load, side.RateSkew, "records/s"
	}
	maxLoad := 0.0
	for _, x := range load {
		maxLoad = max(maxLoad, x)
	}
	g.Rows = make([]views.GridRow, side.Parallelism)
	var cellBuf []views.Cell
	if !g.Compact {
		cellBuf = make([]views.Cell, total)
	}
	names := make([]string, len(gc.f.req.Topics)) // isolated names, once per topic
	colour := make([]string, len(gc.f.req.Topics))
	for t, tc := range gc.f.req.Topics {
		names[t] = views.Isolate(tc.Name)
		colour[t] = "c t" + strconv.Itoa(t%8)
	}
	less := func(a, b assign.TopicPartition) int {
		return cmp.Or(cmp.Compare(gc.topicIdx[a.Topic], gc.topicIdx[b.Topic]), cmp.Compare(a.Partition, b.Partition))
	}
	if g.Compact {
		g.Topics = names
		g.ByRate = gc.hasRates && gc.f.Color == "rate"
		g.MaxParallelism = gc.maxP
		if gc.hasRates {
			g.MaxRate = gc.maxRate
		}
	}
	var sb strings.Builder
	for i, ps := range side.Assignment.Subtasks {
		if !slices.IsSortedFunc(ps, less) {
			ps = slices.Clone(ps)
			slices.SortFunc(ps, less)
		}
		kr := side.Ranges[i]
		row := views.GridRow{
			Subtask: i, Idle: len(ps) == 0, Load: math.Round(load[i]), LoadMax: math.Ceil(max(maxLoad, 1)),
			LoadLow: math.Round(sk.Mean * 1.1), LoadHigh: math.Round(sk.Mean * 1.25),
			LoadText:  format.Num(load[i]),
			KeyGroups: strconv.Itoa(kr.Start) + "–" + strconv.Itoa(kr.End),
			Busiest:   side.Parallelism > 1 && maxLoad > 0 && i == sk.Busiest,
			Highlight: i == gc.highlight.subtask,
		}
		if g.Compact {
			row.Codes, row.Highlight = gc.compactCells(&sb, ps, moved, unc, row.Highlight)
			g.LoadMax, g.LoadLow, g.LoadHigh = row.LoadMax, row.LoadLow, row.LoadHigh
			g.Rows[i] = row
			continue
		}
		row.Cells = cellBuf[:len(ps):len(ps)]
		cellBuf = cellBuf[len(ps):]
		for j, tp := range ps {
			t := gc.topicIdx[tp.Topic]
			isMoved, isUnc := moved[tp], unc[tp]
			c := views.Cell{Class: colour[t], Moved: isMoved, Uncertain: isUnc}
			part := strconv.Itoa(int(tp.Partition))
			c.Label = part
			sb.Reset()
			sb.WriteString(names[t])
			sb.WriteByte('-')
			sb.WriteString(part)
			sb.WriteString(" · subtask ")
			sb.WriteString(strconv.Itoa(i))
			if gc.hasRates {
				r := gc.f.req.Rates[tp]
				sb.WriteString(" · ")
				sb.WriteString(format.Num(r))
				sb.WriteString("/s")
				if gc.f.Color == "rate" {
					c.Class = "c rate r" + strconv.Itoa(rateBand(r, gc.maxRate))
				} else {
					c.Class += " i" + strconv.Itoa(max(1, rateBand(r, gc.maxRate)))
				}
			}
			sb.WriteString(" · key groups ")
			sb.WriteString(row.KeyGroups)
			if isMoved {
				sb.WriteString(" · changes subtask")
				c.Class += " mv"
			}
			if isUnc {
				sb.WriteString(" · owner not determined: depends on an order Flink does not fix")
				c.Class += " unc"
			}
			if gc.highlight.partition != nil && *gc.highlight.partition == tp {
				c.Class += " hl"
				row.Highlight = true
			}
			c.Title = sb.String()
			row.Cells[j] = c
		}
		g.Rows[i] = row
	}
	if gc.hasRates {
		g.Footer = fmt.Sprintf("records/s per subtask · skew %s · max/mean %s · given rates", format.Percent(sk.FlinkPercent), format.Factor(sk.MaxOverMean))
	} else {
		g.Footer = fmt.Sprintf("partitions per subtask · skew %s · max/mean %s · %d idle", format.Percent(sk.FlinkPercent), format.Factor(sk.MaxOverMean), sk.Idle)
	}
	g.Key = gridKey(g)
	return g
}

// gridsHeader is the request header in which the planner script names the
// grids it shows, as ID=KEY pairs separated by commas (views.PlanGrid ID and
// Key): a new rendering sends only their keys, and the script keeps its own
// copies. The script keeps its form too (it takes only the field messages
// and hints from an answer), so an answer to it leaves the pasted rates out
// of the form. Pages are never cached (Cache-Control: no-store), so such an
// answer cannot stand in for the full page.
const gridsHeader = "X-Skewscope-Grids"

// keepGrids leaves out of v the grids that have says the page has already.
func keepGrids(have string, v *views.PlanResult) {
	if have == "" {
		return
	}
	for pair := range strings.SplitSeq(have, ",") {
		id, key, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok {
			continue
		}
		for _, g := range []*views.PlanGrid{&v.Now, &v.Then} {
			if g.ID == id && g.Key == key {
				g.Kept, g.Rows = true, nil
			}
		}
	}
}

// compactCells writes the codes of one compact row's partitions ps (see
// views.GridRow), reusing buf's memory. hl says whether the row is
// highlighted already; it comes back set when the highlighted partition is
// in the row.
func (gc gridContext) compactCells(buf *strings.Builder, ps []assign.TopicPartition, moved, unc map[assign.TopicPartition]bool, hl bool) (string, bool) {
	buf.Reset()
	var num [20]byte
	for j, tp := range ps {
		if j > 0 {
			buf.WriteByte(' ')
		}
		t := gc.topicIdx[tp.Topic]
		buf.Write(strconv.AppendInt(num[:0], int64(t), 10))
		buf.WriteByte(':')
		buf.Write(strconv.AppendInt(num[:0], int64(tp.Partition), 10))
		var band uint8
		switch {
		case gc.bands != nil:
			band = gc.bands[t][tp.Partition]
		case gc.hasRates:
			band = uint8(rateBand(gc.f.req.Rates[tp], gc.maxRate))
		}
		isMoved, isUnc := moved[tp], unc[tp]
		isHl := gc.highlight.partition != nil && *gc.highlight.partition == tp
		if band == 0 && !isMoved && !isUnc && !isHl {
			continue
		}
		buf.WriteByte(':')
		buf.WriteByte('0' + band)
		if !isMoved && !isUnc && !isHl {
			continue
		}
		buf.WriteByte(':')
		if isMoved {
			buf.WriteByte('m')
		}
		if isUnc {
			buf.WriteByte('u')
		}
		if isHl {
			buf.WriteByte('h')
			hl = true
		}
	}
	return buf.String(), hl
}

// gridKey is a digest of everything g shows, for views.PlanGrid.Key: an
// FNV-1a hash of its fields, each ended by a zero byte.
func gridKey(g views.PlanGrid) string {
	h := fnvHash(14695981039346656037)
	h.str(g.ID, g.Title, g.Mode, g.Unit, g.Footer)
	h.int(g.Parallelism, g.MaxParallelism, len(g.Topics), len(g.Rows))
	h.bool(g.Compact, g.ByRate)
	h.float(g.MaxRate, g.LoadMax, g.LoadLow, g.LoadHigh)
	h.str(g.Topics...)
	for _, r := range g.Rows {
		h.int(r.Subtask, len(r.Cells))
		h.str(r.LoadText, r.KeyGroups, r.Codes)
		h.bool(r.Busiest, r.Idle, r.Highlight)
		h.float(r.Load, r.LoadMax, r.LoadLow, r.LoadHigh)
		for _, c := range r.Cells {
			h.str(c.Label, c.Class, c.Title)
			h.bool(c.Uncertain, c.Moved)
		}
	}
	return strconv.FormatUint(uint64(h), 36)
}

type fnvHash uint64

func (h *fnvHash) byte(b byte) { *h = (*h ^ fnvHash(b)) * 1099511628211 }

func (h *fnvHash) str(ss ...string) {
	for _, s := range ss {
		for i := range len(s) {
			h.byte(s[i])
		}
		h.byte(0)
	}
}

func (h *fnvHash) int(xs ...int) {
	for _, x := range xs {
		for i := range 8 {
			h.byte(byte(uint64(x) >> (8 * i)))
		}
	}
}

func (h *fnvHash) float(xs ...float64) {
	for _, x := range xs {
		h.int(int(math.Float64bits(x)))
	}
}

func (h *fnvHash) bool(bs ...bool) {
	for _, b := range bs {
		if b {
			h.byte(1)
		} else {
			h.byte(0)
		}
	}
}

func rateBand(r, maxRate float64) int {
	if maxRate <= 0 || r <= 0 {
		return 0
	}
	return min(9, 1+int(8.999*r/maxRate))
}

func keyGroupStrip(pl assign.Plan) views.KeyGroupStrip {
	s := views.KeyGroupStrip{MaxParallelism: pl.MaxParallelism}
	for k, side := range []assign.PlanSide{pl.Now, pl.Target} {
		row := views.StripRow{Label: [2]string{"now", "target"}[k] + " p = " + strconv.Itoa(side.Parallelism)}
		m := float64(pl.MaxParallelism)
		hi := (pl.MaxParallelism + side.Parallelism - 1) / side.Parallelism
		lo := pl.MaxParallelism / side.Parallelism
		if side.Parallelism > stripTitles {
			// Too many subtasks to tell apart at any width: one segment
			// that says what every subtask owns.
			desc := fmt.Sprintf("%d subtasks of %d key groups each", side.Parallelism, lo)
			if hi != lo {
				big := pl.MaxParallelism % side.Parallelism
				desc = fmt.Sprintf("%d subtasks own %d key groups, %d own %d", big, hi, side.Parallelism-big, lo)
			}
			row.Segments = []views.Segment{{Subtask: 0, X: 0, W: 100, Range: desc, Class: "k0", Title: desc + "; each row of the grids gives its range", Label: true, Whole: true}}
			s.Rows = append(s.Rows, row)
			continue
		}
		for i, r := range side.Ranges {
			seg := views.Segment{
				Subtask: i, X: 100 * float64(r.Start) / m, W: 100 * float64(r.Size()) / m,
				Range: fmt.Sprintf("%d–%d", r.Start, r.End), Size: r.Size(),
				Class: "k" + strconv.Itoa(i%2),
			}
			seg.Label = seg.W >= 5
			if side.Parallelism <= stripTitles {
				seg.Title = fmt.Sprintf("subtask %d · key groups %s · %d key groups", i, seg.Range, r.Size())
			}
			if hi != lo && r.Size() == hi {
				seg.Class += " big"
				if seg.Title != "" {
					seg.Title += " (one more than the smallest)"
				}
			}
			row.Segments = append(row.Segments, seg)
		}
		s.Rows = append(s.Rows, row)
	}
	var parts []string
	for i, st := range pl.Keyed.Subtasks {
		if i == 32 {
			parts = append(parts, fmt.Sprintf("… (%d more)", len(pl.Keyed.Subtasks)-32))
			break
		}
		olds := make([]string, len(st.Sources))
		for j, src := range st.Sources {
			olds[j] = strconv.Itoa(src.OldSubtask)
		}
		parts = append(parts, fmt.Sprintf("%d←%s", st.Subtask, strings.Join(olds, ",")))
	}
	s.FanIn = "Each new subtask restores keyed state from old subtasks: " + strings.Join(parts, " · ") +
		fmt.Sprintf(" (max fan-in %d)", pl.Keyed.MaxFanIn)
	if t := pl.Target; t.KeyGroupSkew.MaxOverMean > 1 {
		s.Uneven = fmt.Sprintf("At p = %d the ranges differ by one key group (darker segments own one more); max/mean %s.", t.Parallelism, format.Factor(t.KeyGroupSkew.MaxOverMean))
	}
	return s
}

func legend(f *planForm, maxRate float64, pl assign.Plan) []views.LegendItem {
	out := legendColours(f, maxRate)
	if f.Color != "rate" && maxRate > 0 {
		out = append(out, views.LegendItem{Class: "c t6 i2", Label: "lighter: lower rate"})
	}
	if f.req.Parallelism != f.req.Target || pl.Start == assign.StartRestore {
		out = append(out, views.LegendItem{Class: "c t6 mv", Label: "target cell underlined: partition changes subtask"})
	}
	if pl.Restore != nil && pl.Start == assign.StartRestore && len(pl.Restore.Uncertain) > 0 {
		out = append(out, views.LegendItem{Class: "c t6 unc", Label: "dashed: owner not fixed by Flink"})
	}
	return out
}

func legendColours(f *planForm, maxRate float64) []views.LegendItem {
	if f.Color == "rate" && maxRate > 0 {
		return []views.LegendItem{
			{Class: "rate r1", Label: "low rate"},
			{Class: "rate r5", Label: format.Num(maxRate/2) + " rec/s"},
			{Class: "rate r9", Label: format.Num(maxRate) + " rec/s (hottest)"},
		}
	}
	var out []views.LegendItem
	for i, t := range f.req.Topics {
		if i == 16 {
			out = append(out, views.LegendItem{Class: "", Label: fmt.Sprintf("… %d more topics (colours repeat)", len(f.req.Topics)-16)})
			break
		}
		out = append(out, views.LegendItem{Class: "t" + strconv.Itoa(i%8), Name: t.Name, Label: fmt.Sprintf("× %d", t.Partitions)})
	}
	return out
}
