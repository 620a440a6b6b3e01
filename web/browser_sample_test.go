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

	"github.com/skewscope/skewscope/internal/browsertest"
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
