"""bench/peers/faiss_simd.py: the index library alone, Debian's FAISS (what neodb links)
against PyPI's faiss-cpu, same vectors, same HNSW parameters as neodb (M=32,
efConstruction=40), one query at a time, in-process.

  /usr/bin/python3 bench/peers/faiss_simd.py --data build/cache/peers/100k      # Debian python3-faiss 1.7.3
  /opt/neodb-peers/venv/bin/python bench/peers/faiss_simd.py --data ...          # PyPI faiss-cpu

Prints one JSON object: the FAISS version and compile options, HNSW build
wall/CPU seconds, and per efSearch: recall@10 and p50/p99 single-query
latency; plus exact (IndexFlatIP) single-query latency.
"""
import argparse
import json
import os
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--efs", default="16,32,64,128")
    ap.add_argument("--threads", type=int, default=0, help="OpenMP threads for the build (0: FAISS's default)")
    a = ap.parse_args()
    import faiss
    if a.threads:
        faiss.omp_set_num_threads(a.threads)
    base = np.load(os.path.join(a.data, "base.npy"))
    queries = np.load(os.path.join(a.data, "queries.npy"))
    gt = np.load(os.path.join(a.data, "gt_all.npy"))[:, :10]
    out = {"faiss": faiss.__version__, "compile": faiss.get_compile_options().strip(), "n": len(base)}
    idx = faiss.IndexHNSWFlat(base.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
    idx.hnsw.efConstruction = 40
    t0, c0 = time.perf_counter(), time.process_time()
    idx.add(base)
    out["build_wall_s"] = time.perf_counter() - t0
    out["build_cpu_s"] = time.process_time() - c0
    out["search"] = {}
    for ef in [int(x) for x in a.efs.split(",")]:
        idx.hnsw.efSearch = ef
        for q in queries[:100]:
            idx.search(q.reshape(1, -1), 10)
        lat, hits = [], 0
        c0 = time.process_time()
        for i, q in enumerate(queries):
            t = time.perf_counter()
            _, I = idx.search(q.reshape(1, -1), 10)
            lat.append(time.perf_counter() - t)
            hits += len(set(I[0].tolist()) & set(gt[i].tolist()))
        out["search"][ef] = {"recall": hits / (10 * len(queries)),
                             "p50_ms": float(np.percentile(lat, 50) * 1000),
                             "p99_ms": float(np.percentile(lat, 99) * 1000),
                             "cpu_ms_per_query": (time.process_time() - c0) * 1000 / len(queries)}
    flat = faiss.IndexFlatIP(base.shape[1])
    flat.add(base)
    lat = []
    for q in queries[:200]:
        t = time.perf_counter()
        flat.search(q.reshape(1, -1), 10)
        lat.append(time.perf_counter() - t)
    out["flat_p50_ms"] = float(np.percentile(lat, 50) * 1000)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
