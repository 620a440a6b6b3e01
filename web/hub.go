package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/gorilla/websocket"

	"github.com/skewscope/skewscope/internal/quote"
)

// Bounds of a hub whose HubOptions.MaxConnections and
// MaxConnectionsPerClient are zero. The per-client bound is generous:
// behind a reverse proxy that is not in TrustedProxies, every browser has
// the proxy's address. Sockets that watch nothing are closed after
// SubscribeWait whatever the bound.
const (
	DefaultMaxConnections          = 1000
	DefaultMaxConnectionsPerClient = 128
)

// Bounds on distinct topics of a hub whose HubOptions.MaxTopicsPerClient
// and MaxHubTopics are zero. A client's tabs mostly watch the same few
// pages; the hub's total bounds the views built per publish cycle.
const (
	DefaultMaxTopicsPerClient = 64
	DefaultMaxHubTopics       = 512
)

// Hub defaults; HubOptions fields left zero take these.
const (
	defaultSubscribeWait = 10 * time.Second
	defaultClientBuffer  = 16
	defaultMaxTopics     = 16
	defaultReadLimit     = 4096
	defaultWriteWait     = 10 * time.Second
	defaultPongWait      = 60 * time.Second
	// maxTopicLen fits the longest view topics: "topic:" + a 64-character
	// cluster name + "/" + a 249-character Kafka topic name, and a vertex
	// topic with a 64-step ?history=, every ?parts= but one, and its grid's
	// sort, 249-character ?topic= and ?subtasks= (vertexTopic, about 800).
	maxTopicLen = 1024
)

// ErrHubClosed is returned by Publish once the hub's Run has returned.
var ErrHubClosed = errors.New("websocket hub closed")

// topicRE is what a subscription topic may look like.
var topicRE = regexp.MustCompile(`^[A-Za-z0-9._:/=-]+$`)

// HubOptions configure a Hub.
type HubOptions struct {
	// AllowedOrigins are the only origins (scheme://host[:port]) allowed
	// to open a websocket: the caller passes the origin of
	// --web.external-url plus --web.allowed-origins, or, without an
	// external URL, the loopback origins of the listen address. The
	// request's Host header is never trusted (proxies rewrite it, DNS
	// rebinding controls it), so an empty list admits no browser.
	AllowedOrigins []string
	// AllowNoOrigin accepts handshakes without an Origin header (non-browser
	// clients). Off by default.
	AllowNoOrigin bool
	// MaxConnections bounds concurrent websocket clients; more get 503.
	MaxConnections int
	// MaxConnectionsPerClient bounds the sockets of one client address
	// (see ClientAddress); more get 429. Zero means 128, negative no bound.
	MaxConnectionsPerClient int
	// ReservedConnections of MaxConnections are kept for addresses that
	// have no socket yet, so that one client cannot lock everyone else
	// out. Zero means MaxConnections/10, negative none.
	ReservedConnections int
	// SubscribeWait is how long a socket may watch no topic (before its
	// first subscribe message, or after subscribing to nothing); then it
	// is closed with 1008. Zero means 10 s.
	SubscribeWait time.Duration
	// TrustedProxies are the reverse proxies whose X-Forwarded-For is
	// believed. A request whose peer is in one of them counts under the
	// rightmost X-Forwarded-For address outside them (the client as the
	// outermost trusted proxy saw it); any other request counts under its
	// peer address, forwarded headers ignored, so a client cannot choose
	// its own address.
	TrustedProxies []netip.Prefix
	// ClientAddress names the client a request comes from, for
	// MaxConnectionsPerClient and ReservedConnections. Nil means the
	// address TrustedProxies lets X-Forwarded-For name, else the IP of
	// RemoteAddr; IPv6 addresses count by /64. Behind a reverse proxy that
	// is not trusted, every client has the proxy's address.
	ClientAddress func(*http.Request) string
	// ClientBuffer bounds the number of distinct topics with an update
	// waiting for one client; each topic keeps only its latest update. A
	// client that overflows it is dropped.
	ClientBuffer int
	// MaxTopics bounds the topics in one subscribe message, and so those
	// one socket watches (a subscribe message replaces the last).
	MaxTopics int
	// MaxTopicsPerClient bounds the distinct topics the sockets of one
	// client address (see ClientAddress) watch between them; a
	// subscription past it is refused with close 1008. Zero means 64,
	// negative no bound. Behind a reverse proxy that is not in
	// TrustedProxies, every browser shares the proxy's bound.
	MaxTopicsPerClient int
	// MaxHubTopics bounds the distinct topics the hub holds over all
	// clients, and with them the views built per publish cycle (one per
	// topic, however many sockets watch it); a subscription that would
	// add a topic past it is refused with close 1008. Zero means 512,
	// negative no bound.
	MaxHubTopics int
	// ReadLimit bounds an inbound message in bytes, after decompression.
	ReadLimit int64
	// WriteWait bounds one write; a client whose write blocks longer (it
	// does not read) is dropped.
	WriteWait time.Duration
	// PongWait is how long a client may stay silent (no pong, no message).
	PongWait time.Duration
	// PingPeriod is how often the hub pings; it must be below PongWait.
	// Zero means PongWait*9/10.
	PingPeriod time.Duration
	// EnableCompression negotiates permessage-deflate (without context
	// takeover) with clients that offer it. A published update is still
	// compressed only once, whatever the number of clients: the prepared
	// message keeps one frame per compression mode.
	EnableCompression bool
}

