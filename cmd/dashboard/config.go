package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
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
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client address the per-address bound applies to.
	TrustedProxies []netip.Prefix

	// ConfigFile is the YAML file read, "" when none.
	ConfigFile string
	// Kafka are the clusters to watch, validated and with defaults applied:
	// the config file's in order, then the one from --kafka.brokers.
	Kafka []kafka.Config
	// Flink are the REST endpoints to watch, validated: the config file's in
	// order, then the one from --flink.url.
	Flink []flink.Config
	// SourceGroups name the consumer group of a Flink source vertex where it
	// should not be discovered from committed offsets.
	SourceGroups []SourceGroupLink
	// Sandbox runs the dashboard on built-in example data without backends.
	Sandbox bool
}

// SourceGroupLink ties a Flink source vertex to the Kafka consumer group it
// commits offsets as (links.sourceGroups[] in the config file).
type SourceGroupLink struct {
	Endpoint string // flink endpoint name
	Job      string // job name
	Vertex   string // vertex name; "" means every Kafka source vertex of the job
	Group    string // consumer group id
}

// envPrefix starts every environment variable that stands in for a flag.
const envPrefix = "SKEWSCOPE_"

// envName is the environment variable for a flag: SKEWSCOPE_ and the flag
// name upper-cased with "." and "-" as "_" (web.external-url →
// SKEWSCOPE_WEB_EXTERNAL_URL).
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(flagName))
}

// Names used for the cluster and endpoint of the single-backend flags.
const defaultBackendName = "default"

// flagValues holds the raw flag (or environment) values.
type flagValues struct {
	listen, logFormat, logLevel                  string
	externalURL, routePrefix, frameAncestors     string
	allowedOrigins, configFile                   string
	wsMaxPerAddress, trustedProxies              string
	kafkaBrokers, kafkaName, flinkURL, flinkName string
	sandbox                                      optionalBool
}

// optionalBool is a boolean flag that knows whether it was set.
type optionalBool struct{ set, value bool }

func (b *optionalBool) String() string {
	if b == nil || !b.set {
		return ""
	}
	return strconv.FormatBool(b.value)
}

func (b *optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	b.set, b.value = true, v
	return nil
}

func (b *optionalBool) IsBoolFlag() bool { return true }

