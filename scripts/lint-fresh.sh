#!/usr/bin/env bash
# Checks scripts/lint.sh the way a fresh machine runs it:
#   1. with an empty Go module cache (GOMODCACHE in a temporary folder),
#      where the go command prints "go: downloading ..." lines while it
#      fetches the modules and the pinned tools: the lint must still pass,
#      and no set-up line may be reported as a finding;
#   2. with a planted finding in a throwaway package: the lint must fail and
#      name it, so that the first check cannot pass by ignoring everything.
# The build cache stays as it is: only the downloads are under test.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="$(mktemp -d)"
probe="$(mktemp -d "$PWD/_lintprobe.XXXXXX")"
cleanup() {
	chmod -R u+w "$cache" 2>/dev/null || true
	rm -rf "$cache" "$probe"
}
trap cleanup EXIT

echo "lint-fresh: scripts/lint.sh with an empty module cache ($cache)"
rc=0
GOMODCACHE="$cache" GOFLAGS=-modcacherw scripts/lint.sh >"$cache.log" 2>&1 || rc=$?
fetched="$(find "$cache/cache/download" -name '*.zip' 2>/dev/null | wc -l)"
if [ "$rc" != 0 ] || ! grep -qx 'lint: no findings' "$cache.log" || grep -q 'findings above' "$cache.log"; then
	cat "$cache.log"
	echo "lint-fresh: FAIL: the lint did not pass with an empty module cache (exit $rc)"
	rm -f "$cache.log"
	exit 1
fi
if [ "$fetched" = 0 ]; then
	cat "$cache.log"
	echo "lint-fresh: FAIL: no module was fetched into $cache, so the empty cache was not what the lint used"
	rm -f "$cache.log"
	exit 1
fi
rm -f "$cache.log"
echo "lint-fresh: passed with an empty module cache ($fetched modules fetched during the run, no set-up line taken for a finding)"

# A planted finding: a pure function's result thrown away (staticcheck SA4017).
name="$(basename "$probe")"
cat >"$probe/probe.go" <<'GO'
// Package probe holds a planted lint finding.
package probe

import "strings"

// Probe calls a function without side effects and drops its result.
func Probe(s string) {
	strings.ToUpper(s)
}
GO
rc=0
LINT_CHECKS=staticcheck GOMODCACHE="$cache" GOFLAGS=-modcacherw scripts/lint.sh "./$name/" >"$cache.log" 2>&1 || rc=$?
if [ "$rc" = 0 ] || ! grep -q "$name/probe.go:8:.*SA4017" "$cache.log"; then
	cat "$cache.log"
	echo "lint-fresh: FAIL: the planted finding (SA4017 in $name/probe.go) was not reported, or the lint passed (exit $rc)"
	rm -f "$cache.log"
	exit 1
fi
rm -f "$cache.log"
echo "lint-fresh: the planted finding was reported and failed the lint"
