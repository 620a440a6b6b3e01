# skewscope: `make run` serves the dashboard, `make test` runs every test tier.
# `make check` is the fast inner loop.

GO        ?= go
LISTEN    ?= 127.0.0.1:8080
FUZZTIME  ?= 20000x
# The golden vectors live in assign/testdata/golden. GOLDEN names an extra
# set to check as well (by default ../shared/golden, when it exists).
GOLDEN    ?=
ifneq ($(GOLDEN),)
export SKEWSCOPE_GOLDEN_DIR := $(abspath $(GOLDEN))
endif

.PHONY: run build test check vet lint lint-fresh api fmt-check templ-check unit js browser prometheus fuzz e2e bench tools golden sqlplans

run:
	$(GO) run ./cmd/dashboard --listen $(LISTEN)

build:
	$(GO) build -o bin/dashboard ./cmd/dashboard

# Fast: formatting, vet, unit tests without the race detector.
check: fmt-check vet
	$(GO) test ./...

# Everything CI runs, each tier installing what it needs.
test: tools fmt-check lint lint-fresh templ-check unit api js browser prometheus fuzz e2e
	@echo "make test: all tiers passed"

# The tests need Go, Java 17 (the assign tests cross-check the restore model
# against the JDK's own HashMap) and Node.js (the JS module tests); Chromium
# and Prometheus are installed by the tiers that use them. Fail early,
# naming what is missing.
tools:
	@missing=""; for t in go java mvn node; do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then echo "make test: missing on PATH:$$missing (Java 17, Maven and Node.js come with this machine image; apt-get install openjdk-17-jdk-headless maven nodejs)"; exit 1; fi

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	$(GO) vet -tags browser ./web/... ./internal/... ./cmd/...
	$(GO) vet -tags prometheus ./cmd/...
	$(GO) vet -tags e2e ./e2e/

# vet, then staticcheck and deadcode, pinned as tools in go.mod, over every
# build configuration (scripts/lint.sh, which lists deadcode's exceptions).
lint: vet
	@scripts/lint.sh

# The lint as a fresh machine runs it: an empty Go module cache (download
# lines are set-up, never findings), then a planted finding that must fail
# it. About 2.5 minutes, most of it fetching modules.
lint-fresh:
	@scripts/lint-fresh.sh

# Generated templ code must be committed up to date: regenerate and compare.
templ-check:
	@scripts/templ-check.sh

# The alert rules (examples/prometheus, and the README's) are checked and
# expanded by Prometheus's own promtool (Debian's prometheus package,
# installed on demand); under make test a missing promtool fails those
# tests instead of skipping them.
unit:
	@scripts/ensure-promtool.sh
	SKEWSCOPE_REQUIRE_PROMTOOL=1 $(GO) test -race -count=1 ./...
	# Allocation counts of pooled paths, which the race detector's
	# sync.Pool makes meaningless, without it.
	$(GO) test -count=1 -run 'Allocs' ./keysample/

# The server against web/openapi.json: Schemathesis (PyPI, pinned, in a
# virtual environment under ~/.cache) sends 100 generated requests per
# operation, from a fixed seed, to the dashboard's sandbox.
api:
	@scripts/schemathesis.sh

# The small ES modules' pure helpers, with Node's own test runner.
js:
	node --test static/js/

# Browser tests (build tag browser): headless Chromium, installed on demand;
# a failing test is retried once and, if it then passes, named as FLAKY.
browser:
	scripts/browser-tests.sh

# A real Prometheus (Debian's prometheus package) scrapes the dashboard's
# sandbox every second and evaluates examples/prometheus/alerts.yml (for:
# shortened to 2 s); the skew alert's link is followed in headless Chromium
# to the page with the subtask highlighted. About 2 minutes on 2 cores.
prometheus:
	@scripts/ensure-promtool.sh
	@scripts/ensure-chromium.sh
	$(GO) test -tags prometheus -count=1 -timeout 10m -run '^TestPrometheus' -v ./cmd/dashboard/

# Ground truth: a real Kafka 4.1 broker (KRaft) and Flink 1.20.5, 2.2.1 and
# 2.3.0 MiniClusters from Maven Central run the job in e2e/flinkjob (per line
# a second MiniCluster with the adaptive scheduler rescales a job in place
# and fails it over); the tests compare what Flink does with assign's
# predictions; three Flink SQL jobs (a GROUP BY on a STRING, one on
# (BIGINT, STRING), a regular join) check the SQL key rows against each
# keyed subtask's numRecordsIn, about 35 s a line; each line's jars also
# regenerate the golden vectors, which
# must equal assign/testdata/golden byte for byte. The tier takes about 12
# minutes on 2 cores (698 s in the last fresh-clone CI run, whose whole
# make test took 17 minutes); the first run also downloads about 300 MB into
# ~/.m2.
E2E_TIMEOUT ?= 45m
e2e:
	@for t in java mvn; do command -v $$t >/dev/null 2>&1 || { echo "make e2e: missing $$t on PATH (apt-get install openjdk-17-jdk-headless maven)"; exit 1; }; done
	$(GO) test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) -v ./e2e/

# Regenerates assign/testdata/golden with Flink's own classes (the
# generator in e2e/flinkjob/golden, on Flink 2.2.1); the e2e tier checks
# that every Flink line writes the same bytes.
golden:
	cd e2e/flinkjob && mvn -q -B -pl golden compile dependency:build-classpath && \
	java -cp "golden/target/classes:$$(cat golden/target/classpath.txt)" skewscope.golden.GoldenVectors ../../assign/testdata/golden

# Records the job plans of Flink SQL queries that sqlplan's tests read
# (sqlplan/testdata/<Flink version>/), on Flink 1.20.5, 2.2.1 and 2.3.0,
# without a cluster (the recorder in sqlplan/testdata/gen). Not part of
# make test; about a minute.
sqlplans:
	@scripts/sqlplans.sh

# A short run of every fuzz target, so each keeps running on CI.
fuzz:
	@scripts/fuzz-smoke.sh $(FUZZTIME)

# Benchmarks print the figures the issues set goals for; cmd/keybench
# times String key routing beside Flink 2.2.1's own assignToKeyGroup on
# Java 17 and the newest JDK found (e2e/flinkjob/bench, built with Maven,
# offline when ~/.m2 has the jars), about 20 s; the websocket load
# and Flink collector figures come from programs that measure the server,
# or the collector, alone (the other side runs in a child process). jmload
# polls a fake JobManager of 50 jobs × 3 vertices × p=64 and of 500 jobs ×
# 3 × p=16, about a minute on 2 cores; samplebench reads 1M records from
# kfake in a child process as a key sample and as a plain consumer.
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./assign/ ./strategy/ ./web/ ./live/ ./sandbox/ ./internal/fakejm/ ./internal/livebench/
	$(GO) test -run='^$$' -bench=Poll10k -benchtime=5x ./collectors/kafka/
	$(GO) test -run='^$$' -bench=DecodeMetrics -benchmem ./collectors/flink/
	$(GO) run ./cmd/keybench
	$(GO) run ./cmd/speedbench
	$(GO) run ./cmd/samplebench
	$(GO) run ./cmd/wsload -clients 1000 -partitions 10000 -for 60s
	$(GO) run ./cmd/jmload -shapes 50x64x256,500x16x64 -polls 3
