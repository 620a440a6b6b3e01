package flink

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/skewscope/skewscope/collectors"
	"github.com/skewscope/skewscope/internal/smallfile"
)

// Config describes one Flink REST endpoint to watch (one JobManager, or one
// per job where each job has its own).
type Config struct {
	// Name identifies the endpoint in snapshots, pages and metrics.
	Name string
	// URL is the REST base URL; it may carry a path prefix
	// (https://host/flink/my-job/).
	URL string
	// Kafka names the Kafka cluster (a kafka Config.Name) whose topics this
	// endpoint's jobs read; empty means: the only configured cluster, or the
	// one whose topics match the metric ids.
	Kafka string

	// Exactly one of BearerToken, BearerTokenFile and BasicAuth may be set.
	// File variants are re-read on every request, so rotated secrets apply.
	BearerToken     string
	BearerTokenFile string
	BasicAuth       *BasicAuth

	TLS TLSConfig

	// Jobs restricts the watched jobs to these names or ids; empty means all.
	Jobs []string

	// PollInterval is the pause between the end of one poll and the start
	// of the next; 0 means MetricFreshness (10 s, Flink's
	// metrics.fetcher.update-interval), the useful minimum: Flink refreshes
	// metric values no faster. Validate rejects less than MinPollInterval.
	PollInterval time.Duration
	// RequestTimeout bounds one request, and one whole poll beyond the
	// time its requests take at MaxRequestsPerSecond; default 10 s.
	RequestTimeout time.Duration
	// IDRefresh is how long a source vertex's metric-id list is used
	// while its parallelism and subtask attempts stay the same; a new
	// partition that the source discovers shows within it. 0 means
	// DefaultIDRefresh (5 min), or the poll interval when that is longer;
	// Validate rejects less than the poll interval.
	IDRefresh time.Duration

	// MaxInFlight bounds the requests in flight to the endpoint; 0 means
	// DefaultMaxInFlight (4).
	MaxInFlight int
	// MaxRequestsPerSecond paces the requests to the endpoint; 0 means
	// DefaultMaxRequestsPerSecond (200). A poll of many jobs takes at
	// least its requests divided by this, which the collector adds to
	// RequestTimeout from the second poll on.
	MaxRequestsPerSecond float64

	// MaxJobs bounds the jobs a snapshot holds: every job that is not
	// finished (FINISHED, CANCELED, FAILED) is kept, and finished ones,
	// the most recently ended first, while the total stays within it; the
	// rest are counted (Snapshot.DroppedJobs). A session cluster keeps
	// its finished jobs listed until its job store expires them. 0 means
	// DefaultMaxJobs (500).
	MaxJobs int
}

// BasicAuth is HTTP basic authentication; the password is inline or in a file.
type BasicAuth struct {
	Username     string
	Password     string
	PasswordFile string
}

// TLSConfig configures HTTPS to the endpoint. With no CA file the system roots
// are used; CertFile and KeyFile (both or neither) present a client certificate.
type TLSConfig struct {
	CAFile             string
	CertFile           string
	KeyFile            string
	ServerName         string
	InsecureSkipVerify bool
}

