#!/usr/bin/env bash
# run_smoke.sh FUZZER SEED_DIR RUNS: a short deterministic libFuzzer run
# (fixed seed, fixed number of inputs, no time limit) over the committed seed
# corpus. New inputs go to a temporary directory, so the corpus in the
# repository is never written; a crashing input is kept in
# $TMPDIR/neodb_fuzz_artifacts. Fails when the target crashes.
set -euo pipefail
fuzzer=$1 seeds=$2 runs=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
artifacts=${TMPDIR:-/tmp}/neodb_fuzz_artifacts
mkdir -p "$artifacts"
if ! "$fuzzer" -seed=1 -runs="$runs" -max_len=8192 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$(basename "$fuzzer")-" "$work" "$seeds" 2>&1 | tail -n 40; then
  echo "run_smoke.sh: $fuzzer crashed; the input is in $artifacts (reproduce: $fuzzer FILE)" >&2
  exit 1
fi
