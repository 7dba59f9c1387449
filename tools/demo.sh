#!/usr/bin/env bash
# The main job, on a fresh Debian 12 machine (as root): install dependencies,
# build, start `neodb serve` on loopback, ingest a sample of real text through
# the streaming API, run near-text searches (with and without a metadata
# filter), print the server's stats, and shut the server down cleanly.
#
# Model: until neodb ships a trained default model, this uses a randomly
# initialised NeoBERT checkpoint (`neodb model init --preset small`), so the
# rankings show the machinery, not semantic quality. Pass MODEL=DIR to use a
# real checkpoint (e.g. chandar-lab/NeoBERT downloaded by you).
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

if [ -z "${MODEL:-}" ]; then
  VOCAB=../shared/data/bert-base-uncased/vocab.txt
  if [ ! -f "$VOCAB" ]; then
    VOCAB=build/testdata/bert-base-uncased/vocab.txt
    [ -f "$VOCAB" ] || bash tools/fetch_bert_vocab.sh "$VOCAB"
  fi
  MODEL="$WORK/model"
  "$NEODB" model init --preset small --seed 1 --vocab "$VOCAB" --out "$MODEL"
fi

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

PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ADDR=127.0.0.1:$PORT
"$NEODB" serve --data-dir "$WORK/data" --model "$MODEL" --listen "$ADDR" > "$WORK/server.log" 2>&1 &
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
"$NEODB" search --collection demo --server "$ADDR" -k 5 "vitamin D deficiency and bone density"
"$NEODB" search --collection demo --server "$ADDR" -k 3 --filter '{"field":"length","lt":600}' "gene expression in cancer cells"
"$NEODB" stats --server "$ADDR"
set +x

kill -TERM $SERVER
wait $SERVER
trap - EXIT
echo "demo: server stopped cleanly; data in $WORK/data, server log in $WORK/server.log"
