package kafka

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	ok := Config{Name: "prod", Brokers: []string{"k1:9092"}}
	if err := ok.WithDefaults().Validate(); err != nil {
		t.Fatalf("Validate(%+v) = %v, want nil", ok, err)
	}
	for _, tt := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"no name", func(c *Config) { c.Name = "" }, "name: must not be empty"},
		{"no brokers", func(c *Config) { c.Brokers = nil }, "brokers: at least one"},
		{"empty topic", func(c *Config) { c.Topics = []string{""} }, "topics: empty topic"},
		{"negative interval", func(c *Config) { c.PollInterval = -1 }, "pollInterval"},
		{"registry not a URL", func(c *Config) { c.SchemaRegistry = "registry:8081" }, "schemaRegistry: \"registry:8081\" is not an http(s) URL"},
		{"registry with credentials", func(c *Config) { c.SchemaRegistry = "https://u:p@registry" }, "the URL holds credentials"},
		{"cert without key", func(c *Config) { c.TLS = TLSConfig{Enabled: true, CertFile: "/x"} }, "tls: certFilepath and keyFilepath must be given together"},
		{"missing CA", func(c *Config) { c.TLS = TLSConfig{Enabled: true, CAFile: "/nonexistent/ca.pem"} }, "tls.caFilepath: stat /nonexistent/ca.pem"},
		{"files without tls", func(c *Config) { c.TLS = TLSConfig{CAFile: "/x"} }, "tls is not enabled"},
		{"unknown mechanism", func(c *Config) { c.SASL = SASLConfig{Mechanism: "GSSAPI", Username: "u", Password: "p"} }, `unsupported "GSSAPI"`},
		{"no user", func(c *Config) { c.SASL = SASLConfig{Mechanism: SASLPlain, Password: "p"} }, "sasl.username"},
		{"no password", func(c *Config) { c.SASL = SASLConfig{Mechanism: SASLScramSHA512, Username: "u"} }, "password or passwordFile is required"},
		{"both passwords", func(c *Config) {
			c.SASL = SASLConfig{Mechanism: SASLScramSHA256, Username: "u", Password: "p", PasswordFile: "/x"}
		}, "not both"},
		{"credentials without mechanism", func(c *Config) { c.SASL = SASLConfig{Username: "u"} }, "no mechanism"},
		{"token without mechanism", func(c *Config) { c.SASL = SASLConfig{Token: "t"} }, "sasl.mechanism: credentials given but no mechanism"},
		{"token with PLAIN", func(c *Config) { c.SASL = SASLConfig{Mechanism: SASLPlain, Username: "u", Password: "p", Token: "t"} }, "sasl.mechanism: token, tokenFile and oauth are for OAUTHBEARER"},
		{"oauthbearer without token", func(c *Config) { c.SASL = SASLConfig{Mechanism: SASLOAuthBearer} }, "sasl.token: OAUTHBEARER needs one of token, tokenFile or oauth"},
		{"oauthbearer two forms", func(c *Config) { c.SASL = SASLConfig{Mechanism: SASLOAuthBearer, Token: "t", TokenFile: os.DevNull} }, "sasl.token: give only one of token, tokenFile or oauth, got token and tokenFile"},
		{"oauthbearer token and oauth", func(c *Config) {
			c.SASL = SASLConfig{Mechanism: SASLOAuthBearer, Token: "t", OAuth: OAuthConfig{TokenEndpoint: "https://idp/token", ClientID: "c", ClientSecret: "s"}}
		}, "got token and oauth"},
		{"oauthbearer with password", func(c *Config) { c.SASL = SASLConfig{Mechanism: SASLOAuthBearer, Token: "t", Password: "p"} }, "sasl.username: username, password and passwordFile are not used by OAUTHBEARER"},
		{"missing token file", func(c *Config) { c.SASL = SASLConfig{Mechanism: SASLOAuthBearer, TokenFile: "/nonexistent/token"} }, "sasl.tokenFile"},
		{"oauth no endpoint", func(c *Config) {
			c.SASL = SASLConfig{Mechanism: SASLOAuthBearer, OAuth: OAuthConfig{ClientID: "c", ClientSecret: "s"}}
		}, "sasl.oauth.tokenEndpoint: required"},
		{"oauth relative endpoint", func(c *Config) {
			c.SASL = SASLConfig{Mechanism: SASLOAuthBearer, OAuth: OAuthConfig{TokenEndpoint: "/token", ClientID: "c", ClientSecret: "s"}}
		}, "sasl.oauth.tokenEndpoint: not an absolute URL"},
		{"oauth plain http", func(c *Config) {
			c.SASL = SASLConfig{Mechanism: SASLOAuthBearer, OAuth: OAuthConfig{TokenEndpoint: "http://idp.example/token", ClientID: "c", ClientSecret: "s"}}
		}, `sasl.oauth.tokenEndpoint: must be https (http only for a loopback host), got scheme "http"`},
		{"oauth no client id", func(c *Config) {
			c.SASL = SASLConfig{Mechanism: SASLOAuthBearer, OAuth: OAuthConfig{TokenEndpoint: "https://idp/token", ClientSecret: "s"}}
		}, "sasl.oauth.clientId: required"},
		{"oauth no secret", func(c *Config) {
			c.SASL = SASLConfig{Mechanism: SASLOAuthBearer, OAuth: OAuthConfig{TokenEndpoint: "https://idp/token", ClientID: "c"}}
		}, "sasl.oauth.clientSecret: clientSecret or clientSecretFile is required"},
		{"oauth both secrets", func(c *Config) {
			c.SASL = SASLConfig{Mechanism: SASLOAuthBearer, OAuth: OAuthConfig{TokenEndpoint: "https://idp/token", ClientID: "c", ClientSecret: "s", ClientSecretFile: os.DevNull}}
		}, "sasl.oauth.clientSecret: give clientSecret or clientSecretFile, not both"},
		{"oauth missing secret file", func(c *Config) {
			c.SASL = SASLConfig{Mechanism: SASLOAuthBearer, OAuth: OAuthConfig{TokenEndpoint: "https://idp/token", ClientID: "c", ClientSecretFile: "/nonexistent/secret"}}
		}, "sasl.oauth.clientSecretFile"},
		{"bad allow pattern", func(c *Config) { c.Groups.Allow = []string{"^ok$", "flink-("} }, `groups.allow[1]: bad pattern "flink-("`},
		{"bad deny pattern", func(c *Config) { c.Groups.Deny = []string{"[z-a]"} }, `groups.deny[0]: bad pattern "[z-a]"`},
	} {
		c := ok.WithDefaults()
		tt.mod(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Validate() = %v, want error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestConfigValidateOAuthBearerForms(t *testing.T) {
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, s := range []SASLConfig{
		{Mechanism: SASLOAuthBearer, Token: "t"},
		{Mechanism: SASLOAuthBearer, TokenFile: file},
		{Mechanism: SASLOAuthBearer, OAuth: OAuthConfig{TokenEndpoint: "https://idp.example/oauth2/token", ClientID: "c", ClientSecret: "s", Scope: "kafka"}},
		{Mechanism: SASLOAuthBearer, OAuth: OAuthConfig{TokenEndpoint: "http://127.0.0.1:8080/token", ClientID: "c", ClientSecretFile: file}},
		{Mechanism: SASLOAuthBearer, OAuth: OAuthConfig{TokenEndpoint: "http://localhost/token", ClientID: "c", ClientSecret: "s"}},
	} {
		c := Config{Name: "prod", Brokers: []string{"k1:9092"}, SASL: s}
		if err := c.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", s, err)
		}
		if m := s.mechanism(); m == nil || m.Name() != "OAUTHBEARER" {
			t.Errorf("mechanism(%+v) = %v, want OAUTHBEARER", s, m)
		}
	}
}

func TestGroupFilterKeep(t *testing.T) {
	for _, tt := range []struct {
		f    GroupFilter
		keep []string
		drop []string
	}{
		{GroupFilter{}, []string{"a", "flink-x", ""}, nil},
		{GroupFilter{Allow: []string{"^flink-"}}, []string{"flink-orders"}, []string{"orders-flink-", "console-consumer-1"}},
		{GroupFilter{Deny: []string{"^(console-consumer-|python-kafka-consumer-|quick-).*$"}},
			[]string{"flink-orders", "my-console-consumer-1"}, []string{"console-consumer-42", "quick-start"}},
		{GroupFilter{Allow: []string{"^flink-", "^etl$"}, Deny: []string{"-test$"}},
			[]string{"flink-orders", "etl"}, []string{"flink-orders-test", "etl2", "other"}},
	} {
		m, err := tt.f.compile()
		if err != nil {
			t.Fatalf("compile(%+v) = %v", tt.f, err)
		}
		for _, g := range tt.keep {
			if !m.keep(g) {
				t.Errorf("%+v keep(%q) = false, want true", tt.f, g)
			}
		}
		for _, g := range tt.drop {
			if m.keep(g) {
				t.Errorf("%+v keep(%q) = true, want false", tt.f, g)
			}
		}
	}
}

func TestPasswordFileReadOnUse(t *testing.T) {
	f := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(f, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := Config{Name: "c", Brokers: []string{"k:9092"}, SASL: SASLConfig{Mechanism: SASLScramSHA256, Username: "u", PasswordFile: f}}
	opts, err := c.ClientOptions()
	if err != nil || len(opts) != 3 {
		t.Fatalf("ClientOptions() = %d opts, %v; want 3, nil", len(opts), err)
	}
	if m := c.SASL.mechanism(); m.Name() != "SCRAM-SHA-256" {
		t.Errorf("mechanism().Name() = %q, want SCRAM-SHA-256", m.Name())
	}
	for _, want := range []string{"one", "two"} {
		if err := os.WriteFile(f, []byte(want+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := c.SASL.password()
		if got != want || err != nil {
			t.Errorf("password() = %q, %v, want %q", got, err, want)
		}
	}
}