// HubStats are the hub's counters.
type HubStats struct {
	Connections    int64  // open websocket connections
	Dropped        uint64 // slow clients dropped
	Sent           uint64 // messages written to clients
	Encoded        uint64 // updates encoded by Publish (once each, whatever the fan-out)
	Rejected       uint64 // handshakes refused (origin, connection limit, closed hub)
	BadSubscribers uint64 // connections closed for a bad or oversized subscribe message
	TopicsRefused  uint64 // connections closed for a subscription past MaxTopicsPerClient or MaxHubTopics
	InboundBytes   uint64 // bytes of inbound messages read, after decompression
	Unsubscribed   uint64 // connections closed for watching no topic for SubscribeWait
}

// Hub fans updates out to websocket clients. One goroutine, Run, owns
// the subscriptions; Publish encodes an update once and Run hands the same
// prepared message to every subscriber's bounded buffer without blocking.
// Create it with NewHub, start Run, serve ServeWS.
type Hub struct {
	log      *slog.Logger
	opts     HubOptions
	allowed  map[string]bool
	upgrader websocket.Upgrader
	// serve is serveWS behind the resolution of forwarded client
	// addresses when TrustedProxies are set.
	serve http.Handler

	pub   chan publication
	sub   chan subscription
	unsub chan *client
	done  chan struct{}

	mu     sync.Mutex // guards closed and wg.Add
	closed bool
	wg     sync.WaitGroup

	// active holds the topics with at least one subscriber, kept by Run as
	// topics gain their first or lose their last subscriber, so publishers
	// can skip views nobody watches.
	activeMu sync.RWMutex
	active   map[string]bool

	// onSubscribe, when set before Run, is told the topics a socket
	// joins, from the socket's read goroutine once Run has accepted the
	// subscription (so it may publish): a publisher whose topic changes
	// seldom sends the new subscriber the update it missed.
	onSubscribe func(joined []string)

	// addrMu guards perAddr and the admission decision; conns is also
	// read without it by Stats.
	addrMu  sync.Mutex
	perAddr map[string]int

	conns                                                          atomic.Int64
	dropped, sent, encoded, rejected, badSubscribers, unsubscribed atomic.Uint64
	topicsRefused, inboundBytes                                    atomic.Uint64
}

// publication is one update of a topic. A change (PublishChange) also
// has its sequence number and the one of the update it follows: change
// goes to subscribers that were sent base, full (encoded on first need)
// to the others.
type publication struct {
	topic     string
	pm        *websocket.PreparedMessage // the update, or the change
	full      *lazyMessage               // nil unless a change
	seq, base uint64
}

// lazyMessage is an update encoded once, by the first writer that needs
// it: a change's whole update, which subscribers that missed the update
// it follows need, and mostly nobody does.
type lazyMessage struct {
	h     *Hub
	topic string
	v     any
	once  sync.Once
	pm    *websocket.PreparedMessage
	err   error
}

func (l *lazyMessage) get() (*websocket.PreparedMessage, error) {
	l.once.Do(func() {
		l.pm, l.err = l.h.encode(l.topic, l.v)
		l.v = nil
	})
	return l.pm, l.err
}

// outgoing is a message waiting for a client: pm, or when it is nil full
// once encoded, and the sequence number of the update it brings the
// client to.
type outgoing struct {
	pm   *websocket.PreparedMessage
	full *lazyMessage
	seq  uint64
}

