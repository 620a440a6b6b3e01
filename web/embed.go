package web

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"

	"golang.org/x/net/html"

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

// retarget writes doc with every <a> and <form> opening in target: a page
// embedded in a portal must not open the app inside the portal's tile,
// and a rule on the rendered page covers every link of every component,
// those added later included, which no per-template attribute would. A
// link to a new window keeps rel="noopener". A link within the page
// (href="#…") stays in the frame.
func retarget(w io.Writer, doc []byte, target string) error {
	z := html.NewTokenizer(bytes.NewReader(doc))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if err := z.Err(); err != io.EOF {
				return err
			}
			return nil
		case html.StartTagToken, html.SelfClosingTagToken:
			// Raw is the token's text only until its name and attributes
			// are read.
			raw := z.Raw()
			if name, more := z.TagName(); string(name) == "a" || string(name) == "form" {
				tok := html.Token{Type: tt, Data: string(name)}
				inPage := false
				for more {
					var k, v []byte
					k, v, more = z.TagAttr()
					tok.Attr = append(tok.Attr, html.Attribute{Key: string(k), Val: string(v)})
					inPage = inPage || (string(k) == "href" && strings.HasPrefix(string(v), "#"))
				}
				if !inPage {
					tok = withTarget(tok, target)
				}
				if _, err := io.WriteString(w, tok.String()); err != nil {
					return err
				}
				continue
			}
			if _, err := w.Write(raw); err != nil {
				return err
			}
			continue
		}
		if _, err := w.Write(z.Raw()); err != nil {
			return err
		}
	}
}

// withTarget sets tok's target, and rel="noopener" on a link to a new
// window.
func withTarget(tok html.Token, target string) html.Token {
	attrs := make([]html.Attribute, 0, len(tok.Attr)+2)
	rel := false
	for _, a := range tok.Attr {
		switch a.Key {
		case "target":
			continue
		case "rel":
			rel = true
			if target == "_blank" && !slices.Contains(strings.Fields(a.Val), "noopener") {
				a.Val = strings.TrimSpace(a.Val + " noopener")
			}
		}
		attrs = append(attrs, a)
	}
	attrs = append(attrs, html.Attribute{Key: "target", Val: target})
	if target == "_blank" && !rel && tok.Data == "a" {
		attrs = append(attrs, html.Attribute{Key: "rel", Val: "noopener"})
	}
	tok.Attr = attrs
	return tok
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
