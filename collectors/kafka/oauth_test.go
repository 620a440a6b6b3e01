package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// tokenServer is an OAuth 2.0 token endpoint for one client: it checks the
// client-credentials request and hands out tokens "tok-1", "tok-2", ...
type tokenServer struct {
	*httptest.Server
	clientID, secret, scope string
	expiresIn               any // expiresIn is sent as is; nil omits it.
	status                  atomic.Int32
	requests                atomic.Int32
}

func newTokenServer(t *testing.T, clientID, secret, scope string) *tokenServer {
	ts := &tokenServer{clientID: clientID, secret: secret, scope: scope, expiresIn: 3600}
	ts.Server = httptest.NewServer(http.HandlerFunc(ts.serve))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *tokenServer) serve(w http.ResponseWriter, r *http.Request) {
	n := ts.requests.Add(1)
	w.Header().Set("Content-Type", "application/json")
	fail := func(code int, e, desc string) {
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(map[string]string{"error": e, "error_description": desc})
	}
	if st := ts.status.Load(); st != 0 {
		w.WriteHeader(int(st))
		fmt.Fprint(w, "<html>upstream trouble</html>")
		return
	}
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		fail(http.StatusBadRequest, "invalid_request", r.Method+" "+r.Header.Get("Content-Type"))
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("scope") != ts.scope {
		fail(http.StatusBadRequest, "invalid_request", fmt.Sprintf("form %v", r.PostForm))
		return
	}
	if id, secret, ok := r.BasicAuth(); !ok || id != ts.clientID || secret != ts.secret {
		fail(http.StatusUnauthorized, "invalid_client", "bad client credentials")
		return
	}
	resp := map[string]any{"access_token": fmt.Sprintf("tok-%d", n), "token_type": "Bearer"}
	if ts.expiresIn != nil {
		resp["expires_in"] = ts.expiresIn
	}
	json.NewEncoder(w).Encode(resp)
}

func TestTokenSourceCachesUntilShortlyBeforeExpiry(t *testing.T) {
	srv := newTokenServer(t, "skewscope", "s3cret", "kafka read")
	ts := newTokenSource(OAuthConfig{TokenEndpoint: srv.URL, ClientID: "skewscope", ClientSecret: "s3cret", Scope: "kafka read"})
	now := t0
	ts.now = func() time.Time { return now }
	ctx := context.Background()

	for _, step := range []struct {
		at   time.Duration
		want string
	}{
		{0, "tok-1"},
		{time.Minute, "tok-1"},                 // cached
		{time.Hour - time.Minute - 1, "tok-1"}, // just before the refresh margin
		{time.Hour - time.Minute, "tok-2"},     // within a minute of expiry: refreshed
		{time.Hour, "tok-2"},
	} {
		now = t0.Add(step.at)
		got, err := ts.Token(ctx)
		if got != step.want || err != nil {
			t.Errorf("Token() at +%v = %q, %v; want %q, nil", step.at, got, err, step.want)
		}
	}
	if n := srv.requests.Load(); n != 2 {
		t.Errorf("token requests = %d, want 2", n)
	}
}

func TestTokenSourceShortLivedAndStringExpiry(t *testing.T) {
	srv := newTokenServer(t, "c", "s", "")
	srv.expiresIn = "30" // some servers send a string
	ts := newTokenSource(OAuthConfig{TokenEndpoint: srv.URL, ClientID: "c", ClientSecret: "s"})
	now := t0
	ts.now = func() time.Time { return now }
	// 30 s lifetime: refreshed 3 s (a tenth) before expiry.
	for _, step := range []struct {
		at   time.Duration
		want string
	}{{0, "tok-1"}, {26 * time.Second, "tok-1"}, {27 * time.Second, "tok-2"}} {
		now = t0.Add(step.at)
		if got, err := ts.Token(context.Background()); got != step.want || err != nil {
			t.Errorf("Token() at +%v = %q, %v; want %q, nil", step.at, got, err, step.want)
		}
	}
}

func TestTokenSourceNoExpiryIsNotCached(t *testing.T) {
	srv := newTokenServer(t, "c", "s", "")
	srv.expiresIn = nil
	ts := newTokenSource(OAuthConfig{TokenEndpoint: srv.URL, ClientID: "c", ClientSecret: "s"})
	for _, want := range []string{"tok-1", "tok-2"} {
		if got, err := ts.Token(context.Background()); got != want || err != nil {
			t.Errorf("Token() = %q, %v; want %q, nil", got, err, want)
		}
	}
}

