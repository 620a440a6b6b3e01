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

func TestCompactRowsEscape(t *testing.T) {
	g := PlanGrid{ID: `now"><script>`, Rows: []GridRow{
		{Subtask: 0, Codes: `0:1" onclick="alert(1)`, LoadText: `<img src=x onerror=alert(2)>`, Busiest: true, Highlight: true},
		{Subtask: 1, Idle: true},
	}}
	var buf bytes.Buffer
	if err := compactRows(g).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader("<table><tbody>" + buf.String() + "</tbody></table>"))
	if err != nil {
		t.Fatal(err)
	}
	rows := doc.Find("tbody > tr")
	if rows.Length() != 2 || doc.Find("script, img, [onclick]").Length() != 0 {
		t.Fatalf("compactRows = %s: want two rows and no script, img or onclick", buf.String())
	}
	first := rows.First()
	if id, _ := first.Attr("id"); id != g.ID+"-st-0" {
		t.Errorf("id = %q, want %q", id, g.ID+"-st-0")
	}
	if cls, _ := first.Attr("class"); cls != "hl" {
		t.Errorf("class = %q, want hl", cls)
	}
	if codes, _ := first.Find("td.parts").Attr("data-cells"); codes != g.Rows[0].Codes {
		t.Errorf("data-cells = %q, want %q", codes, g.Rows[0].Codes)
	}
	if lt := first.Find(".lt").Text(); lt != g.Rows[0].LoadText {
		t.Errorf("load text = %q, want %q", lt, g.Rows[0].LoadText)
	}
	if first.Find("th .st.busiest").Length() != 1 || rows.Eq(1).Find(".idle-note").Length() != 1 || rows.Eq(1).AttrOr("class", "") != "idle" {
		t.Errorf("compactRows = %s: want the busiest mark on row 0 and the idle note on row 1", buf.String())
	}
}
