package web

import (
	"net/url"
	"strings"

	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/plan"
	"github.com/skewscope/skewscope/strategy"
)

// maxPlannerSubtasks bounds parallelism + target (plan.MaxSubtasks).
const maxPlannerSubtasks = plan.MaxSubtasks

// planForm is the planner's input exactly as the user typed it, for the
// form to echo back, with the request read from it (package plan) and one
// message per bad field. Color and Highlight are the page's own: how the
// grids are drawn, not what is planned.
type planForm struct {
	// The request's fields as typed, echoed back into the form.
	plan.Texts
	// Color and Highlight are the page's colouring and highlight as
	// typed; they change only how the page draws.
	Color, Highlight string
	// Sample is a key sample's id whose key groups give the keyed load.
	Sample string

	// req is the input read, valid when Errors is empty.
	req plan.Request
	// sample is the key sample req names, attached by the server.
	sample *plan.Sample

	Errors map[string]string

	canonical  url.Values // cached by canonicalQuery
	encodedLen int
}

// queryLen is the length of the encoded canonical query. Pasted rates
// longer than any link are not encoded just to be measured.
func (f *planForm) queryLen() int {
	if f.canonical == nil && len(f.Rates) > maxLinkQuery {
		return len(f.Rates)
	}
	f.canonicalQuery()
	return f.encodedLen
}

func (f *planForm) fail(field, format string, args ...any) {
	if f.Errors == nil {
		f.Errors = map[string]string{}
	}
	plan.Errors(f.Errors).Add(field, format, args...)
}

// parsePlanForm reads planner input from a query (GET) or a posted form:
// the request by plan.FromQuery, the texts for the form, and the page's
// colouring and highlight. It never fails as a whole: bad fields are
// reported in Errors, and the other fields are still parsed.
func parsePlanForm(v url.Values) *planForm {
	f := &planForm{Texts: plan.TextsOf(v), Color: strings.TrimSpace(v.Get("color")), Highlight: strings.TrimSpace(v.Get("highlight")),
		Sample: strings.TrimSpace(v.Get("sample"))}
	if a := strings.TrimSpace(v.Get("apply")); a != "" {
		// A candidate's button: apply it as the target.
		f.Target = a
		v = cloneValues(v)
		v.Set("target", a)
	}
	var errs plan.Errors
	f.req, errs = plan.FromQuery(v)
	f.Errors = errs
	if f.Mode == "" || f.Mode == "fresh" {
		f.Mode = "fresh"
	}
	if f.Strategy == "" {
		f.Strategy = strategy.Default
	}
	switch f.Color {
	case "", "topic":
		f.Color = "topic"
	case "rate":
	default:
		f.fail("color", "%s: colour cells by topic or by rate", quote.Clip(f.Color))
	}
	return f
}

// canonicalQuery is the URL query that reproduces the form: the request's
// own query (plan.Request.Query) and the page's colouring and highlight.
func (f *planForm) canonicalQuery() url.Values {
	if f.canonical == nil {
		f.canonical = f.req.Query()
		if f.Color != "" && f.Color != "topic" {
			f.canonical.Set("color", f.Color)
		}
		if f.Highlight != "" {
			f.canonical.Set("highlight", f.Highlight)
		}
		f.encodedLen = len(f.canonical.Encode())
	}
	// A copy, so callers may change it.
	v := make(url.Values, len(f.canonical))
	for k, vs := range f.canonical {
		v[k] = vs
	}
	return v
}