func TestTokenSourceSecretFileReadOnEachRequest(t *testing.T) {
	srv := newTokenServer(t, "c", "second", "")
	srv.expiresIn = nil
	f := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(f, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := newTokenSource(OAuthConfig{TokenEndpoint: srv.URL, ClientID: "c", ClientSecretFile: f})
	if _, err := ts.Token(context.Background()); err == nil || strings.Contains(err.Error(), "first") {
		t.Fatalf("Token() with the old secret = %v, want an error not naming the secret", err)
	}
	if err := os.WriteFile(f, []byte("second\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ts.Token(context.Background()); got != "tok-2" || err != nil {
		t.Errorf("Token() after rotating the secret = %q, %v; want tok-2, nil", got, err)
	}
}

func TestTokenSourceConcurrentCallersShareOneRequest(t *testing.T) {
	srv := newTokenServer(t, "c", "s", "")
	ts := newTokenSource(OAuthConfig{TokenEndpoint: srv.URL, ClientID: "c", ClientSecret: "s"})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if got, err := ts.Token(context.Background()); got != "tok-1" || err != nil {
				t.Errorf("Token() = %q, %v; want tok-1, nil", got, err)
			}
		})
	}
	wg.Wait()
	if n := srv.requests.Load(); n != 1 {
		t.Errorf("token requests = %d, want 1", n)
	}
}

func TestTokenSourceErrors(t *testing.T) {
	srv := newTokenServer(t, "c", "right-secret", "")
	for _, tt := range []struct {
		name   string
		cfg    OAuthConfig
		status int32
		want   []string
	}{
		{"wrong secret", OAuthConfig{ClientID: "c", ClientSecret: "wrong-secret"}, 0,
			[]string{"oauth token endpoint " + srv.URL, "HTTP 401 Unauthorized", `"invalid_client bad client credentials"`}},
		{"server error", OAuthConfig{ClientID: "c", ClientSecret: "right-secret"}, 503,
			[]string{"oauth token endpoint " + srv.URL, "HTTP 503 Service Unavailable"}},
		{"not json", OAuthConfig{ClientID: "c", ClientSecret: "right-secret"}, 200,
			[]string{"HTTP 200 OK: response is not a JSON token"}},
		{"unreachable", OAuthConfig{TokenEndpoint: "http://user:pw@127.0.0.1:1/token", ClientID: "c", ClientSecret: "right-secret"}, 0,
			[]string{"oauth token endpoint http://user:xxxxx@127.0.0.1:1/token: ", "refused"}},
	} {
		srv.status.Store(tt.status)
		if tt.cfg.TokenEndpoint == "" {
			tt.cfg.TokenEndpoint = srv.URL
		}
		ts := newTokenSource(tt.cfg)
		tok, err := ts.Token(context.Background())
		if err == nil {
			t.Errorf("%s: Token() = %q, nil; want an error", tt.name, tok)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: Token() error = %q, want it to contain %q", tt.name, err, w)
			}
		}
		for _, secret := range []string{tt.cfg.ClientSecret, ":pw@"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s: Token() error = %q names the secret %q", tt.name, err, secret)
			}
		}
	}
}