const (
	// DefaultRequestTimeout bounds one poll when Config.RequestTimeout is 0.
	DefaultRequestTimeout = 10 * time.Second
	// MinPollInterval is the smallest PollInterval Validate accepts.
	MinPollInterval = time.Second
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// WithDefaults returns c with PollInterval (MetricFreshness) and
// RequestTimeout (DefaultRequestTimeout) filled in where they are 0.
func (c Config) WithDefaults() Config {
	if c.PollInterval == 0 {
		c.PollInterval = MetricFreshness
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.IDRefresh == 0 {
		c.IDRefresh = max(DefaultIDRefresh, c.PollInterval)
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.MaxRequestsPerSecond == 0 {
		c.MaxRequestsPerSecond = DefaultMaxRequestsPerSecond
	}
	if c.MaxJobs == 0 {
		c.MaxJobs = DefaultMaxJobs
	}
	return c
}

// Validate reports every problem of c as [collectors.FieldErrors], each at
// its key in the configuration file (url, basicAuth.username). Zero
// durations are valid (WithDefaults fills them in). Files named by the
// config must exist and be readable now.
func (c Config) Validate() error {
	var errs collectors.FieldErrors

	switch {
	case c.Name == "":
		errs.Add("name", "required")
	case !nameRE.MatchString(c.Name):
		errs.Add("name", "%q must match %s", c.Name, nameRE)
	}

	if c.URL == "" {
		errs.Add("url", "required")
	} else if u, err := url.Parse(c.URL); err != nil {
		errs.Add("url", "not a URL") // the parse error may quote credentials
	} else {
		switch {
		case u.User != nil:
			errs.Add("url", "must not contain user info; use basicAuth")
		case u.Scheme != "http" && u.Scheme != "https":
			errs.Add("url", "%q: scheme must be http or https", u.Redacted())
		case u.Host == "":
			errs.Add("url", "%q: must be absolute (scheme://host[:port]/…)", u.Redacted())
		}
	}

	n := 0
	for _, set := range []bool{c.BearerToken != "", c.BearerTokenFile != "", c.BasicAuth != nil} {
		if set {
			n++
		}
	}
	if n > 1 {
		errs.Add("", "authorization.bearerToken, authorization.bearerTokenFile, basicAuth: at most one may be set")
	}
	checkFile := func(path, name string) {
		if name == "" {
			return
		}
		// Only a stat: opening a named pipe would wait for a writer.
		if err := smallfile.Check(name); err != nil {
			errs.Add(path, "%v", err)
		}
	}
	checkFile("authorization.bearerTokenFile", c.BearerTokenFile)
	if b := c.BasicAuth; b != nil {
		if b.Username == "" {
			errs.Add("basicAuth.username", "required")
		}
		if b.Password != "" && b.PasswordFile != "" {
			errs.Add("", "basicAuth.password, basicAuth.passwordFile: at most one may be set")
		}
		checkFile("basicAuth.passwordFile", b.PasswordFile)
	}

	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		errs.Add("", "tls.certFilepath, tls.keyFilepath: set both or neither")
	}
	checkFile("tls.caFilepath", c.TLS.CAFile)
	checkFile("tls.certFilepath", c.TLS.CertFile)
	checkFile("tls.keyFilepath", c.TLS.KeyFile)

	for i, j := range c.Jobs {
		if strings.TrimSpace(j) == "" {
			errs.Add(fmt.Sprintf("jobs[%d]", i), "empty")
		}
	}
	if c.PollInterval < 0 || (c.PollInterval > 0 && c.PollInterval < MinPollInterval) {
		errs.Add("pollInterval", "%v is below the minimum of %v", c.PollInterval, MinPollInterval)
	}
	if poll := c.WithDefaults().PollInterval; c.IDRefresh < 0 || (c.IDRefresh > 0 && c.IDRefresh < poll) {
		errs.Add("metricIdRefresh", "%v is below the poll interval of %v", c.IDRefresh, poll)
	}
	if c.MaxInFlight < 0 || c.MaxInFlight > 64 {
		errs.Add("maxInFlight", "%d is outside 1..64 (0 means %d)", c.MaxInFlight, DefaultMaxInFlight)
	}
	if r := c.MaxRequestsPerSecond; r < 0 || r > 10000 || r != r {
		errs.Add("maxRequestsPerSecond", "%v is outside (0, 10000] (0 means %d)", r, DefaultMaxRequestsPerSecond)
	}
	if c.MaxJobs < 0 || c.MaxJobs > MaxMaxJobs {
		errs.Add("maxJobs", "%d is outside 1..%d (0 means %d)", c.MaxJobs, MaxMaxJobs, DefaultMaxJobs)
	}
	if c.RequestTimeout < 0 {
		errs.Add("requestTimeout", "%v is negative", c.RequestTimeout)
	}
	return errs.Err()
}

// String describes c without secrets: inline secrets are shown as
// [redacted], files by path.
func (c Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "flink endpoint %q url=%s", c.Name, redactURL(c.URL))
	if a := c.authDescription(); a != "" {
		b.WriteString(" auth=" + a)
	}
	if c.TLS.CAFile != "" {
		fmt.Fprintf(&b, " ca_file=%s", c.TLS.CAFile)
	}
	if c.TLS.CertFile != "" {
		fmt.Fprintf(&b, " cert_file=%s key_file=%s", c.TLS.CertFile, c.TLS.KeyFile)
	}
	if c.TLS.ServerName != "" {
		fmt.Fprintf(&b, " server_name=%s", c.TLS.ServerName)
	}
	if c.TLS.InsecureSkipVerify {
		b.WriteString(" insecure_skip_verify=true")
	}
	if len(c.Jobs) > 0 {
		fmt.Fprintf(&b, " jobs=%s", strings.Join(c.Jobs, ","))
	}
	fmt.Fprintf(&b, " poll_interval=%v request_timeout=%v id_refresh=%v max_in_flight=%d max_requests_per_second=%v max_jobs=%d", c.PollInterval, c.RequestTimeout, c.IDRefresh, c.MaxInFlight, c.MaxRequestsPerSecond, c.MaxJobs)
	return b.String()
}

// GoString is String, so that %#v does not print secrets either.
func (c Config) GoString() string { return c.String() }

// LogValue implements slog.LogValuer without secrets.
func (c Config) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("name", c.Name),
		slog.String("url", redactURL(c.URL)),
	}
	if a := c.authDescription(); a != "" {
		attrs = append(attrs, slog.String("auth", a))
	}
	if c.TLS.CAFile != "" {
		attrs = append(attrs, slog.String("ca_file", c.TLS.CAFile))
	}
	if c.TLS.InsecureSkipVerify {
		attrs = append(attrs, slog.Bool("insecure_skip_verify", true))
	}
	if len(c.Jobs) > 0 {
		attrs = append(attrs, slog.Any("jobs", c.Jobs))
	}
	attrs = append(attrs, slog.Duration("poll_interval", c.PollInterval), slog.Duration("request_timeout", c.RequestTimeout), slog.Duration("id_refresh", c.IDRefresh),
		slog.Int("max_in_flight", c.MaxInFlight), slog.Float64("max_requests_per_second", c.MaxRequestsPerSecond), slog.Int("max_jobs", c.MaxJobs))
	return slog.GroupValue(attrs...)
}