// subscription asks Run to replace c's topics; Run answers on refused
// (capacity 1) with nil or the reason the subscription is refused, having
// set *joined to the topics c did not watch before.
type subscription struct {
	c       *client
	topics  []string
	refused chan error
	joined  *[]string
}

// NewHub returns a Hub; it serves nothing until Run is started.
func NewHub(logger *slog.Logger, opts HubOptions) (*Hub, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = DefaultMaxConnections
	}
	if opts.MaxConnectionsPerClient == 0 {
		opts.MaxConnectionsPerClient = DefaultMaxConnectionsPerClient
	}
	switch {
	case opts.ReservedConnections == 0:
		opts.ReservedConnections = opts.MaxConnections / 10
	case opts.ReservedConnections < 0:
		opts.ReservedConnections = 0
	}
	if opts.SubscribeWait <= 0 {
		opts.SubscribeWait = defaultSubscribeWait
	}
	if opts.ClientAddress == nil {
		opts.ClientAddress = clientAddress
	}
	if opts.ClientBuffer <= 0 {
		opts.ClientBuffer = defaultClientBuffer
	}
	if opts.MaxTopics <= 0 {
		opts.MaxTopics = defaultMaxTopics
	}
	if opts.MaxTopicsPerClient == 0 {
		opts.MaxTopicsPerClient = DefaultMaxTopicsPerClient
	}
	if opts.MaxHubTopics == 0 {
		opts.MaxHubTopics = DefaultMaxHubTopics
	}
	if opts.ReadLimit <= 0 {
		opts.ReadLimit = defaultReadLimit
	}
	if opts.WriteWait <= 0 {
		opts.WriteWait = defaultWriteWait
	}
	if opts.PongWait <= 0 {
		opts.PongWait = defaultPongWait
	}
	if opts.PingPeriod <= 0 || opts.PingPeriod >= opts.PongWait {
		opts.PingPeriod = opts.PongWait * 9 / 10
	}
	h := &Hub{
		log:     logger,
		opts:    opts,
		allowed: make(map[string]bool),
		active:  make(map[string]bool),
		perAddr: make(map[string]int),
		pub:     make(chan publication),
		sub:     make(chan subscription),
		unsub:   make(chan *client),
		done:    make(chan struct{}),
	}
	for _, o := range opts.AllowedOrigins {
		n, err := NormalizeOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("allowed origin %q: %w", o, err)
		}
		h.allowed[n] = true
	}
	h.upgrader = websocket.Upgrader{
		HandshakeTimeout:  opts.WriteWait,
		ReadBufferSize:    1024,
		WriteBufferSize:   4096,
		CheckOrigin:       h.checkOrigin,
		EnableCompression: opts.EnableCompression,
	}
	h.serve = http.HandlerFunc(h.serveWS)
	if len(opts.TrustedProxies) > 0 {
		// chi's resolver walks X-Forwarded-For from the right, past the
		// trusted hops, only when the peer itself is trusted; it stores
		// the address where clientAddress reads it.
		cidrs := make([]string, len(opts.TrustedProxies))
		for i, p := range opts.TrustedProxies {
			if !p.IsValid() {
				return nil, fmt.Errorf("trusted proxy %d: not a valid prefix", i)
			}
			cidrs[i] = p.Masked().String()
		}
		h.serve = middleware.ClientIPFromXFF(cidrs...)(h.serve)
	}
	return h, nil
}

// NormalizeOrigin returns the origin o as "scheme://host[:port]",
// lower-cased and without a default port, or an error saying what an origin
// looks like. Origins compare equal exactly when their normal forms do.
func NormalizeOrigin(o string) (string, error) {
	const want = "want an http or https origin (scheme://host[:port], no path), e.g. https://portal.example.com"
	u, err := url.Parse(strings.TrimSuffix(strings.TrimSpace(o), "/"))
	if err != nil || u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", errors.New(want)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("scheme %q not allowed: %s", u.Scheme, want)
	}
	host := strings.ToLower(u.Host)
	if scheme == "http" {
		host = strings.TrimSuffix(host, ":80")
	} else {
		host = strings.TrimSuffix(host, ":443")
	}
	return scheme + "://" + host, nil
}

// checkOrigin allows exactly the origins of the allowlist, compared in
// full (scheme, host, port), and a missing Origin if AllowNoOrigin. It
// never compares with the Host header: behind a proxy that rewrites Host
// the same-origin rule breaks, and where clients reach the server directly
// Host is theirs to choose (DNS rebinding).
func (h *Hub) checkOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return h.opts.AllowNoOrigin
	}
	n, err := NormalizeOrigin(o)
	return err == nil && h.allowed[n]
}

