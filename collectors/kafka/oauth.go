package kafka

import (
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

	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/internal/smallfile"
)

// OAuthConfig is an OAuth 2.0 client-credentials grant (RFC 6749 §4.4) that
// obtains the OAUTHBEARER token from TokenEndpoint. The client authenticates
// with HTTP Basic (client_secret_basic, id and secret form-encoded as RFC 6749
// §2.3.1 says), as Kafka's own OAUTHBEARER login handler does.
type OAuthConfig struct {
	// TokenEndpoint is the https URL of the token endpoint (http is
	// accepted only for a loopback host).
	TokenEndpoint string
	// ClientID is the OAuth client id.
	ClientID string
	// ClientSecret is the client secret; exclusive with ClientSecretFile.
	ClientSecret string
	// ClientSecretFile holds the client secret; it is read on every token
	// request, so a rotated secret is picked up.
	ClientSecretFile string
	// Scope is sent as the scope parameter when not empty (space-separated).
	Scope string
}

func (o OAuthConfig) isZero() bool { return o == OAuthConfig{} }

// tokenRefreshMargin returns how long before expiry a cached token is
// replaced: a tenth of its lifetime, at most a minute.
func tokenRefreshMargin(lifetime time.Duration) time.Duration {
	return min(lifetime/10, time.Minute)
}

// tokenSource fetches client-credentials tokens and caches each until
// shortly before it expires. It is safe for concurrent use: concurrent
// callers share one request.
type tokenSource struct {
	cfg  OAuthConfig
	http *http.Client
	now  func() time.Time

	mu      sync.Mutex
	token   string
	refresh time.Time // refresh is when the cached token must be replaced.
}

// tokenRequestTimeout bounds one token request when the caller's context
// has no earlier deadline.
const tokenRequestTimeout = 10 * time.Second

func newTokenSource(cfg OAuthConfig) *tokenSource {
	return &tokenSource{cfg: cfg, http: &http.Client{Timeout: tokenRequestTimeout}, now: time.Now}
}

// Token returns a cached token that is not about to expire, or fetches a
// new one.
func (s *tokenSource) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && s.now().Before(s.refresh) {
		return s.token, nil
	}
	s.token = ""
	tok, lifetime, err := s.fetch(ctx)
	if err != nil {
		return "", err
	}
	if lifetime > 0 {
		s.token = tok
		s.refresh = s.now().Add(lifetime - tokenRefreshMargin(lifetime))
	}
	return tok, nil
}

// tokenResponse is the token endpoint's answer (RFC 6749 §5.1, §5.2).
// expires_in is a json.Number because some servers send it as a string.
type tokenResponse struct {
	AccessToken      string      `json:"access_token"`
	TokenType        string      `json:"token_type"`
	ExpiresIn        json.Number `json:"expires_in"`
	Error            string      `json:"error"`
	ErrorDescription string      `json:"error_description"`
}

// maxTokenResponse bounds the bytes read from the token endpoint.
const maxTokenResponse = 1 << 20

func (s *tokenSource) fetch(ctx context.Context) (token string, lifetime time.Duration, err error) {
	endpoint := s.cfg.TokenEndpoint
	if u, perr := url.Parse(endpoint); perr == nil {
		endpoint = u.Redacted()
	}
	fail := func(format string, args ...any) (string, time.Duration, error) {
		return "", 0, fmt.Errorf("oauth token endpoint %s: %s", endpoint, fmt.Sprintf(format, args...))
	}
	secret := s.cfg.ClientSecret
	if s.cfg.ClientSecretFile != "" {
		b, err := smallfile.Read(s.cfg.ClientSecretFile, smallfile.SecretLimit)
		if err != nil {
			return "", 0, fmt.Errorf("sasl.oauth.clientSecretFile: %w", err)
		}
		secret = strings.TrimSpace(string(b))
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	if s.cfg.Scope != "" {
		form.Set("scope", s.cfg.Scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return fail("%v", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(s.cfg.ClientID), url.QueryEscape(secret))
	resp, err := s.http.Do(req)
	if err != nil {
		// *url.Error repeats the URL unredacted; keep only its cause.
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		return fail("%v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse))
	if err != nil {
		return fail("HTTP %s: reading body: %v", resp.Status, err)
	}
	var tr tokenResponse
	jerr := json.Unmarshal(body, &tr)
	if resp.StatusCode != http.StatusOK {
		if jerr == nil && tr.Error != "" {
			return fail("HTTP %s: %s", resp.Status, quote.Clip(strings.TrimSpace(tr.Error+" "+tr.ErrorDescription)))
		}
		return fail("HTTP %s", resp.Status)
	}
	if jerr != nil {
		return fail("HTTP %s: response is not a JSON token: %v", resp.Status, jerr)
	}
	if tr.AccessToken == "" {
		return fail("HTTP %s: response has no access_token", resp.Status)
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") {
		return fail("HTTP %s: token_type %s, want Bearer", resp.Status, quote.Clip(tr.TokenType))
	}
	if tr.ExpiresIn != "" {
		secs, err := tr.ExpiresIn.Float64()
		if err != nil || secs < 0 {
			return fail("HTTP %s: bad expires_in %s", resp.Status, quote.Clip(tr.ExpiresIn.String()))
		}
		lifetime = time.Duration(secs * float64(time.Second))
	}
	return tr.AccessToken, lifetime, nil
}

// readToken returns the token in path, surrounding whitespace removed.
func readToken(path string) (string, error) {
	b, err := smallfile.Read(path, smallfile.SecretLimit)
	if err != nil {
		return "", fmt.Errorf("sasl.tokenFile: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("sasl.tokenFile: %s is empty", path)
	}
	return tok, nil
}
