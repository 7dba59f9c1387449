#!/usr/bin/env python3
"""The reference retrieval score of a sentence-transformers model on a BEIR
data directory: what neodb's vector mode is compared with.

Embeds the corpus (title + " " + text, as research/eval_search_modes.py ingests
it) and the test queries with SentenceTransformer.encode (the model's own
pooling, normalisation and max_seq_length truncation, as MTEB runs it),
ranks by cosine, writes a run file (query-id doc-id score, top 100) and
scores it with research/corpus/beir_eval.py, the scorer neodb's figures use.

Runs in the reference venv (research/reference/README: transformers, torch,
sentence-transformers from PyPI); one thread unless --threads.

  st_beir_eval.py --model DIR --data ../shared/data/scifact --out run.tsv
      [--query-prompt "query: "] [--doc-prompt "passage: "]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch
from sentence_transformers import SentenceTransformer

HERE = os.path.dirname(os.path.abspath(__file__))


def load_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--query-prompt", default="")
    ap.add_argument("--doc-prompt", default="")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    model = SentenceTransformer(a.model, device="cpu")
    corpus = load_jsonl(os.path.join(a.data, "corpus.jsonl"))
    ids = set()
    with open(os.path.join(a.data, "qrels", "test.tsv")) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 3 and parts[0] != "query-id":
                ids.add(parts[0])
    queries = [q for q in load_jsonl(os.path.join(a.data, "queries.jsonl")) if q["_id"] in ids]
    docs = [a.doc_prompt + (d.get("title", "") + " " + d.get("text", "")).strip() for d in corpus]
    d = model.encode(docs, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
    q = model.encode([a.query_prompt + x["text"] for x in queries], batch_size=32,
                     normalize_embeddings=True, convert_to_numpy=True)
    scores = q @ d.T
    with open(a.out, "w") as f:
        for i, query in enumerate(queries):
            top = np.argsort(-scores[i])[:100]
            for j in top:
                f.write("%s\t%s\t%.6f\n" % (query["_id"], corpus[j]["_id"], scores[i, j]))
    out = subprocess.run([sys.executable, os.path.join(HERE, "..", "corpus", "beir_eval.py"),
                          "score", a.data, a.out], capture_output=True, text=True, check=True)
    print(out.stdout.strip())
    print("model %s, max_seq_length %d, %d documents, %d queries" %
          (a.model, model.max_seq_length, len(docs), len(queries)))


if __name__ == "__main__":
    main()
