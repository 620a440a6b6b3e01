package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/skewscope/skewscope/internal/quote"
)

// Who may read record keys, and how they see them. A key sample shows a
// topic's record keys (customer ids, e-mail addresses), so samples can be
// turned off, limited to topics, shown as keyed hashes, bounded per user,
// and every one started or cancelled is logged with who did it.

// SampleOptions govern key samples. The zero value allows samples of every
// topic of the configured clusters, keys in clear, one sample in flight
// per user.
type SampleOptions struct {
	// Off turns key samples off: the form and the list say so, naming
	// OffBy, and the API answers 403.
	Off bool
	// OffBy names the setting that turned samples off, e.g.
	// "--samples.enabled=false"; "" means "samples.enabled=false".
	OffBy string
	// Topics limit samples to topics a rule allows. A cluster's own rule
	// (Cluster set) replaces the global one (Cluster ""); a cluster with no
	// rule that applies may sample every topic.
	Topics []TopicRule
	// HashKeys shows every key as the first 12 hex digits of its
	// HMAC-SHA256 under a key drawn at start-up, on pages, CSV and JSON
	// alike; key groups and subtasks stay exact (they come from the real
	// key). The clear keys are never kept.
	HashKeys bool
	// MaxPerUser bounds the samples one user runs at once (the client
	// address counts as the user when no user is known); more get 429.
	// Zero means 1.
	MaxPerUser int
}

// TopicRule allows samples of the topics whose whole name matches one of
// Patterns (regular expressions, RE2 syntax).
type TopicRule struct {
	// Cluster is the cluster the rule is for; "" means every cluster
	// without a rule of its own.
	Cluster  string
	Patterns []string
	// Setting names where the rule is configured, for the 403, e.g.
	// "web.samples.topics".
	Setting string
}

// TopicPattern compiles a topic pattern as rules use it: anchored, so that
// it matches whole topic names.
func TopicPattern(p string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(`^(?:` + p + `)$`)
	if err != nil {
		return nil, fmt.Errorf("topic pattern %s: %v", quote.Clip(p), err)
	}
	return re, nil
}

// topicRule is a TopicRule compiled.
type topicRule struct {
	TopicRule
	res []*regexp.Regexp
}

// sampleAccess is SampleOptions checked and compiled.
type sampleAccess struct {
	off        bool
	offBy      string
	global     *topicRule
	clusters   map[string]*topicRule
	hashKey    []byte // nil: keys in clear
	maxPerUser int
}

func newSampleAccess(o SampleOptions) (*sampleAccess, error) {
	a := &sampleAccess{off: o.Off, offBy: o.OffBy, clusters: map[string]*topicRule{}, maxPerUser: o.MaxPerUser}
	if a.offBy == "" {
		a.offBy = "samples.enabled=false"
	}
	if a.maxPerUser < 0 {
		return nil, fmt.Errorf("samples per user %d: want 1 or more (0 means 1)", o.MaxPerUser)
	}
	if a.maxPerUser == 0 {
		a.maxPerUser = 1
	}
	for i, r := range o.Topics {
		cr := &topicRule{TopicRule: r}
		if cr.Setting == "" {
			cr.Setting = "topic rule " + strconv.Itoa(i)
		}
		for _, p := range r.Patterns {
			re, err := TopicPattern(p)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", cr.Setting, err)
			}
			cr.res = append(cr.res, re)
		}
		if r.Cluster == "" {
			if a.global != nil {
				return nil, fmt.Errorf("%s: a second rule for every cluster; merge it into %s", cr.Setting, a.global.Setting)
			}
			a.global = cr
		} else {
			if old, dup := a.clusters[r.Cluster]; dup {
				return nil, fmt.Errorf("%s: a second rule for cluster %s; merge it into %s", cr.Setting, quote.Clip(r.Cluster), old.Setting)
			}
			a.clusters[r.Cluster] = cr
		}
	}
	if o.HashKeys {
		a.hashKey = make([]byte, 32)
		rand.Read(a.hashKey)
	}
	return a, nil
}

// offError is the answer to any sample request while samples are off.
func (a *sampleAccess) offError() error {
	return &inputError{Status: http.StatusForbidden, Field: "sample", Msg: "key samples are turned off (" + a.offBy + "): record keys are not read from any topic"}
}

// allow reports whether the topic of cluster may be sampled: nil, or a 403
// naming the setting or rule that refuses it.
func (a *sampleAccess) allow(cluster, topic string) error {
	if a.off {
		return a.offError()
	}
	rule := a.clusters[cluster]
	if rule == nil {
		rule = a.global
	}
	if rule == nil {
		return nil
	}
	for _, re := range rule.res {
		if re.MatchString(topic) {
			return nil
		}
	}
	pats := make([]string, len(rule.Patterns))
	for i, p := range rule.Patterns {
		pats[i] = quote.Clip(p)
	}
	list := "no pattern: no topic may be sampled"
	if len(pats) > 0 {
		list = "the patterns " + strings.Join(pats, ", ")
	}
	return &inputError{Status: http.StatusForbidden, Field: "topic",
		Msg: fmt.Sprintf("topic %s of cluster %s may not be sampled: %s allows %s (whole names)", quote.Clip(topic), quote.Clip(cluster), rule.Setting, list)}
}

// keysMode is "hashed" or "clear".
func (a *sampleAccess) keysMode() string {
	if a.hashKey != nil {
		return "hashed"
	}
	return "clear"
}

// keyHasher turns key texts into their short keyed hashes. One sample's
// sink uses it from one goroutine.
type keyHasher struct {
	mac hash.Hash
	sum []byte
	hex [hashedKeyLen]byte
}

