package flink

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skewscope/skewscope/internal/smallfile/smallfiletest"
)

// TestSecretFilesRefused: every file the Flink client reads, at start and
// on use, is refused when it is not a small regular file, with the key
// named.
func TestSecretFilesRefused(t *testing.T) {
	for _, bf := range smallfiletest.BadFiles(t) {
		path, want := bf.Path, bf.Want
		reads := map[string]func() error{
			"authorization.bearerTokenFile": func() error {
				_, err := readSecretFile(path)
				if err != nil {
					err = fmt.Errorf("authorization.bearerTokenFile: %w", err)
				}
				return err
			},
			"tls.caFilepath": func() error {
				_, err := Config{Name: "f", URL: "https://f/", TLS: TLSConfig{CAFile: path}}.NewClient()
				return err
			},
			"tls.certFilepath": func() error {
				_, err := Config{Name: "f", URL: "https://f/", TLS: TLSConfig{CertFile: path, KeyFile: path}}.NewClient()
				return err
			},
		}
		for key, read := range reads {
			err := smallfiletest.Within(t, read)
			if err == nil || !strings.Contains(err.Error(), key+": ") || !strings.Contains(err.Error(), want) {
				t.Errorf("%s = %s: error %v, want one naming %s and containing %q", key, path, err, key, want)
			}
		}
		if bf.Regular {
			continue // a stat accepts it; its size is checked when read
		}
		c := Config{Name: "f", URL: "https://f/", BasicAuth: &BasicAuth{Username: "u", PasswordFile: path}, TLS: TLSConfig{CAFile: path}}
		err := smallfiletest.Within(t, c.Validate)
		for _, key := range []string{"basicAuth.passwordFile", "tls.caFilepath"} {
			if err == nil || !strings.Contains(err.Error(), key+": "+want) {
				t.Errorf("Validate() with %s %s = %v, want %q", key, path, err, key+": "+want)
			}
		}
	}
}