func TestTokenFileReadOnUse(t *testing.T) {
	f := filepath.Join(t.TempDir(), "token")
	for _, want := range []string{"one", "two"} {
		if err := os.WriteFile(f, []byte(want+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := readToken(f); got != want || err != nil {
			t.Errorf("readToken() = %q, %v; want %q, nil", got, err, want)
		}
	}
	os.WriteFile(f, nil, 0o600)
	if _, err := readToken(f); err == nil || !strings.Contains(err.Error(), "sasl.tokenFile") {
		t.Errorf("readToken(empty file) = %v, want an error naming sasl.tokenFile", err)
	}
}

var bearerRE = regexp.MustCompile("\x01auth=Bearer ([^\x01]*)\x01")

// oauthBroker makes kfake answer SASL OAUTHBEARER, which it does not
// implement itself (it knows PLAIN and SCRAM only): control functions
// accept the handshake and accept or reject the bearer token of each
// authentication with valid. It returns the tokens seen, in order.
func oauthBroker(c *kfake.Cluster, valid func(token string) bool) func() []string {
	var mu sync.Mutex
	var seen []string
	c.ControlKey(int16(kmsg.SASLHandshake), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.SASLHandshakeRequest)
		resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
		if req.Mechanism != SASLOAuthBearer {
			resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
			resp.SupportedMechanisms = []string{SASLOAuthBearer}
		}
		return resp, nil, true
	})
	c.ControlKey(int16(kmsg.SASLAuthenticate), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.SASLAuthenticateRequest)
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		tok := ""
		if m := bearerRE.FindSubmatch(req.SASLAuthBytes); m != nil {
			tok = string(m[1])
		}
		mu.Lock()
		seen = append(seen, tok)
		mu.Unlock()
		if !valid(tok) {
			resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
			msg := "invalid token"
			resp.ErrorMessage = &msg
		}
		return resp, nil, true
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

func TestOAuthBearerClientCredentialsEndToEnd(t *testing.T) {
	c, cl, adm := newCluster(t)
	produce(t, cl, "orders", 0, 10)
	commit(t, adm, "flink-job", "orders", map[int32]int64{0: 4})

	srv := newTokenServer(t, "skewscope", "s3cret", "kafka")
	seen := oauthBroker(c, func(tok string) bool { return tok == "tok-1" })
	col, _ := newTestCollector(t, c, Config{
		Topics: []string{"orders"},
		SASL: SASLConfig{Mechanism: SASLOAuthBearer, OAuth: OAuthConfig{
			TokenEndpoint: srv.URL, ClientID: "skewscope", ClientSecret: "s3cret", Scope: "kafka",
		}},
	})
	s := col.PollOnce(context.Background())
	if s.Err != nil {
		t.Fatalf("PollOnce().Err = %v, want nil", s.Err)
	}
	if gp := findGP(t, findGroup(t, s, "flink-job"), "orders", 0); gp.Lag != 6 {
		t.Errorf("flink-job orders/0 = %+v, want lag 6", gp)
	}
	// Every connection authenticated with the one cached token.
	got := seen()
	if len(got) == 0 {
		t.Fatalf("broker saw no SASL authentication")
	}
	for _, tok := range got {
		if tok != "tok-1" {
			t.Errorf("broker saw token %q, want tok-1 on every connection (%q)", tok, got)
		}
	}
	if n := srv.requests.Load(); n != 1 {
		t.Errorf("token requests = %d, want 1 (cached across %d authentications)", n, len(got))
	}
}

func TestOAuthBearerTokenEndpointErrorSurfacesInPoll(t *testing.T) {
	c, _, _ := newCluster(t)
	srv := newTokenServer(t, "skewscope", "s3cret", "")
	oauthBroker(c, func(string) bool { return true })
	col, _ := newTestCollector(t, c, Config{
		RequestTimeout: 2 * time.Second,
		SASL: SASLConfig{Mechanism: SASLOAuthBearer, OAuth: OAuthConfig{
			TokenEndpoint: srv.URL, ClientID: "skewscope", ClientSecret: "wrong",
		}},
	})
	s := col.PollOnce(context.Background())
	if s.Err == nil || !strings.Contains(s.Err.Error(), "HTTP 401") || !strings.Contains(s.Err.Error(), srv.URL) {
		t.Errorf("PollOnce().Err = %v, want the token endpoint and HTTP 401", s.Err)
	}
}

func TestOAuthBearerTokenFileEndToEnd(t *testing.T) {
	c, _, adm := newCluster(t)
	commit(t, adm, "flink-job", "orders", map[int32]int64{0: 0})
	f := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(f, []byte("expired\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	seen := oauthBroker(c, func(tok string) bool { return tok == "fresh" })
	col, _ := newTestCollector(t, c, Config{
		Topics:         []string{"orders"},
		RequestTimeout: 2 * time.Second,
		SASL:           SASLConfig{Mechanism: SASLOAuthBearer, TokenFile: f},
	})
	if s := col.PollOnce(context.Background()); s.Err == nil {
		t.Fatalf("PollOnce() with a rejected token: Err = nil, want an error")
	}
	if got := seen(); len(got) == 0 || got[0] != "expired" {
		t.Fatalf("broker saw tokens %q, want the file's token first", got)
	}
	// The sidecar rotates the file; the next authentication reads it.
	if err := os.WriteFile(f, []byte("fresh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := col.PollOnce(context.Background())
		if s.Err == nil {
			findGroup(t, s, "flink-job")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("PollOnce() after rotating the token file: Err = %v, want nil", s.Err)
		}
	}
	if got := seen(); got[len(got)-1] != "fresh" {
		t.Errorf("broker saw tokens %q, want the rotated token last", got)
	}
}

func TestOAuthBearerStaticToken(t *testing.T) {
	c, _, adm := newCluster(t)
	commit(t, adm, "g", "orders", map[int32]int64{1: 0})
	seen := oauthBroker(c, func(tok string) bool { return tok == "static" })
	col, _ := newTestCollector(t, c, Config{SASL: SASLConfig{Mechanism: SASLOAuthBearer, Token: "static"}})
	if s := col.PollOnce(context.Background()); s.Err != nil {
		t.Fatalf("PollOnce().Err = %v, want nil (tokens seen %q)", s.Err, seen())
	}
}
