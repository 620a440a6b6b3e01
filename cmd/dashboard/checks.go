package main

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/collectors"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/linkout"
	"github.com/skewscope/skewscope/internal/smallfile"
	"github.com/skewscope/skewscope/web"
)

// problem is one configuration error: msg about the setting at path (a
// flag, a YAML path or the config file's name; "" when msg says where).
type problem struct {
	entry     place // the file entry it is about, for the order; zero for flags
	path, msg string
}

func (p problem) String() string {
	if p.path == "" {
		return p.msg
	}
	return p.path + ": " + p.msg
}

// problems collects configuration errors so that one error lists them all.
type problems []problem

func (p *problems) addf(format string, args ...any) {
	*p = append(*p, problem{msg: fmt.Sprintf(format, args...)})
}

// at records a problem of a flag, of the file or of a YAML path outside
// the entries of kafka.clusters, flink.endpoints and links.sourceGroups.
func (p *problems) at(path, format string, args ...any) {
	*p = append(*p, problem{path: path, msg: fmt.Sprintf(format, args...)})
}

// in records a problem of the setting key of the entry at pl ("" for the
// entry as a whole).
func (p *problems) in(pl place, key, format string, args ...any) {
	*p = append(*p, problem{entry: pl, path: pl.at(key), msg: fmt.Sprintf(format, args...)})
}

// has reports whether a problem is recorded at path.
func (p problems) has(path string) bool {
	for _, q := range p {
		if q.path == path {
			return true
		}
	}
	return false
}

// err returns nil or one error listing every problem: flag and file
// problems first, then by YAML section and entry.
func (p problems) err() error {
	sort.SliceStable(p, func(i, j int) bool {
		a, b := p[i].entry, p[j].entry
		return a.section < b.section || (a.section == b.section && a.index < b.index)
	})
	lines := make([]string, len(p))
	for i, q := range p {
		lines[i] = q.String()
	}
	switch len(p) {
	case 0:
		return nil
	case 1:
		return errors.New(lines[0])
	}
	return fmt.Errorf("%d configuration problems:\n  %s", len(p), strings.Join(lines, "\n  "))
}

// section is a list of entries in the config file; problems are listed by
// section in this order, after those of flags and of the file as a whole.
type section int

const (
	noSection section = iota
	kafkaClusters
	flinkEndpoints
	sourceGroups
)

func (s section) String() string {
	return [...]string{"", "kafka.clusters", "flink.endpoints", "links.sourceGroups"}[s]
}

// place is where a cluster, endpoint or link is configured: an entry of a
// section of the file, or the flags of a quick backend.
type place struct {
	section section
	index   int
	// flags, for a quick backend, names the flag that sets each key; ""
	// is the backend as a whole, and the flag for keys no flag sets.
	flags map[string]string
}

// The places of the backends --kafka.brokers and --flink.url add.
var (
	quickKafka = place{flags: map[string]string{"": "--kafka.brokers", "brokers": "--kafka.brokers", "name": "--kafka.name"}}
	quickFlink = place{flags: map[string]string{"": "--flink.url", "url": "--flink.url", "name": "--flink.name", "webUI.base": "--flink.web-ui"}}
)

// String is the entry's YAML path, e.g. kafka.clusters[1], or a quick
// backend's flag.
func (pl place) String() string { return pl.at("") }

// at is where the setting key of the entry is given: its YAML path
// (kafka.clusters[1].sasl.mechanism) or, for a quick backend, its flag.
func (pl place) at(key string) string {
	if pl.flags != nil {
		if f, ok := pl.flags[key]; ok {
			return f
		}
		return pl.flags[""]
	}
	path := fmt.Sprintf("%s[%d]", pl.section, pl.index)
	if key != "" {
		path += "." + key
	}
	return path
}

// checkWSMax reports a per-address websocket bound outside 1 to the bound
// on all of them.
func checkWSMax(n int) error {
	if n < 1 || n > web.DefaultMaxConnections {
		return fmt.Errorf("want a whole number from 1 to %d (the bound on all live-update websockets)", web.DefaultMaxConnections)
	}
	return nil
}

