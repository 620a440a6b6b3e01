package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestCrossOriginPostsRefused: a page on another site cannot make a
// visitor's browser restore a sandbox job (nor post any other form);
// same-origin forms and non-browser clients (no Sec-Fetch-Site, no
// Origin) still work. Header matrix after net/http's csrf_test.go.
func TestCrossOriginPostsRefused(t *testing.T) {
	sb := &countingSandbox{}
	s, err := NewServer(Options{Sandbox: sb, WebSocket: HubOptions{AllowedOrigins: []string{"https://skewscope.example.com"}}})
	if err != nil {
		t.Fatal(err)
	}
	restore := url.Values{"job": {"orders"}, "parallelism": {"6"}}.Encode()
	plan := url.Values{"topics": {"orders:12"}, "parallelism": {"4"}}.Encode()
	for _, tc := range []struct {
		name, path, body string
		header           map[string]string
		code             int
		restored         bool
	}{
		{"cross-site fetch metadata", "/sandbox/restore", restore, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, false},
		{"same-site other origin", "/sandbox/restore", restore, map[string]string{"Sec-Fetch-Site": "same-site"}, 403, false},
		{"foreign Origin, old browser", "/sandbox/restore", restore, map[string]string{"Origin": "https://evil.example.com"}, 403, false},
		{"same-origin form", "/sandbox/restore", restore, map[string]string{"Sec-Fetch-Site": "same-origin"}, 303, true},
		{"non-browser client", "/sandbox/restore", restore, nil, 303, true},
		{"trusted external origin, Host rewritten", "/sandbox/restore", restore, map[string]string{"Origin": "https://skewscope.example.com"}, 303, true},
		{"cross-site planner form", "/plan", plan, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, false},
		{"same-origin planner form", "/plan", plan, map[string]string{"Sec-Fetch-Site": "same-origin"}, 303, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb.calls = 0
			req := httptest.NewRequest("POST", tc.path, strings.NewReader(tc.body))
			req.URL.Scheme, req.URL.Host = "", "" // go.dev/issue/73151
			req.Host = "internal:8080"
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != tc.code {
				t.Errorf("POST %s %v = %d, want %d: %.200s", tc.path, tc.header, rec.Code, tc.code, rec.Body)
			}
			if got := sb.calls > 0; got != tc.restored {
				t.Errorf("POST %s %v restored = %v, want %v", tc.path, tc.header, got, tc.restored)
			}
			if tc.code == 403 && !strings.Contains(rec.Body.String(), "cross-origin") {
				t.Errorf("POST %s %v body = %q, want it to say cross-origin", tc.path, tc.header, rec.Body)
			}
		})
	}
	// Safe methods are never refused: links from other sites keep working.
	req := httptest.NewRequest("GET", "/plan?topic=orders:12&parallelism=4", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("cross-site GET /plan = %d, want 200", rec.Code)
	}
}

// countingSandbox accepts every restore and counts them.
type countingSandbox struct{ calls int }

func (c *countingSandbox) Restore(string, int) error { c.calls++; return nil }
