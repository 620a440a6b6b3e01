package polllog

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// lines decodes a JSON handler's output.
func lines(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		delete(m, "time")
		out = append(out, m)
	}
	return out
}

func TestFlushLogsEachKindOnce(t *testing.T) {
	var b bytes.Buffer
	base := slog.New(slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})).With("cluster", "prod")
	pl := New(base.Handler())
	log := pl.Logger()
	for i := range 1000 {
		log.With("topic", "orders").Warn("offset failed", "partition", i, "error", "timeout")
	}
	log.Debug("poll step", "step", 1) // below Warn: at once
	log.WithGroup("g").Error("list failed", "error", "refused")
	if got := len(lines(t, &b)); got != 1 {
		t.Fatalf("before Flush: %d lines, want only the debug one", got)
	}
	pl.Flush(context.Background())
	want := []map[string]any{
		{"level": "DEBUG", "msg": "poll step", "cluster": "prod", "step": float64(1)},
		{"level": "WARN", "msg": "offset failed (1000 times in this poll; the first shown)", "cluster": "prod", "topic": "orders",
			"count": float64(1000), "partition": float64(0), "error": "timeout",
			"examples": []any{"topic=orders partition=0 error=timeout", "topic=orders partition=1 error=timeout", "topic=orders partition=2 error=timeout"}},
		{"level": "ERROR", "msg": "list failed", "cluster": "prod", "g": map[string]any{"error": "refused"}},
	}
	if diff := cmp.Diff(want, lines(t, &b)); diff != "" {
		t.Errorf("log after Flush (-want +got):\n%s", diff)
	}
	// Each poll starts afresh.
	b.Reset()
	log.Warn("offset failed", "partition", 7)
	pl.Flush(context.Background())
	if got := lines(t, &b); len(got) != 1 || got[0]["msg"] != "offset failed" || got[0]["count"] != nil {
		t.Errorf("second poll logged %v, want the one warning as it was", got)
	}
}
