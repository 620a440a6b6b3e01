package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/skewscope/skewscope/collectors"
	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/internal/smallfile"
)

// Defaults applied by [Config.WithDefaults].
const (
	DefaultPollInterval   = 5 * time.Second
	DefaultRequestTimeout = 10 * time.Second
	DefaultClientID       = "skewscope"
	// DefaultTimeTableSize is the number of (time, end offset) samples kept
	// per partition for the lag-in-seconds estimate (see [TimeTable]).
	DefaultTimeTableSize = 60
)

// SASL mechanisms understood by [Config].
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
	SASLOAuthBearer = "OAUTHBEARER"
)

// Config describes one Kafka cluster to watch.
type Config struct {
	Name     string   // Name identifies the cluster in snapshots, pages and metrics.
	Brokers  []string // Brokers are the seed brokers, host:port.
	ClientID string   // ClientID is sent with every request; default "skewscope".

	TLS  TLSConfig
	SASL SASLConfig

	// Topics are the watched topics. Empty means every non-internal topic.
	Topics []string
	// Groups filters the consumer groups by name.
	Groups GroupFilter

	PollInterval   time.Duration // PollInterval between polls; default 5 s.
	RequestTimeout time.Duration // RequestTimeout bounds one whole poll; default 10 s.
	TimeTableSize  int           // TimeTableSize is samples per partition; default 60.
	// LogStartRefresh is how often the log start offsets are re-read, one
	// ListOffsets per partition leader; default a minute, with the
	// metadata. A reader behind the log start (records deleted before it
	// read them) is seen only while a poll's log starts are newer than its
	// Kafka client's skip to the log start: on a cluster where that
	// matters, re-read them as often as the end offsets (PollInterval).
	LogStartRefresh time.Duration
	// SchemaRegistry is the URL of the cluster's Confluent-compatible
	// schema registry, from which key samples of avro-confluent tables
	// read each record's writer schema by its id (GET /schemas/ids/{id});
	// "" for none.
	SchemaRegistry string
}

// TLSConfig enables TLS. With no CA file the system roots are used; CertFile
// and KeyFile (both or neither) present a client certificate.
type TLSConfig struct {
	Enabled    bool
	CAFile     string
	CertFile   string
	KeyFile    string
	ServerName string // ServerName overrides the name checked in the broker certificate.
}

// GroupFilter selects consumer groups by name with Go regular expressions
// (RE2 syntax), matched anywhere in the name unless anchored with ^ and $.
// A group is kept when Allow is empty or one Allow pattern matches, and no
// Deny pattern matches. Filtered-out groups are not fetched at all.
type GroupFilter struct {
	Allow []string // Allow patterns; empty allows every group.
	Deny  []string // Deny patterns; they win over Allow.
}

