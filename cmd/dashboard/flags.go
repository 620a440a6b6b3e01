package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/linkout"
	"github.com/skewscope/skewscope/web"
)

// envPrefix starts every environment variable that stands in for a flag.
const envPrefix = "SKEWSCOPE_"

// envName is the environment variable for a flag: SKEWSCOPE_ and the flag
// name upper-cased with "." and "-" as "_" (web.external-url →
// SKEWSCOPE_WEB_EXTERNAL_URL).
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(flagName))
}

// Names used for the cluster and endpoint of the single-backend flags.
const defaultBackendName = "default"

// flagValues holds the raw flag (or environment) values.
type flagValues struct {
	listen, logFormat, logLevel                  string
	externalURL, routePrefix, frameAncestors     string
	allowedOrigins, configFile                   string
	wsMaxPerAddress, trustedProxies              string
	wsMaxTopicsPerAddress                        string
	allowedHosts                                 string
	kafkaBrokers, kafkaName, flinkURL, flinkName string
	flinkWebUI                                   string
	sandbox                                      optionalBool
	samples                                      sampleFlags
}

// optionalBool is a boolean flag that knows whether it was set.
type optionalBool struct{ set, value bool }

func (b *optionalBool) String() string {
	if b == nil || !b.set {
		return ""
	}
	return strconv.FormatBool(b.value)
}

func (b *optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	b.set, b.value = true, v
	return nil
}

func (b *optionalBool) IsBoolFlag() bool { return true }

func newFlagSet(f *flagValues, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("dashboard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8080", "address to serve HTTP on")
	fs.StringVar(&f.logFormat, "log.format", "text", "log format: text or json")
	fs.StringVar(&f.logLevel, "log.level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&f.externalURL, "web.external-url", "", "URL under which skewscope is reachable, e.g. behind a reverse proxy; its path becomes the route prefix and its origin may open websockets")
	fs.StringVar(&f.routePrefix, "web.route-prefix", "", "path prefix of every route; defaults to the path of --web.external-url")
	fs.StringVar(&f.frameAncestors, "web.frame-ancestors", "", "comma-separated origins allowed to embed pages in a frame; default 'self'")
	fs.StringVar(&f.allowedOrigins, "web.allowed-origins", "", "comma-separated origins, besides that of --web.external-url, allowed to open a websocket")
	fs.StringVar(&f.allowedHosts, "web.allowed-hosts", "", "comma-separated host names (or *.example.com, or IP addresses) requests may name in Host, besides those of --web.external-url and --listen and localhost; others get 421 (DNS rebinding); * turns the check off")
	fs.StringVar(&f.wsMaxPerAddress, "web.ws-max-per-address", strconv.Itoa(web.DefaultMaxConnectionsPerClient), fmt.Sprintf("live-update websockets one client address may open, 1 to %d; behind a reverse proxy not in --web.trusted-proxies every browser has the proxy's address", web.DefaultMaxConnections))
	fs.StringVar(&f.wsMaxTopicsPerAddress, "web.ws-max-topics-per-address", strconv.Itoa(web.DefaultMaxTopicsPerClient), fmt.Sprintf("distinct live views the websockets of one client address may watch between them, 1 to %d; behind a reverse proxy not in --web.trusted-proxies every browser shares the proxy's", web.DefaultMaxHubTopics))
	fs.StringVar(&f.trustedProxies, "web.trusted-proxies", "", "comma-separated CIDRs (or addresses) of reverse proxies whose X-Forwarded-For names the client address for --web.ws-max-per-address; other peers' forwarded headers are ignored")
	fs.StringVar(&f.configFile, "config.file", "", "YAML file with kafka.clusters, flink.endpoints and links (see docs/configuration.md)")
	fs.StringVar(&f.kafkaBrokers, "kafka.brokers", "", "comma-separated seed brokers of one Kafka cluster without TLS or SASL (quick start; use --config.file for more)")
	fs.StringVar(&f.kafkaName, "kafka.name", defaultBackendName, "name of the --kafka.brokers cluster")
	fs.StringVar(&f.flinkURL, "flink.url", "", "REST URL of one Flink JobManager without authentication (quick start; use --config.file for more)")
	fs.StringVar(&f.flinkName, "flink.name", defaultBackendName, "name of the --flink.url endpoint")
	fs.StringVar(&f.flinkWebUI, "flink.web-ui", "", "URL of the Flink Web UI of the --flink.url endpoint, when it is not served at the REST URL; pages link to its jobs and vertices")
	addSampleFlags(fs, &f.samples)
	fs.Var(&f.sandbox, "sandbox", "serve built-in example data; default true exactly when no Kafka cluster and no Flink endpoint is configured")
	fs.VisitAll(func(fl *flag.Flag) { fl.Usage += " (env " + envName(fl.Name) + ")" })
	return fs
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// addQuick adds the cluster and endpoint of --kafka.brokers and --flink.url.
func (b *backends) addQuick(f flagValues, given map[string]bool, p *problems) {
	if f.kafkaBrokers != "" {
		c := kafka.Config{Name: f.kafkaName, Brokers: splitList(f.kafkaBrokers)}
		b.kafka = append(b.kafka, kafkaEntry{place: quickKafka, cfg: checkKafka(quickKafka, c, p)})
	} else if given["kafka.name"] {
		p.addf("--kafka.name=%q: needs --kafka.brokers", f.kafkaName)
	}
	if f.flinkURL != "" {
		c := flink.Config{Name: f.flinkName, URL: f.flinkURL}
		b.flink = append(b.flink, flinkEntry{quickFlink, checkFlink(quickFlink, c, p), flinkUI(quickFlink, c.URL, linkout.FlinkTemplates{Base: f.flinkWebUI}, p)})
	} else {
		if given["flink.name"] {
			p.addf("--flink.name=%q: needs --flink.url", f.flinkName)
		}
		if given["flink.web-ui"] {
			p.addf("--flink.web-ui=%q: needs --flink.url", f.flinkWebUI)
		}
	}
}
