package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/linkout"
	"github.com/skewscope/skewscope/internal/smallfile"
)

// The file's shape. Every struct is named so that yaml's "field x not found
// in type main.y" and "cannot unmarshal ... into main.y" errors can be
// rewritten to name the YAML path (yamlPaths).
type fileConfig struct {
	Kafka kafkaSection `yaml:"kafka"`
	Flink flinkSection `yaml:"flink"`
	Links linksSection `yaml:"links"`
	Web   webSection   `yaml:"web"`
}

// webSection holds the server settings a flag can also set; the flag
// wins.
type webSection struct {
	WSMaxPerAddress       *int     `yaml:"wsMaxPerAddress"`
	WSMaxTopicsPerAddress *int     `yaml:"wsMaxTopicsPerAddress"`
	TrustedProxies        []string `yaml:"trustedProxies"`
	AllowedHosts          []string `yaml:"allowedHosts"`
	// UserHeader and Samples: see samplesconfig.go.
	UserHeader string      `yaml:"userHeader"`
	Samples    samplesYAML `yaml:"samples"`
}

type kafkaSection struct {
	Clusters []kafkaClusterYAML `yaml:"clusters"`
}

type kafkaClusterYAML struct {
	Name           string        `yaml:"name"`
	Brokers        []string      `yaml:"brokers"`
	ClientID       string        `yaml:"clientId"`
	Topics         []string      `yaml:"topics"`
	PollInterval   time.Duration `yaml:"pollInterval"`
	RequestTimeout time.Duration `yaml:"requestTimeout"`
	// LogStartRefresh is kafka.Config.LogStartRefresh.
	LogStartRefresh time.Duration   `yaml:"logStartRefresh"`
	TLS             kafkaTLSYAML    `yaml:"tls"`
	SASL            kafkaSASLYAML   `yaml:"sasl"`
	Groups          kafkaGroupsYAML `yaml:"groups"`
	// UI links the cluster's topics and groups to a Kafka UI.
	UI kafkaUIYAML `yaml:"ui"`
	// SchemaRegistry is kafka.Config.SchemaRegistry: a Confluent-compatible
	// registry's URL, for key samples of avro-confluent tables.
	SchemaRegistry string `yaml:"schemaRegistry"`
}

// kafkaUIYAML are a Kafka UI's URL templates (linkout.NewKafka).
type kafkaUIYAML struct {
	Topic string `yaml:"topic"`
	Group string `yaml:"group"`
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
	MaxJobs              int             `yaml:"maxJobs"`
	Authorization        *flinkAuthYAML  `yaml:"authorization"`
	BasicAuth            *flinkBasicYAML `yaml:"basicAuth"`
	TLS                  flinkTLSYAML    `yaml:"tls"`
	// WebUI links jobs, vertices and subtasks to the Flink Web UI.
	WebUI flinkWebUIYAML `yaml:"webUI"`
}

// flinkWebUIYAML are the Flink Web UI's URL templates (linkout.NewFlink);
// enabled: false turns the links off.
type flinkWebUIYAML struct {
	Enabled *bool  `yaml:"enabled"`
	Base    string `yaml:"base"`
	Job     string `yaml:"job"`
	Vertex  string `yaml:"vertex"`
	Subtask string `yaml:"subtask"`
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
	"samplesYAML":       {"web.samples", reflect.TypeFor[samplesYAML]()},
	"kafkaSection":      {"kafka", reflect.TypeFor[kafkaSection]()},
	"kafkaClusterYAML":  {"kafka.clusters[]", reflect.TypeFor[kafkaClusterYAML]()},
	"kafkaTLSYAML":      {"kafka.clusters[].tls", reflect.TypeFor[kafkaTLSYAML]()},
	"kafkaSASLYAML":     {"kafka.clusters[].sasl", reflect.TypeFor[kafkaSASLYAML]()},
	"kafkaOAuthYAML":    {"kafka.clusters[].sasl.oauth", reflect.TypeFor[kafkaOAuthYAML]()},
	"kafkaGroupsYAML":   {"kafka.clusters[].groups", reflect.TypeFor[kafkaGroupsYAML]()},
	"kafkaUIYAML":       {"kafka.clusters[].ui", reflect.TypeFor[kafkaUIYAML]()},
	"flinkSection":      {"flink", reflect.TypeFor[flinkSection]()},
	"flinkEndpointYAML": {"flink.endpoints[]", reflect.TypeFor[flinkEndpointYAML]()},
	"flinkAuthYAML":     {"flink.endpoints[].authorization", reflect.TypeFor[flinkAuthYAML]()},
	"flinkBasicYAML":    {"flink.endpoints[].basicAuth", reflect.TypeFor[flinkBasicYAML]()},
	"flinkTLSYAML":      {"flink.endpoints[].tls", reflect.TypeFor[flinkTLSYAML]()},
	"flinkWebUIYAML":    {"flink.endpoints[].webUI", reflect.TypeFor[flinkWebUIYAML]()},
	"linksSection":      {"links", reflect.TypeFor[linksSection]()},
	"sourceGroupYAML":   {"links.sourceGroups[]", reflect.TypeFor[sourceGroupYAML]()},
}

