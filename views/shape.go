package views

import (
	"hash/fnv"
	"strconv"
)

// A live page's shape names its layout: the rows, cells, panels and lines
// it has, without the live figures (Text, LiveCell, Meter, LiveAge, Spark and
// Copy) that an update rewrites in place. The browser applies an update
// whose shape is the page's (data-shape) and fetches a new rendering of
// the page otherwise, so the shape changes exactly when the layout does.
//
// Each page model writes its own layout (a method below) rather than a
// walk by reflection: a vertex page has thousands of cells, and the page a
// handler renders and the model a publisher builds for the same topic
// differ in what is not the page's layout (the request's highlight, links
// and form controls, the cell titles an update does not carry), which the
// methods leave out, as they leave out the URLs, which an embedded page
// writes otherwise than the page of its own it shares its topic with.

// Shaped is a live page model whose layout ShapeOf can hash.
type Shaped interface {
	LivePage
	writeLayout(w *layout)
}

// ShapeOf returns the shape of a page model: a hash of its layout, its
// live figures blanked.
func ShapeOf(p Shaped) string {
	w := &layout{h: fnv.New64a(), buf: make([]byte, 0, 512)}
	p.writeLayout(w)
	w.flush()
	return strconv.FormatUint(w.h.Sum64(), 36)
}

// layout collects a page's layout into its hash, through a buffer: a page
// writes a few fields for each of its thousands of cells. A grid's row is
// hashed alone (see VertexPage's), the rest once at the end.
type layout struct {
	h interface {
		Write([]byte) (int, error)
		Sum64() uint64
	}
	buf []byte
}

func (w *layout) flush() {
	w.h.Write(w.buf)
	w.buf = w.buf[:0]
}

// str writes a string and a separator that no page text holds.
func (w *layout) str(ss ...string) {
	for _, s := range ss {
		w.buf = append(w.buf, s...)
		w.buf = append(w.buf, 0)
	}
}

func (w *layout) bool(bs ...bool) {
	for _, b := range bs {
		if b {
			w.buf = append(w.buf, '1')
		} else {
			w.buf = append(w.buf, '0')
		}
	}
}

func (w *layout) int(n int) {
	w.buf = strconv.AppendInt(w.buf, int64(n), 10)
	w.buf = append(w.buf, 0)
}

// mark writes the kind of what follows, so that two lists of one length
// do not hash alike.
func (w *layout) mark(c byte) { w.buf = append(w.buf, c) }

func (w *layout) replaced(r *ReplacedPage) {
	w.bool(r != nil)
	if r != nil {
		w.str(r.NewID, r.CurrentID, r.OldVertex, r.VertexNote)
	}
}

func (w *layout) backend(s BackendCell) {
	w.bool(s.NotPolled, s.Age.Key != "")
	w.str(s.State)
}

// writeLayout: each backend, job and topic row, with its state and whether
// its stale age or its loss is shown.
func (p OverviewPage) writeLayout(w *layout) {
	for _, e := range p.Endpoints {
		w.mark('e')
		w.str(e.Name, e.URL, e.Version, e.Jobs)
		w.bool(e.Stale)
		w.backend(e.State)
	}
	for _, j := range p.Jobs {
		w.mark('j')
		w.str(j.Name, j.ID, j.State, j.Vertices, j.Unlisted)
		w.bool(j.Lossy, j.Drift != nil, j.Stale, j.DataAge.Key != "", j.ReplacedBy != nil)
		if j.ReplacedBy != nil {
			w.str(j.ReplacedBy.Text)
		}
		// The subtask its concern is about, and the runs folded under it.
		w.bool(j.Focus != nil)
		if j.Focus != nil {
			w.str(j.Focus.Text)
		}
		for _, e := range j.Earlier {
			w.str(e.ID, e.State, e.Note, e.Lost)
		}
	}
	for _, c := range p.Clusters {
		w.mark('c')
		w.str(c.Name, c.Topics, c.Partitions, c.Groups)
		w.bool(c.Stale)
		w.backend(c.State)
	}
	for _, t := range p.Topics {
		w.mark('t')
		w.str(t.Name, t.Cluster, t.Partitions, t.Groups)
		w.bool(t.Stale, t.DataAge.Key != "")
	}
}

