#!/usr/bin/env bash
# Checks a running `ttlpred serve` against its OpenAPI document (docs/openapi.json, served at
# /openapi.json) with schemathesis: generated requests for every operation, and every reply
# checked for a documented status, content type and schema, and for no server error.
# Optional: skipped (exit 0, with a line saying so) where schemathesis is not installed
# (scripts/setup-optional.sh installs it from PyPI).
#   scripts/check-openapi.sh [BUILD_DIR] [EXAMPLES_PER_OPERATION]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
examples=${2:-100}
python=${PYTHON:-python3}
if ! "$python" -c 'import schemathesis' 2>/dev/null; then
  echo "check-openapi: skipped: schemathesis is not installed (scripts/setup-optional.sh)"
  exit 0
fi
work=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
"$build/ttlpred" generate --jobs 3000 --seed 5 --out "$work/trace.csv" >/dev/null
"$build/ttlpred" train --data "$work/trace.csv" --out "$work/model" --epochs 2 --hidden 32 --quiet >/dev/null 2>&1
# With an admin token, as a deployment runs it: the checker then also sees /v1/outcomes and
# /admin/reload refuse requests without it (401), as the document says.
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/token"
chmod 600 "$work/token"
"$build/ttlpred" serve --model "$work/model" --listen 127.0.0.1:0 --admin-token-file "$work/token" >"$work/serve.log" 2>&1 &
server=$!
url=
for _ in $(seq 100); do
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$work/serve.log" | head -1 || true)
  [ -n "$url" ] && "$python" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + "/readyz", timeout=1)' "$url" 2>/dev/null && break
  sleep 0.1
done
[ -n "$url" ] || { cat "$work/serve.log"; echo "check-openapi: the service did not start"; exit 1; }
echo "check-openapi: $url, $examples examples per operation"
"$python" -m schemathesis.cli run "$url/openapi.json" --checks all -H "Authorization: Bearer $(cat "$work/token")" --hypothesis-max-examples "$examples" \
  --hypothesis-seed 1 --hypothesis-suppress-health-check all --show-errors-tracebacks
