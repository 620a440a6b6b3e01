package views

import (
	"bufio"
	"context"
	"html"
	"io"
	"strconv"

	"github.com/a-h/templ"
)

// cells renders a row of partition cells. Grids reach tens of thousands of
// cells, so this one element is written directly rather than through
// templ's generic attribute handling (which parses every class list);
// every value is escaped with html.EscapeString, as templ would.
func cells(cs []Cell, focusable bool) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		bw, ok := w.(io.StringWriter)
		if !ok {
			b := bufio.NewWriter(w)
			defer b.Flush()
			bw = b
		}
		for _, c := range cs {
			bw.WriteString(`<i class="`)
			bw.WriteString(html.EscapeString(c.Class))
			bw.WriteString(`" title="`)
			bw.WriteString(html.EscapeString(c.Title))
			if focusable {
				bw.WriteString(`" tabindex="0">`)
			} else {
				bw.WriteString(`">`)
			}
			bw.WriteString(html.EscapeString(c.Label))
			if _, err := bw.WriteString(`</i>`); err != nil {
				return err
			}
		}
		return nil
	})
}

// CompactRowGroup is how many rows of a compact grid share a <tbody>: the
// browser skips rendering a group out of view (content-visibility), which
// costs less per group of rows than per row.
const CompactRowGroup = 32

// compactRows renders the rows of a compact grid (see compactGrid in
// planner.templ), in groups of CompactRowGroup: thousands of rows, so
// written directly like cells, every value escaped with html.EscapeString.
func compactRows(g PlanGrid) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		bw, ok := w.(io.StringWriter)
		if !ok {
			b := bufio.NewWriter(w)
			defer b.Flush()
			bw = b
		}
		var num [20]byte
		prefix := html.EscapeString(g.ID) + "-st-"
		for i, r := range g.Rows {
			if i > 0 && i%CompactRowGroup == 0 {
				bw.WriteString(`</tbody><tbody role="rowgroup">`)
			}
			sub := string(strconv.AppendInt(num[:0], int64(r.Subtask), 10))
			bw.WriteString(`<tr id="`)
			bw.WriteString(prefix)
			bw.WriteString(sub)
			if c := rowClass(r); c != "" {
				bw.WriteString(`" class="`)
				bw.WriteString(c)
			}
			bw.WriteString(`" role="row"><th scope="row" role="rowheader"><span class="`)
			bw.WriteString(stClass(r))
			bw.WriteString(`" tabindex="0">`)
			bw.WriteString(sub)
			bw.WriteString(`</span></th><td class="parts" role="cell" data-cells="`)
			bw.WriteString(html.EscapeString(r.Codes))
			bw.WriteString(`">`)
			if r.Idle {
				bw.WriteString(`<span class="idle-note">idle</span>`)
			}
			bw.WriteString(`</td><td class="load" role="cell"><span class="lt">`)
			bw.WriteString(html.EscapeString(r.LoadText))
			if _, err := bw.WriteString(`</span></td></tr>`); err != nil {
				return err
			}
		}
		return nil
	})
}
