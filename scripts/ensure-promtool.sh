#!/usr/bin/env bash
# Makes sure Prometheus's promtool and server are installed: promtool for
# the tests that expand the alert rules with Prometheus's own template
# engine (web/alertlink_test.go, web/alertrules_test.go), the server for
# the prometheus tier (cmd/dashboard/prometheus_test.go). Quiet when they
# are; otherwise installs Debian's `prometheus` package (which ships both)
# with apt-get. Exits non-zero, naming what is missing, when it cannot.
#
# SKEWSCOPE_PROMTOOL and SKEWSCOPE_PROMETHEUS override the binaries
# (default: promtool and prometheus on PATH).
set -euo pipefail

# have NAME VAR: the binary VAR names, or NAME on PATH, is there.
have() {
	local name="$1" override="${!2:-}"
	if [[ -n "$override" ]]; then
		[[ -x "$override" ]] || { echo "ensure-promtool: $2=$override is not an executable file" >&2; exit 1; }
		return 0
	fi
	command -v "$name" >/dev/null 2>&1
}

missing=()
have promtool SKEWSCOPE_PROMTOOL || missing+=(promtool)
have prometheus SKEWSCOPE_PROMETHEUS || missing+=(prometheus)
[[ ${#missing[@]} -eq 0 ]] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "ensure-promtool: ${missing[*]} not installed and apt-get is not available; install Prometheus and set SKEWSCOPE_PROMTOOL and SKEWSCOPE_PROMETHEUS" >&2
	exit 1
fi
sudo=()
if [[ "$(id -u)" -ne 0 ]]; then
	command -v sudo >/dev/null 2>&1 || { echo "ensure-promtool: installing prometheus needs root or sudo: apt-get install -y prometheus" >&2; exit 1; }
	sudo=(sudo)
fi
echo "ensure-promtool: ${missing[*]} missing; installing Debian's prometheus package with apt-get..." >&2
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
install() {
	"${sudo[@]}" apt-get update -qq &&
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus
}
if ! install >"$log" 2>&1 && { sleep 5; ! install >>"$log" 2>&1; }; then
	tail -n 30 "$log" >&2
	echo "ensure-promtool: apt-get could not install the Debian package 'prometheus'" >&2
	exit 1
fi
for name in "${missing[@]}"; do
	command -v "$name" >/dev/null 2>&1 || { echo "ensure-promtool: apt-get succeeded but $name is not on PATH" >&2; exit 1; }
done
