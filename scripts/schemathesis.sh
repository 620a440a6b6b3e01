#!/usr/bin/env bash
# Checks that the server and web/openapi.json agree, with Schemathesis (from
# PyPI, pinned, installed into a virtual environment under ~/.cache on first
# use): the dashboard binary runs its sandbox on a loopback port, and every
# operation of the description gets a bounded number of generated requests
# (a case count and a fixed seed, never a duration, so a loaded machine
# cannot make the run flaky or longer). scripts/schemathesis.toml says which
# checks run and where the description cannot say what the server refuses.
set -euo pipefail
cd "$(dirname "$0")/.."

version=4.32.5
cases="${SCHEMATHESIS_CASES:-100}"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/skewscope/schemathesis-$version"
st="$venv/bin/st"
if ! "$st" --version >/dev/null 2>&1; then
	echo "schemathesis: installing schemathesis $version into $venv (from PyPI)"
	command -v python3 >/dev/null || { echo "schemathesis: python3 is missing (apt-get install python3 python3-venv)"; exit 1; }
	rm -rf "$venv"
	mkdir -p "$(dirname "$venv")"
	log="$(mktemp)"
	if ! { python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check "schemathesis==$version"; } >"$log" 2>&1; then
		cat "$log"
		rm -f "$log"
		echo "schemathesis: could not install schemathesis $version"
		exit 1
	fi
	rm -f "$log"
fi

work="$(mktemp -d)"
pid=""
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/dashboard" ./cmd/dashboard
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
base="http://127.0.0.1:$port"
"$work/dashboard" --listen "127.0.0.1:$port" --log.level warn >"$work/dashboard.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
	curl -fsS "$base/readyz" >/dev/null 2>&1 && break
	kill -0 "$pid" 2>/dev/null || { cat "$work/dashboard.log"; echo "schemathesis: the dashboard exited"; exit 1; }
	sleep 0.2
done
curl -fsS "$base/readyz" >/dev/null || { cat "$work/dashboard.log"; echo "schemathesis: the dashboard never became ready"; exit 1; }

# Path parameters name a real sandbox job, vertex, cluster and topic (see
# scripts/schemathesis.toml), so that the live answers are checked against
# their schemas too, not only the 404s of made-up ids. The sandbox lists its
# jobs from its first poll on.
ids=""
for _ in $(seq 1 100); do
	ids="$(curl -fsS "$base/api/v1/jobs" | python3 -c '
import json, sys, urllib.request
jobs = [j for j in json.load(sys.stdin)["jobs"] if j["name"] == "orders-enrichment"]
if jobs:
    job = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/jobs/" + jobs[0]["id"]))
    if job["vertices"]:
        v = job["vertices"][0]
        print(job["id"], v["id"], job["name"], v["name"], sep="\t")
' "$base" 2>/dev/null || true)"
	[ -n "$ids" ] && break
	sleep 0.2
done
[ -n "$ids" ] || { cat "$work/dashboard.log"; echo "schemathesis: the sandbox listed no orders-enrichment job with a vertex"; exit 1; }
IFS=$'\t' read -r SKEWSCOPE_ST_JOB_ID SKEWSCOPE_ST_VERTEX_ID SKEWSCOPE_ST_JOB_NAME SKEWSCOPE_ST_VERTEX_NAME <<<"$ids"
export SKEWSCOPE_ST_JOB_ID SKEWSCOPE_ST_VERTEX_ID SKEWSCOPE_ST_JOB_NAME SKEWSCOPE_ST_VERTEX_NAME

echo "schemathesis: $cases cases per operation against the sandbox at $base (job $SKEWSCOPE_ST_JOB_ID, vertex $SKEWSCOPE_ST_VERTEX_ID)"
rc=0
"$st" --config-file scripts/schemathesis.toml run "$base/api/v1/openapi.json" --url "$base" \
	--max-examples "$cases" --seed 20261201 --generation-database none --no-color \
	--workers 1 --report junit --report-junit-path "$work/junit.xml" >"$work/st.log" 2>&1 || rc=$?
cat "$work/st.log"
if [ "$rc" != 0 ]; then
	echo "schemathesis: server and web/openapi.json disagree (exit $rc); see above"
	exit 1
fi
if grep -q 'panic' "$work/dashboard.log"; then
	cat "$work/dashboard.log"
	echo "schemathesis: the dashboard logged a panic"
	exit 1
fi
echo "schemathesis: server and web/openapi.json agree"
