#!/usr/bin/env bash
# The main job, on a fresh Debian 12 machine (as root): install dependencies,
# build, start `neodb serve` on loopback, ingest a sample of real text through
# the streaming API, run near-text searches in the default (hybrid: BM25 and
# vector legs, fused) mode, with and without a metadata filter, print the
# server's stats, and shut the server down cleanly.
#
# Model: the default model neodb ships (encoder/default_model/, a small
# NeoBERT-architecture encoder trained by research/default_model/train_default_model.sh; see
# its README.md for what it scores). Pass MODEL=DIR to serve another
# checkpoint (e.g. chandar-lab/NeoBERT downloaded by you).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
bash tools/build.sh

NEODB=build/tools/neodb/neodb
WORK=${NEODB_DEMO_DIR:-build/demo}
DOCS=${DEMO_DOCS:-2000}
PY=/usr/bin/python3
rm -rf "$WORK"
mkdir -p "$WORK"

# Real text: SciFact abstracts when ../shared/data is present, else the
# licence texts every Debian machine carries, one paragraph per document.
"$PY" - "$WORK/docs.jsonl" "$DOCS" <<'PYEOF'
import glob, json, os, sys
out, limit = sys.argv[1], int(sys.argv[2])
docs = []
corpus = "../shared/data/scifact/corpus.jsonl"
if os.path.exists(corpus):
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            docs.append({"id": "scifact-" + d["_id"], "text": (d["title"] + ". " + d["text"]).strip(),
                         "metadata": {"source": "scifact", "length": len(d["text"])}})
            if len(docs) >= limit:
                break
else:
    for path in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        text = open(path, encoding="utf-8", errors="replace").read()
        for i, para in enumerate(p.strip() for p in text.split("\n\n")):
            if len(para) > 80:
                docs.append({"id": f"{os.path.basename(path)}-{i}", "text": " ".join(para.split()),
                             "metadata": {"source": os.path.basename(path), "length": len(para)}})
    docs = docs[:limit]
with open(out, "w", encoding="utf-8") as f:
    for d in docs:
        f.write(json.dumps(d) + "\n")
print(f"demo: {len(docs)} documents written to {out}", file=sys.stderr)
PYEOF

if [ -f ../shared/data/scifact/corpus.jsonl ]; then
  QUERY1="vitamin D deficiency and bone density"
  QUERY2="gene expression in cancer cells"
else
  QUERY1="you may copy and distribute modified versions of the program"
  QUERY2="there is no warranty for the software"
fi

PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ADDR=127.0.0.1:$PORT
MODEL_FLAG=()
[ -n "${MODEL:-}" ] && MODEL_FLAG=(--model "$MODEL")
"$NEODB" serve --data-dir "$WORK/data" "${MODEL_FLAG[@]}" --listen "$ADDR" > "$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill -TERM $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  "$NEODB" stats --server "$ADDR" > /dev/null 2>&1 && break
  kill -0 $SERVER 2>/dev/null || { cat "$WORK/server.log"; exit 1; }
  sleep 0.5
done

set -x
"$NEODB" collections create demo --server "$ADDR" --index flat --metric cosine --pooling mean --overflow chunk
"$NEODB" ingest --collection demo --server "$ADDR" "$WORK/docs.jsonl"
"$NEODB" collections describe demo --server "$ADDR"
# The default mode is hybrid; --explain shows each hit's keyword and vector rank.
"$NEODB" search --collection demo --server "$ADDR" -k 5 --explain "$QUERY1"
"$NEODB" search --collection demo --server "$ADDR" -k 3 --filter '{"field":"length","lt":600}' "$QUERY2"
"$NEODB" stats --server "$ADDR"
set +x

kill -TERM $SERVER
wait $SERVER
trap - EXIT
echo "demo: server stopped cleanly; data in $WORK/data, server log in $WORK/server.log"