// Stats returns the hub's counters.
func (h *Hub) Stats() HubStats {
	return HubStats{
		Connections:    h.conns.Load(),
		Dropped:        h.dropped.Load(),
		Sent:           h.sent.Load(),
		Encoded:        h.encoded.Load(),
		Rejected:       h.rejected.Load(),
		BadSubscribers: h.badSubscribers.Load(),
		Unsubscribed:   h.unsubscribed.Load(),
		TopicsRefused:  h.topicsRefused.Load(),
		InboundBytes:   h.inboundBytes.Load(),
	}
}

// Publish encodes v once as {"topic":topic,"data":v} and sends the same
// bytes to every subscriber of topic. A subscriber still busy with an
// earlier update of topic gets only the latest one. It blocks only until
// Run takes the update, never on a client.
func (h *Hub) Publish(topic string, v any) error {
	pm, err := h.encode(topic, v)
	if err != nil {
		return err
	}
	return h.send(publication{topic: topic, pm: pm})
}

// PublishChange publishes update number seq of topic (seq > 0, growing)
// as change, what turns the update numbered base into it, to the
// subscribers that were sent update base, and as full to the others: those
// that subscribed since (a subscribe message asks for whole updates) or
// whose buffer kept a later update only. change is encoded once; full
// once, when a subscriber needs it. A nil change (the first update, or
// one that does not follow base) sends full to all, encoded once.
func (h *Hub) PublishChange(topic string, seq, base uint64, full, change any) error {
	if change == nil {
		pm, err := h.encode(topic, full)
		if err != nil {
			return err
		}
		return h.send(publication{topic: topic, pm: pm, seq: seq})
	}
	pm, err := h.encode(topic, change)
	if err != nil {
		return err
	}
	return h.send(publication{topic: topic, pm: pm, full: &lazyMessage{h: h, topic: topic, v: full}, seq: seq, base: base})
}

// encode writes v as {"topic":topic,"data":v}, prepared for every
// compression mode.
func (h *Hub) encode(topic string, v any) (*websocket.PreparedMessage, error) {
	data, err := json.Marshal(struct {
		Topic string `json:"topic"`
		Data  any    `json:"data"`
	}{topic, v})
	if err != nil {
		return nil, fmt.Errorf("encode update for topic %q: %w", topic, err)
	}
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, data)
	if err != nil {
		return nil, err
	}
	h.encoded.Add(1)
	return pm, nil
}

func (h *Hub) send(p publication) error {
	select {
	case h.pub <- p:
		return nil
	case <-h.done:
		return ErrHubClosed
	}
}

// Run owns the subscriptions until ctx is done; then it closes every
// connection (close code 1001) and waits for their goroutines.
// http.Server.Shutdown does not close hijacked connections.
func (h *Hub) Run(ctx context.Context) {
	r := newRegistry(h)
	for {
		select {
		case <-ctx.Done():
			h.mu.Lock()
			h.closed = true
			close(h.done)
			h.mu.Unlock()
			h.wg.Wait()
			return
		case c := <-h.unsub:
			r.remove(c)
			c.gone = true
		case s := <-h.sub:
			if s.c.gone {
				s.refused <- errClientGone
				continue
			}
			if err := r.check(s.c, s.topics); err != nil {
				s.refused <- err
				continue
			}
			*s.joined = r.replace(s.c, s.topics)
			s.c.forget()
			s.refused <- nil
			if ack, err := subscribedMessage(s.topics); err == nil && !s.c.offer("", outgoing{pm: ack}) {
				h.drop(s.c)
				r.remove(s.c)
			}
		case p := <-h.pub:
			for c := range r.byTopic[p.topic] {
				if !c.offerUpdate(p) {
					h.drop(c)
					r.remove(c)
				}
			}
		}
	}
}

// errClientGone answers the subscription of a client Run already removed.
var errClientGone = errors.New("connection closed")

// registry is Run's record of who watches what: the subscribers of each
// topic, and for each client address how many of its sockets watch each
// topic, for MaxTopicsPerClient. Only Run uses it.
type registry struct {
	h       *Hub
	byTopic map[string]map[*client]struct{}
	byAddr  map[string]map[string]int
}

func newRegistry(h *Hub) *registry {
	return &registry{h: h, byTopic: make(map[string]map[*client]struct{}), byAddr: make(map[string]map[string]int)}
}