// writeLayout: the job's banners and lines, and each vertex's row.
func (p JobPage) writeLayout(w *layout) {
	w.replaced(p.Replaced)
	w.str(p.Ended, p.Endpoint, p.Name, p.ID, p.State, p.Restarts, p.Restored)
	w.bool(p.Bar.Kafka != nil, p.Watermark != nil)
	for _, v := range p.Vertices {
		w.mark('v')
		w.str(v.Name, v.Parallelism, v.MaxParallelism, v.Kind)
		w.bool(v.Lossy)
	}
}

// writeLayout: the banners, the figures present, the prediction's verdict
// and how it was modelled, the why panel's lines and sentences, the
// lineage's events, and the grid's rows and cells (in any order: a sorted
// grid keeps the order it was rendered in) or the table's rows. The
// request's highlight, peers, links and controls are not its layout.
func (p VertexPage) writeLayout(w *layout) {
	w.replaced(p.Replaced)
	w.str(p.Ended, p.Cluster, p.Name, p.Parallelism, p.MaxParallelism, p.Restored, p.Worst)
	w.bool(p.Withheld != "", p.Error != "", p.Bar.Kafka != nil, p.Group != nil, p.Watermark != nil, p.SQL != nil)
	if p.Group != nil {
		w.str(p.Group.Name)
	}
	if k := p.SQL; k != nil {
		w.str(k.Operator, k.Note)
		w.str(k.Columns...)
	}
	for _, t := range p.Topics {
		w.str(t.Text)
	}
	for _, f := range p.Figures {
		w.mark('f')
		w.str(f.Label, f.Kind)
	}
	if pr := p.Prediction; pr != nil {
		w.mark('p')
		w.str(pr.Kind, pr.KindClass, pr.History, pr.Source)
		w.int(len(pr.Notes))
	}
	if y := p.Why; y != nil {
		for _, c := range y.Causes {
			w.mark('y')
			w.str(c.Kind)
			w.bool(c.Hot)
			for _, cl := range c.Clauses {
				w.str(cl.Kind)
			}
		}
	}
	if l := p.Lineage; l != nil {
		w.mark('l')
		w.int(len(l.Events))
		if n := len(l.Events); n > 0 {
			e := l.Events[n-1]
			w.str(e.Kind, e.When, e.Event)
		}
		// A cause can arrive a poll after its failover, under a later
		// event.
		for _, e := range l.Events {
			w.str(e.Cause)
		}
	}
	if g := p.Grid; g != nil {
		w.mark('g')
		w.str(g.Color)
		w.bool(g.Empty != "", g.EventTime)
		for _, l := range g.Labels {
			w.str(l.Prefix, l.Topic)
		}
		w.int(len(g.Rows))
		w.flush()
		// Each row hashed alone, the rows' hashes summed: any order.
		var rows uint64
		row := fnv.New64a()
		for i := range g.Rows {
			r := &g.Rows[i]
			w.str(r.Subtask)
			w.bool(r.Drift, r.Lossy)
			for k := range r.Cells {
				c := &r.Cells[k]
				w.str(c.Topic, c.Partition)
				w.int(int(c.Predicted))
				w.bool(c.Miss, c.Uncertain, c.Lost)
			}
			row.Reset()
			row.Write(w.buf)
			w.buf = w.buf[:0]
			rows += row.Sum64()
		}
		w.buf = strconv.AppendUint(w.buf, rows, 36)
	}
	if t := p.Table; t != nil {
		w.mark('s')
		w.bool(t.Keyed, t.Strip != nil, t.EventTime)
		for _, r := range t.Rows {
			w.str(r.Subtask, r.KeyGroups, r.KeyGroupSize)
			w.bool(r.Slowest)
		}
	}
}

// writeLayout: the topic's lines, each group's head and each partition's
// row, with its stale mark and its groups' loss marks.
func (p TopicPage) writeLayout(w *layout) {
	w.str(p.Cluster, p.Name, p.Partitions, p.Error)
	w.bool(p.Retention.Key != "")
	for _, g := range p.Groups {
		w.mark('g')
		w.str(g.Name, g.State, g.Title)
		w.bool(g.Lossy)
	}
	for _, s := range p.States {
		w.str(s)
	}
	for _, r := range p.Rows {
		w.mark('p')
		w.str(r.Partition)
		w.bool(r.Stale)
		for _, g := range r.Groups {
			w.bool(g.Lost)
		}
	}
}
