#!/usr/bin/python3
"""SciFact through the real server, in every search mode.

    research/eval_search_modes.py [--model DIR] [--data ../shared/data/scifact]
                               [--out DIR] [--neodb build/tools/neodb/neodb]
                               [--modes keyword,vector,hybrid] [--extra NAME:MODE:FUSION:ALPHA]
    research/eval_search_modes.py --server HOST:PORT --collection NAME [--data ...] [--modes ...]

Starts `neodb serve` on a fresh data directory (127.0.0.1, port 0) with the
model (default: the shipped default model), creates a collection (flat,
cosine, overflow chunk, analyzer english; --title-field to add one), ingests the
corpus through the Python client (text = title + " " + text, as
beir_eval.py's BM25 sees it; metadata title), runs the test queries in each
mode at k = 100, writes one run file per mode (query-id doc-id score) under
--out and scores it with `beir_eval.py score`. Prints a table of nDCG@10.

With --server (and --collection) it starts and ingests nothing: it runs the
queries against that live collection as it is (e.g. after `neodb adapt --apply`).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRC, "clients", "python"))


def start_server(neodb, data_dir, model):
    args = [neodb, "serve", "--listen", "127.0.0.1:0", "--data-dir", data_dir]
    if model:
        args += ["--model", model]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    port = [None]

    def read():
        for line in proc.stdout:
            if "(port " in line and port[0] is None:
                port[0] = int(line.split("(port ")[1].split(")")[0])
    threading.Thread(target=read, daemon=True).start()
    deadline = time.time() + 300
    while port[0] is None and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    if port[0] is None:
        proc.kill()
        sys.exit("eval_search_modes: the server did not start")
    return proc, "127.0.0.1:%d" % port[0]


def load_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_queries(data):
    qrels = os.path.join(data, "qrels", "test.tsv")
    ids = set()
    with open(qrels) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 3 and parts[0] != "query-id":
                ids.add(parts[0])
    return [q for q in load_jsonl(os.path.join(data, "queries.jsonl")) if q["_id"] in ids]


def score(data, run):
    out = subprocess.run([sys.executable, os.path.join(HERE, "corpus", "beir_eval.py"), "score",
                          data, run], capture_output=True, text=True, check=True).stdout
    m = re.search(r"nDCG@10\s*[=:]?\s*([0-9.]+)", out)
    return (float(m.group(1)) if m else None), out.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="", help="checkpoint (default: the shipped model)")
    ap.add_argument("--data", default=os.path.join(SRC, "..", "shared", "data", "scifact"))
    ap.add_argument("--out", default="")
    ap.add_argument("--neodb", default=os.path.join(SRC, "build", "tools", "neodb", "neodb"))
    ap.add_argument("--modes", default="keyword,vector,hybrid")
    ap.add_argument("--extra", action="append", default=[],
                    help="NAME:MODE:FUSION:ALPHA, e.g. weighted03:hybrid:weighted:0.3")
    ap.add_argument("--title-field", default="",
                    help="index metadata title as a weighted field too (default: no, so "
                    "keyword mode indexes exactly what beir_eval.py bm25 does)")
    ap.add_argument("--title-weight", type=float, default=None)
    ap.add_argument("--keep-data", action="store_true")
    ap.add_argument("--server", default="",
                    help="host:port of a running server: evaluate --collection there as it is "
                    "(no server started, nothing ingested)")
    ap.add_argument("--collection", default="scifact")
    a = ap.parse_args()
    os.environ.setdefault("NEODB_PYTHON_PROTO_DIR",
                          os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
                              os.path.abspath(a.neodb)))), "proto", "python"))
    import neodb  # noqa: E402

    out = a.out or tempfile.mkdtemp(prefix="eval_modes_")
    os.makedirs(out, exist_ok=True)
    data_dir, proc = None, None
    if a.server:
        address, coll = a.server, a.collection
    else:
        data_dir = tempfile.mkdtemp(prefix="eval_modes_data_")
        proc, address = start_server(a.neodb, data_dir, a.model)
        coll = "scifact"
    try:
        c = neodb.connect(address, timeout=3600)
        collection = c.collections.get(coll)
        if not a.server:
            c.collections.create(coll, overflow="chunk", analyzer="english",
                                 title_field=a.title_field, title_weight=a.title_weight)
            corpus = load_jsonl(os.path.join(a.data, "corpus.jsonl"))
            docs = [{"id": d["_id"],
                     "text": (d.get("title", "") + " " + d.get("text", "")).strip(),
                     "metadata": {"title": d.get("title", "")}} for d in corpus]
            t0 = time.time()
            n = len(collection.insert_many(docs, batch_size=64))
            ingest_s = time.time() - t0
            print("ingested %d documents in %.1f s" % (n, ingest_s), flush=True)
        info = collection.info()
        if a.server:
            print("collection %s on %s: %d documents, model %s" %
                  (coll, address, info.count, info.model_id), flush=True)
        print("keyword index: %d documents, %d terms, %d postings" %
              (info.keyword["documents"], info.keyword["terms"], info.keyword["postings"]),
              flush=True)
        queries = test_queries(a.data)
        runs = [(m, m, "", None) for m in a.modes.split(",") if m]
        for e in a.extra:
            name, mode, fusion, alpha = e.split(":")
            runs.append((name, mode, fusion, float(alpha) if alpha else None))
        results = []
        for name, mode, fusion, alpha in runs:
            path = os.path.join(out, "run_%s.tsv" % name)
            alphas = []
            t0 = time.time()
            with open(path, "w") as f:
                for q in queries:
                    hits = collection.near_text(q["text"], limit=100, mode=mode, fusion=fusion,
                                                alpha=alpha, explain=True, include_text=False,
                                                include_metadata=False)
                    if hits:
                        alphas.append(hits[0].explain["alpha"])
                    for h in hits:
                        f.write("%s\t%s\t%.6f\n" % (q["_id"], h.id, h.score))
            secs = time.time() - t0
            ndcg, text = score(a.data, path)
            mean_alpha = sum(alphas) / len(alphas) if alphas else 0
            results.append((name, ndcg, mean_alpha, secs))
            print("%-12s nDCG@10 %.4f  mean alpha %.3f  (%d queries, %.1f s)" %
                  (name, ndcg, mean_alpha, len(queries), secs), flush=True)
        print("model: %s" % (info.model_id if a.server else (a.model or "shipped default")))
        print("| mode | nDCG@10 | mean alpha |")
        print("|---|---:|---:|")
        for name, ndcg, mean_alpha, _ in results:
            print("| %s | %.4f | %.3f |" % (name, ndcg, mean_alpha))
        print("run files in %s" % out)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=120)
            if not a.keep_data:
                shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
