package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/web"
)

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
