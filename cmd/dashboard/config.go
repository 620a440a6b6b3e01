package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/linkout"
	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/web"
)

// appConfig is the dashboard's configuration. Process settings come from
// flags, each with a SKEWSCOPE_* environment fallback (a flag given on the
// command line wins over the environment). Backends come from the YAML file
// named by --config.file plus the single-backend flags --kafka.brokers and
// --flink.url. See docs/configuration.md.
type appConfig struct {
	Listen         string
	LogFormat      string
	LogLevel       slog.Level
	ExternalURL    *url.URL // nil when not set
	RoutePrefix    string
	FrameAncestors []string
	// AllowedOrigins are extra origins allowed to open a websocket,
	// normalised (lower-case scheme://host[:port], no default port).
	AllowedOrigins []string
	// WSMaxPerAddress bounds the live-update websockets of one client
	// address (web.HubOptions.MaxConnectionsPerClient).
	WSMaxPerAddress int
	// WSMaxTopicsPerAddress bounds the distinct live views the websockets
	// of one client address watch (web.HubOptions.MaxTopicsPerClient).
	WSMaxTopicsPerAddress int
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client address the per-address bound applies to.
	TrustedProxies []netip.Prefix
	// AllowedHosts are the Host headers answered besides the defaults of
	// hostPolicy, normalised by web.NormalizeHost.
	AllowedHosts []string

	// ConfigFile is the YAML file read, "" when none.
	ConfigFile string
	// Kafka are the clusters to watch, validated and with defaults applied:
	// the config file's in order, then the one from --kafka.brokers.
	Kafka []kafka.Config
	// Flink are the REST endpoints to watch, validated: the config file's in
	// order, then the one from --flink.url.
	Flink []flink.Config
	// FlinkUI are the links of each Flink endpoint (by name) into its Web
	// UI, and KafkaUI those of each Kafka cluster into a Kafka UI; an
	// endpoint or cluster without links is absent.
	FlinkUI map[string]linkout.Flink
	KafkaUI map[string]linkout.Kafka
	// SourceGroups name the consumer group of a Flink source vertex where it
	// should not be discovered from committed offsets.
	SourceGroups []SourceGroupLink
	// Sandbox runs the dashboard on built-in example data without backends.
	Sandbox bool
	// Samples and UserHeader govern key samples (samplesconfig.go).
	Samples    web.SampleOptions
	UserHeader string
}

// SourceGroupLink ties a Flink source vertex to the Kafka consumer group it
// commits offsets as (links.sourceGroups[] in the config file).
type SourceGroupLink struct {
	Endpoint string // flink endpoint name
	Job      string // job name
	Vertex   string // vertex name; "" means every Kafka source vertex of the job
	Group    string // consumer group id
}

