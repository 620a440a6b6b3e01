// Package flink is a read-only client for the Flink REST API (JobManager)
// as skewscope uses it: jobs, vertices, the plan, metrics, backpressure,
// checkpoints and the exception history, plus pure helpers that turn Kafka source metric ids into the
// observed partition → subtask assignment.
//
// It follows the wire JSON rather than the OpenAPI spec where the two differ
// (knownDifferences in ../recordings_test.go lists each case): metric
// bodies are bare arrays, metric values are strings ("NaN" included), long
// get= lists are split so the request line stays under Netty's 4096-byte
// limit, and the aggregating endpoint's "one missing id empties the answer"
// is worked around.
//
// Collector (NewCollector with a validated Config) polls one endpoint in the
// background and publishes an immutable Snapshot per poll: jobs, vertices
// with parallelism, key groups and per-subtask load, Kafka partitions and
// offsets, each subtask's figures of the latest completed checkpoint (state
// sizes, duration, alignment, start delay), and the root causes of the
// job's restarts. Parts that fail keep their last
// good values, marked stale (Freshness), with the error beside them.
package flink

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

const (
	// DefaultMaxResponseBytes bounds every response body.
	DefaultMaxResponseBytes = 32 << 20
	// DefaultTimeout is the whole-request timeout of the default http.Client.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxRequestLine is the budget for "GET <uri> HTTP/1.1"; Flink's
	// Netty codec rejects request lines over 4096 bytes.
	DefaultMaxRequestLine = 3584
	// MetricFreshness is Flink's default metrics.fetcher.update-interval:
	// the JobManager refreshes metric values at most this often, so polling
	// metric endpoints faster returns repeated values.
	MetricFreshness = 10 * time.Second
)