// check returns why c may not watch topics instead of its present ones,
// or nil: the distinct topics of its address, or of the hub, would pass
// their bound.
func (r *registry) check(c *client, topics []string) error {
	mine := r.byAddr[c.addr]
	addrTopics, hubTopics := len(mine), len(r.byTopic)
	next := make(map[string]bool, len(topics))
	for _, t := range topics {
		next[t] = true
		if _, ok := c.topics[t]; ok {
			continue
		}
		if mine[t] == 0 {
			addrTopics++
		}
		if len(r.byTopic[t]) == 0 {
			hubTopics++
		}
	}
	for t := range c.topics {
		if next[t] {
			continue
		}
		if mine[t] == 1 {
			addrTopics--
		}
		if len(r.byTopic[t]) == 1 {
			hubTopics--
		}
	}
	o := r.h.opts
	switch {
	case o.MaxTopicsPerClient > 0 && addrTopics > o.MaxTopicsPerClient:
		return fmt.Errorf("%d distinct topics from your address: at most %d; close other skewscope tabs", addrTopics, o.MaxTopicsPerClient)
	case o.MaxHubTopics > 0 && hubTopics > o.MaxHubTopics:
		return fmt.Errorf("the server watches too many distinct views: at most %d; retry later", o.MaxHubTopics)
	}
	return nil
}

// replace makes topics c's subscriptions and returns those it joins. It
// joins the new topics before leaving the old ones, so a topic kept across
// the change never looks unwatched to publishers.
func (r *registry) replace(c *client, topics []string) (joined []string) {
	old := c.topics
	c.topics = make(map[string]struct{}, len(topics))
	for _, t := range topics {
		c.topics[t] = struct{}{}
		if _, had := old[t]; had {
			continue
		}
		joined = append(joined, t)
		if r.byTopic[t] == nil {
			r.byTopic[t] = make(map[*client]struct{})
			r.h.setActive(t, true)
		}
		r.byTopic[t][c] = struct{}{}
		if r.byAddr[c.addr] == nil {
			r.byAddr[c.addr] = make(map[string]int)
		}
		r.byAddr[c.addr][t]++
	}
	for t := range old {
		if _, kept := c.topics[t]; !kept {
			r.leave(c, t)
		}
	}
	return joined
}

// leave removes c from topic t.
func (r *registry) leave(c *client, t string) {
	delete(r.byTopic[t], c)
	if len(r.byTopic[t]) == 0 {
		delete(r.byTopic, t)
		r.h.setActive(t, false)
	}
	if mine := r.byAddr[c.addr]; mine != nil {
		if mine[t]--; mine[t] <= 0 {
			delete(mine, t)
		}
		if len(mine) == 0 {
			delete(r.byAddr, c.addr)
		}
	}
}

// remove removes c from all its topics.
func (r *registry) remove(c *client) {
	for t := range c.topics {
		r.leave(c, t)
	}
	c.topics = nil
}

// setActive records whether topic t has a subscriber, for Subscribed and
// Topics.
func (h *Hub) setActive(t string, on bool) {
	h.activeMu.Lock()
	defer h.activeMu.Unlock()
	if on {
		h.active[t] = true
	} else {
		delete(h.active, t)
	}
}

// Subscribed reports whether topic has at least one subscriber now.
func (h *Hub) Subscribed(topic string) bool {
	h.activeMu.RLock()
	defer h.activeMu.RUnlock()
	return h.active[topic]
}

// Topics returns the topics with at least one subscriber whose names start
// with prefix, in no particular order.
func (h *Hub) Topics(prefix string) []string {
	h.activeMu.RLock()
	defer h.activeMu.RUnlock()
	var out []string
	for t := range h.active {
		if strings.HasPrefix(t, prefix) {
			out = append(out, t)
		}
	}
	return out
}

func subscribedMessage(topics []string) (*websocket.PreparedMessage, error) {
	data, err := json.Marshal(struct {
		Subscribed []string `json:"subscribed"`
	}{topics})
	if err != nil {
		return nil, err
	}
	return websocket.NewPreparedMessage(websocket.TextMessage, data)
}

// drop disconnects a client that fell too far behind. Called by Run.
func (h *Hub) drop(c *client) {
	c.gone = true
	if c.close() {
		h.dropped.Add(1)
		h.log.Warn("websocket client dropped: too slow", "remote", c.remote)
	}
}

