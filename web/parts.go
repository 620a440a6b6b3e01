package web

import (
	"reflect"
	"slices"
	"strings"

	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/views"
)

// vertexPart is one section of a vertex page that ?parts= picks, for a
// portal that embeds some of them.
type vertexPart uint8

const (
	partGrid vertexPart = iota + 1
	partWhy
	partFigures
	partLineage
)

// vertexParts are the sections a page shows, in the order it shows them
// (an embedded page follows the order ?parts= names them in). Nil shows
// every section, in the page's own order.
type vertexParts []vertexPart

// vertexPartList names the parts in the order of the page, with the
// fields of views.VertexPage each one shows. A part's fields are cleared
// when it is not picked, and a component shows no section for a nil field.
// They are found by name, so that a section whose field another change
// adds (the "why is it hot" panel, Why) is covered once its field exists.
var vertexPartList = []struct {
	name   string
	part   vertexPart
	fields []string
}{
	{"grid", partGrid, []string{"Grid", "Table"}},
	{"why", partWhy, []string{"Why"}},
	{"figures", partFigures, []string{"Figures"}},
	{"lineage", partLineage, []string{"Lineage"}},
}

// partNames lists the parts for messages: "grid, why, figures, lineage".
func partNames() string {
	names := make([]string, len(vertexPartList))
	for i, p := range vertexPartList {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

// parseParts reads ?parts=why,grid: the parts in the order named, each
// once. An embedded page shows the grid alone unless parts says otherwise;
// a page of its own shows every part.
func parseParts(q query, embed bool) (vertexParts, error) {
	s, err := q.single("parts")
	if err != nil {
		return nil, err
	}
	if s == "" {
		if embed {
			return vertexParts{partGrid}, nil
		}
		return nil, nil
	}
	var ps vertexParts
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		p := partNamed(name)
		if p == 0 {
			return nil, badInput("parts", "%s is not a part of the vertex page; the parts are %s", quote.Clip(name), partNames())
		}
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return nil, badInput("parts", "%s names no part; the parts are %s", quote.Clip(s), partNames())
	}
	return ps, nil
}

func partNamed(name string) vertexPart {
	for _, p := range vertexPartList {
		if p.name == name {
			return p.part
		}
	}
	return 0
}

// name is the part's name in ?parts=.
func (p vertexPart) name() string {
	for _, e := range vertexPartList {
		if e.part == p {
			return e.name
		}
	}
	return ""
}

// shows reports whether the part is shown; nil shows them all.
func (ps vertexParts) shows(p vertexPart) bool { return ps == nil || slices.Contains(ps, p) }

// names are the parts' names in their order; nil for every part.
func (ps vertexParts) names() []string {
	if ps == nil {
		return nil
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.name()
	}
	return out
}

// topicOption is the parts as a websocket topic's option, "grid-figures",
// "" for every part: the update of a page must carry only the figures it
// shows. The order is the page's own, whatever the order asked: an update
// names elements by key, so pages that show the same parts in another
// order share it.
func (ps vertexParts) topicOption() string {
	if ps == nil {
		return ""
	}
	var names []string
	for _, p := range vertexPartList {
		if ps.shows(p.part) {
			names = append(names, p.name)
		}
	}
	if len(names) == len(vertexPartList) {
		return ""
	}
	return strings.Join(names, "-")
}

// partsOfTopic reads topicOption back; ok is false for anything it does
// not write.
func partsOfTopic(opt string) (vertexParts, bool) {
	var ps vertexParts
	for name := range strings.SplitSeq(opt, "-") {
		p := partNamed(name)
		if p == 0 || slices.Contains(ps, p) {
			return nil, false
		}
		ps = append(ps, p)
	}
	return ps, ps.topicOption() == opt
}

// hideParts clears the sections of p that ps does not show, and records
// the order of those it shows.
func hideParts(p *views.VertexPage, ps vertexParts) {
	v := reflect.ValueOf(p).Elem()
	for _, part := range vertexPartList {
		if ps.shows(part.part) {
			continue
		}
		for _, name := range part.fields {
			if f := v.FieldByName(name); f.IsValid() {
				f.SetZero()
			}
		}
	}
	p.Parts = ps.names()
}