// String describes b without the password.
func (b BasicAuth) String() string {
	switch {
	case b.PasswordFile != "":
		return fmt.Sprintf("basic user=%s password_file=%s", b.Username, b.PasswordFile)
	case b.Password != "":
		return fmt.Sprintf("basic user=%s password=[redacted]", b.Username)
	}
	return fmt.Sprintf("basic user=%s", b.Username)
}

// GoString is String, so that %#v does not print the password.
func (b BasicAuth) GoString() string { return b.String() }

func (c Config) authDescription() string {
	switch {
	case c.BearerToken != "":
		return "bearer token=[redacted]"
	case c.BearerTokenFile != "":
		return "bearer token_file=" + c.BearerTokenFile
	case c.BasicAuth != nil:
		return c.BasicAuth.String()
	}
	return ""
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "[unparsable]"
	}
	return u.Redacted()
}

// readSecretFile returns the file's content without surrounding white
// space (a trailing newline is usual in mounted secrets).
func readSecretFile(path string) (string, error) {
	b, err := smallfile.Read(path, smallfile.SecretLimit)
	if err != nil {
		return "", err // names the path, not the content
	}
	return strings.TrimSpace(string(b)), nil
}

// tlsConfig builds the TLS settings; nil when c.TLS is all defaults. The
// client certificate is loaded on every handshake, so renewed files apply.
func (c Config) tlsConfig() (*tls.Config, error) {
	t := c.TLS
	if t == (TLSConfig{}) {
		return nil, nil
	}
	tc := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify, //nolint:gosec // explicit opt-in
	}
	if t.CAFile != "" {
		pem, err := smallfile.Read(t.CAFile, smallfile.SecretLimit)
		if err != nil {
			return nil, fmt.Errorf("tls.caFilepath: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls.caFilepath: %s: no PEM certificate found", t.CAFile)
		}
		tc.RootCAs = pool
	}
	if t.CertFile != "" {
		if _, err := smallfile.X509KeyPair(t.CertFile, t.KeyFile); err != nil {
			return nil, fmt.Errorf("tls.certFilepath: with keyFilepath: %w", err)
		}
		certFile, keyFile := t.CertFile, t.KeyFile
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, err := smallfile.X509KeyPair(certFile, keyFile)
			if err != nil {
				return nil, fmt.Errorf("client certificate: %w", err)
			}
			return &cert, nil
		}
	}
	return tc, nil
}

// NewClient builds the Client for c (after WithDefaults): TLS from the
// files, the http.Client timeout from RequestTimeout, and the credentials,
// file variants re-read on every request. Extra options apply last.
func (c Config) NewClient(opts ...Option) (*Client, error) {
	c = c.WithDefaults()
	tc, err := c.tlsConfig()
	if err != nil {
		return nil, fmt.Errorf("flink endpoint %q: %w", c.Name, err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	tr.MaxConnsPerHost = c.MaxInFlight
	tr.MaxIdleConnsPerHost = c.MaxInFlight
	base := []Option{WithHTTPClient(&http.Client{Transport: tr, Timeout: c.RequestTimeout})}
	switch {
	case c.BearerToken != "":
		base = append(base, WithBearerToken(c.BearerToken))
	case c.BearerTokenFile != "":
		path := c.BearerTokenFile
		base = append(base, WithBearerTokenFunc(func() (string, error) { return readSecretFile(path) }))
	case c.BasicAuth != nil && c.BasicAuth.PasswordFile != "":
		path := c.BasicAuth.PasswordFile
		base = append(base, WithBasicAuthFunc(c.BasicAuth.Username, func() (string, error) { return readSecretFile(path) }))
	case c.BasicAuth != nil:
		base = append(base, WithBasicAuth(c.BasicAuth.Username, c.BasicAuth.Password))
	}
	cl, err := NewClient(c.URL, append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("flink endpoint %q: %w", c.Name, err)
	}
	return cl, nil
}