func newFlagSet(f *flagValues, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("dashboard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8080", "address to serve HTTP on")
	fs.StringVar(&f.logFormat, "log.format", "text", "log format: text or json")
	fs.StringVar(&f.logLevel, "log.level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&f.externalURL, "web.external-url", "", "URL under which skewscope is reachable, e.g. behind a reverse proxy; its path becomes the route prefix and its origin may open websockets")
	fs.StringVar(&f.routePrefix, "web.route-prefix", "", "path prefix of every route; defaults to the path of --web.external-url")
	fs.StringVar(&f.frameAncestors, "web.frame-ancestors", "", "comma-separated origins allowed to embed pages in a frame; default 'self'")
	fs.StringVar(&f.allowedOrigins, "web.allowed-origins", "", "comma-separated origins, besides that of --web.external-url, allowed to open a websocket")
	fs.StringVar(&f.wsMaxPerAddress, "web.ws-max-per-address", strconv.Itoa(web.DefaultMaxConnectionsPerClient), fmt.Sprintf("live-update websockets one client address may open, 1 to %d; behind a reverse proxy not in --web.trusted-proxies every browser has the proxy's address", web.DefaultMaxConnections))
	fs.StringVar(&f.trustedProxies, "web.trusted-proxies", "", "comma-separated CIDRs (or addresses) of reverse proxies whose X-Forwarded-For names the client address for --web.ws-max-per-address; other peers' forwarded headers are ignored")
	fs.StringVar(&f.configFile, "config.file", "", "YAML file with kafka.clusters, flink.endpoints and links (see docs/configuration.md)")
	fs.StringVar(&f.kafkaBrokers, "kafka.brokers", "", "comma-separated seed brokers of one Kafka cluster without TLS or SASL (quick start; use --config.file for more)")
	fs.StringVar(&f.kafkaName, "kafka.name", defaultBackendName, "name of the --kafka.brokers cluster")
	fs.StringVar(&f.flinkURL, "flink.url", "", "REST URL of one Flink JobManager without authentication (quick start; use --config.file for more)")
	fs.StringVar(&f.flinkName, "flink.name", defaultBackendName, "name of the --flink.url endpoint")
	fs.Var(&f.sandbox, "sandbox", "serve built-in example data; default true exactly when no Kafka cluster and no Flink endpoint is configured")
	fs.VisitAll(func(fl *flag.Flag) { fl.Usage += " (env " + envName(fl.Name) + ")" })
	return fs
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
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.addf("--web.external-url=%q: want an absolute http or https URL, e.g. https://tools.example.com/skewscope", f.externalURL)
		} else {
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
	}
	for _, e := range b.flink {
		cfg.Flink = append(cfg.Flink, e.cfg)
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

// checkWSMax reports a per-address websocket bound outside 1 to the bound
// on all of them.
func checkWSMax(n int) error {
	if n < 1 || n > web.DefaultMaxConnections {
		return fmt.Errorf("want a whole number from 1 to %d (the bound on all live-update websockets)", web.DefaultMaxConnections)
	}
	return nil
}

// parseProxy reads a trusted proxy: a CIDR prefix, or one address (its
// /32 or /128). IPv4-mapped IPv6 prefixes are taken as the IPv4 ones they
// map, as request addresses are compared unmapped.
func parseProxy(s string) (netip.Prefix, error) {
	const want = "want a CIDR such as 10.0.0.0/8 or fd00::/8, or one IP address"
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			return netip.Prefix{}, errors.New(want)
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, errors.New(want)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if a := p.Addr(); a.Is4In6() {
		if p.Bits() < 96 {
			return netip.Prefix{}, errors.New("an IPv4-mapped prefix needs at least 96 bits; " + want)
		}
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// warnings are valid but risky settings, for main to log at warn level.
func (c appConfig) warnings() []string {
	var w []string
	for _, p := range c.TrustedProxies {
		if p.Bits() == 0 {
			w = append(w, fmt.Sprintf("trusted proxies include %s: every peer is trusted, so any client can choose the address its websockets count under", p))
		}
	}
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

// problems collects configuration errors so that one error lists them all.
type problems []string

func (p *problems) addf(format string, args ...any) {
	*p = append(*p, fmt.Sprintf(format, args...))
}

// at records a problem of the YAML path or flag path.
func (p *problems) at(path, format string, args ...any) {
	*p = append(*p, path+": "+fmt.Sprintf(format, args...))
}

var problemPathRE = regexp.MustCompile(`^(kafka\.clusters|flink\.endpoints|links\.sourceGroups)\[(\d+)\]`)

// err returns nil or one error listing every problem: flag and file
// problems first, then by YAML section and entry.
func (p problems) err() error {
	rank := func(m string) (int, int) {
		s := problemPathRE.FindStringSubmatch(m)
		if s == nil {
			return 0, 0
		}
		i, _ := strconv.Atoi(s[2])
		return map[string]int{"kafka.clusters": 1, "flink.endpoints": 2, "links.sourceGroups": 3}[s[1]], i
	}
	sort.SliceStable(p, func(i, j int) bool {
		si, ii := rank(p[i])
		sj, ij := rank(p[j])
		return si < sj || (si == sj && ii < ij)
	})
	switch len(p) {
	case 0:
		return nil
	case 1:
		return errors.New(p[0])
	}
	return fmt.Errorf("%d configuration problems:\n  %s", len(p), strings.Join(p, "\n  "))
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func appendUnique(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

// ---- The YAML file ----

// The file's shape. Every struct is named so that yaml's "field x not found
// in type main.y" errors can be rewritten to name the YAML path (yamlPaths).
type fileConfig struct {
	Kafka kafkaSection `yaml:"kafka"`
	Flink flinkSection `yaml:"flink"`
	Links linksSection `yaml:"links"`
	Web   webSection   `yaml:"web"`
}

// webSection holds the server settings a flag can also set; the flag
// wins.
type webSection struct {
	WSMaxPerAddress *int     `yaml:"wsMaxPerAddress"`
	TrustedProxies  []string `yaml:"trustedProxies"`
}

type kafkaSection struct {
	Clusters []kafkaClusterYAML `yaml:"clusters"`
}

type kafkaClusterYAML struct {
	Name           string          `yaml:"name"`
	Brokers        []string        `yaml:"brokers"`
	ClientID       string          `yaml:"clientId"`
	Topics         []string        `yaml:"topics"`
	PollInterval   time.Duration   `yaml:"pollInterval"`
	RequestTimeout time.Duration   `yaml:"requestTimeout"`
	TLS            kafkaTLSYAML    `yaml:"tls"`
	SASL           kafkaSASLYAML   `yaml:"sasl"`
	Groups         kafkaGroupsYAML `yaml:"groups"`
}

type kafkaGroupsYAML struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

type kafkaTLSYAML struct {
	Enabled      bool   `yaml:"enabled"`
	CAFilepath   string `yaml:"caFilepath"`
	CertFilepath string `yaml:"certFilepath"`
	KeyFilepath  string `yaml:"keyFilepath"`
	ServerName   string `yaml:"serverName"`
}

type kafkaSASLYAML struct {
	Mechanism    string `yaml:"mechanism"`
	Username     string `yaml:"username"`
	Password     string `yaml:"password"`
	PasswordFile string `yaml:"passwordFile"`

	// OAUTHBEARER: one of token, tokenFile and oauth.
	Token     string         `yaml:"token"`
	TokenFile string         `yaml:"tokenFile"`
	OAuth     kafkaOAuthYAML `yaml:"oauth"`
}

type kafkaOAuthYAML struct {
	TokenEndpoint    string `yaml:"tokenEndpoint"`
	ClientID         string `yaml:"clientId"`
	ClientSecret     string `yaml:"clientSecret"`
	ClientSecretFile string `yaml:"clientSecretFile"`
	Scope            string `yaml:"scope"`
}

type flinkSection struct {
	Endpoints []flinkEndpointYAML `yaml:"endpoints"`
}

type flinkEndpointYAML struct {
	Name           string        `yaml:"name"`
	URL            string        `yaml:"url"`
	Kafka          string        `yaml:"kafka"`
	Jobs           []string      `yaml:"jobs"`
	PollInterval   time.Duration `yaml:"pollInterval"`
	RequestTimeout time.Duration `yaml:"requestTimeout"`
	// The request budget on the JobManager and how long a source's
	// metric-id list is used (flink.Config).
	MaxInFlight          int             `yaml:"maxInFlight"`
	MaxRequestsPerSecond float64         `yaml:"maxRequestsPerSecond"`
	MetricIDRefresh      time.Duration   `yaml:"metricIdRefresh"`
	Authorization        *flinkAuthYAML  `yaml:"authorization"`
	BasicAuth            *flinkBasicYAML `yaml:"basicAuth"`
	TLS                  flinkTLSYAML    `yaml:"tls"`
}

type flinkAuthYAML struct {
	BearerToken     string `yaml:"bearerToken"`
	BearerTokenFile string `yaml:"bearerTokenFile"`
}

type flinkBasicYAML struct {
	Username     string `yaml:"username"`
	Password     string `yaml:"password"`
	PasswordFile string `yaml:"passwordFile"`
}

type flinkTLSYAML struct {
	CAFilepath         string `yaml:"caFilepath"`
	CertFilepath       string `yaml:"certFilepath"`
	KeyFilepath        string `yaml:"keyFilepath"`
	ServerName         string `yaml:"serverName"`
	InsecureSkipVerify bool   `yaml:"insecureSkipVerify"`
}

type linksSection struct {
	SourceGroups []sourceGroupYAML `yaml:"sourceGroups"`
}

type sourceGroupYAML struct {
	Endpoint string `yaml:"endpoint"`
	Job      string `yaml:"job"`
	Vertex   string `yaml:"vertex"`
	Group    string `yaml:"group"`
}

// yamlPaths names, for each file type, where it sits in the file.
var yamlPaths = map[string]struct {
	path string
	typ  reflect.Type
}{
	"fileConfig":        {"the top level", reflect.TypeFor[fileConfig]()},
	"webSection":        {"web", reflect.TypeFor[webSection]()},
	"kafkaSection":      {"kafka", reflect.TypeFor[kafkaSection]()},
	"kafkaClusterYAML":  {"kafka.clusters[]", reflect.TypeFor[kafkaClusterYAML]()},
	"kafkaTLSYAML":      {"kafka.clusters[].tls", reflect.TypeFor[kafkaTLSYAML]()},
	"kafkaSASLYAML":     {"kafka.clusters[].sasl", reflect.TypeFor[kafkaSASLYAML]()},
	"kafkaOAuthYAML":    {"kafka.clusters[].sasl.oauth", reflect.TypeFor[kafkaOAuthYAML]()},
	"kafkaGroupsYAML":   {"kafka.clusters[].groups", reflect.TypeFor[kafkaGroupsYAML]()},
	"flinkSection":      {"flink", reflect.TypeFor[flinkSection]()},
	"flinkEndpointYAML": {"flink.endpoints[]", reflect.TypeFor[flinkEndpointYAML]()},
	"flinkAuthYAML":     {"flink.endpoints[].authorization", reflect.TypeFor[flinkAuthYAML]()},
	"flinkBasicYAML":    {"flink.endpoints[].basicAuth", reflect.TypeFor[flinkBasicYAML]()},
	"flinkTLSYAML":      {"flink.endpoints[].tls", reflect.TypeFor[flinkTLSYAML]()},
	"linksSection":      {"links", reflect.TypeFor[linksSection]()},
	"sourceGroupYAML":   {"links.sourceGroups[]", reflect.TypeFor[sourceGroupYAML]()},
}

var yamlTypeRE = regexp.MustCompile(`in type main\.(\w+)`)

// explainYAMLError rewrites a yaml.v3 message to name YAML paths and the
// known keys instead of Go types.
func explainYAMLError(msg string) string {
	msg = yamlTypeRE.ReplaceAllStringFunc(msg, func(m string) string {
		t, ok := yamlPaths[yamlTypeRE.FindStringSubmatch(m)[1]]
		if !ok {
			return m
		}
		var keys []string
		for i := range t.typ.NumField() {
			keys = append(keys, strings.Split(t.typ.Field(i).Tag.Get("yaml"), ",")[0])
		}
		return fmt.Sprintf("in %s (known keys: %s)", t.path, strings.Join(keys, ", "))
	})
	msg = strings.ReplaceAll(msg, "into time.Duration", "into a duration (want e.g. 15s or 1m30s)")
	return strings.TrimPrefix(msg, "yaml: ")
}

// decodeConfigFile decodes data strictly: unknown keys, wrong types and a
// second document are errors, each with its line number.
func decodeConfigFile(name string, data []byte, p *problems) (fileConfig, bool) {
	var fc fileConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(&fc)
	if errors.Is(err, io.EOF) {
		return fileConfig{}, true // empty file: no backends
	}
	if err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			for _, e := range te.Errors {
				p.at(name, "%s", explainYAMLError(e))
			}
		} else {
			p.at(name, "%s", explainYAMLError(err.Error()))
		}
		return fileConfig{}, false
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		p.at(name, "line %d: a second YAML document; put everything in one", line)
		return fileConfig{}, false
	}
	return fc, true
}

// maxConfigFile caps the config file: a few clusters and endpoints take a
// few kilobytes, and a device such as /dev/zero must not be read until
// memory runs out.
const maxConfigFile = 4 << 20

// loadConfigFile reads, decodes and converts the config file; problems are
// recorded in p. Relative file paths inside it are resolved against the
// file's directory.
func loadConfigFile(name string, p *problems) (backends, webSection) {
	data, err := readConfigFile(name)
	if err != nil {
		p.at("--config.file", "%v", err)
		return backends{}, webSection{}
	}
	fc, ok := decodeConfigFile(name, data, p)
	if !ok {
		return backends{}, webSection{}
	}
	return fc.backends(filepath.Dir(name), p), fc.Web
}

// readConfigFile reads at most maxConfigFile bytes of name.
func readConfigFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfigFile {
		return nil, fmt.Errorf("%s is larger than %d MiB: a configuration file takes a few kilobytes; is it the right file?", name, maxConfigFile>>20)
	}
	return data, nil
}

// checkRoutePrefix requires a route prefix to be a clean path: segments of
// letters, digits and "-._~", none of them "." or "..", no empty segment.
// The prefix goes into every link and cookie path, and a browser or proxy
// would resolve "/../x" or "/a//b" to another path than the routes'.
func checkRoutePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	for _, seg := range strings.Split(strings.TrimPrefix(prefix, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." || strings.Trim(seg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~") != "" {
			return errors.New("want a clean path such as /skewscope or /tools/skewscope: segments of letters, digits and - . _ ~, without empty, . or .. segments")
		}
	}
	return nil
}

// checkBrokers reports broker addresses whose port is not a TCP port.
// Empty and missing addresses are left to kafka.Config.Validate.
func checkBrokers(path string, brokers []string, p *problems) {
	field := path + ".brokers"
	if strings.HasPrefix(path, "--") {
		field = path
	}
	for _, b := range brokers {
		b = strings.TrimSpace(b)
		if b == "" {
			continue
		}
		host, port, err := net.SplitHostPort(b)
		switch {
		case err != nil:
			p.at(field, "%q: want host:port, e.g. kafka-0.example:9092: %v", b, err)
		case host == "":
			p.at(field, "%q: the host is empty", b)
		default:
			n, err := strconv.Atoi(port)
			if err != nil {
				p.at(field, "%q: port %q is not a number", b, port)
			} else if n < 1 || n > 65535 {
				p.at(field, "%q: port %d is not in 1..65535", b, n)
			}
		}
	}
}

// ---- Conversion and validation ----

type kafkaEntry struct {
	path string // YAML path or flag, for messages
	cfg  kafka.Config
}

type flinkEntry struct {
	path string
	cfg  flink.Config
}

type linkEntry struct {
	path string
	link SourceGroupLink
}

// backends are the configured clusters, endpoints and links, each with the
// path it came from.
type backends struct {
	kafka []kafkaEntry
	flink []flinkEntry
	links []linkEntry
}

// backends converts the decoded file into collector configs, checking each
// entry on its own; cross-references are checked by [backends.check].
func (fc fileConfig) backends(dir string, p *problems) backends {
	var b backends
	for i, y := range fc.Kafka.Clusters {
		path := fmt.Sprintf("kafka.clusters[%d]", i)
		c := kafka.Config{
			Name:     y.Name,
			Brokers:  y.Brokers,
			ClientID: y.ClientID,
			Topics:   y.Topics,
			TLS: kafka.TLSConfig{
				Enabled:    y.TLS.Enabled,
				CAFile:     resolve(dir, y.TLS.CAFilepath),
				CertFile:   resolve(dir, y.TLS.CertFilepath),
				KeyFile:    resolve(dir, y.TLS.KeyFilepath),
				ServerName: y.TLS.ServerName,
			},
			SASL: kafka.SASLConfig{
				Mechanism:    y.SASL.Mechanism,
				Username:     y.SASL.Username,
				Password:     y.SASL.Password,
				PasswordFile: resolve(dir, y.SASL.PasswordFile),
				Token:        y.SASL.Token,
				TokenFile:    resolve(dir, y.SASL.TokenFile),
				OAuth: kafka.OAuthConfig{
					TokenEndpoint:    y.SASL.OAuth.TokenEndpoint,
					ClientID:         y.SASL.OAuth.ClientID,
					ClientSecret:     y.SASL.OAuth.ClientSecret,
					ClientSecretFile: resolve(dir, y.SASL.OAuth.ClientSecretFile),
					Scope:            y.SASL.OAuth.Scope,
				},
			},
			Groups:         kafka.GroupFilter{Allow: y.Groups.Allow, Deny: y.Groups.Deny},
			PollInterval:   y.PollInterval,
			RequestTimeout: y.RequestTimeout,
		}
		b.kafka = append(b.kafka, kafkaEntry{path, checkKafka(path, c, p)})
	}
	for i, y := range fc.Flink.Endpoints {
		path := fmt.Sprintf("flink.endpoints[%d]", i)
		c := flink.Config{
			Name:                 y.Name,
			URL:                  y.URL,
			Kafka:                y.Kafka,
			Jobs:                 y.Jobs,
			PollInterval:         y.PollInterval,
			RequestTimeout:       y.RequestTimeout,
			MaxInFlight:          y.MaxInFlight,
			MaxRequestsPerSecond: y.MaxRequestsPerSecond,
			IDRefresh:            y.MetricIDRefresh,
			TLS: flink.TLSConfig{
				CAFile:             resolve(dir, y.TLS.CAFilepath),
				CertFile:           resolve(dir, y.TLS.CertFilepath),
				KeyFile:            resolve(dir, y.TLS.KeyFilepath),
				ServerName:         y.TLS.ServerName,
				InsecureSkipVerify: y.TLS.InsecureSkipVerify,
			},
		}
		if a := y.Authorization; a != nil {
			c.BearerToken = a.BearerToken
			c.BearerTokenFile = resolve(dir, a.BearerTokenFile)
			if a.BearerToken == "" && a.BearerTokenFile == "" {
				p.at(path+".authorization", "give bearerToken or bearerTokenFile")
			}
		}
		if ba := y.BasicAuth; ba != nil {
			c.BasicAuth = &flink.BasicAuth{
				Username:     ba.Username,
				Password:     ba.Password,
				PasswordFile: resolve(dir, ba.PasswordFile),
			}
		}
		b.flink = append(b.flink, flinkEntry{path, checkFlink(path, c, p)})
	}
	for i, y := range fc.Links.SourceGroups {
		path := fmt.Sprintf("links.sourceGroups[%d]", i)
		l := SourceGroupLink{Endpoint: y.Endpoint, Job: y.Job, Vertex: y.Vertex, Group: y.Group}
		for _, f := range []struct{ key, v string }{{"endpoint", l.Endpoint}, {"job", l.Job}, {"group", l.Group}} {
			if strings.TrimSpace(f.v) == "" {
				p.at(path+"."+f.key, "must not be empty")
			}
		}
		b.links = append(b.links, linkEntry{path, l})
	}
	return b
}

// resolve makes a relative file path relative to dir (the config file's).
func resolve(dir, path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// addQuick adds the cluster and endpoint of --kafka.brokers and --flink.url.
func (b *backends) addQuick(f flagValues, given map[string]bool, p *problems) {
	if f.kafkaBrokers != "" {
		c := kafka.Config{Name: f.kafkaName, Brokers: splitList(f.kafkaBrokers)}
		b.kafka = append(b.kafka, kafkaEntry{"--kafka.brokers", checkKafka("--kafka.brokers", c, p)})
	} else if given["kafka.name"] {
		p.addf("--kafka.name=%q: needs --kafka.brokers", f.kafkaName)
	}
	if f.flinkURL != "" {
		c := flink.Config{Name: f.flinkName, URL: f.flinkURL}
		b.flink = append(b.flink, flinkEntry{"--flink.url", checkFlink("--flink.url", c, p)})
	} else if given["flink.name"] {
		p.addf("--flink.name=%q: needs --flink.url", f.flinkName)
	}
}

// check reports duplicate names and references to unknown names.
func (b *backends) check(p *problems) {
	kafkaAt := map[string]string{}
	for _, k := range b.kafka {
		if k.cfg.Name != "" && !web.ValidRouteName(k.cfg.Name) {
			// The name is a path segment of /kafka/{cluster}/topics/{topic}.
			p.at(namePath(k.path, "--kafka.name"), "kafka cluster name %q must match %s: it is part of every topic page's URL", k.cfg.Name, web.RouteNamePattern())
			continue
		}
		claimName(kafkaAt, "kafka cluster", k.cfg.Name, namePath(k.path, "--kafka.name"), k.path, p)
	}
	flinkAt := map[string]string{}
	for _, e := range b.flink {
		checkRef(kafkaAt, "kafka cluster", e.cfg.Kafka, e.path+".kafka", p)
		claimName(flinkAt, "flink endpoint", e.cfg.Name, namePath(e.path, "--flink.name"), e.path, p)
	}
	linkAt := map[SourceGroupLink]string{}
	for _, l := range b.links {
		checkRef(flinkAt, "flink endpoint", l.link.Endpoint, l.path+".endpoint", p)
		key := l.link
		key.Group = ""
		if first, ok := linkAt[key]; ok {
			p.at(l.path, "endpoint %q, job %q, vertex %q is already linked by %s", l.link.Endpoint, l.link.Job, l.link.Vertex, first)
			continue
		}
		linkAt[key] = l.path
	}
}

// claimName records that the kind named name is defined at path, or
// reports at namePath that name is already taken. An empty name is left to
// Validate.
func claimName(seen map[string]string, kind, name, namePath, path string, p *problems) {
	if name == "" {
		return
	}
	if first, ok := seen[name]; ok {
		p.at(namePath, "%s name %q is already used by %s", kind, name, first)
		return
	}
	seen[name] = path
}

// checkRef reports at path a reference to a kind not in seen; "" refers to
// nothing.
func checkRef(seen map[string]string, kind, name, path string, p *problems) {
	if _, ok := seen[name]; name != "" && !ok {
		p.at(path, "no %s is named %q (known: %s)", kind, name, known(seen))
	}
}

// describe names the configured backends, for the --sandbox conflict.
func (b *backends) describe() string {
	var parts []string
	for _, k := range b.kafka {
		parts = append(parts, fmt.Sprintf("kafka cluster %q (%s)", k.cfg.Name, k.path))
	}
	for _, e := range b.flink {
		parts = append(parts, fmt.Sprintf("flink endpoint %q (%s)", e.cfg.Name, e.path))
	}
	verb := " is"
	if len(parts) > 1 {
		verb = " are"
	}
	return strings.Join(parts, ", ") + verb
}

func namePath(path, flagName string) string {
	if strings.HasPrefix(path, "--") {
		return flagName
	}
	return path + ".name"
}

func known(m map[string]string) string {
	if len(m) == 0 {
		return "none"
	}
	var names []string
	for n := range m {
		names = append(names, strconv.Quote(n))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// kafkaFields maps field names in kafka.Config.Validate messages to YAML
// keys where they differ.
var kafkaFields = strings.NewReplacer("caFile", "caFilepath", "certFile", "certFilepath", "keyFile", "keyFilepath")

// kafkaText renames Go field names inside kafka.Config.Validate messages.
var kafkaText = strings.NewReplacer("certFile and keyFile", "certFilepath and keyFilepath")

// flinkFields maps field names in flink.Config.Validate messages to YAML
// keys. Longer names come first: the replacer tries them in this order.
var flinkFields = strings.NewReplacer(
	"BasicAuth.PasswordFile", "basicAuth.passwordFile",
	"BasicAuth.Password", "basicAuth.password",
	"BasicAuth.Username", "basicAuth.username",
	"BasicAuth", "basicAuth",
	"BearerTokenFile", "authorization.bearerTokenFile",
	"BearerToken", "authorization.bearerToken",
	"TLS.CAFile", "tls.caFilepath",
	"TLS.CertFile", "tls.certFilepath",
	"TLS.KeyFile", "tls.keyFilepath",
	"Name", "name",
	"URL", "url",
	"Jobs", "jobs",
	"PollInterval", "pollInterval",
	"RequestTimeout", "requestTimeout",
	"MaxInFlight", "maxInFlight",
	"MaxRequestsPerSecond", "maxRequestsPerSecond",
	"IDRefresh", "metricIdRefresh",
)

// validateAt runs a collector's Validate and records each message under
// path: "field: text" becomes "path.field: text" with the field renamed to
// its YAML key and text rewritten by text, if not nil (quick, for a
// flag-made backend, names the flag instead).
// Messages about a path already in skip are dropped: the file check there
// says more.
func validateAt(path string, err error, prefix string, fields, text *strings.Replacer, quick map[string]string, skip problems, p *problems) {
	var msgs []string
	for _, e := range unjoin(err) {
		msg := strings.TrimPrefix(e.Error(), prefix)
		field, rest, ok := strings.Cut(msg, ": ")
		if !ok {
			msgs = append(msgs, path+": "+msg)
			continue
		}
		field = fields.Replace(field)
		if text != nil {
			rest = text.Replace(rest)
		}
		var full string
		switch {
		case quick != nil:
			full = quick[field]
			if full == "" {
				full = path
			}
		case strings.Contains(field, ", "):
			full = path + ": " + field // several fields: "at most one may be set"
		default:
			full = path + "." + field
		}
		if skip.has(full) {
			continue
		}
		msgs = append(msgs, full+": "+rest)
	}
	sort.Strings(msgs)
	*p = append(*p, msgs...)
}

// checkKafka reads the files c names and runs its Validate, recording
// problems under path. It returns c with defaults applied.
func checkKafka(path string, c kafka.Config, p *problems) kafka.Config {
	var fp problems
	checkBrokers(path, c.Brokers, &fp)
	checkTLSFiles(path+".tls", c.TLS.CAFile, c.TLS.CertFile, c.TLS.KeyFile, &fp)
	checkSecretFile(path+".sasl.passwordFile", c.SASL.PasswordFile, &fp)
	checkSecretFile(path+".sasl.tokenFile", c.SASL.TokenFile, &fp)
	checkSecretFile(path+".sasl.oauth.clientSecretFile", c.SASL.OAuth.ClientSecretFile, &fp)
	*p = append(*p, fp...)
	var quick map[string]string
	if strings.HasPrefix(path, "--") {
		quick = map[string]string{"name": "--kafka.name"}
	}
	validateAt(path, c.Validate(), fmt.Sprintf("kafka cluster %q: ", c.Name), kafkaFields, kafkaText, quick, fp, p)
	return c.WithDefaults()
}

// checkFlink reads the files c names and runs its Validate, recording
// problems under path. It returns c with defaults applied.
func checkFlink(path string, c flink.Config, p *problems) flink.Config {
	var fp problems
	var quick map[string]string
	if strings.HasPrefix(path, "--") {
		quick = map[string]string{"name": "--flink.name"}
	}
	if u, err := url.Parse(c.URL); err == nil && u.Scheme == "http" && c.TLS != (flink.TLSConfig{}) && quick == nil {
		fp.at(path+".tls", "given but url %q is not https", u.Redacted())
	}
	checkSecretFile(path+".authorization.bearerTokenFile", c.BearerTokenFile, &fp)
	if ba := c.BasicAuth; ba != nil {
		checkSecretFile(path+".basicAuth.passwordFile", ba.PasswordFile, &fp)
	}
	checkTLSFiles(path+".tls", c.TLS.CAFile, c.TLS.CertFile, c.TLS.KeyFile, &fp)
	*p = append(*p, fp...)
	validateAt(path, c.Validate(), "", flinkFields, nil, quick, fp, p)
	return c.WithDefaults()
}

// checkSecretFile reports a secret file that cannot be read or is empty.
// The content is read only to check it; collectors re-read it on use.
func checkSecretFile(path, name string, p *problems) {
	if name == "" {
		return
	}
	b, err := os.ReadFile(name)
	switch {
	case err != nil:
		p.at(path, "%v", err)
	case strings.TrimSpace(string(b)) == "":
		p.at(path, "%s is empty", name)
	}
}

// checkTLSFiles reports unreadable or unparsable CA, certificate and key
// files. (The collectors' Validate requires certificate and key together.)
func checkTLSFiles(path, ca, cert, key string, p *problems) {
	if ca != "" {
		b, err := os.ReadFile(ca)
		switch {
		case err != nil:
			p.at(path+".caFilepath", "%v", err)
		case !x509.NewCertPool().AppendCertsFromPEM(b):
			p.at(path+".caFilepath", "%s: no PEM certificate found", ca)
		}
	}
	load := cert != "" && key != ""
	for _, f := range []struct{ key, name string }{{"certFilepath", cert}, {"keyFilepath", key}} {
		if f.name == "" {
			continue
		}
		if _, err := os.ReadFile(f.name); err != nil {
			p.at(path+"."+f.key, "%v", err)
			load = false
		}
	}
	if load {
		if _, err := tls.LoadX509KeyPair(cert, key); err != nil {
			p.at(path+".certFilepath", "with keyFilepath: %v", err)
		}
	}
}

func (p problems) has(path string) bool {
	for _, m := range p {
		if strings.HasPrefix(m, path+": ") {
			return true
		}
	}
	return false
}

// unjoin splits an errors.Join error into its parts.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
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
		slog.String("config_file", c.ConfigFile),
		slog.Bool("sandbox", c.Sandbox),
	}
	for i, k := range c.Kafka {
		attrs = append(attrs, slog.Group(fmt.Sprintf("kafka_%d", i),
			slog.String("name", k.Name),
			slog.Any("brokers", k.Brokers),
			slog.String("client_id", k.ClientID),
			slog.Any("topics", k.Topics),
			slog.Duration("poll_interval", k.PollInterval),
			slog.Duration("request_timeout", k.RequestTimeout),
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
