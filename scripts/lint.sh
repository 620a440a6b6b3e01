#!/usr/bin/env bash
# Static checks beyond go vet, with the tools pinned in go.mod:
#   staticcheck over every build configuration: no tags, then each tag;
#   deadcode: functions that no main package reaches, then functions that
#   no main package and no test of any tier reaches (which covers the
#   test-helper packages that the first run leaves out).
# Every check runs, and the script fails if any of them found something.
# A staticcheck finding that stays carries a //lint:ignore CHECK comment
# with its reason; deadcode's exceptions are the list below.
#
# On a machine whose module cache is empty the go command prints
# "go: downloading ..." (and, for the toolchain, "go: finding ...") lines
# on stderr. They are never findings: the modules and the two tools are
# fetched and built first, in a step of their own whose output is shown as
# set-up, and each check is then judged by its exit status and by what it
# prints on stdout, which is where both tools write their findings.
#
# Usage: scripts/lint.sh [package patterns]   (default ./...)
# LINT_CHECKS="staticcheck" runs staticcheck alone (default: both tools);
# scripts/lint-fresh.sh uses it for its planted finding.
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=("$@")
[ "${#pkgs[@]}" -gt 0 ] || pkgs=(./...)

# The build tags of the test tiers (see the Makefile targets of those names).
tags=(browser e2e prometheus)

# Packages that only tests import, so that no main package reaches them, by
# design; the -test run checks them instead.
test_helpers=(
	internal/browsertest # the Chromium driver of the browser and prometheus tiers
	internal/flinkreplay # serves recorded Flink REST answers to tests
	internal/smallfile/smallfiletest # the files every file reader's tests must refuse
)

# Files whose exported functions wait for their first caller in a main
# package, each with what will call it. The -test run below still checks
# them: every function in them must be reached by a test.
pending_callers=(
	# SQL key rows (issue 25): HashKeyRow and ParseSQLTypes, for a key row
	# given as bytes and a type list, wait for the JSON API's callers.
	assign/sqltype.go
	assign/keyrow.go
	# SQL plans (issue 25): KeyOf reads one description alone; the
	# collector reads whole plans (VertexKeys).
	sqlplan/keys.go
)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# setup runs a set-up command; its output (download and progress lines) is
# shown indented, and only its exit status counts.
setup() {
	if ! "$@" >"$work/setup.log" 2>&1; then
		sed 's/^/    /' "$work/setup.log"
		echo "lint: set-up step failed: $*"
		exit 1
	fi
	if [ -s "$work/setup.log" ]; then
		sed 's/^/    (set-up) /' "$work/setup.log"
	fi
}

echo "lint: fetching modules and building staticcheck and deadcode"
setup go mod download
setup go build -o "$work/bin/" honnef.co/go/tools/cmd/staticcheck golang.org/x/tools/cmd/deadcode

checks=" ${LINT_CHECKS:-staticcheck deadcode} "
failed=0

# check NAME CMD...: runs a check; what it prints on stdout is its findings.
# A check that fails with nothing on stdout failed to run: its stderr is the
# reason. Anything on stderr of a check that passed (a download line, say)
# is shown, never counted.
check() {
	local name="$1"
	shift
	local rc=0
	"$@" >"$work/out" 2>"$work/err" || rc=$?
	grep -vE '^go: (downloading|extracting|finding) ' "$work/err" >"$work/err.rest" || true
	if [ -s "$work/out" ]; then
		cat "$work/out" >>"$work/$name.findings"
	elif [ "$rc" != 0 ]; then
		cat "$work/err.rest"
		echo "lint: $name could not run (exit $rc): $*"
		failed=1
	fi
	if [ "$rc" = 0 ] && [ -s "$work/err.rest" ]; then
		sed "s/^/    ($name, stderr) /" "$work/err.rest"
	fi
}

# staticcheck prints nothing when a configuration has no finding. A finding
# in untagged code shows up in every configuration: print it once.
if [[ "$checks" == *" staticcheck "* ]]; then
	echo "staticcheck ${pkgs[*]} (and -tags ${tags[*]})"
	check staticcheck "$work/bin/staticcheck" "${pkgs[@]}"
	for t in "${tags[@]}"; do
		check staticcheck "$work/bin/staticcheck" -tags "$t" "${pkgs[@]}"
	done
	if [ -s "$work/staticcheck.findings" ]; then
		sort -u "$work/staticcheck.findings"
		echo "staticcheck: findings above"
		failed=1
	fi
fi

if [[ "$checks" == *" deadcode "* ]]; then
	echo "deadcode ${pkgs[*]}"
	check deadcode "$work/bin/deadcode" "${pkgs[@]}"
	helpers="$(IFS='|'; echo "${test_helpers[*]}")"
	if [ -s "$work/deadcode.findings" ]; then
		pending="$(IFS='|'; echo "${pending_callers[*]//./\\.}")"
		out="$(grep -vE "^($helpers)/" "$work/deadcode.findings" | grep -vE "^($pending):" || true)"
		rm "$work/deadcode.findings"
		if [ -n "$out" ]; then
			echo "$out"
			echo "deadcode: no main package reaches the functions above"
			failed=1
		fi
	fi

	all="$(IFS=,; echo "${tags[*]}")"
	echo "deadcode -test -tags $all ${pkgs[*]}"
	check deadcode "$work/bin/deadcode" -test -tags "$all" "${pkgs[@]}"
	if [ -s "$work/deadcode.findings" ]; then
		cat "$work/deadcode.findings"
		echo "deadcode: no main package and no test reaches the functions above"
		failed=1
	fi
fi

if [ "$failed" = 0 ]; then
	echo "lint: no findings"
fi
exit "$failed"
