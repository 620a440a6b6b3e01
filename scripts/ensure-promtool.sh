#!/usr/bin/env bash
# Makes sure Prometheus's promtool is installed for the test that expands
# the README's alert rule with Prometheus's own template engine
# (web/alertlink_test.go). Quiet when it is; otherwise installs Debian's
# `prometheus` package (which ships promtool) with apt-get. Exits non-zero,
# naming what is missing, when it cannot.
set -euo pipefail

if [[ -n "${SKEWSCOPE_PROMTOOL:-}" ]]; then
	[[ -x "$SKEWSCOPE_PROMTOOL" ]] || { echo "ensure-promtool: SKEWSCOPE_PROMTOOL=$SKEWSCOPE_PROMTOOL is not an executable file" >&2; exit 1; }
	exit 0
fi
command -v promtool >/dev/null 2>&1 && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
	echo "ensure-promtool: promtool is not installed and apt-get is not available; install Prometheus and set SKEWSCOPE_PROMTOOL" >&2
	exit 1
fi
sudo=()
if [[ "$(id -u)" -ne 0 ]]; then
	command -v sudo >/dev/null 2>&1 || { echo "ensure-promtool: installing prometheus needs root or sudo: apt-get install -y prometheus" >&2; exit 1; }
	sudo=(sudo)
fi
echo "ensure-promtool: installing Debian's prometheus package with apt-get..." >&2
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
command -v promtool >/dev/null 2>&1 || { echo "ensure-promtool: apt-get succeeded but promtool is not on PATH" >&2; exit 1; }