// parseConfig reads flags, their environment fallbacks and the config file,
// and validates all of it. The error lists every problem found.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (appConfig, error) {
	var f flagValues
	fs := newFlagSet(&f, stderr)
	if err := fs.Parse(args); err != nil {
		return appConfig{}, err
	}
	if fs.NArg() > 0 {
		return appConfig{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	var envErr error
	fs.VisitAll(func(fl *flag.Flag) {
		if given[fl.Name] || envErr != nil {
			return
		}
		env := envName(fl.Name)
		if v := getenv(env); v != "" {
			if err := fs.Set(fl.Name, v); err != nil {
				envErr = fmt.Errorf("%s=%q: %v", env, v, err)
			}
			given[fl.Name] = true
		}
	})
	if envErr != nil {
		return appConfig{}, envErr
	}

	var p problems
	cfg := appConfig{Listen: f.listen, LogFormat: f.logFormat}
	switch cfg.LogFormat {
	case "text", "json":
	default:
		p.addf("--log.format=%q: want text or json", cfg.LogFormat)
	}
	if err := cfg.LogLevel.UnmarshalText([]byte(f.logLevel)); err != nil {
		p.addf("--log.level=%q: want debug, info, warn or error", f.logLevel)
	}
	if f.externalURL != "" {
		u, err := url.Parse(f.externalURL)
		switch {
		case err != nil:
			p.addf("--web.external-url: not a URL: want an absolute http or https URL, e.g. https://tools.example.com/skewscope") // the text may hold a password
		case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			p.addf("--web.external-url=%s: want an absolute http or https URL, e.g. https://tools.example.com/skewscope", quote.Clip(u.Redacted()))
		case u.User != nil:
			// Links and websocket origins are built from it: a password
			// would be shown in every page.
			p.addf("--web.external-url=%s: must not contain user info (user:password@); give the URL browsers open", quote.Clip(u.Redacted()))
		case u.RawQuery != "" || u.ForceQuery || strings.Contains(f.externalURL, "#"):
			p.addf("--web.external-url=%s: must not have a query or fragment: give scheme://host[:port][/path]", quote.Clip(f.externalURL))
		default:
			u.Path = strings.TrimSuffix(u.Path, "/")
			cfg.ExternalURL = u
			cfg.RoutePrefix = u.Path
		}
	}
	if err := checkRoutePrefix(cfg.RoutePrefix); err != nil && f.routePrefix == "" {
		p.addf("--web.external-url=%q: its path %v", f.externalURL, err)
	}
	if f.routePrefix != "" {
		cfg.RoutePrefix = "/" + strings.Trim(f.routePrefix, "/")
		if cfg.RoutePrefix == "/" {
			cfg.RoutePrefix = ""
		}
		if err := checkRoutePrefix(cfg.RoutePrefix); err != nil {
			p.addf("--web.route-prefix=%q: %v", f.routePrefix, err)
		}
	}
	cfg.FrameAncestors = splitList(f.frameAncestors)
	for _, o := range splitList(f.allowedOrigins) {
		n, err := web.NormalizeOrigin(o)
		if err != nil {
			p.addf("--web.allowed-origins: %q: %v", o, err)
			continue
		}
		cfg.AllowedOrigins = appendUnique(cfg.AllowedOrigins, n)
	}
	if strings.TrimSpace(cfg.Listen) == "" {
		p.addf("--listen is empty: give host:port, e.g. 127.0.0.1:8080")
	}

	var b backends
	var ws webSection
	if f.configFile != "" {
		cfg.ConfigFile = f.configFile
		b, ws = loadConfigFile(f.configFile, &p)
	}
	cfg.WSMaxPerAddress = web.DefaultMaxConnectionsPerClient
	if ws.WSMaxPerAddress != nil {
		if n := *ws.WSMaxPerAddress; checkWSMax(n) != nil {
			p.at("web.wsMaxPerAddress", "%d: %v", n, checkWSMax(n))
		} else {
			cfg.WSMaxPerAddress = n
		}
	}
	if given["web.ws-max-per-address"] {
		n, err := strconv.Atoi(strings.TrimSpace(f.wsMaxPerAddress))
		if err == nil {
			err = checkWSMax(n)
		} else {
			err = checkWSMax(0)
		}
		if err != nil {
			p.addf("--web.ws-max-per-address=%q: %v", f.wsMaxPerAddress, err)
		} else {
			cfg.WSMaxPerAddress = n
		}
	}
	cfg.WSMaxTopicsPerAddress = wsTopicsBound(&p, ws.WSMaxTopicsPerAddress, given["web.ws-max-topics-per-address"], f.wsMaxTopicsPerAddress)
	for i, h := range ws.AllowedHosts {
		if n, err := web.NormalizeHost(h); err != nil {
			p.at(fmt.Sprintf("web.allowedHosts[%d]", i), "%v", err)
		} else {
			cfg.AllowedHosts = appendUnique(cfg.AllowedHosts, n)
		}
	}
	if given["web.allowed-hosts"] {
		cfg.AllowedHosts = nil // the flag replaces the file's list
		for _, h := range splitList(f.allowedHosts) {
			if n, err := web.NormalizeHost(h); err != nil {
				p.addf("--web.allowed-hosts: %v", err)
			} else {
				cfg.AllowedHosts = appendUnique(cfg.AllowedHosts, n)
			}
		}
	}
	for i, v := range ws.TrustedProxies {
		if pr, err := parseProxy(v); err != nil {
			p.at(fmt.Sprintf("web.trustedProxies[%d]", i), "%q: %v", v, err)
		} else {
			cfg.TrustedProxies = append(cfg.TrustedProxies, pr)
		}
	}
	if given["web.trusted-proxies"] {
		cfg.TrustedProxies = nil // the flag replaces the file's list
		for _, v := range splitList(f.trustedProxies) {
			if pr, err := parseProxy(v); err != nil {
				p.addf("--web.trusted-proxies: %q: %v", v, err)
			} else {
				cfg.TrustedProxies = append(cfg.TrustedProxies, pr)
			}
		}
	}
	b.addQuick(f, given, &p)
	b.check(&p)
	for _, k := range b.kafka {
		cfg.Kafka = append(cfg.Kafka, k.cfg)
		if !k.ui.IsZero() {
			if cfg.KafkaUI == nil {
				cfg.KafkaUI = map[string]linkout.Kafka{}
			}
			cfg.KafkaUI[k.cfg.Name] = k.ui
		}
	}
	for _, e := range b.flink {
		cfg.Flink = append(cfg.Flink, e.cfg)
		if !e.ui.IsZero() {
			if cfg.FlinkUI == nil {
				cfg.FlinkUI = map[string]linkout.Flink{}
			}
			cfg.FlinkUI[e.cfg.Name] = e.ui
		}
	}
	for _, l := range b.links {
		cfg.SourceGroups = append(cfg.SourceGroups, l.link)
	}

	configured := len(cfg.Kafka) > 0 || len(cfg.Flink) > 0
	switch {
	case !f.sandbox.set:
		cfg.Sandbox = !configured
	case f.sandbox.value && configured:
		p.addf("--sandbox=true: the sandbox runs without backends, but %s configured; drop --sandbox or the backends", b.describe())
	default:
		cfg.Sandbox = f.sandbox.value
	}
	cfg.Samples, cfg.UserHeader = parseSamples(f.samples, given, ws, sampledClusters(cfg.Kafka, cfg.Sandbox), &p)
	if err := p.err(); err != nil {
		return appConfig{}, err
	}
	return cfg, nil
}

// websocketOrigins returns the origins allowed to open a websocket besides
// the request's own: that of --web.external-url, or when it is not set the
// loopback origins for the port of listenAddr (the address actually bound),
// followed by --web.allowed-origins. All are normalised.
func (c appConfig) websocketOrigins(listenAddr string) []string {
	var out []string
	if c.ExternalURL != nil {
		if o, err := web.NormalizeOrigin(c.ExternalURL.Scheme + "://" + c.ExternalURL.Host); err == nil {
			out = append(out, o)
		}
	} else if _, port, err := net.SplitHostPort(listenAddr); err == nil && port != "" && port != "0" {
		for _, host := range []string{"localhost", "127.0.0.1", "[::1]"} {
			if o, err := web.NormalizeOrigin("http://" + host + ":" + port); err == nil {
				out = appendUnique(out, o)
			}
		}
	}
	for _, o := range c.AllowedOrigins {
		out = appendUnique(out, o)
	}
	return out
}

// loopbackHosts are always answered: only local clients reach them, and a
// rebinding page cannot take their names.
var loopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// hostPolicy returns the Host headers answered (web.HostPolicy): the
// loopback names, the host of --web.external-url, that of --listen and
// --web.allowed-hosts, all with any port. A listen address on all
// addresses (0.0.0.0, ::, or no host) lets every IP address through, so
// that probes and scrapes by pod IP work, but no name: the names that lead
// to a machine (its host name, DNS aliases, ingress names) are not known
// from inside it, and a rebinding attack needs nothing but a name; list
// them with --web.allowed-hosts.
func (c appConfig) hostPolicy() web.HostPolicy {
	hosts := append([]string(nil), loopbackHosts...)
	if c.ExternalURL != nil {
		if n, err := web.NormalizeHost(c.ExternalURL.Hostname()); err == nil {
			hosts = appendUnique(hosts, n)
		}
	}
	var anyIP bool
	if host, _, err := net.SplitHostPort(c.Listen); err == nil {
		if a, err := netip.ParseAddr(host); host == "" || (err == nil && a.IsUnspecified()) {
			anyIP = true
		} else if n, err := web.NormalizeHost(host); err == nil {
			hosts = appendUnique(hosts, n)
		}
	}
	for _, h := range c.AllowedHosts {
		hosts = appendUnique(hosts, h)
	}
	return web.HostPolicy{Allowed: hosts, AnyIP: anyIP}
}

// warnings are valid but risky settings, for main to log at warn level.
func (c appConfig) warnings() []string {
	var w []string
	if slices.Contains(c.AllowedHosts, "*") {
		w = append(w, "allowed hosts include *: the Host header is not checked, so a page of any site whose name points at this address (DNS rebinding) can read and post to skewscope; use it only behind a proxy that checks Host")
	}
	for _, p := range c.TrustedProxies {
		if p.Bits() == 0 {
			w = append(w, fmt.Sprintf("trusted proxies include %s: every peer is trusted, so any client can choose the address its websockets count under", p))
		}
	}
	w = append(w, c.sampleWarnings()...)
	for _, e := range c.Flink {
		if e.TLS.InsecureSkipVerify {
			w = append(w, fmt.Sprintf("flink endpoint %q: tls.insecureSkipVerify is true: the endpoint's certificate is not checked", e.Name))
		}
	}
	return w
}

func newLogger(cfg appConfig, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func appendUnique(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

// ---- Logging the effective configuration ----

const redacted = "<redacted>"

// secret shows an inline secret as <redacted> and a file as <file /path>.
func secret(inline, file string) slog.Value {
	switch {
	case file != "":
		return slog.StringValue("<file " + file + ">")
	case inline != "":
		return slog.StringValue(redacted)
	}
	return slog.StringValue("")
}

// LogValue is the effective configuration with every secret redacted, for
// a debug log line.
func (c appConfig) LogValue() slog.Value {
	ext := ""
	if c.ExternalURL != nil {
		ext = c.ExternalURL.Redacted()
	}
	attrs := []slog.Attr{
		slog.String("listen", c.Listen),
		slog.String("log_format", c.LogFormat),
		slog.String("log_level", c.LogLevel.String()),
		slog.String("external_url", ext),
		slog.String("route_prefix", c.RoutePrefix),
		slog.Any("frame_ancestors", c.FrameAncestors),
		slog.Any("allowed_origins", c.AllowedOrigins),
		slog.Int("ws_max_per_address", c.WSMaxPerAddress),
		slog.Any("trusted_proxies", c.TrustedProxies),
		slog.Any("allowed_hosts", c.AllowedHosts),
		slog.String("config_file", c.ConfigFile),
		slog.Bool("sandbox", c.Sandbox),
		c.samplesLogValue(),
	}
	for i, k := range c.Kafka {
		attrs = append(attrs, slog.Group(fmt.Sprintf("kafka_%d", i),
			slog.String("name", k.Name),
			slog.Any("brokers", k.Brokers),
			slog.String("client_id", k.ClientID),
			slog.Any("topics", k.Topics),
			slog.Duration("poll_interval", k.PollInterval),
			slog.Duration("request_timeout", k.RequestTimeout),
			slog.Duration("log_start_refresh", k.LogStartRefresh),
			slog.Group("tls",
				slog.Bool("enabled", k.TLS.Enabled),
				slog.String("ca_file", k.TLS.CAFile),
				slog.String("cert_file", k.TLS.CertFile),
				slog.String("key_file", k.TLS.KeyFile),
				slog.String("server_name", k.TLS.ServerName)),
			slog.Group("sasl",
				slog.String("mechanism", k.SASL.Mechanism),
				slog.String("username", k.SASL.Username),
				slog.Any("password", secret(k.SASL.Password, k.SASL.PasswordFile)),
				slog.Any("token", secret(k.SASL.Token, k.SASL.TokenFile)),
				slog.Group("oauth",
					slog.String("token_endpoint", k.SASL.OAuth.TokenEndpoint),
					slog.String("client_id", k.SASL.OAuth.ClientID),
					slog.Any("client_secret", secret(k.SASL.OAuth.ClientSecret, k.SASL.OAuth.ClientSecretFile)),
					slog.String("scope", k.SASL.OAuth.Scope))),
			slog.Group("groups",
				slog.Any("allow", k.Groups.Allow),
				slog.Any("deny", k.Groups.Deny)),
			slog.Any("ui", c.KafkaUI[k.Name]),
		))
	}
	for i, e := range c.Flink {
		u := e.URL
		if pu, err := url.Parse(e.URL); err == nil {
			u = pu.Redacted()
		}
		auth := []any{slog.Any("bearer_token", secret(e.BearerToken, e.BearerTokenFile))}
		if ba := e.BasicAuth; ba != nil {
			auth = append(auth, slog.String("basic_username", ba.Username), slog.Any("basic_password", secret(ba.Password, ba.PasswordFile)))
		}
		attrs = append(attrs, slog.Group(fmt.Sprintf("flink_%d", i),
			slog.String("name", e.Name),
			slog.String("url", u),
			slog.String("kafka", e.Kafka),
			slog.Any("jobs", e.Jobs),
			slog.Duration("poll_interval", e.PollInterval),
			slog.Duration("request_timeout", e.RequestTimeout),
			slog.Group("auth", auth...),
			slog.Group("tls",
				slog.String("ca_file", e.TLS.CAFile),
				slog.String("cert_file", e.TLS.CertFile),
				slog.String("key_file", e.TLS.KeyFile),
				slog.String("server_name", e.TLS.ServerName),
				slog.Bool("insecure_skip_verify", e.TLS.InsecureSkipVerify)),
			slog.Any("web_ui", c.FlinkUI[e.Name]),
		))
	}
	for i, l := range c.SourceGroups {
		attrs = append(attrs, slog.Group(fmt.Sprintf("source_group_%d", i),
			slog.String("endpoint", l.Endpoint),
			slog.String("job", l.Job),
			slog.String("vertex", l.Vertex),
			slog.String("group", l.Group)))
	}
	return slog.GroupValue(attrs...)
}