// wsTopicsBound is --web.ws-max-topics-per-address, else the file's
// web.wsMaxTopicsPerAddress, else the hub's default; a bad value is a
// problem naming where it came from.
func wsTopicsBound(p *problems, inFile *int, flagGiven bool, flagValue string) int {
	check := func(n int) error {
		if n < 1 || n > web.DefaultMaxHubTopics {
			return fmt.Errorf("want a whole number from 1 to %d (the bound on all live views)", web.DefaultMaxHubTopics)
		}
		return nil
	}
	n := web.DefaultMaxTopicsPerClient
	if inFile != nil {
		if err := check(*inFile); err != nil {
			p.at("web.wsMaxTopicsPerAddress", "%d: %v", *inFile, err)
		} else {
			n = *inFile
		}
	}
	if flagGiven {
		v, err := strconv.Atoi(strings.TrimSpace(flagValue))
		if err == nil {
			err = check(v)
		} else {
			err = check(0)
		}
		if err != nil {
			p.addf("--web.ws-max-topics-per-address=%q: %v", flagValue, err)
		} else {
			n = v
		}
	}
	return n
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
func checkBrokers(pl place, brokers []string, p *problems) {
	for _, b := range brokers {
		b = strings.TrimSpace(b)
		if b == "" {
			continue
		}
		host, port, err := net.SplitHostPort(b)
		switch {
		case err != nil:
			p.in(pl, "brokers", "%q: want host:port, e.g. kafka-0.example:9092: %v", b, err)
		case host == "":
			p.in(pl, "brokers", "%q: the host is empty", b)
		default:
			n, err := strconv.Atoi(port)
			if err != nil {
				p.in(pl, "brokers", "%q: port %q is not a number", b, port)
			} else if n < 1 || n > 65535 {
				p.in(pl, "brokers", "%q: port %d is not in 1..65535", b, n)
			}
		}
	}
}

type kafkaEntry struct {
	place place
	cfg   kafka.Config
	ui    linkout.Kafka
}

type flinkEntry struct {
	place place
	cfg   flink.Config
	ui    linkout.Flink
}

// flinkUI checks an endpoint's Web UI templates and applies their
// defaults (the Web UI's routes after the REST URL), recording problems
// at their webUI keys of pl. A REST URL that is not one gives no default:
// its own problem says why.
func flinkUI(pl place, restURL string, t linkout.FlinkTemplates, p *problems) linkout.Flink {
	f, errs := linkout.NewFlink(restURL, t)
	for _, e := range errs {
		p.in(pl, "webUI."+e.Key, "%v", e.Err)
	}
	return f
}

// kafkaUI checks a cluster's Kafka UI templates, recording problems at
// their ui keys of pl.
func kafkaUI(pl place, y kafkaUIYAML, p *problems) linkout.Kafka {
	k, errs := linkout.NewKafka(y.Topic, y.Group)
	for _, e := range errs {
		p.in(pl, "ui."+e.Key, "%v", e.Err)
	}
	return k
}

type linkEntry struct {
	place place
	link  SourceGroupLink
}

// backends are the configured clusters, endpoints and links, each with the
// place it came from.
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
			p.in(k.place, "name", "kafka cluster name %q must match %s: it is part of every topic page's URL", k.cfg.Name, web.RouteNamePattern())
			continue
		}
		claimName(kafkaAt, "kafka cluster", k.cfg.Name, k.place, p)
	}
	flinkAt := map[string]string{}
	for _, e := range b.flink {
		checkRef(kafkaAt, "kafka cluster", e.cfg.Kafka, e.place, "kafka", p)
		claimName(flinkAt, "flink endpoint", e.cfg.Name, e.place, p)
	}
	linkAt := map[SourceGroupLink]string{}
	for _, l := range b.links {
		checkRef(flinkAt, "flink endpoint", l.link.Endpoint, l.place, "endpoint", p)
		key := l.link
		key.Group = ""
		if first, ok := linkAt[key]; ok {
			p.in(l.place, "", "endpoint %q, job %q, vertex %q is already linked by %s", l.link.Endpoint, l.link.Job, l.link.Vertex, first)
			continue
		}
		linkAt[key] = l.place.String()
	}
}

// claimName records that the kind named name is defined at pl, or reports
// at its name that name is already taken. An empty name is left to
// Validate.
func claimName(seen map[string]string, kind, name string, pl place, p *problems) {
	if name == "" {
		return
	}
	if first, ok := seen[name]; ok {
		p.in(pl, "name", "%s name %q is already used by %s", kind, name, first)
		return
	}
	seen[name] = pl.String()
}

// checkRef reports at key of pl a reference to a kind not in seen; ""
// refers to nothing.
func checkRef(seen map[string]string, kind, name string, pl place, key string, p *problems) {
	if _, ok := seen[name]; name != "" && !ok {
		p.in(pl, key, "no %s is named %q (known: %s)", kind, name, known(seen))
	}
}

