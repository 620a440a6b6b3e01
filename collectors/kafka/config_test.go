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
		{"cert without key", func(c *Config) { c.TLS = TLSConfig{Enabled: true, CertFile: "/x"} }, "certFile and keyFile"},
		{"missing CA", func(c *Config) { c.TLS = TLSConfig{Enabled: true, CAFile: "/nonexistent/ca.pem"} }, "tls.caFile"},
		{"files without tls", func(c *Config) { c.TLS = TLSConfig{CAFile: "/x"} }, "tls is not enabled"},
		{"unknown mechanism", func(c *Config) { c.SASL = SASLConfig{Mechanism: "GSSAPI", Username: "u", Password: "p"} }, `unsupported "GSSAPI"`},
		{"no user", func(c *Config) { c.SASL = SASLConfig{Mechanism: SASLPlain, Password: "p"} }, "sasl.username"},
		{"no password", func(c *Config) { c.SASL = SASLConfig{Mechanism: SASLScramSHA512, Username: "u"} }, "password or passwordFile is required"},
		{"both passwords", func(c *Config) {
			c.SASL = SASLConfig{Mechanism: SASLScramSHA256, Username: "u", Password: "p", PasswordFile: "/x"}
		}, "not both"},
		{"credentials without mechanism", func(c *Config) { c.SASL = SASLConfig{Username: "u"} }, "no mechanism"},
	} {
		c := ok.WithDefaults()
		tt.mod(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Validate() = %v, want error containing %q", tt.name, err, tt.want)
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