// ServeWS upgrades the request to a websocket. The client subscribes by
// sending {"subscribe":["topic",...]}, which replaces its subscriptions
// and is answered with {"subscribed":[...]}; updates arrive as
// {"topic":"...","data":...}. An update published as a change
// (PublishChange) arrives as that change only on a socket that was sent
// the update it follows; a subscribe message, even for the same topics,
// makes the next update of each a whole one.
func (h *Hub) ServeWS(w http.ResponseWriter, r *http.Request) { h.serve.ServeHTTP(w, r) }

func (h *Hub) serveWS(w http.ResponseWriter, r *http.Request) {
	addr := h.opts.ClientAddress(r)
	if status, msg := h.admit(addr); status != 0 {
		h.rejected.Add(1)
		w.Header().Set("Retry-After", "10")
		http.Error(w, msg, status)
		return
	}
	// reject releases the slot admit took and counts a refused handshake.
	reject := func() {
		h.release(addr)
		h.rejected.Add(1)
	}
	select {
	case <-h.done:
		reject()
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	default:
	}
	if !h.checkOrigin(r) {
		reject()
		h.log.Warn("websocket origin rejected", "origin", quote.Clip(r.Header.Get("Origin")), "remote", r.RemoteAddr)
		http.Error(w, "websocket origin not allowed", http.StatusForbidden)
		return
	}
	conn, err := h.upgrader.Upgrade(w, r, nil) // writes the error response itself
	if err != nil {
		reject()
		return
	}
	c := &client{
		h:       h,
		conn:    conn,
		remote:  r.RemoteAddr,
		addr:    addr,
		pending: make(map[string]outgoing),
		seen:    make(map[string]uint64),
		notify:  make(chan struct{}, 1),
		quit:    make(chan struct{}),
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		h.release(addr)
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "shutting down"), time.Now().Add(h.opts.WriteWait))
		_ = conn.Close()
		return
	}
	h.wg.Add(2)
	h.mu.Unlock()
	go c.writePump()
	c.readPump()
}

// admit takes a connection slot for a client at addr, or returns the
// status and message of the refusal: 429 when addr has
// MaxConnectionsPerClient sockets, 503 when the hub is full (for an addr
// that has a socket already, when only the reserved slots are left).
func (h *Hub) admit(addr string) (int, string) {
	h.addrMu.Lock()
	defer h.addrMu.Unlock()
	n, mine := h.conns.Load(), h.perAddr[addr]
	switch {
	case h.opts.MaxConnectionsPerClient > 0 && mine >= h.opts.MaxConnectionsPerClient:
		return http.StatusTooManyRequests, fmt.Sprintf("too many websocket connections from your address: at most %d; close other skewscope tabs", h.opts.MaxConnectionsPerClient)
	case n >= int64(h.opts.MaxConnections), mine > 0 && n >= int64(h.opts.MaxConnections-h.opts.ReservedConnections):
		return http.StatusServiceUnavailable, "too many websocket connections"
	}
	h.perAddr[addr]++
	h.conns.Add(1)
	return 0, ""
}

// release gives back a slot admit took for addr.
func (h *Hub) release(addr string) {
	h.addrMu.Lock()
	defer h.addrMu.Unlock()
	if h.perAddr[addr]--; h.perAddr[addr] <= 0 {
		delete(h.perAddr, addr)
	}
	h.conns.Add(-1)
}

// clientAddress is the default HubOptions.ClientAddress: the address
// resolved from X-Forwarded-For behind a trusted proxy (chi's ClientIPFrom*
// middleware), else the IP of RemoteAddr, with IPv6 addresses cut to their
// /64 (one host or household usually has a whole /64).
func clientAddress(r *http.Request) string {
	a := middleware.GetClientIPAddr(r.Context())
	if !a.IsValid() {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		p, err := netip.ParseAddr(host)
		if err != nil {
			return host
		}
		a = p
	}
	a = a.Unmap()
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.String()
		}
	}
	return a.String()
}

// client is one websocket connection.
type client struct {
	h      *Hub
	conn   *websocket.Conn
	remote string
	addr   string // the client address its slot is counted under

	mu      sync.Mutex // guards pending, order and seen
	pending map[string]outgoing
	order   []string
	// seen is, per topic, the sequence number of the last update taken
	// for writing (0: none, or a whole update since).
	seen   map[string]uint64
	notify chan struct{} // cap 1: something is pending

	quit      chan struct{}
	closeOnce sync.Once

	// Owned by Run.
	topics map[string]struct{}
	gone   bool
}

