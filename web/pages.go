package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/views"
)

// pageHandler renders a page component, or returns an error that the
// adapter turns into an error page.
type pageHandler func(w http.ResponseWriter, r *http.Request) (status int, c templ.Component, err error)

type ctxKey int

const nonceKey ctxKey = iota

// page adapts a pageHandler: it sets the page CSP with a fresh nonce,
// renders into a buffer before writing a byte, and turns errors into an
// error page with the right status.
func (s *Server) page(h pageHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		nonce := newNonce()
		ctx := templ.WithNonce(context.WithValue(r.Context(), nonceKey, nonce), nonce)
		r = r.WithContext(ctx)
		w.Header().Set("Content-Security-Policy", s.pageCSP(nonce))
		_, _, err := pageOptions(r)
		var status int
		var c templ.Component
		if err == nil {
			status, c, err = h(w, r)
		}
		if err != nil {
			var public bool
			status, public = statusOf(err)
			msg := err.Error()
			if !public {
				s.log.ErrorContext(ctx, "page failed", "path", r.URL.Path, "error", err)
				msg = "Something went wrong on our side; the error has been logged."
			}
			c = views.ErrorPage(s.layout(r, "Error", ""), statusTitle(status), msg)
		}
		if c == nil { // the handler wrote a redirect itself
			return
		}
		var buf bytes.Buffer
		if err := c.Render(ctx, &buf); err != nil {
			s.log.ErrorContext(ctx, "render failed", "path", r.URL.Path, "error", err)
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte("internal error\n"))
			return
		}
		body := buf.Bytes()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		w.Write(body)
	}
}

// pageCSP allows only our own scripts and styles (plus inline scripts that
// carry the nonce), no inline style attributes, and framing only by the
// configured ancestors.
func (s *Server) pageCSP(nonce string) string {
	return "default-src 'none'; script-src 'self' 'nonce-" + nonce + "'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors " + s.frameAncestors
}

func newNonce() string {
	b := make([]byte, 18)
	rand.Read(b)
	return base64.RawStdEncoding.EncodeToString(b)
}

// layout fills the shared page fields.
// The theme and link target are those of the request when they are valid
// (page has answered 400 to any other), so that the error page of a bad
// one still renders.
func (s *Server) layout(r *http.Request, title, nav string) views.Layout {
	theme, target, _ := pageOptions(r)
	embed := r.URL.Query().Get("embed") == "1"
	l := views.Layout{
		Title:   title,
		Base:    s.prefix,
		Nav:     nav,
		Embed:   embed,
		Theme:   theme,
		Target:  target,
		CSS:     s.prefix + "/static/" + s.assets.Hashed("css/app.css"),
		JS:      s.prefix + "/static/" + s.assets.Hashed("js/app.js"),
		Icon:    s.prefix + "/static/" + s.assets.Hashed("img/icon.svg"),
		Version: s.version,
		Sandbox: s.sandbox != nil,
		Samples: s.samples != nil,
	}
	if embed {
		l.EmbedJS = s.prefix + "/static/" + s.assets.Hashed("js/embed.js")
		l.HeightOrigins = s.heightOrigins
	}
	return l
}

// serveStatic serves an embedded asset by its hashed name, cached forever.
func (s *Server) serveStatic(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "*")
	as, immutable, ok := s.assets.Lookup(name)
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", as.ContentType)
	h.Set("ETag", as.ETag())
	if immutable {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	if strings.HasSuffix(name, ".js") || strings.HasSuffix(name, ".css") {
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
	}
	http.ServeContent(w, r, "", startTime, bytes.NewReader(as.Body))
}

// serveFavicon answers the /favicon.ico that browsers ask for on their own
// (for pages without an icon link, such as the JSON views) with the icon.
func (s *Server) serveFavicon(w http.ResponseWriter, r *http.Request) {
	as, _, ok := s.assets.Lookup("img/icon.svg")
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", as.ContentType)
	w.Header().Set("Cache-Control", "public, max-age=86400")
	http.ServeContent(w, r, "", startTime, bytes.NewReader(as.Body))
}

func (s *Server) serveNotFoundPage(w http.ResponseWriter, r *http.Request) (int, templ.Component, error) {
	return 0, nil, &inputError{Status: http.StatusNotFound, Msg: "There is no page at " + quote.Clip(r.URL.Path) + "."}
}

// statusTitle is an error page's heading: "404 Not Found".
func statusTitle(status int) string {
	if t := http.StatusText(status); t != "" {
		return strconv.Itoa(status) + " " + t
	}
	return strconv.Itoa(status)
}
