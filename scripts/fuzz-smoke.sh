#!/usr/bin/env bash
# Runs every Fuzz* target in the module for a fixed number of inputs each
# (default 20000x). A count, not a duration: with -fuzztime=5s a loaded
# machine can stall a worker past the deadline, which the fuzzing engine
# reports as "context deadline exceeded" although no input failed.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-20000x}"
n=0
for pkg in $(go list ./...); do
	dir="$(go list -f '{{.Dir}}' "$pkg")"
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		echo "fuzz: $pkg $target ($fuzztime)"
		go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg" >/tmp/fuzz-$$.log 2>&1 || { cat /tmp/fuzz-$$.log; exit 1; }
		n=$((n + 1))
	done
done
echo "fuzz: $n targets ran without failure"
