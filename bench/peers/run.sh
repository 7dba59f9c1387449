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
# The build dir is shared: measure a copy of the binary, so that a rebuild
# during the run cannot change what the later repetitions measure.
SRC_BIN=${NEODB_BIN:-$PWD/build/tools/neodb/neodb}
mkdir -p build/cache/peers
SUM=$(sha256sum "$SRC_BIN" | cut -c1-12)
cp -f "$SRC_BIN" "build/cache/peers/neodb-$SUM"
export NEODB_BIN=$PWD/build/cache/peers/neodb-$SUM
echo "run: neodb binary $SRC_BIN (sha256 $SUM, built $(date -u -r "$SRC_BIN" +%FT%TZ)) copied to $NEODB_BIN"
exec nice -n 5 "$VENV/bin/python" bench/peers/peers.py all "$@"
