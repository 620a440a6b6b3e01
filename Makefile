# skewscope: `make run` serves the dashboard, `make test` runs every test tier.
# `make check` is the fast inner loop.

GO        ?= go
LISTEN    ?= 127.0.0.1:8080
GOLDEN    ?= $(abspath ../shared/golden)
FUZZTIME  ?= 5s
export SKEWSCOPE_GOLDEN_DIR ?= $(GOLDEN)

.PHONY: run build test check vet fmt-check templ-check unit fuzz bench

run:
	$(GO) run ./cmd/dashboard --listen $(LISTEN)

build:
	$(GO) build -o bin/dashboard ./cmd/dashboard

# Fast: formatting, vet, unit tests without the race detector.
check: fmt-check vet
	$(GO) test ./...

# Everything CI runs.
test: fmt-check vet templ-check unit browser fuzz
	@echo "make test: all tiers passed"

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# Generated templ code must be committed up to date: regenerate and compare.
templ-check:
	@scripts/templ-check.sh

unit:
	$(GO) test -race -count=1 ./...

# Browser tests (build tag browser): headless Chromium, installed on demand.
browser:
	scripts/ensure-chromium.sh && $(GO) test -tags browser -count=1 ./...

# A short run of every fuzz target, so each keeps running on CI.
fuzz:
	@scripts/fuzz-smoke.sh $(FUZZTIME)

# Benchmarks print the figures the issues set targets for.
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./assign/ ./strategy/ ./web/