// SASLConfig enables SASL authentication.
//
// PLAIN and SCRAM take Username and either Password or PasswordFile; the
// file is read each time the client authenticates, so a rotated secret is
// picked up on the next connection.
//
// OAUTHBEARER takes exactly one token source: Token (a static token),
// TokenFile (read on every authentication, for tokens written by a sidecar),
// or OAuth (a client-credentials grant against a token endpoint, the token
// cached until shortly before it expires).
type SASLConfig struct {
	Mechanism    string // "", PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER.
	Username     string // Username for PLAIN and SCRAM.
	Password     string // Password for PLAIN and SCRAM; exclusive with PasswordFile.
	PasswordFile string // PasswordFile holds the PLAIN or SCRAM password.

	Token     string      // Token is a static OAUTHBEARER token.
	TokenFile string      // TokenFile holds the OAUTHBEARER token.
	OAuth     OAuthConfig // OAuth fetches OAUTHBEARER tokens from a token endpoint.
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.ClientID == "" {
		c.ClientID = DefaultClientID
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.TimeTableSize == 0 {
		c.TimeTableSize = DefaultTimeTableSize
	}
	if c.LogStartRefresh == 0 {
		c.LogStartRefresh = metadataRefresh
	}
	return c
}

// Validate reports every problem with c as [collectors.FieldErrors], each
// at its key in the configuration file (tls.caFilepath, sasl.mechanism).
// Files are checked for presence, not parsed.
func (c Config) Validate() error {
	var errs collectors.FieldErrors
	if strings.TrimSpace(c.Name) == "" {
		errs.Add("name", "must not be empty")
	}
	if len(c.Brokers) == 0 {
		errs.Add("brokers", "at least one broker (host:port) is required")
	}
	for _, b := range c.Brokers {
		if strings.TrimSpace(b) == "" {
			errs.Add("brokers", "empty broker address")
		}
	}
	for _, t := range c.Topics {
		if strings.TrimSpace(t) == "" {
			errs.Add("topics", "empty topic name")
		}
	}
	if c.PollInterval < 0 {
		errs.Add("pollInterval", "must be positive, got %v", c.PollInterval)
	}
	if c.RequestTimeout < 0 {
		errs.Add("requestTimeout", "must be positive, got %v", c.RequestTimeout)
	}
	if c.LogStartRefresh < 0 {
		errs.Add("logStartRefresh", "must be positive, got %v", c.LogStartRefresh)
	}
	if r := c.SchemaRegistry; r != "" {
		u, err := url.Parse(r)
		switch {
		case err == nil && u.User != nil:
			// Not repeated: the message would carry the credentials.
			errs.Add("schemaRegistry", "the URL holds credentials, which do not belong in it")
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			errs.Add("schemaRegistry", "%s is not an http(s) URL of a schema registry", quote.Clip(r))
		}
	}
	if c.TimeTableSize < 0 || c.TimeTableSize == 1 {
		// Not a key of the file: the dashboard keeps the default.
		errs.Add("timeTableSize", "must be at least 2, got %d", c.TimeTableSize)
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		errs.Add("tls", "certFilepath and keyFilepath must be given together")
	}
	if !c.TLS.Enabled && (c.TLS.CAFile != "" || c.TLS.CertFile != "" || c.TLS.KeyFile != "") {
		errs.Add("tls", "files given but tls is not enabled")
	}
	fileExists(&errs, "tls.caFilepath", c.TLS.CAFile)
	fileExists(&errs, "tls.certFilepath", c.TLS.CertFile)
	fileExists(&errs, "tls.keyFilepath", c.TLS.KeyFile)
	for i, p := range c.Groups.Allow {
		if _, err := regexp.Compile(p); err != nil {
			errs.Add(fmt.Sprintf("groups.allow[%d]", i), "bad pattern %q: %v", p, err)
		}
	}
	for i, p := range c.Groups.Deny {
		if _, err := regexp.Compile(p); err != nil {
			errs.Add(fmt.Sprintf("groups.deny[%d]", i), "bad pattern %q: %v", p, err)
		}
	}
	c.SASL.validate(&errs)
	return errs.Err()
}

// fileExists records a problem at path when the file name, if given, is
// missing or not a regular file (it is read on use, with smallfile.Read).
func fileExists(errs *collectors.FieldErrors, path, name string) {
	if name == "" {
		return
	}
	if err := smallfile.Check(name); err != nil {
		errs.Add(path, "%v", err)
	}
}

func (s SASLConfig) validate(errs *collectors.FieldErrors) {
	hasPassword := s.Username != "" || s.Password != "" || s.PasswordFile != ""
	hasToken := s.Token != "" || s.TokenFile != "" || !s.OAuth.isZero()
	switch s.Mechanism {
	case "":
		if hasPassword || hasToken {
			errs.Add("sasl.mechanism", "credentials given but no mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)")
		}
	case SASLPlain, SASLScramSHA256, SASLScramSHA512:
		if hasToken {
			errs.Add("sasl.mechanism", "token, tokenFile and oauth are for OAUTHBEARER, not %s", s.Mechanism)
		}
		if s.Username == "" {
			errs.Add("sasl.username", "required for %s", s.Mechanism)
		}
		switch {
		case s.Password != "" && s.PasswordFile != "":
			errs.Add("sasl.password", "give password or passwordFile, not both")
		case s.Password == "" && s.PasswordFile == "":
			errs.Add("sasl.password", "password or passwordFile is required for %s", s.Mechanism)
		default:
			fileExists(errs, "sasl.passwordFile", s.PasswordFile)
		}
	case SASLOAuthBearer:
		if hasPassword {
			errs.Add("sasl.username", "username, password and passwordFile are not used by OAUTHBEARER")
		}
		var forms []string
		if s.Token != "" {
			forms = append(forms, "token")
		}
		if s.TokenFile != "" {
			forms = append(forms, "tokenFile")
			fileExists(errs, "sasl.tokenFile", s.TokenFile)
		}
		if !s.OAuth.isZero() {
			forms = append(forms, "oauth")
			s.OAuth.validate(errs)
		}
		switch len(forms) {
		case 0:
			errs.Add("sasl.token", "OAUTHBEARER needs one of token, tokenFile or oauth")
		case 1:
		default:
			errs.Add("sasl.token", "give only one of token, tokenFile or oauth, got %s", strings.Join(forms, " and "))
		}
	default:
		errs.Add("sasl.mechanism", "unsupported %q (want PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER)", s.Mechanism)
	}
}

func (o OAuthConfig) validate(errs *collectors.FieldErrors) {
	if o.TokenEndpoint == "" {
		errs.Add("sasl.oauth.tokenEndpoint", "required")
	} else if u, err := url.Parse(o.TokenEndpoint); err != nil || u.Host == "" {
		errs.Add("sasl.oauth.tokenEndpoint", "not an absolute URL")
	} else if u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname())) {
		errs.Add("sasl.oauth.tokenEndpoint", "must be https (http only for a loopback host), got scheme %q", u.Scheme)
	}
	if o.ClientID == "" {
		errs.Add("sasl.oauth.clientId", "required")
	}
	switch {
	case o.ClientSecret != "" && o.ClientSecretFile != "":
		errs.Add("sasl.oauth.clientSecret", "give clientSecret or clientSecretFile, not both")
	case o.ClientSecret == "" && o.ClientSecretFile == "":
		errs.Add("sasl.oauth.clientSecret", "clientSecret or clientSecretFile is required")
	default:
		fileExists(errs, "sasl.oauth.clientSecretFile", o.ClientSecretFile)
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// compile returns the compiled filter; Validate has checked the patterns.
func (f GroupFilter) compile() (groupMatcher, error) {
	var m groupMatcher
	for _, p := range f.Allow {
		re, err := regexp.Compile(p)
		if err != nil {
			return m, err
		}
		m.allow = append(m.allow, re)
	}
	for _, p := range f.Deny {
		re, err := regexp.Compile(p)
		if err != nil {
			return m, err
		}
		m.deny = append(m.deny, re)
	}
	return m, nil
}

type groupMatcher struct {
	allow, deny []*regexp.Regexp
}

// keep reports whether the group passes the filter.
func (m groupMatcher) keep(group string) bool {
	for _, re := range m.deny {
		if re.MatchString(group) {
			return false
		}
	}
	if len(m.allow) == 0 {
		return true
	}
	for _, re := range m.allow {
		if re.MatchString(group) {
			return true
		}
	}
	return false
}

// ClientOptions returns the kgo options for c: seed brokers, client id,
// TLS and SASL. It validates c and loads the TLS files.
func (c Config) ClientOptions() ([]kgo.Opt, error) {
	c = c.WithDefaults()
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("kafka cluster %q: %w", c.Name, err)
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Brokers...),
		kgo.ClientID(c.ClientID),
	}
	if c.TLS.Enabled {
		tc, err := c.TLS.load()
		if err != nil {
			return nil, fmt.Errorf("kafka cluster %q: %w", c.Name, err)
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if m := c.SASL.mechanism(); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

func (t TLSConfig) load() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if t.CAFile != "" {
		pem, err := smallfile.Read(t.CAFile, smallfile.SecretLimit)
		if err != nil {
			return nil, fmt.Errorf("tls.caFilepath: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls.caFilepath: %s: no PEM certificates found", t.CAFile)
		}
		tc.RootCAs = pool
	}
	if t.CertFile != "" {
		cert, err := smallfile.X509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("tls.certFilepath: with keyFilepath: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// password returns the inline password or the current content of
// PasswordFile, trailing newline removed.
func (s SASLConfig) password() (string, error) {
	if s.PasswordFile == "" {
		return s.Password, nil
	}
	b, err := smallfile.Read(s.PasswordFile, smallfile.SecretLimit)
	if err != nil {
		return "", fmt.Errorf("sasl.passwordFile: %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

func (s SASLConfig) mechanism() sasl.Mechanism {
	switch s.Mechanism {
	case SASLPlain:
		return plain.Plain(func(context.Context) (plain.Auth, error) {
			p, err := s.password()
			return plain.Auth{User: s.Username, Pass: p}, err
		})
	case SASLScramSHA256, SASLScramSHA512:
		fn := func(context.Context) (scram.Auth, error) {
			p, err := s.password()
			return scram.Auth{User: s.Username, Pass: p}, err
		}
		if s.Mechanism == SASLScramSHA256 {
			return scram.Sha256(fn)
		}
		return scram.Sha512(fn)
	case SASLOAuthBearer:
		switch {
		case s.Token != "":
			return oauth.Auth{Token: s.Token}.AsMechanism()
		case s.TokenFile != "":
			return oauth.Oauth(func(context.Context) (oauth.Auth, error) {
				tok, err := readToken(s.TokenFile)
				return oauth.Auth{Token: tok}, err
			})
		default:
			ts := newTokenSource(s.OAuth)
			return oauth.Oauth(func(ctx context.Context) (oauth.Auth, error) {
				tok, err := ts.Token(ctx)
				return oauth.Auth{Token: tok}, err
			})
		}
	}
	return nil
}
