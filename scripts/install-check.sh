#!/usr/bin/env bash
# `cmake --install` into a scratch prefix, then checks what it put there: the program runs,
# `systemd-analyze verify` accepts the unit, the bash completion loads and completes, the
# docs are in place. Exit 77 (a skip for ctest) where systemd-analyze is missing.
#   scripts/install-check.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
"$prefix/bin/ttlpred" --version
test -f "$prefix/share/doc/ttlpred/service.md"
test -f "$prefix/share/doc/ttlpred/openapi.json"
test -f "$prefix/share/doc/ttlpred/serve.toml.example"
unit=$(find "$prefix" -name ttlpred.service)
grep -q "^ExecStart=$prefix/bin/ttlpred serve" "$unit"
grep -q '^Type=notify' "$unit"
# The completion offers the commands and a command's options.
out=$(PATH="$prefix/bin:$PATH" bash -c 'source "$1"; COMP_WORDS=(ttlpred ex); COMP_CWORD=1; _ttlpred; echo "${COMPREPLY[*]}";
  COMP_WORDS=(ttlpred serve --acc); COMP_CWORD=2; _ttlpred; echo "${COMPREPLY[*]}"' _ "$prefix/share/bash-completion/completions/ttlpred")
grep -q '^export$' <<<"$(head -1 <<<"$out")" || { echo "completion of 'ttlpred ex': $out"; exit 1; }
grep -q -- '--access-log' <<<"$out" || { echo "completion of 'ttlpred serve --acc': $out"; exit 1; }
if ! command -v systemd-analyze >/dev/null; then
  echo "install-check: systemd-analyze not found; unit not verified"
  exit 77
fi
# verify reads units from the given file; the binary it names must exist (it does, above).
SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "$unit"
echo "install-check: $unit verifies; completion and docs in place"
