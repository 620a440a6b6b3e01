package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/skewscope/skewscope/internal/quote"
)

// Pages in portals. Every page takes ?theme=light|dark (default: the
// viewer's preference); an embedded page (?embed=1) also takes
// ?target=_top|_blank|_parent, the browsing context its links and forms
// open in (default _top: a link leaves the portal's tile rather than open
// the whole app inside it), and reports its height to the host page (see
// static/js/embed.js and the README's embedding section).

// themes are the values of ?theme=.
var themes = []string{"light", "dark"}

// linkTargets are the values of ?target= on an embedded page.
var linkTargets = []string{"_top", "_blank", "_parent"}

// parseTheme reads ?theme=; "" means the viewer's preference.
func parseTheme(q query) (string, error) {
	s, err := q.single("theme")
	if err != nil || s == "" {
		return "", err
	}
	if !slices.Contains(themes, s) {
		return "", badInput("theme", "%s is not a theme; use %s (or leave it out for the viewer's preference)", quote.Clip(s), strings.Join(themes, " or "))
	}
	return s, nil
}

// parseLinkTarget reads ?target= of an embedded page; _top by default.
func parseLinkTarget(q query) (string, error) {
	s, err := q.single("target")
	if err != nil {
		return "", err
	}
	if s == "" {
		return "_top", nil
	}
	if !slices.Contains(linkTargets, s) {
		return "", badInput("target", "%s is not where an embedded page's links open; use %s", quote.Clip(s), strings.Join(linkTargets, ", "))
	}
	return s, nil
}

// ownsTarget reports whether the page's own ?target= is the planner's
// target parallelism. The planner's embedded view keeps its links (its own
// views stay in the frame, the rest open a window), so it takes no link
// target.
func ownsTarget(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/plan") }

// pageOptions are the theme and, on an embedded page that takes one, the
// link target ("" otherwise).
func pageOptions(r *http.Request) (theme, target string, err error) {
	q := query{r.URL.Query()}
	if theme, err = parseTheme(q); err != nil {
		return "", "", err
	}
	if q.Get("embed") != "1" || ownsTarget(r) {
		return theme, "", nil
	}
	target, err = parseLinkTarget(q)
	return theme, target, err
}

// heightOrigins are the origins an embedded page posts its height to,
// from the frame ancestors: each listed origin, and "self" (the page's
// own origin, resolved by the script) for 'self'. A wildcard names no
// origin a message can be addressed to, and a message is never posted to
// any origin ("*"): a portal that wants heights lists its exact origin.
func heightOrigins(ancestors []string) string {
	var out []string
	for _, a := range ancestors {
		switch {
		case a == "'self'":
			out = append(out, "self")
		case a == "'none'" || strings.Contains(a, "*"):
		default:
			out = append(out, a)
		}
	}
	return strings.Join(out, " ")
}