// Client talks to one Flink REST endpoint. It is safe for concurrent use.
type Client struct {
	base           *url.URL
	hc             *http.Client
	bearer         string
	bearerFunc     func() (string, error)
	basicUser      string
	basicPass      string
	basicPassFunc  func() (string, error)
	basic          bool
	maxBody        int64
	maxRequestLine int
	userAgent      string
	stats          clientStats
	// metricURLs keeps the metric values requests' URLs (metrics.go).
	metricURLs metricURLCache
	// pace, when set, spaces the requests (the collector's budget).
	pace *pacer
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the http.Client (TLS, proxies, timeouts). Its Timeout
// should be non-zero; a context deadline also applies to each call.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithBearerToken sends "Authorization: Bearer <token>".
func WithBearerToken(token string) Option { return func(c *Client) { c.bearer = token } }

// WithBasicAuth sends HTTP basic authentication.
func WithBasicAuth(user, pass string) Option {
	return func(c *Client) { c.basicUser, c.basicPass, c.basic = user, pass, true }
}

// WithBearerTokenFunc sends "Authorization: Bearer <token>" with the token
// that token returns, called for every request (a file re-read, so that a
// rotated token applies). An error fails the request without sending it.
func WithBearerTokenFunc(token func() (string, error)) Option {
	return func(c *Client) { c.bearerFunc = token }
}

// WithBasicAuthFunc sends HTTP basic authentication with the password that
// pass returns, called for every request.
func WithBasicAuthFunc(user string, pass func() (string, error)) Option {
	return func(c *Client) { c.basicUser, c.basicPassFunc, c.basic = user, pass, true }
}

// NewClient returns a client for the REST endpoint at baseURL, which may
// carry a path prefix (e.g. https://host/flink/my-job/).
func NewClient(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("flink: base URL %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("flink: base URL %q: scheme must be http or https", baseURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("flink: base URL %q: no host", baseURL)
	}
	u.RawQuery, u.Fragment = "", ""
	c := &Client{
		base:           u,
		hc:             &http.Client{Timeout: DefaultTimeout},
		maxBody:        DefaultMaxResponseBytes,
		maxRequestLine: DefaultMaxRequestLine,
		userAgent:      "skewscope",
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// BaseURL returns the endpoint's base URL.
func (c *Client) BaseURL() string { return c.base.String() }

// APIError is a non-2xx answer. Flink's error body is {"errors": [...]}.
type APIError struct {
	Method, Path string
	StatusCode   int
	Messages     []string // from {"errors": [...]}, if the body had them
	Body         string   // the start of the body otherwise
}

func (e *APIError) Error() string {
	msg := strings.Join(e.Messages, "; ")
	if msg == "" {
		msg = e.Body
	}
	if msg == "" {
		return fmt.Sprintf("flink: %s %s: HTTP %d", e.Method, e.Path, e.StatusCode)
	}
	return fmt.Sprintf("flink: %s %s: HTTP %d: %s", e.Method, e.Path, e.StatusCode, msg)
}

// SizeLimitError is returned when a body exceeds the configured limit.
type SizeLimitError struct {
	Path  string
	Limit int64
}

func (e *SizeLimitError) Error() string {
	return fmt.Sprintf("flink: GET %s: response body exceeds the limit of %d bytes", e.Path, e.Limit)
}

// buildURL joins the API path onto the base URL and appends a raw query.
func (c *Client) buildURL(rawQuery string, segments ...string) (*url.URL, error) {
	for _, s := range segments {
		if s == "" || strings.ContainsAny(s, "/?#") || s == "." || s == ".." {
			return nil, fmt.Errorf("flink: invalid path segment %q", s)
		}
	}
	u := c.base.JoinPath(segments...)
	if !strings.HasPrefix(u.Path, "/") {
		u.Path = "/" + u.Path
		u.RawPath = ""
	}
	u.RawQuery = rawQuery
	return u, nil
}

// requestLineLen is len("GET <request-uri> HTTP/1.1").
func requestLineLen(u *url.URL) int { return len("GET ") + len(u.RequestURI()) + len(" HTTP/1.1") }

// get fetches the URL and decodes the JSON body into out.
func (c *Client) get(ctx context.Context, u *url.URL, out any) error {
	buf := getBody()
	defer putBody(buf)
	body, err := c.fetchURL(ctx, u.String(), u.Path, buf)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("flink: GET %s: decoding the response: %w", u.Path, err)
	}
	return nil
}

// fetchURL fetches a URL already written out (path names it in errors)
// and returns the body: read into buf, whose bytes the caller owns, or,
// with a nil buf, into a slice of its own.
func (c *Client) fetchURL(ctx context.Context, rawURL, path string, buf *bytes.Buffer) ([]byte, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("flink: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if err := c.authorize(req); err != nil {
		return nil, fmt.Errorf("flink: GET %s: %w", path, err)
	}
	if err := c.pace.wait(ctx); err != nil {
		return nil, fmt.Errorf("flink: GET %s: %w", path, err)
	}
	c.stats.requests.Add(1)
	t0 := time.Now()
	ok := false
	defer func() {
		c.stats.nanos.Add(int64(time.Since(t0)))
		if !ok {
			c.stats.failed.Add(1)
		}
	}()
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			return nil, fmt.Errorf("flink: GET %s: %w (%v)", path, ctxErr, err)
		}
		return nil, fmt.Errorf("flink: GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	var body []byte
	if buf != nil {
		buf.Reset()
		_, err = buf.ReadFrom(io.LimitReader(resp.Body, c.maxBody+1))
		body = buf.Bytes()
	} else {
		body, err = io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	}
	c.stats.bytes.Add(int64(len(body)))
	if err != nil {
		return nil, fmt.Errorf("flink: GET %s: reading body: %w", path, err)
	}
	if int64(len(body)) > c.maxBody {
		return nil, &SizeLimitError{Path: path, Limit: c.maxBody}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		ae := &APIError{Method: http.MethodGet, Path: path, StatusCode: resp.StatusCode}
		var eb struct {
			Errors []string `json:"errors"`
		}
		if json.Unmarshal(body, &eb) == nil && len(eb.Errors) > 0 {
			ae.Messages = eb.Errors
		} else {
			b := bytes.TrimSpace(body)
			if len(b) > 512 {
				b = b[:512]
			}
			ae.Body = string(b)
		}
		return nil, ae
	}
	ok = true
	return body, nil
}

// bodies holds the buffers that answers are read into and decoded from
// (every decoder copies what it keeps), so that a poll's thousands of
// answers do not each grow a slice of their own.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody is the largest buffer put back: a rare huge answer's
// buffer is left to the garbage collector.
const maxPooledBody = 1 << 20

func getBody() *bytes.Buffer { return bodies.Get().(*bytes.Buffer) }

func putBody(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBody {
		bodies.Put(b)
	}
}

// authorize sets the Authorization header. Errors name the credential
// source, never its content.
func (c *Client) authorize(req *http.Request) error {
	switch {
	case c.bearerFunc != nil:
		tok, err := c.bearerFunc()
		if err != nil {
			return fmt.Errorf("bearer token: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	case c.bearer != "":
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	case c.basic:
		pass := c.basicPass
		if c.basicPassFunc != nil {
			p, err := c.basicPassFunc()
			if err != nil {
				return fmt.Errorf("basic auth password: %w", err)
			}
			pass = p
		}
		req.SetBasicAuth(c.basicUser, pass)
	}
	return nil
}

// splitIDs splits ids into groups whose "get=" request line, built by
// mkURL, stays within the budget. An id that alone exceeds it is an error.
func (c *Client) splitIDs(ids []string, mkURL func(part []string) (*url.URL, error)) ([][]string, error) {
	var groups [][]string
	start := 0
	for start < len(ids) {
		end := start + 1
		u, err := mkURL(ids[start:end])
		if err != nil {
			return nil, err
		}
		if requestLineLen(u) > c.maxRequestLine {
			return nil, fmt.Errorf("flink: metric id %q alone exceeds the %d-byte request line budget", ids[start], c.maxRequestLine)
		}
		// Grow greedily; each id adds len(escaped id)+1 bytes.
		n := requestLineLen(u)
		for end < len(ids) {
			add := len(url.QueryEscape(ids[end])) + 1
			if n+add > c.maxRequestLine {
				break
			}
			n += add
			end++
		}
		groups = append(groups, ids[start:end])
		start = end
	}
	return groups, nil
}

// listQuery is "key=a,b,c" with each item query-escaped and literal commas.
func listQuery(key string, items []string) string {
	esc := make([]string, len(items))
	for i, s := range items {
		esc[i] = url.QueryEscape(s)
	}
	return key + "=" + strings.Join(esc, ",")
}
