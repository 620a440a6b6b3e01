package views

import (
	"bufio"
	"context"
	"html"
	"io"

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
