package flink

import "time"

// Config describes one Flink REST endpoint to watch (one JobManager, or one
// per job where each job has its own).
type Config struct {
	// Name identifies the endpoint in snapshots, pages and metrics.
	Name string
	// URL is the REST base URL; it may carry a path prefix
	// (https://host/flink/my-job/).
	URL string
	// Kafka names the Kafka cluster (a kafka Config.Name) whose topics this
	// endpoint's jobs read; empty means: the only configured cluster, or the
	// one whose topics match the metric ids.
	Kafka string

	// Exactly one of BearerToken, BearerTokenFile and BasicAuth may be set.
	// File variants are re-read on every request, so rotated secrets apply.
	BearerToken     string
	BearerTokenFile string
	BasicAuth       *BasicAuth

	TLS TLSConfig

	// Jobs restricts the watched jobs to these names or ids; empty means all.
	Jobs []string

	// PollInterval between polls; default and minimum MetricFreshness
	// (10 s, Flink's metrics.fetcher.update-interval).
	PollInterval time.Duration
	// RequestTimeout bounds one whole poll; default 10 s.
	RequestTimeout time.Duration
}

// BasicAuth is HTTP basic authentication; the password is inline or in a file.
type BasicAuth struct {
	Username     string
	Password     string
	PasswordFile string
}

// TLSConfig configures HTTPS to the endpoint. With no CA file the system roots
// are used; CertFile and KeyFile (both or neither) present a client certificate.
type TLSConfig struct {
	CAFile             string
	CertFile           string
	KeyFile            string
	ServerName         string
	InsecureSkipVerify bool
}
