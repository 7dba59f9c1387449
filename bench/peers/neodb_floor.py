"""bench/peers/neodb_floor.py: what a neodb near-vector query costs apart from the
index search: the same Python gRPC client as peers.py against a collection of
one vector (HNSW, external, 384 dimensions), 2000 queries one at a time.

  /opt/neodb-peers/venv/bin/python bench/peers/neodb_floor.py [--cache build/cache/peers]

Prints JSON: p50/p99 of NearVector round trips (k=10, with and without a
filter), of Admin.Stats (the bare RPC), the client's time to build and
serialise the request, and the server's CPU per NearVector.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def pct(xs, p):
    return float(np.percentile(np.asarray(xs) * 1000.0, p))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "cache", "peers"))
    ap.add_argument("--n", type=int, default=2000)
    a = ap.parse_args()
    sys.path.insert(0, HERE)
    import data
    import psutil
    data.stubs(a.cache)
    work = tempfile.mkdtemp(prefix="neodb-floor-")
    binary = os.environ.get("NEODB_BIN", os.path.join(ROOT, "build", "tools", "neodb", "neodb"))
    srv = data.NeodbServer(binary, os.path.join(work, "data"), log=os.path.join(work, "serve.log"))
    pb, rpc = srv.pb, srv.rpc
    out = {}
    try:
        rpc.CollectionsStub(srv.channel).Create(pb.CreateCollectionRequest(spec=pb.CollectionSpec(
            name="floor", index=pb.IndexSpec(type="hnsw"), metric=pb.METRIC_COSINE,
            vectors=pb.VECTOR_SOURCE_EXTERNAL, dimension=384, analyzer="none")))
        v = np.random.RandomState(1).randn(384).astype(np.float32)
        v /= np.linalg.norm(v)
        rpc.DocumentsStub(srv.channel).Upsert(pb.UpsertRequest(collection="floor", documents=[
            pb.Document(id="0", vector=v.tolist(), metadata={"bucket": pb.Value(int_value=0)})]))
        search, admin = rpc.SearchStub(srv.channel), rpc.AdminStub(srv.channel)
        server = psutil.Process(srv.p.pid)

        def timed(fn):
            for _ in range(200):
                fn()
            lat = []
            t = server.cpu_times()
            c0 = t.user + t.system
            for _ in range(a.n):
                t0 = time.perf_counter()
                fn()
                lat.append(time.perf_counter() - t0)
            t = server.cpu_times()
            return {"p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99),
                    "server_cpu_ms": (t.user + t.system - c0) * 1000 / a.n}
        out["stats_rpc"] = timed(lambda: admin.Stats(pb.StatsRequest()))
        out["near_vector"] = timed(lambda: search.NearVector(pb.NearVectorRequest(
            collection="floor", vector=v.tolist(), k=10, ef_search=64)))
        out["near_vector_filter"] = timed(lambda: search.NearVector(pb.NearVectorRequest(
            collection="floor", vector=v.tolist(), k=10, ef_search=64, filter_json='{"field":"bucket","lt":10}')))
        lat = []
        for _ in range(a.n):
            t0 = time.perf_counter()
            pb.NearVectorRequest(collection="floor", vector=v.tolist(), k=10, ef_search=64).SerializeToString()
            lat.append(time.perf_counter() - t0)
        out["client_build_request"] = {"p50_ms": pct(lat, 50)}
    finally:
        srv.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
