package main

import (
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/web"
)

// Key samples read record keys (customer ids, e-mail addresses), so who may
// take them, of which topics, and whether their keys are shown in clear are
// settings: web.samples in the file, --samples.* flags, and the header in
// which a trusted proxy names the user (--web.user-header).

// samplesYAML is web.samples in the config file.
type samplesYAML struct {
	Enabled    *bool  `yaml:"enabled"`
	Keys       string `yaml:"keys"`
	MaxPerUser *int   `yaml:"maxPerUser"`
	// Topics are the patterns every cluster's topics must match to be
	// sampled; ClusterTopics a cluster's own, which replace them.
	Topics        []string            `yaml:"topics"`
	ClusterTopics map[string][]string `yaml:"clusterTopics"`
}

// sampleFlags are the raw --samples.* and --web.user-header values.
type sampleFlags struct {
	enabled                      optionalBool
	keys, topics, maxPerUser, hd string
}

// maxSamplesPerUser bounds --samples.max-per-user: more than a few
// samples of one user at once is the misuse the bound exists against.
const maxSamplesPerUser = 16

func addSampleFlags(fs *flag.FlagSet, f *sampleFlags) {
	fs.Var(&f.enabled, "samples.enabled", "allow key samples, which read and show record keys; default true")
	fs.StringVar(&f.keys, "samples.keys", "", "how key samples show keys: clear, or hashed (a short keyed hash of each key, with its exact key group and subtask); default clear")
	fs.StringVar(&f.topics, "samples.topics", "", "comma-separated regular expressions: only topics whose whole name matches one may be sampled; default every topic")
	fs.StringVar(&f.maxPerUser, "samples.max-per-user", "", fmt.Sprintf("key samples one user (or client address when no user is known) may run at once, 1 to %d; default 1", maxSamplesPerUser))
	fs.StringVar(&f.hd, "web.user-header", "", "request header in which a proxy of --web.trusted-proxies names the signed-in user (e.g. X-Forwarded-User, X-WEBAUTH-USER); key samples record and log that user; ignored from other peers")
}

// parseSamples reads the sample settings: a flag (or its environment
// variable) wins over the file's web.samples. clusters are the configured
// Kafka cluster names, which web.samples.clusterTopics must name.
func parseSamples(f sampleFlags, given map[string]bool, ws webSection, clusters []string, p *problems) (web.SampleOptions, string) {
	y := ws.Samples
	var o web.SampleOptions
	if y.Enabled != nil && !*y.Enabled {
		o.Off, o.OffBy = true, "web.samples.enabled: false"
	}
	if f.enabled.set {
		o.Off, o.OffBy = !f.enabled.value, ""
		if o.Off {
			o.OffBy = "--samples.enabled=false"
		}
	}
	keys, keysAt := y.Keys, "web.samples.keys"
	if given["samples.keys"] {
		keys, keysAt = f.keys, "--samples.keys"
	}
	switch keys {
	case "", "clear":
	case "hashed":
		o.HashKeys = true
	default:
		p.at(keysAt, "%q: want clear or hashed", keys)
	}
	if y.MaxPerUser != nil {
		if n := *y.MaxPerUser; n < 1 || n > maxSamplesPerUser {
			p.at("web.samples.maxPerUser", "%d: want a whole number from 1 to %d", n, maxSamplesPerUser)
		} else {
			o.MaxPerUser = n
		}
	}
	if given["samples.max-per-user"] {
		n, err := strconv.Atoi(strings.TrimSpace(f.maxPerUser))
		if err != nil || n < 1 || n > maxSamplesPerUser {
			p.addf("--samples.max-per-user=%q: want a whole number from 1 to %d", f.maxPerUser, maxSamplesPerUser)
		} else {
			o.MaxPerUser = n
		}
	}
	global, globalAt := y.Topics, "web.samples.topics"
	if given["samples.topics"] {
		global, globalAt = splitList(f.topics), "--samples.topics"
	}
	if global != nil {
		o.Topics = append(o.Topics, topicRule("", global, globalAt, p))
	}
	names := make([]string, 0, len(y.ClusterTopics))
	for c := range y.ClusterTopics {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		at := "web.samples.clusterTopics." + c
		if !slices.Contains(clusters, c) {
			p.at(at, "no Kafka cluster %q is configured (clusters: %s)", c, strings.Join(clusters, ", "))
			continue
		}
		o.Topics = append(o.Topics, topicRule(c, y.ClusterTopics[c], at, p))
	}
	header, headerAt := strings.TrimSpace(ws.UserHeader), "web.userHeader"
	if given["web.user-header"] {
		header, headerAt = strings.TrimSpace(f.hd), "--web.user-header"
	}
	if header != "" && !headerNameRE(header) {
		p.at(headerAt, "%q: not an HTTP header name (letters, digits and -, e.g. X-Forwarded-User)", header)
	}
	return o, header
}

// topicRule checks a rule's patterns, each at its place.
func topicRule(cluster string, patterns []string, at string, p *problems) web.TopicRule {
	for i, pat := range patterns {
		if _, err := web.TopicPattern(pat); err != nil {
			p.at(fmt.Sprintf("%s[%d]", at, i), "%v", err)
		}
	}
	return web.TopicRule{Cluster: cluster, Patterns: patterns, Setting: at}
}

// headerNameRE reports whether h is an HTTP header name (an RFC 9110
// token).
func headerNameRE(h string) bool {
	return !strings.ContainsFunc(h, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", c))
	})
}

// sampleWarnings are sample settings that work but likely not as meant.
func (c appConfig) sampleWarnings() []string {
	if c.UserHeader != "" && len(c.TrustedProxies) == 0 {
		return []string{fmt.Sprintf("user header %s is set but no trusted proxy is (--web.trusted-proxies): the header is ignored and every key sample is anonymous", c.UserHeader)}
	}
	return nil
}

// samplesLogValue is the sample settings for the configuration's log line.
func (c appConfig) samplesLogValue() slog.Attr {
	keys := "clear"
	if c.Samples.HashKeys {
		keys = "hashed"
	}
	var rules []string
	for _, r := range c.Samples.Topics {
		rules = append(rules, r.Setting+"="+strings.Join(r.Patterns, ","))
	}
	return slog.Group("samples", slog.Bool("enabled", !c.Samples.Off), slog.String("keys", keys),
		slog.Int("max_per_user", c.Samples.MaxPerUser), slog.Any("topics", rules), slog.String("user_header", c.UserHeader))
}

// sampledClusters are the names of the clusters samples may read: the
// configured ones, and the sandbox's when it runs.
func sampledClusters(kafkas []kafka.Config, sandbox bool) []string {
	var out []string
	for _, k := range kafkas {
		out = append(out, k.Name)
	}
	if sandbox {
		out = append(out, "sandbox") // main's name for the sandbox's cluster
	}
	return out
}
