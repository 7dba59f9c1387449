#!/usr/bin/env bash
# bench/peers/run.sh: neodb side by side with Milvus Lite, Chroma, LanceDB,
# pgvector and FAISS on the same vectors, end to end (issue 51).
#
#   bash bench/peers/run.sh [--size small|100k] [--reps N] [--systems a,b,...]
#
# Installs the peers (setup.sh: their own venv, pinned), builds neodb's CLI if
# it is missing, embeds the corpus once with neodb (data.py, cached under
# build/cache/peers/<size>), then runs every system (peers.py all) at nice 5
# and writes bench/peers/results/<host>-<date>-<size>.json and the table.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${PEERS_VENV:-/opt/neodb-peers/venv}
bash bench/peers/setup.sh
if [ ! -x build/tools/neodb/neodb ]; then
  if [ -f build/build.ninja ]; then
    flock build/.lock ninja -C build -j2 tools/neodb/neodb
  else
    bash tools/build.sh
  fi
fi
export NEODB_BIN=${NEODB_BIN:-$PWD/build/tools/neodb/neodb}
exec nice -n 5 "$VENV/bin/python" bench/peers/peers.py all "$@"