// describe names the configured backends, for the --sandbox conflict.
func (b *backends) describe() string {
	var parts []string
	for _, k := range b.kafka {
		parts = append(parts, fmt.Sprintf("kafka cluster %q (%s)", k.cfg.Name, k.place))
	}
	for _, e := range b.flink {
		parts = append(parts, fmt.Sprintf("flink endpoint %q (%s)", e.cfg.Name, e.place))
	}
	verb := " is"
	if len(parts) > 1 {
		verb = " are"
	}
	return strings.Join(parts, ", ") + verb
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

// checkKafka reads the files c names and runs its Validate, recording
// problems at pl. It returns c with defaults applied.
func checkKafka(pl place, c kafka.Config, p *problems) kafka.Config {
	var fp problems
	checkBrokers(pl, c.Brokers, &fp)
	checkTLSFiles(pl, c.TLS.CAFile, c.TLS.CertFile, c.TLS.KeyFile, &fp)
	checkSecretFile(pl, "sasl.passwordFile", c.SASL.PasswordFile, &fp)
	checkSecretFile(pl, "sasl.tokenFile", c.SASL.TokenFile, &fp)
	checkSecretFile(pl, "sasl.oauth.clientSecretFile", c.SASL.OAuth.ClientSecretFile, &fp)
	*p = append(*p, fp...)
	addFieldErrors(pl, c.Validate(), fp, p)
	return c.WithDefaults()
}

// checkFlink reads the files c names and runs its Validate, recording
// problems at pl. It returns c with defaults applied.
func checkFlink(pl place, c flink.Config, p *problems) flink.Config {
	var fp problems
	if u, err := url.Parse(c.URL); err == nil && u.Scheme == "http" && c.TLS != (flink.TLSConfig{}) && pl.flags == nil {
		fp.in(pl, "tls", "given but url %q is not https", u.Redacted())
	}
	checkSecretFile(pl, "authorization.bearerTokenFile", c.BearerTokenFile, &fp)
	if ba := c.BasicAuth; ba != nil {
		checkSecretFile(pl, "basicAuth.passwordFile", ba.PasswordFile, &fp)
	}
	checkTLSFiles(pl, c.TLS.CAFile, c.TLS.CertFile, c.TLS.KeyFile, &fp)
	*p = append(*p, fp...)
	addFieldErrors(pl, c.Validate(), fp, p)
	return c.WithDefaults()
}

// addFieldErrors records the problems a collector's Validate returned at
// their keys of pl, in the order of their text. A problem at a path where
// skip has one is left out: the file check there says more.
func addFieldErrors(pl place, err error, skip problems, p *problems) {
	var errs collectors.FieldErrors
	if !errors.As(err, &errs) {
		if err != nil {
			p.in(pl, "", "%v", err)
		}
		return
	}
	var add problems
	for _, e := range errs {
		if !skip.has(pl.at(e.Path)) {
			add.in(pl, e.Path, "%s", e.Msg)
		}
	}
	sort.SliceStable(add, func(i, j int) bool { return add[i].String() < add[j].String() })
	*p = append(*p, add...)
}

// checkSecretFile reports a secret file that cannot be read or is empty.
// The content is read only to check it; collectors re-read it on use.
func checkSecretFile(pl place, key, name string, p *problems) {
	if name == "" {
		return
	}
	b, err := smallfile.Read(name, smallfile.SecretLimit)
	switch {
	case err != nil:
		p.in(pl, key, "%v", err)
	case strings.TrimSpace(string(b)) == "":
		p.in(pl, key, "%s is empty", name)
	}
}

// checkTLSFiles reports unreadable or unparsable CA, certificate and key
// files. (The collectors' Validate requires certificate and key together.)
func checkTLSFiles(pl place, ca, cert, key string, p *problems) {
	if ca != "" {
		b, err := smallfile.Read(ca, smallfile.SecretLimit)
		switch {
		case err != nil:
			p.in(pl, "tls.caFilepath", "%v", err)
		case !x509.NewCertPool().AppendCertsFromPEM(b):
			p.in(pl, "tls.caFilepath", "%s: no PEM certificate found", ca)
		}
	}
	load := cert != "" && key != ""
	for _, f := range []struct{ key, name string }{{"tls.certFilepath", cert}, {"tls.keyFilepath", key}} {
		if f.name == "" {
			continue
		}
		if _, err := smallfile.Read(f.name, smallfile.SecretLimit); err != nil {
			p.in(pl, f.key, "%v", err)
			load = false
		}
	}
	if load {
		if _, err := smallfile.X509KeyPair(cert, key); err != nil {
			p.in(pl, "tls.certFilepath", "with keyFilepath: %v", err)
		}
	}
}
