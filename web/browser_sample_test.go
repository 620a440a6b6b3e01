//go:build browser

package web

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/browsertest"
	"github.com/skewscope/skewscope/sandbox"
)

// TestBrowserSampleFollowsProgress starts a live-window key sample from its
// form in Chromium and follows the page: the progress bar moves while the
// window reads (pushed over the websocket), then the page turns into the
// result by itself, with the heaviest keys, the records per subtask and the
// verdict.
func TestBrowserSampleFollowsProgress(t *testing.T) {
	fx := newSampleFixture(t, 2000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fx.produceWhile(t, ctx)
	b := browsertest.New(t)
	b.Navigate(t, fx.srv.URL+"/kafka/prod/topics/orders/sample?parallelism=4&target=6&maxParallelism=128")
	browsertest.Eval[bool](t, b, `(document.querySelector('select[name=mode]').value = 'live', document.querySelector('input[name=window]').value = '4', true)`)
	b.Do(t, chromedp.Click(`[data-testid="sample-start"]`), chromedp.WaitVisible(`[data-testid="sample-bar"]`))
	// The bar moves: wait until a pushed value is above 0 and below 1.
	var moved bool
	for range 200 {
		v := browsertest.Eval[float64](t, b, `document.querySelector('[data-testid="sample-bar"]').value`)
		if v > 0 && v < 1 {
			moved = true
			break
		}
		if browsertest.Eval[bool](t, b, `!!document.querySelector('[data-testid="sample-verdict"]')`) {
			break
		}
		time.Sleep(25 * time.Millisecond) // polls the page; nothing waits on it
	}
	if !moved {
		t.Errorf("the progress bar never showed a value between 0 and 1 while the window read")
	}
	// The page turns into the result by itself; the deadline is a hang
	// guard.
	for guard := time.Now().Add(30 * time.Second); !browsertest.Eval[bool](t, b, `!!document.querySelector('[data-testid="sample-verdict"]')`); {
		if time.Now().After(guard) {
			t.Fatalf("the sample page did not turn into its result; it shows %q", browsertest.Eval[string](t, b, `document.querySelector('[data-testid="sample-status"]').textContent`))
		}
		time.Sleep(50 * time.Millisecond) // polls the page; nothing waits on it
	}
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll('[data-testid="sample-key"]').length`); n == 0 {
		t.Errorf("the result lists no keys")
	}
	first := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="sample-key"] td').textContent`)
	if !strings.HasPrefix(first, "customer-") {
		t.Errorf("heaviest key %q, want a customer id", first)
	}
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll('[data-testid="sample-target"] tr').length`); n != 6 {
		t.Errorf("records per subtask at the target: %d rows, want 6", n)
	}
	b.Screenshot(t, "sample-result-light")
	b.Do(t, colorScheme("dark"))
	b.Screenshot(t, "sample-result-dark")
	b.Do(t, colorScheme("light"), chromedp.EmulateViewport(390, 844))
	if w := browsertest.Eval[[2]int](t, b, `[document.documentElement.scrollWidth, innerWidth]`); w[0] > w[1] {
		t.Errorf("the sample page is %d px wide at 390 px", w[0])
	}
	b.Screenshot(t, "sample-result-390px")
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}

// produceWhile keeps producing hot-keyed records until ctx ends, for live
// windows.
func (fx *sampleFixture) produceWhile(t *testing.T, ctx context.Context) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(fx.brokers...))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer cl.Close()
		r := rand.New(rand.NewPCG(7, 8))
		z := rand.NewZipf(r, 1.2, 1, 5000)
		for ctx.Err() == nil {
			var rs []*kgo.Record
			for range 100 {
				rs = append(rs, &kgo.Record{Topic: "orders", Key: []byte(fmt.Sprintf("customer-%d", z.Uint64()))})
			}
			cl.ProduceSync(ctx, rs...)
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond): // paces the producer; nothing waits on it
			}
		}
	}()
}

// TestBrowserSandboxKeyedPageSample follows "sample keys of orders" from
// the sandbox's keyed vertex page in Chromium: the form opens with the
// vertex's parallelism, the sample runs, and its page turns into the result
// naming the heaviest orders keys and the busiest keyed subtask.
func TestBrowserSandboxKeyedPageSample(t *testing.T) {
	feed := startSandboxFeed(t, sandbox.Options{Seed: 44}, nil)
	feed.pollInBackground(t)
	base := serveLive(t, Options{Live: feed.st, Sandbox: feed.sb, KafkaClusters: []kafka.Config{feed.kafka}})
	job := feed.job(t, "orders-enrichment")
	// The keyed page links to the sample once a poll has seen the job and
	// its source; the deadline is a hang guard.
	b := browsertest.New(t, browsertest.WithTimeout(4*time.Minute))
	for guard := time.Now().Add(2 * time.Minute); ; {
		b.Navigate(t, base+"/jobs/"+job.ID+"/vertices/"+job.KeyedVertexID)
		if browsertest.Eval[bool](t, b, `[...document.querySelectorAll('[data-testid="sample-link"]')].some(a => a.textContent.endsWith(" orders"))`) {
			break
		}
		if time.Now().After(guard) {
			t.Fatalf("the keyed page never linked to a sample of orders")
		}
		time.Sleep(300 * time.Millisecond) // the next poll; nothing waits on it
	}
	b.ResetConsole() // the 404s while the first poll had not seen the job
	browsertest.Eval[bool](t, b, `([...document.querySelectorAll('[data-testid="sample-link"]')].find(a => a.textContent.endsWith(" orders")).click(), true)`)
	b.Do(t, chromedp.WaitVisible(`[data-testid="sample-form"]`))
	if p := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="in-parallelism"]').value`); p != "4" {
		t.Errorf("the sample form opens with parallelism %q, want the keyed vertex's 4", p)
	}
	browsertest.Eval[bool](t, b, `(document.querySelector('[data-testid="in-n"]').value = '2000', true)`)
	b.Do(t, chromedp.Click(`[data-testid="sample-start"]`), chromedp.WaitVisible(`[data-testid="sample-bar"]`))
	started := time.Now()
	for guard := time.Now().Add(2 * time.Minute); !browsertest.Eval[bool](t, b, `!!document.querySelector('[data-testid="sample-verdict"]')`); {
		if time.Now().After(guard) {
			t.Fatalf("the sample page did not turn into its result; it shows %q", browsertest.Eval[string](t, b, `document.querySelector('[data-testid="sample-status"]').textContent`))
		}
		time.Sleep(50 * time.Millisecond) // polls the page; nothing waits on it
	}
	t.Logf("the sample's page showed its result %s after the start", time.Since(started).Round(time.Millisecond))
	verdict := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="sample-verdict"]').textContent`)
	if !strings.Contains(verdict, "At the current parallelism 4, subtask") {
		t.Errorf("the verdict does not name the busiest keyed subtask at p = 4: %q", verdict)
	}
	first := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="sample-key"] td').textContent`)
	if !strings.HasPrefix(first, "customer-") && !strings.Contains(first, "@") {
		t.Errorf("heaviest key %q, want a customer id or e-mail", first)
	}
	b.Screenshot(t, "sandbox-sample")
	b.NoConsoleErrors(t)
}