// offerUpdate queues p for the client: a change when the last update of
// its topic taken for writing is the one it follows (an update still
// waiting is replaced, so it does not count), else the whole update.
func (c *client) offerUpdate(p publication) bool {
	if p.full == nil {
		return c.offer(p.topic, outgoing{pm: p.pm, seq: p.seq})
	}
	c.mu.Lock()
	o := outgoing{full: p.full, seq: p.seq}
	if p.base != 0 && c.seen[p.topic] == p.base {
		o.pm = p.pm
	}
	return c.offerLocked(p.topic, o)
}

// forget makes the next update of every topic a whole one: the client
// subscribed again, after a page of its own or a gap it saw.
func (c *client) forget() {
	c.mu.Lock()
	clear(c.seen)
	for t, o := range c.pending {
		if o.full != nil {
			o.pm = nil
			c.pending[t] = o
		}
	}
	c.mu.Unlock()
}

// offer queues o as the latest update of topic without blocking. It
// reports false if the client has too many topics waiting.
func (c *client) offer(topic string, o outgoing) bool {
	c.mu.Lock()
	return c.offerLocked(topic, o)
}

// offerLocked is offer with c.mu held; it unlocks it.
func (c *client) offerLocked(topic string, o outgoing) bool {
	if _, ok := c.pending[topic]; !ok {
		if len(c.order) >= c.h.opts.ClientBuffer+1 { // +1: the subscribe ack
			c.mu.Unlock()
			return false
		}
		c.order = append(c.order, topic)
	}
	c.pending[topic] = o
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
	return true
}

// take returns the pending updates in arrival order and empties the
// buffer, recording each topic's update as seen.
func (c *client) take() []outgoing {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]outgoing, 0, len(c.order))
	for _, t := range c.order {
		o := c.pending[t]
		out = append(out, o)
		delete(c.pending, t)
		if t != "" {
			c.seen[t] = o.seq
		}
	}
	c.order = c.order[:0]
	return out
}

// close closes the connection once; it reports whether this call did.
func (c *client) close() bool {
	did := false
	c.closeOnce.Do(func() {
		did = true
		close(c.quit)
		_ = c.conn.Close()
	})
	return did
}

// closeWith sends a close frame with code and reason, then closes.
func (c *client) closeWith(code int, reason string) {
	_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(min(c.h.opts.WriteWait, time.Second)))
	c.close()
}

// writePump owns writes and the write deadline; it pings every
// PingPeriod.
func (c *client) writePump() {
	h := c.h
	ping := time.NewTicker(h.opts.PingPeriod)
	defer func() {
		ping.Stop()
		c.close()
		h.wg.Done()
	}()
	for {
		select {
		case <-c.quit:
			return
		case <-h.done:
			c.closeWith(websocket.CloseGoingAway, "server shutting down")
			return
		case <-c.notify:
			for _, o := range c.take() {
				pm := o.pm
				if pm == nil {
					var err error
					if pm, err = o.full.get(); err != nil {
						h.log.Error("websocket update not sent", "topic", o.full.topic, "err", err)
						continue
					}
				}
				_ = c.conn.SetWriteDeadline(time.Now().Add(h.opts.WriteWait))
				if err := c.conn.WritePreparedMessage(pm); err != nil {
					if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
						if c.close() {
							h.dropped.Add(1)
							h.log.Warn("websocket client dropped: write blocked", "remote", c.remote, "duration", h.opts.WriteWait)
						}
					}
					return
				}
				h.sent.Add(1)
			}
		case <-ping.C:
			_ = c.conn.SetWriteDeadline(time.Now().Add(h.opts.WriteWait))
			if err := c.conn.WriteMessage(websocket.PingMessage, nil); err != nil {
				return
			}
		}
	}
}

