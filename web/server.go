package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/linkout"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/static"
)

// startTime is the Last-Modified of embedded assets.
var startTime = time.Now()

// Options configure a Server.
type Options struct {
	Logger *slog.Logger
	// Version is shown by /api/v1/version and logged at start.
	Version string
	// RoutePrefix is the path under which every route is served, "" or
	// like "/skewscope" (no trailing slash), for reverse proxies.
	RoutePrefix string
	// FrameAncestors are the origins allowed to embed pages in a frame
	// (CSP frame-ancestors). Empty means 'self' only.
	FrameAncestors []string
	// Live is the store of live data; nil when no Kafka or Flink is
	// configured (the home page is then the planner's introduction).
	Live *live.Store
	// WebSocket configures the /ws hub (origins, limits).
	WebSocket HubOptions
	// Hosts are the Host headers answered (DNS rebinding); see
	// HostPolicy. The zero value answers every Host.
	Hosts HostPolicy
	// Sandbox is set when the built-in sandbox runs: pages say so once and
	// offer its restore control.
	Sandbox SandboxControl
	// LiveInterval is the least time between two pushes of live views;
	// default 1 s.
	LiveInterval time.Duration
	// Now is the clock pages use for "N ago" texts; nil means time.Now.
	Now func() time.Time
	// MaxHeavyRenders bounds the planner, key lookup and assignment
	// requests computed at once; more wait briefly, then get 503 with
	// Retry-After. Zero means 4.
	MaxHeavyRenders int
	// KafkaClusters are the clusters whose topics key samples may read,
	// with the collectors' connection settings (TLS, SASL). Samples read
	// only: no group, no commits.
	KafkaClusters []kafka.Config
	// Samples govern key samples: off, limited to topics, keys hashed,
	// per-user bound.
	Samples SampleOptions
	// FlinkUI are the links of each Flink endpoint (by name) into its Web
	// UI, and KafkaUI those of each Kafka cluster into a Kafka UI: pages
	// show them beside a job, a vertex, a highlighted subtask, a topic and
	// a consumer group. An endpoint or cluster not listed has none (the
	// sandbox's, which serves no Web UI).
	FlinkUI map[string]linkout.Flink
	KafkaUI map[string]linkout.Kafka
	// UserHeader is the request header in which a trusted proxy
	// (WebSocket.TrustedProxies) names the signed-in user, e.g.
	// X-Forwarded-User; key samples record and log that user. From any
	// other peer it is ignored. "" means no user is known.
	UserHeader string
}

// Server holds what the handlers share. Create it with NewServer.
type Server struct {
	log            *slog.Logger
	version        string
	prefix         string
	frameAncestors string
	heightOrigins  string // where embedded pages post their height (heightOrigins)
	assets         *static.Assets
	ready          atomic.Bool
	handler        http.Handler
	live           *live.Store
	hub            *Hub
	sandbox        SandboxControl
	liveInterval   time.Duration
	metrics        http.Handler
	now            func() time.Time
	// samples are the key samples (nil without Kafka clusters), runCtx the
	// context of Run, under which they read.
	samples *samples
	runCtx  atomic.Pointer[context.Context]
	// userHeader names the user behind a trusted proxy, trustedProxies;
	// clientIP resolves X-Forwarded-For from them (nil without any).
	userHeader     string
	trustedProxies []netip.Prefix
	clientIP       func(http.Handler) http.Handler
	// heavy holds one token per expensive render in progress (planner,
	// keys, assignment); see limitHeavy.
	heavy chan struct{}
	// maxAnswer bounds the answer of one heavy request in bytes.
	maxAnswer int
	// answerBytes are the bytes of heavy answers rendered and not yet
	// written, at most answerBudget; see limitHeavy.
	answerBytes  atomic.Int64
	answerBudget int64
	// csrf refuses cross-origin browser POSTs; see routes.
	csrf *http.CrossOriginProtection
	// vertexViews counts the vertex views publishAll built.
	vertexViews atomic.Uint64
	// lastSent holds, per topic, the last update publish sent and its
	// number (pubSeq counts them), for the next update's change.
	lastMu   sync.Mutex
	lastSent map[string]sentUpdate
	pubSeq   uint64
	// hosts answers 421 to Host headers not allowed; see checkHost.
	hosts *hostMatcher
	// flinkUI and kafkaUI are Options.FlinkUI and Options.KafkaUI.
	flinkUI map[string]linkout.Flink
	kafkaUI map[string]linkout.Kafka
}

var (
	prefixRE   = regexp.MustCompile(`^(/[A-Za-z0-9._~-]+)*$`)
	ancestorRE = regexp.MustCompile(`^('self'|'none'|https?://[A-Za-z0-9.-]+(:[0-9]+)?|https?://\*\.[A-Za-z0-9.-]+(:[0-9]+)?)$`)
)

