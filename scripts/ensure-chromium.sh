#!/usr/bin/env bash
# Makes sure headless Chromium is installed for the browser tests
# (internal/browsertest). Quiet and quick when it already is; otherwise it
# installs Debian's `chromium` and a font with apt-get. Exits non-zero, naming
# what is missing, when it cannot.
#
# SKEWSCOPE_CHROMIUM overrides the binary (default: chromium on PATH, which
# is /usr/bin/chromium on Debian).
set -euo pipefail

want="${SKEWSCOPE_CHROMIUM:-chromium}"

find_bin() {
	if [[ "$want" == */* ]]; then
		[[ -x "$want" ]] && printf '%s\n' "$want"
	else
		command -v "$want" 2>/dev/null || true
	fi
}

bin="$(find_bin || true)"
if [[ -z "$bin" ]]; then
	if [[ -n "${SKEWSCOPE_CHROMIUM:-}" && "$want" == */* ]]; then
		echo "ensure-chromium: SKEWSCOPE_CHROMIUM=$want is not an executable file" >&2
		exit 1
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "ensure-chromium: '$want' is not installed and apt-get is not available;" >&2
		echo "  install Chromium by hand and set SKEWSCOPE_CHROMIUM to its path" >&2
		exit 1
	fi
	sudo=()
	if [[ "$(id -u)" -ne 0 ]]; then
		if command -v sudo >/dev/null 2>&1; then
			sudo=(sudo)
		else
			echo "ensure-chromium: '$want' is not installed; installing it needs root or sudo" >&2
			echo "  run as root: apt-get update && apt-get install -y chromium fonts-dejavu-core" >&2
			exit 1
		fi
	fi
	echo "ensure-chromium: installing chromium and fonts-dejavu-core with apt-get..." >&2
	start=$SECONDS
	log="$(mktemp)"
	trap 'rm -f "$log"' EXIT
	install() {
		"${sudo[@]}" apt-get update -qq &&
			"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				chromium fonts-dejavu-core
	}
	# One retry: a mirror that hiccups once should not fail CI.
	if ! install >"$log" 2>&1 && { sleep 5; ! install >>"$log" 2>&1; }; then
		tail -n 30 "$log" >&2
		echo "ensure-chromium: apt-get could not install the Debian packages 'chromium' and 'fonts-dejavu-core'" >&2
		exit 1
	fi
	bin="$(find_bin || true)"
	if [[ -z "$bin" ]]; then
		echo "ensure-chromium: apt-get succeeded but '$want' is still not an executable on PATH" >&2
		exit 1
	fi
	echo "ensure-chromium: installed in $((SECONDS - start))s" >&2
	"$bin" --version
	exit 0
fi

# Already installed: one line, the version, so CI logs say which one ran.
"$bin" --version 2>/dev/null || { echo "ensure-chromium: $bin --version failed" >&2; exit 1; }
