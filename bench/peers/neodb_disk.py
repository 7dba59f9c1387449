#!/usr/bin/python3
"""neodb_disk.py: neodb's data directory after the peers' load, by part, for one
or more server binaries in turn (the disk line of README.md, without the peers).

  /usr/bin/python3 bench/peers/neodb_disk.py --vectors 100000 BIN [BIN ...]

Loads --vectors random unit vectors (384 dimensions, seed 7; the bytes on disk
depend on the count and dimension, not on the values) the way the harness does
(NeodbSystem: external vectors, HNSW, BulkIngest 1,000 a batch, a `bucket`
field), takes an index snapshot, and prints the directory's size split into
RocksDB's WAL files (*.log), its SST files, index snapshots and the rest.
Uses the stubs the build generated (build/proto/python) when grpc_tools is
absent. Not a test.
"""
import argparse
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def sizes(data_dir):
    parts = {"wal": 0, "sst": 0, "snapshots": 0, "other": 0}
    for dirpath, _, files in os.walk(data_dir):
        for f in files:
            n = os.path.getsize(os.path.join(dirpath, f))
            if os.path.relpath(dirpath, data_dir).split(os.sep)[0] == "snapshots":
                parts["snapshots"] += n
            elif f.endswith(".log"):
                parts["wal"] += n
            elif f.endswith(".sst"):
                parts["sst"] += n
            else:
                parts["other"] += n
    return parts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--vectors", type=int, default=100000)
    a = ap.parse_args()
    cache = tempfile.mkdtemp(prefix="neodb_disk_cache_")
    stubs = os.path.join(cache, "stubs")
    try:
        import grpc_tools  # noqa: F401  (data.stubs generates them)
    except ImportError:
        shutil.copytree(os.path.join(ROOT, "build", "proto", "python"), stubs)
    sys.path.insert(0, HERE)
    import systems
    rng = np.random.default_rng(7)
    vecs = rng.standard_normal((a.vectors, 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ids = np.arange(a.vectors)
    buckets = rng.integers(0, 100, a.vectors)
    print(f"# {a.vectors} vectors x 384; MiB: wal | sst | snapshots | other | total")
    for binary in a.binaries:
        work = tempfile.mkdtemp(prefix="neodb_disk_")
        os.environ["NEODB_BIN"] = binary
        s = systems.NeodbSystem(work, cache)
        try:
            s.ingest(ids, vecs, buckets)
            s.after_load()
            p = sizes(s.data_dir)
        finally:
            s.close()
            shutil.rmtree(work, ignore_errors=True)
        mib = {k: v / 2**20 for k, v in p.items()}
        print(f"{binary}: {mib['wal']:.1f} | {mib['sst']:.1f} | {mib['snapshots']:.1f} | "
              f"{mib['other']:.1f} | {sum(mib.values()):.1f}", flush=True)
    shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
