#!/usr/bin/env bash
# The libFuzzer targets of tests/fuzz (README.md there), built with clang-14
# and ASan/UBSan into ./build-fuzz (NEODB_FUZZ=ON).
#
#   tools/fuzz.sh build                  configure and build every target
#   tools/fuzz.sh smoke                  build, then the short deterministic run
#                                        of each target (ctest -L fuzz)
#   tools/fuzz.sh run TARGET [SECONDS]   fuzz one target (default 600 s); new
#                                        inputs go to build-fuzz/corpus/TARGET,
#                                        crashes to build-fuzz/crashes/, the log
#                                        to build-fuzz/logs/TARGET.log
#   tools/fuzz.sh list                   the target names
#
# A crash found by `run`: fix it, then copy the crash file into
# tests/fuzz/corpus/TARGET/ (it becomes a regression input of `smoke`).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${NEODB_FUZZ_BUILD_DIR:-build-fuzz}
JOBS=${NEODB_JOBS:-$(nproc)}
TARGETS=(safetensors config tokenize tokenizer_load filter index_snapshot keyword_snapshot
         ingest_jsonl)

build() {
  CC=${CC:-clang-14} CXX=${CXX:-clang++-14} cmake -S . -B "$BUILD_DIR" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNEODB_FUZZ=ON
  cmake --build "$BUILD_DIR" -j"$JOBS" --target neodb_fuzz
}

case "${1:-}" in
  build)
    build
    ;;
  smoke)
    build
    ctest --test-dir "$BUILD_DIR" -L fuzz --output-on-failure
    ;;
  run)
    target=${2:?usage: tools/fuzz.sh run TARGET [SECONDS]}
    seconds=${3:-600}
    exe=$BUILD_DIR/tests/fuzz/fuzz_$target
    [ -x "$exe" ] || { echo "fuzz.sh: $exe is not built (tools/fuzz.sh build)" >&2; exit 2; }
    mkdir -p "$BUILD_DIR/corpus/$target" "$BUILD_DIR/crashes" "$BUILD_DIR/logs"
    # The committed seeds are read, never written: new inputs go to the
    # build directory's corpus, which later runs resume from.
    rc=0
    "$exe" -max_total_time="$seconds" -print_final_stats=1 -max_len=8192 -rss_limit_mb=2048 \
      -artifact_prefix="$BUILD_DIR/crashes/$target-" \
      "$BUILD_DIR/corpus/$target" "tests/fuzz/corpus/$target" \
      >"$BUILD_DIR/logs/$target.log" 2>&1 || rc=$?
    # The last status line (execs, cov:, ft:) and the final stats, for
    # tests/fuzz/README.md.
    grep -E "^#[0-9]+" "$BUILD_DIR/logs/$target.log" | tail -n 1
    grep -E "^stat::|^SUMMARY|^==[0-9]+==ERROR" "$BUILD_DIR/logs/$target.log" || true
    if [ "$rc" -ne 0 ]; then
      echo "fuzz.sh: $target failed (exit $rc); log $BUILD_DIR/logs/$target.log," \
        "inputs in $BUILD_DIR/crashes/" >&2
      exit 1
    fi
    ;;
  list)
    printf '%s\n' "${TARGETS[@]}"
    ;;
  *)
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
