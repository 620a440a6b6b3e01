package web

import (
	"reflect"
	"strings"

	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/views"
)

// vertexParts are the sections of a vertex page that ?parts= picks, for a
// portal that embeds one of them. The zero value shows every section.
type vertexParts uint8

const (
	partGrid vertexParts = 1 << iota
	partWhy
	partFigures
	partLineage

	allParts = partGrid | partWhy | partFigures | partLineage
)

// vertexPartList names the parts in the order of the page, with the
// fields of views.VertexPage each one shows. A part's fields are cleared
// when it is not picked, and a component shows no section for a nil field.
// They are found by name, so that a section whose field another change
// adds (the "why is it hot" panel, Why) is covered once its field exists.
var vertexPartList = []struct {
	name   string
	part   vertexParts
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

// parseParts reads ?parts=grid,figures. An embedded page shows the grid
// alone unless parts says otherwise; a page of its own shows every part.
func parseParts(q query, embed bool) (vertexParts, error) {
	s, err := q.single("parts")
	if err != nil {
		return 0, err
	}
	if s == "" {
		if embed {
			return partGrid, nil
		}
		return allParts, nil
	}
	var ps vertexParts
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		p := partNamed(name)
		if p == 0 {
			return 0, badInput("parts", "%s is not a part of the vertex page; the parts are %s", quote.Clip(name), partNames())
		}
		ps |= p
	}
	if ps == 0 {
		return 0, badInput("parts", "%s names no part; the parts are %s", quote.Clip(s), partNames())
	}
	return ps, nil
}

func partNamed(name string) vertexParts {
	for _, p := range vertexPartList {
		if p.name == name {
			return p.part
		}
	}
	return 0
}

// shows reports whether the part is shown; the zero value shows them all.
func (ps vertexParts) shows(p vertexParts) bool { return ps == 0 || ps&p != 0 }

// topicOption is the parts as a websocket topic's option, "grid-figures",
// "" for every part: the update of a page must carry only the figures it
// shows.
func (ps vertexParts) topicOption() string {
	if ps == 0 || ps == allParts {
		return ""
	}
	var names []string
	for _, p := range vertexPartList {
		if ps&p.part != 0 {
			names = append(names, p.name)
		}
	}
	return strings.Join(names, "-")
}

// partsOfTopic reads topicOption back; ok is false for anything it does
// not write.
func partsOfTopic(opt string) (vertexParts, bool) {
	var ps vertexParts
	for name := range strings.SplitSeq(opt, "-") {
		p := partNamed(name)
		if p == 0 || ps&p != 0 {
			return 0, false
		}
		ps |= p
	}
	return ps, ps.topicOption() == opt
}

// hideParts clears the sections of p that ps does not show.
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
}
