#!/usr/bin/env bash
# Fails when a committed *_templ.go differs from what `templ generate`
# produces from its .templ source.
set -euo pipefail
cd "$(dirname "$0")/.."
sum() { find . -name '*_templ.go' -not -path './.git/*' -print0 | sort -z | xargs -0 -r sha256sum; }
before="$(sum)"
go tool templ generate -log-level error
after="$(sum)"
if [ "$before" != "$after" ]; then
	echo "templ output was stale; regenerated files:" >&2
	diff <(echo "$before") <(echo "$after") >&2 || true
	echo "run 'go tool templ generate' and commit the result" >&2
	exit 1
fi
if find . -name '*.templ' -not -path './.git/*' | grep -q .; then
	go tool templ fmt -fail . >/dev/null
fi
echo "templ: generated code is fresh"
