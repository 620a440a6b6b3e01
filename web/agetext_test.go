package web

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/live"
)

// The page counts ages up in the browser (static/js/livefmt.js formatAge)
// from the server's first rendering (ageText): both must write an age the
// same way, or the text would change its form a second after load.
func TestAgeTextMatchesThePageScript(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is needed to run the page script's formatter (make test checks for it):", err)
	}
	secs := []int64{0, 1, 4, 59, 60, 61, 200, 3599, 3600, 3661, 7500, 86399, 86400, 90061, 273600}
	in, _ := json.Marshal(secs)
	script := `import { formatAge } from "./static/js/livefmt.js";
console.log(JSON.stringify(` + string(in) + `.map(formatAge)));`
	cmd := exec.Command(node, "--input-type=module", "-e", script)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var js []string
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &js); err != nil || len(js) != len(secs) {
		t.Fatalf("node printed %q: %v", out, err)
	}
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i, s := range secs {
		if got := ageText(live.Age{At: at, Seconds: s}); got != js[i] {
			t.Errorf("%d s: server %q, page script %q", s, got, js[i])
		}
	}
}
