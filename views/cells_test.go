package views

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func TestCellsEscape(t *testing.T) {
	hostile := []Cell{
		{Class: `c t0" onclick="alert(1)`, Title: `"><script>alert(1)</script>`, Label: `<img src=x onerror=alert(2)>`},
		{Class: "c t1 mv", Title: "orders-3 · subtask 0 · 920 rec/s", Label: "3"},
	}
	for _, focusable := range []bool{true, false} {
		var buf bytes.Buffer
		if err := cells(hostile, focusable).Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader("<p>" + buf.String() + "</p>"))
		if err != nil {
			t.Fatal(err)
		}
		is := doc.Find("p > i")
		if is.Length() != 2 || doc.Find("script, img").Length() != 0 {
			t.Fatalf("cells(focusable=%v) = %s: want exactly two <i> and no script or img", focusable, buf.String())
		}
		first := is.First()
		if cls, _ := first.Attr("class"); cls != hostile[0].Class {
			t.Errorf("class = %q, want %q kept as one attribute value", cls, hostile[0].Class)
		}
		if _, ok := first.Attr("onclick"); ok {
			t.Error("a class value broke out into an onclick attribute")
		}
		if title, _ := first.Attr("title"); title != hostile[0].Title {
			t.Errorf("title = %q, want %q", title, hostile[0].Title)
		}
		if first.Text() != hostile[0].Label {
			t.Errorf("label text = %q, want %q", first.Text(), hostile[0].Label)
		}
		if _, ok := first.Attr("tabindex"); ok != focusable {
			t.Errorf("tabindex present = %v, want %v", ok, focusable)
		}
	}
}
