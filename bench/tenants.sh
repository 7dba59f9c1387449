#!/bin/bash
# One multi-tenant collection vs a collection per tenant (bench/tenants_bench.cc):
# each design in its own process (resident memory is the process's), on the
# same host, one JSON line each. bench/README.md ## Tenants has a run.
#   bash bench/tenants.sh [BUILD_DIR] [TENANTS] [DOCS_PER_TENANT]
set -euo pipefail
build=${1:-build}
tenants=${2:-10000}
docs=${3:-10}
lscpu | grep -E "^Model name" || true
for run in "one-index HNSW32" "one-index Flat" "per-tenant HNSW32"; do
  set -- $run
  # The engine logs to stdout; the figures are the JSON line.
  "$build/bench/tenants_bench" --design "$1" --index "$2" --tenants "$tenants" --docs "$docs" \
    --dir "${TMPDIR:-/tmp}/neodb_tenants_bench_$$" | grep '^{'

done