// TestBrowserSamplesList opens /samples while a live-window sample reads:
// the running sample is listed with who started it and a cancel button,
// which anyone allowed to sample may press; the list then shows it
// cancelled. Screenshots in light, dark and at 390 px.
func TestBrowserSamplesList(t *testing.T) {
	fx := newSampleFixture(t, 500)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fx.produceWhile(t, ctx)
	id := fx.start(t, map[string][]string{"mode": {"live"}, "window": {"50"}, "parallelism": {"4"}, "maxParallelism": {"128"}})
	b := browsertest.New(t)
	b.Navigate(t, fx.srv.URL+"/samples")
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll('[data-testid="samples-row"]').length`); n != 1 {
		t.Fatalf("/samples lists %d samples, want the running one", n)
	}
	if by := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="samples-by"]').textContent`); !strings.Contains(by, "anonymous") || !strings.Contains(by, "127.0.0.1") {
		t.Errorf("started by %q, want anonymous with the client address", by)
	}
	if !browsertest.Eval[bool](t, b, `!!document.querySelector('[data-testid="samples-cancel"]')`) {
		t.Fatalf("the running sample has no cancel button")
	}
	b.Screenshot(t, "samples-list-light")
	b.Do(t, colorScheme("dark"))
	b.Screenshot(t, "samples-list-dark")
	b.Do(t, colorScheme("light"), chromedp.EmulateViewport(390, 844))
	if w := browsertest.Eval[[2]int](t, b, `[document.documentElement.scrollWidth, innerWidth]`); w[0] > w[1] {
		t.Errorf("the samples list is %d px wide at 390 px", w[0])
	}
	b.Screenshot(t, "samples-list-390px")
	b.Do(t, chromedp.Click(`[data-testid="samples-cancel"]`), chromedp.WaitReady(`body`))
	sr := fx.wait(t, id)
	if sr.Progress.StoppedBy != "cancelled" {
		t.Errorf("after cancel from the list the sample stopped by %q, want cancelled", sr.Progress.StoppedBy)
	}
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}