// yamlTypeRE finds the Go types yaml.v3 names: where an unknown key was
// found ("in type main.x") and what a value did not fit ("into main.x",
// "into []main.x").
var yamlTypeRE = regexp.MustCompile(`(in type|into) (\[\])?main\.(\w+)`)

// explainYAMLError rewrites a yaml.v3 message to name YAML paths and the
// known keys instead of Go types.
func explainYAMLError(msg string) string {
	msg = yamlTypeRE.ReplaceAllStringFunc(msg, func(m string) string {
		s := yamlTypeRE.FindStringSubmatch(m)
		t, ok := yamlPaths[s[3]]
		if !ok {
			return m
		}
		var keys []string
		for i := range t.typ.NumField() {
			keys = append(keys, strings.Split(t.typ.Field(i).Tag.Get("yaml"), ",")[0])
		}
		switch {
		case s[1] == "in type":
			return fmt.Sprintf("in %s (known keys: %s)", t.path, strings.Join(keys, ", "))
		case s[2] != "":
			return fmt.Sprintf("into %s, a list", strings.TrimSuffix(t.path, "[]"))
		}
		return fmt.Sprintf("into %s, a mapping (known keys: %s)", t.path, strings.Join(keys, ", "))
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
const maxConfigFile = smallfile.ConfigLimit

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

// readConfigFile reads at most maxConfigFile bytes of name, which must be
// a regular file: a named pipe would block start-up until something writes
// to it.
func readConfigFile(name string) ([]byte, error) {
	return smallfile.Read(name, maxConfigFile)
}

// backends converts the decoded file into collector configs, checking each
// entry on its own; cross-references are checked by [backends.check].
func (fc fileConfig) backends(dir string, p *problems) backends {
	var b backends
	for i, y := range fc.Kafka.Clusters {
		pl := place{section: kafkaClusters, index: i}
		c := kafka.Config{
			Name:           y.Name,
			Brokers:        y.Brokers,
			ClientID:       y.ClientID,
			Topics:         y.Topics,
			SchemaRegistry: y.SchemaRegistry,
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
			Groups:          kafka.GroupFilter{Allow: y.Groups.Allow, Deny: y.Groups.Deny},
			PollInterval:    y.PollInterval,
			RequestTimeout:  y.RequestTimeout,
			LogStartRefresh: y.LogStartRefresh,
		}
		b.kafka = append(b.kafka, kafkaEntry{pl, checkKafka(pl, c, p), kafkaUI(pl, y.UI, p)})
	}
	for i, y := range fc.Flink.Endpoints {
		pl := place{section: flinkEndpoints, index: i}
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
			MaxJobs:              y.MaxJobs,
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
				p.in(pl, "authorization", "give bearerToken or bearerTokenFile")
			}
		}
		if ba := y.BasicAuth; ba != nil {
			c.BasicAuth = &flink.BasicAuth{
				Username:     ba.Username,
				Password:     ba.Password,
				PasswordFile: resolve(dir, ba.PasswordFile),
			}
		}
		e := flinkEntry{place: pl, cfg: checkFlink(pl, c, p)}
		w := y.WebUI
		switch templates := (linkout.FlinkTemplates{Base: w.Base, Job: w.Job, Vertex: w.Vertex, Subtask: w.Subtask}); {
		case w.Enabled == nil || *w.Enabled:
			e.ui = flinkUI(pl, c.URL, templates, p)
		case templates != linkout.FlinkTemplates{}:
			p.in(pl, "webUI.enabled", "false, but webUI also gives templates: drop them, or enabled")
		}
		b.flink = append(b.flink, e)
	}
	for i, y := range fc.Links.SourceGroups {
		pl := place{section: sourceGroups, index: i}
		l := SourceGroupLink(y)
		for _, f := range []struct{ key, v string }{{"endpoint", l.Endpoint}, {"job", l.Job}, {"group", l.Group}} {
			if strings.TrimSpace(f.v) == "" {
				p.in(pl, f.key, "must not be empty")
			}
		}
		b.links = append(b.links, linkEntry{pl, l})
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