// hashedKeyLen is the hex digits of a hashed key: 48 bits, so that two
// keys of one sample share a hash with a chance of about n²/2⁴⁹.
const hashedKeyLen = 12

func newKeyHasher(key []byte) *keyHasher {
	return &keyHasher{mac: hmac.New(sha256.New, key)}
}

// text is the first hashedKeyLen hex digits of HMAC-SHA256(key, s).
func (h *keyHasher) text(s string) string {
	h.mac.Reset()
	h.mac.Write([]byte(s))
	h.sum = h.mac.Sum(h.sum[:0])
	hex.Encode(h.hex[:], h.sum[:hashedKeyLen/2])
	return string(h.hex[:])
}

// quotedRE finds the quoted texts (quote.Clip's, strconv.Quote's) that key
// extraction errors hold.
var quotedRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"…?`)

// redactQuoted replaces the quoted texts of an error message, which may
// be parts of keys or values, by "…".
func redactQuoted(msg string) string { return quotedRE.ReplaceAllString(msg, `"…"`) }

// requester is who asks: the user a trusted proxy names, or nobody known,
// and the client address.
type requester struct {
	User string // "" when no user is known
	Addr string
}

// String names the requester for pages and logs.
func (q requester) String() string {
	if q.User != "" {
		return q.User
	}
	return "anonymous (" + q.Addr + ")"
}

// quotaKey is what the per-user bound counts under.
func (q requester) quotaKey() string {
	if q.User != "" {
		return "user " + q.User
	}
	return "address " + q.Addr
}

// logUser is the requester's user for the audit log.
func (q requester) logUser() string {
	if q.User != "" {
		return q.User
	}
	return "anonymous"
}

// maxUserLen bounds a user name taken from the user header.
const maxUserLen = 256

// requesterOf names who sends r. The user header is believed only when the
// peer is a trusted proxy; from any other peer it is ignored, and so is
// X-Forwarded-For (the peer address is the client's).
func (s *Server) requesterOf(r *http.Request) requester {
	q := requester{Addr: s.sampleClientAddr(r)}
	if s.userHeader == "" || !s.trustedPeer(r) {
		return q
	}
	vs := r.Header.Values(s.userHeader)
	if len(vs) == 0 {
		return q
	}
	// The last value is the one the nearest proxy set.
	u := strings.TrimSpace(vs[len(vs)-1])
	if len(u) > maxUserLen || strings.ContainsFunc(u, func(c rune) bool { return !unicode.IsPrint(c) }) {
		u = quote.Clip(u) // shown, never mistaken for a clean name
	}
	q.User = u
	return q
}

// sampleClientAddr is the client address of r: resolved from
// X-Forwarded-For when the peer is a trusted proxy (as for websockets),
// else the peer's.
func (s *Server) sampleClientAddr(r *http.Request) string {
	if s.clientIP == nil {
		return clientAddress(r)
	}
	// chi's resolver stores the address in the request it passes on.
	var addr string
	s.clientIP(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { addr = clientAddress(r) })).ServeHTTP(nil, r)
	return addr
}

// trustedPeer reports whether r's peer is one of the trusted proxies.
func (s *Server) trustedPeer(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	a = a.Unmap().WithZone("")
	return slices.ContainsFunc(s.trustedProxies, func(p netip.Prefix) bool { return p.Contains(a) })
}

// newClientIP is chi's X-Forwarded-For resolution behind the trusted
// proxies, nil without any.
func newClientIP(proxies []netip.Prefix) (func(http.Handler) http.Handler, error) {
	if len(proxies) == 0 {
		return nil, nil
	}
	cidrs := make([]string, len(proxies))
	for i, p := range proxies {
		if !p.IsValid() {
			return nil, fmt.Errorf("trusted proxy %d: not a valid prefix", i)
		}
		cidrs[i] = p.Masked().String()
	}
	return middleware.ClientIPFromXFF(cidrs...), nil
}

// headerNameRE is what an HTTP header name may be (RFC 9110 token).
var headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// auditSample logs a sample started or cancelled, at info level: who,
// which topic and partitions, how, its limits, its id and when.
func (s *Server) auditSample(msg string, ks keptSample, by requester, at time.Time) {
	run := ks.Value
	f := run.form
	parts := "all"
	if len(f.req.Partitions) > 0 {
		ps := make([]string, len(f.req.Partitions))
		for i, p := range f.req.Partitions {
			ps[i] = strconv.Itoa(int(p))
		}
		parts = strings.Join(ps, ",")
	}
	lim := f.req.WithDefaults().Limits
	attrs := []any{
		"audit", true,
		"user", by.logUser(), "client_address", by.Addr,
		"cluster", f.Cluster, "topic", f.Topic, "partitions", parts,
		"mode", f.req.Mode,
		"max_records", lim.MaxRecords, "max_bytes", lim.MaxBytes, "max_seconds", lim.MaxTime.Seconds(),
		"key", f.spec.String(), "keys", run.keys,
		"sample_id", ks.ID, "time", at.UTC().Format(time.RFC3339Nano),
	}
	switch f.req.Mode {
	case "last":
		attrs = append(attrs, "last_n", f.req.LastN)
	case "live":
		attrs = append(attrs, "window_seconds", f.req.Window.Seconds())
	}
	if by != run.by {
		attrs = append(attrs, "started_by", run.by.logUser(), "started_by_address", run.by.Addr)
	}
	s.log.Info(msg, attrs...)
}
