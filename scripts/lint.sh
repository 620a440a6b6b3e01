#!/usr/bin/env bash
# Static checks beyond go vet, with the tools pinned in go.mod (go tool ...):
#   staticcheck over every build configuration: no tags, then each tag;
#   deadcode: functions that no main package reaches, then functions that
#   no main package and no test of any tier reaches (which covers the
#   test-helper packages that the first run leaves out).
# Every check runs, and the script fails if any of them found something.
# A staticcheck finding that stays carries a //lint:ignore CHECK comment
# with its reason; deadcode's exceptions are the list below.
set -euo pipefail
cd "$(dirname "$0")/.."

# The build tags of the test tiers (see the Makefile targets of those names).
tags=(browser e2e prometheus)

# Packages that only tests import, so that no main package reaches them, by
# design; the -test run checks them instead.
test_helpers=(
	internal/browsertest # the Chromium driver of the browser and prometheus tiers
	internal/flinkreplay # serves recorded Flink REST answers to tests
)

failed=0

# staticcheck prints nothing when a configuration has no finding. A finding
# in untagged code shows up in every configuration: print it once.
echo "go tool staticcheck ./... (and -tags ${tags[*]})"
out="$(
	go tool staticcheck ./... 2>&1 || true
	for t in "${tags[@]}"; do go tool staticcheck -tags "$t" ./... 2>&1 || true; done
)"
if [ -n "$out" ]; then
	sort -u <<<"$out"
	echo "staticcheck: findings above"
	failed=1
fi

echo "go tool deadcode ./..."
out="$(go tool deadcode ./...)"
helpers="$(IFS='|'; echo "${test_helpers[*]}")"
out="$(grep -vE "^($helpers)/" <<<"$out" || true)"
if [ -n "$out" ]; then
	echo "$out"
	echo "deadcode: no main package reaches the functions above"
	failed=1
fi

all="$(IFS=,; echo "${tags[*]}")"
echo "go tool deadcode -test -tags $all ./..."
out="$(go tool deadcode -test -tags "$all" ./...)"
if [ -n "$out" ]; then
	echo "$out"
	echo "deadcode: no main package and no test reaches the functions above"
	failed=1
fi

if [ "$failed" = 0 ]; then
	echo "lint: no findings"
fi
exit "$failed"
