package kafka

import (
	"context"
	"strings"
	"testing"

	"github.com/skewscope/skewscope/internal/smallfile/smallfiletest"
)

// TestSecretFilesRefused: every file the Kafka collector reads on use is
// refused when it is not a small regular file, with the key named.
func TestSecretFilesRefused(t *testing.T) {
	for _, bf := range smallfiletest.BadFiles(t) {
		path, want := bf.Path, bf.Want
		reads := map[string]func() error{
			"sasl.passwordFile": func() error {
				_, err := SASLConfig{Mechanism: SASLPlain, Username: "u", PasswordFile: path}.password()
				return err
			},
			"sasl.tokenFile": func() error { _, err := readToken(path); return err },
			"sasl.oauth.clientSecretFile": func() error {
				// The secret is read before the (unreachable) endpoint is asked.
				ts := newTokenSource(OAuthConfig{TokenEndpoint: "http://127.0.0.1:1/token", ClientID: "c", ClientSecretFile: path})
				_, err := ts.Token(context.Background())
				return err
			},
			"tls.caFilepath": func() error { _, err := TLSConfig{Enabled: true, CAFile: path}.load(); return err },
			"tls.certFilepath": func() error {
				_, err := TLSConfig{Enabled: true, CertFile: path, KeyFile: path}.load()
				return err
			},
		}
		for key, read := range reads {
			err := smallfiletest.Within(t, read)
			if err == nil || !strings.Contains(err.Error(), key+": ") || !strings.Contains(err.Error(), want) {
				t.Errorf("%s = %s: error %v, want one naming %s and containing %q", key, path, err, key, want)
			}
		}
		c := Config{Name: "c", Brokers: []string{"k:9092"}, TLS: TLSConfig{Enabled: true, CAFile: path}}
		if err := c.Validate(); !bf.Regular && (err == nil || !strings.Contains(err.Error(), "tls.caFilepath: "+want)) {
			t.Errorf("Validate() with tls.caFilepath %s = %v, want %q", path, err, want)
		}
	}
}