// NewServer returns a Server with its routes in place. It is not ready
// (/readyz answers 503) until SetReady(true).
func NewServer(opts Options) (*Server, error) {
	s := &Server{lastSent: make(map[string]sentUpdate), log: opts.Logger, version: opts.Version, prefix: strings.TrimSuffix(opts.RoutePrefix, "/"),
		live: opts.Live, sandbox: opts.Sandbox, liveInterval: opts.LiveInterval, now: opts.Now,
		flinkUI: opts.FlinkUI, kafkaUI: opts.KafkaUI}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.liveInterval <= 0 {
		s.liveInterval = time.Second
	}
	if !prefixRE.MatchString(s.prefix) {
		return nil, fmt.Errorf("route prefix %q: want a path like /skewscope (letters, digits, . _ ~ -)", opts.RoutePrefix)
	}
	fa := []string{"'self'"}
	if len(opts.FrameAncestors) > 0 {
		fa = fa[:0]
		for _, a := range opts.FrameAncestors {
			a = strings.TrimSuffix(strings.TrimSpace(a), "/")
			if !ancestorRE.MatchString(a) {
				return nil, fmt.Errorf("frame ancestor %q: want an origin like https://portal.example.com, 'self' or 'none'", a)
			}
			fa = append(fa, a)
		}
	}
	s.frameAncestors = strings.Join(fa, " ")
	s.heightOrigins = heightOrigins(fa)
	var err error
	if s.hosts, err = newHostMatcher(opts.Hosts, s.prefix); err != nil {
		return nil, err
	}
	if s.assets, err = static.Load(); err != nil {
		return nil, err
	}
	if s.hub, err = NewHub(s.log, opts.WebSocket); err != nil {
		return nil, err
	}
	if opts.MaxHeavyRenders <= 0 {
		opts.MaxHeavyRenders = defaultHeavyRenders
	}
	s.heavy = make(chan struct{}, opts.MaxHeavyRenders)
	s.maxAnswer = defaultMaxAnswer
	s.answerBudget = defaultAnswerBudget
	s.csrf = http.NewCrossOriginProtection()
	for _, o := range opts.WebSocket.AllowedOrigins {
		// The origins trusted to open the websocket (that of
		// --web.external-url among them) may post forms too: behind a
		// proxy that rewrites Host, browsers without Sec-Fetch-Site are
		// recognised by their Origin.
		n, err := NormalizeOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("allowed origin %q: %w", o, err)
		}
		if err := s.csrf.AddTrustedOrigin(n); err != nil {
			return nil, fmt.Errorf("allowed origin %q: %w", o, err)
		}
	}
	s.csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "cross-origin "+r.Method+" refused: submit the form from skewscope's own pages", http.StatusForbidden)
	}))
	s.metrics = s.newMetrics()
	if s.samples, err = newSamples(opts.KafkaClusters, opts.Samples, s.now, s.publishSample); err != nil {
		return nil, fmt.Errorf("key samples: %w", err)
	}
	s.hub.onSubscribe = s.sampleSubscribed
	if h := strings.TrimSpace(opts.UserHeader); h != "" {
		if !headerNameRE.MatchString(h) {
			return nil, fmt.Errorf("user header %q: not an HTTP header name", opts.UserHeader)
		}
		s.userHeader = h
	}
	s.trustedProxies = opts.WebSocket.TrustedProxies
	if s.clientIP, err = newClientIP(s.trustedProxies); err != nil {
		return nil, err
	}
	s.handler = s.routes()
	return s, nil
}

// Run serves the websocket hub and pushes live views until ctx is done;
// then it closes every websocket (code 1001), waits for the key samples
// to stop, and returns. Call it beside http.Server.Serve:
// http.Server.Shutdown does not close websockets.
func (s *Server) Run(ctx context.Context) {
	s.runCtx.Store(&ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.hub.Run(ctx)
	}()
	s.runLive(ctx, s.liveInterval)
	<-done
	if s.samples != nil {
		// The samples read under ctx: they end now, and their pages'
		// last updates find the hub closed.
		s.samples.mgr.Close()
	}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// SetReady marks the server ready to serve (or not, while shutting down).
func (s *Server) SetReady(ready bool) { s.ready.Store(ready) }

// apiHandler is a JSON API handler: it writes a response or returns an error.
type apiHandler func(w http.ResponseWriter, r *http.Request) error

// api adapts an apiHandler: a returned error becomes {"error": "..."} with
// the matching status; an internal error is logged and not shown in detail.
func (s *Server) api(h apiHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		status, public := statusOf(err)
		msg := err.Error()
		if !public {
			s.log.ErrorContext(r.Context(), "api request failed", "path", r.URL.Path, "error", err)
			msg = "internal error"
		}
		writeJSON(w, status, apiErrorBody{Error: msg})
	}
}

type apiErrorBody struct {
	Error string `json:"error"`
}

// writeJSON encodes v into a buffer first, so that an encoding failure never
// leaves a half-written 200 behind.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(true)
	if err := enc.Encode(v); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	// A failed write means the client went away; there is no one to tell.
	w.Write(buf.Bytes())
	return nil
}
