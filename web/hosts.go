package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"regexp"
	"strings"

	"github.com/skewscope/skewscope/internal/quote"
)

// HostPolicy says which Host headers the server answers, against DNS
// rebinding: a page of another site whose name its owner then points at
// this server's address is, to the browser, of the same origin as this
// server's answers. Its requests carry that site's name in Host (and in
// Origin, so the form and websocket Origin checks pass) and it could read
// every page, start key samples and restore sandbox jobs. A Host that is
// not allowed is answered 421 Misdirected Request, on every route.
//
// The health endpoints (/healthz, /readyz, /-/healthy, /-/ready) are
// exempt: they answer only "ok" or "not ready", and Kubernetes probes may
// send any Host. /metrics is not exempt (it names topics, groups and
// jobs); Prometheus scraping by pod IP passes through AnyIP.
//
// The zero HostPolicy checks nothing; the dashboard always sets one.
type HostPolicy struct {
	// Allowed are host names and IP addresses as NormalizeHost returns
	// them. Ports are not compared. "*.example.com" matches every name
	// under example.com (not example.com itself); "*" matches every host,
	// which turns the check off.
	Allowed []string
	// AnyIP allows every Host that is an IP address, for a server listening
	// on all addresses: DNS rebinding needs a name, and a page of another
	// origin cannot read the answers of an IP-address origin.
	AnyIP bool
}

// hostSetting names the setting the 421 answer points to.
const hostSetting = "--web.allowed-hosts (SKEWSCOPE_WEB_ALLOWED_HOSTS, web.allowedHosts in the config file)"

// hostLabelsRE is a host name: dot-separated labels of letters, digits,
// "-" and "_" (seen in internal names), optionally after "*.".
var hostLabelsRE = regexp.MustCompile(`^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$`)

// NormalizeHost returns the allowed-host entry h lower-cased, without a
// trailing dot and, for an IPv6 address, without brackets; or an error
// saying what an entry looks like. A port is refused: ports are not
// compared.
func NormalizeHost(h string) (string, error) {
	const want = "want a host name or IP address without scheme or port, e.g. skewscope.example.com, *.example.com or 10.0.0.5"
	h = strings.ToLower(strings.TrimSpace(h))
	if h == "*" {
		return h, nil
	}
	h = strings.TrimSuffix(h, ".")
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		a, err := netip.ParseAddr(h[1 : len(h)-1])
		if err != nil || !a.Is6() {
			return "", errors.New(want)
		}
		return a.Unmap().String(), nil
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", fmt.Errorf("%s: no zone: %s", quote.Clip(h), want)
		}
		return a.Unmap().String(), nil
	}
	if strings.Contains(h, ":") {
		return "", fmt.Errorf("a port or scheme in %s: %s", quote.Clip(h), want)
	}
	if len(h) > 253 || !hostLabelsRE.MatchString(h) {
		return "", fmt.Errorf("%s: %s", quote.Clip(h), want)
	}
	return h, nil
}

// hostMatcher is a HostPolicy prepared for lookups.
type hostMatcher struct {
	on       bool
	any      bool
	anyIP    bool
	exact    map[string]bool
	suffixes []string // ".example.com" for "*.example.com"
	exempt   map[string]bool
	api      string // the API's path prefix: its 421 is JSON like its other errors
}

// newHostMatcher checks and prepares p; exempt paths already carry the
// route prefix.
func newHostMatcher(p HostPolicy, prefix string) (*hostMatcher, error) {
	m := &hostMatcher{on: len(p.Allowed) > 0 || p.AnyIP, anyIP: p.AnyIP, exact: map[string]bool{}, exempt: map[string]bool{}}
	for _, a := range p.Allowed {
		n, err := NormalizeHost(a)
		if err != nil {
			return nil, fmt.Errorf("allowed host %s: %w", quote.Clip(a), err)
		}
		switch {
		case n == "*":
			m.any = true
		case strings.HasPrefix(n, "*."):
			m.suffixes = append(m.suffixes, n[1:])
		default:
			m.exact[n] = true
		}
	}
	for _, path := range []string{"/healthz", "/readyz", "/-/healthy", "/-/ready"} {
		m.exempt[prefix+path] = true
	}
	m.api = prefix + "/api/"
	return m, nil
}

// requestHost returns the host of a Host header without port, lower-cased,
// without a trailing dot and, for an IPv6 address, without brackets.
func requestHost(h string) string {
	h = strings.ToLower(h)
	if strings.HasPrefix(h, "[") {
		if end := strings.IndexByte(h, ']'); end > 0 {
			h = h[1:end]
		}
	} else if i := strings.LastIndexByte(h, ':'); i >= 0 && strings.Count(h, ":") == 1 {
		h = h[:i]
	}
	return strings.TrimSuffix(h, ".")
}

// allows reports whether the Host header h may be answered.
func (m *hostMatcher) allows(h string) bool {
	if m.any {
		return true
	}
	host := requestHost(h)
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return false
		}
		return m.anyIP || m.exact[a.Unmap().String()]
	}
	if m.exact[host] {
		return true
	}
	for _, s := range m.suffixes {
		if strings.HasSuffix(host, s) && len(host) > len(s) {
			return true
		}
	}
	return false
}

// checkHost answers 421 to a request whose Host the policy does not allow
// (see HostPolicy), before any route sees it: pages, forms, the API and
// the websocket handshake alike.
func (s *Server) checkHost(next http.Handler) http.Handler {
	m := s.hosts
	if !m.on {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.allows(r.Host) || m.exempt[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		msg := fmt.Sprintf("misdirected request: skewscope does not answer to the host %s; if it should, add it to %s", quote.Clip(requestHost(r.Host)), hostSetting)
		if strings.HasPrefix(r.URL.Path, m.api) {
			writeJSON(w, http.StatusMisdirectedRequest, apiErrorBody{Error: msg})
			return
		}
		http.Error(w, msg, http.StatusMisdirectedRequest)
	})
}
