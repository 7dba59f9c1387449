#!/usr/bin/env bash
# bench/peers/run.sh: neodb side by side with Milvus Lite, Chroma, LanceDB,
# pgvector and FAISS on the same vectors, end to end (issue 51).
#
#   bash bench/peers/run.sh [--size small|100k] [--reps N] [--systems a,b,...]
#                           [--pass-seconds P] [--text-docs N] [--no-text]
#
# Installs the peers (setup.sh: their own venv, pinned; the ONNX model the
# peers' client embeds with), builds neodb's CLI if it is missing, embeds the
# corpus once with neodb (data.py, cached under build/cache/peers/<size>), then
# runs every system at nice 5: the vector workloads (peers.py all), then the
# ingest of text with embedding (text_ingest.py all; --no-text skips it). Each
# writes its table and bench/peers/results/<host>-<date>-[text-]<size>.json.
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

# Arguments: the vector run takes them all but the text ones; the text run
# takes --size, --reps and --systems, and --text-docs as its --docs.
VEC=() TEXT=() RUN_TEXT=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-text) RUN_TEXT=0; shift ;;
    --text-docs) TEXT+=(--docs "$2"); shift 2 ;;
    --size|--reps|--systems) VEC+=("$1" "$2"); TEXT+=("$1" "$2"); shift 2 ;;
    *) VEC+=("$1"); shift ;;
  esac
done
START=$(date +%s)
nice -n 5 "$VENV/bin/python" bench/peers/peers.py all "${VEC[@]}"
if [ "$RUN_TEXT" = 1 ]; then
  nice -n 5 "$VENV/bin/python" bench/peers/text_ingest.py all "${TEXT[@]}"
fi
echo "run: $(( $(date +%s) - START )) s from the first system to the last (data set and setup not counted)"