// readPump owns reads and the read deadline; it reads subscribe messages
// until the connection fails or a message is bad.
func (c *client) readPump() {
	h := c.h
	defer func() {
		select {
		case h.unsub <- c:
		case <-h.done:
		}
		c.close()
		h.release(c.addr)
		h.wg.Done()
	}()
	// A socket that watches nothing only holds a slot: close it after
	// SubscribeWait, counted from the upgrade or from a subscription to
	// no topic.
	idle := time.AfterFunc(h.opts.SubscribeWait, func() {
		h.unsubscribed.Add(1)
		h.log.Info("websocket closed: no subscription", "remote", c.remote, "duration", h.opts.SubscribeWait)
		c.closeWith(websocket.ClosePolicyViolation, "no subscription within "+h.opts.SubscribeWait.String())
	})
	defer idle.Stop()
	c.conn.SetReadLimit(h.opts.ReadLimit)
	_ = c.conn.SetReadDeadline(time.Now().Add(h.opts.PongWait))
	c.conn.SetPongHandler(func(string) error {
		return c.conn.SetReadDeadline(time.Now().Add(h.opts.PongWait))
	})
	for {
		typ, data, err := h.readMessage(c.conn)
		if err != nil {
			switch {
			case errors.Is(err, errInflatedTooBig):
				h.badSubscribers.Add(1)
				h.log.Info("websocket subscribe rejected", "remote", c.remote, "error", err)
				c.closeWith(websocket.CloseMessageTooBig, clip(err.Error(), 120))
			case errors.Is(err, websocket.ErrReadLimit):
				h.badSubscribers.Add(1)
			}
			return
		}
		_ = c.conn.SetReadDeadline(time.Now().Add(h.opts.PongWait))
		topics, err := h.parseSubscribe(typ, data)
		if err != nil {
			h.badSubscribers.Add(1)
			h.log.Info("websocket subscribe rejected", "remote", c.remote, "error", err)
			c.closeWith(websocket.ClosePolicyViolation, clip(err.Error(), 120))
			return
		}
		if len(topics) > 0 {
			idle.Stop()
		} else {
			idle.Reset(h.opts.SubscribeWait)
		}
		var joined []string
		s := subscription{c, topics, make(chan error, 1), &joined}
		select {
		case h.sub <- s:
		case <-h.done:
			return
		case <-c.quit:
			return
		}
		if err := <-s.refused; err != nil {
			if err != errClientGone {
				h.topicsRefused.Add(1)
				h.log.Info("websocket subscription refused", "remote", c.remote, "addr", c.addr, "error", err)
				c.closeWith(websocket.ClosePolicyViolation, clip(err.Error(), 120))
			}
			return
		}
		if h.onSubscribe != nil && len(joined) > 0 {
			h.onSubscribe(joined)
		}
	}
}

// errInflatedTooBig is the error of an inbound message past ReadLimit
// once decompressed.
var errInflatedTooBig = errors.New("message too big")

// readMessage reads one inbound message of at most ReadLimit bytes after
// decompression. SetReadLimit alone bounds the frames as received: a
// 4 KB permessage-deflate frame of spaces inflates to 4 MB. Reading
// through a LimitReader stops the inflation one byte past the bound,
// whatever the message would inflate to; inbound compression stays
// allowed, since browsers that negotiate it compress what they send.
func (h *Hub) readMessage(conn *websocket.Conn) (int, []byte, error) {
	typ, r, err := conn.NextReader()
	if err != nil {
		return 0, nil, err
	}
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(r, h.opts.ReadLimit+1))
	h.inboundBytes.Add(uint64(n))
	switch {
	case err != nil:
		return 0, nil, err
	case n > h.opts.ReadLimit:
		return 0, nil, fmt.Errorf("%w: over %d bytes (decompressed)", errInflatedTooBig, h.opts.ReadLimit)
	}
	return typ, buf.Bytes(), nil
}

// parseSubscribe validates {"subscribe":["topic",...]}.
func (h *Hub) parseSubscribe(typ int, data []byte) ([]string, error) {
	if typ != websocket.TextMessage {
		return nil, errors.New("want a text message")
	}
	var msg struct {
		Subscribe *[]string `json:"subscribe"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&msg); err != nil {
		return nil, fmt.Errorf("bad subscribe message: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("bad subscribe message: trailing data")
	}
	if msg.Subscribe == nil {
		return nil, errors.New(`want {"subscribe":[...]}`)
	}
	topics := *msg.Subscribe
	if len(topics) > h.opts.MaxTopics {
		return nil, fmt.Errorf("%d topics: at most %d", len(topics), h.opts.MaxTopics)
	}
	seen := make(map[string]bool, len(topics))
	out := topics[:0]
	for _, t := range topics {
		if len(t) == 0 || len(t) > maxTopicLen || !topicRE.MatchString(t) {
			return nil, fmt.Errorf("topic %s: want 1-%d of A-Z a-z 0-9 . _ : / = -", quote.Clip(t), maxTopicLen)
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// clip shortens s to at most n bytes and an ellipsis, cutting on a rune
// boundary: a close reason must be valid UTF-8.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
