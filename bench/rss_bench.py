#!/usr/bin/python3
"""rss_bench: resident memory of `neodb serve` over many mixed requests, per
allocator setting (issue 19: RSS grew ~3 KB/request under concurrent batched
queries and was never returned).

  /usr/bin/python3 bench/rss_bench.py [--build build] [--rounds 8] [--per-round 2000]
      [--upsert-every 0]

For each variant (glibc default; glibc with MALLOC_ARENA_MAX=2; jemalloc from
Debian's libjemalloc2 through LD_PRELOAD) it starts the server on 127.0.0.1
(free port) with the fake embedder, loads 2000 documents, then runs rounds of
requests from 8 client threads (near-text queries; with --upsert-every N,
every Nth request instead overwrites 16 of the loaded documents) and samples
VmRSS after each round. Prints a table: RSS after
the warm-up round, after the last round, and growth per request in between.
Not a test: numbers depend on the machine, which is printed too.
"""
import argparse
import concurrent.futures
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
import time

VARIANTS = [
    ("glibc", {}),
    ("glibc MALLOC_ARENA_MAX=2", {"MALLOC_ARENA_MAX": "2"}),
    ("jemalloc (LD_PRELOAD)", {"LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"}),
]
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray").split()


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def text(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def run_variant(build, env_extra, rounds, per_round, upsert_every):
    sys.path.insert(0, os.path.join(build, "proto", "python"))
    import grpc
    from neodb.v1 import neodb_pb2 as pb, neodb_pb2_grpc as rpc

    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, **env_extra)
        p = subprocess.Popen([os.path.join(build, "tools/neodb/neodb"), "serve", "--data-dir",
                              d + "/data", "--listen", "127.0.0.1:0", "--fake-model", "64",
                              "--snapshot-interval", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
        try:
            port = None
            for line in p.stdout:
                m = re.search(r"\(port (\d+)\)", line)
                if m:
                    port = int(m.group(1))
                    break
            ch = grpc.insecure_channel(f"127.0.0.1:{port}")
            cols, docs, search = rpc.CollectionsStub(ch), rpc.DocumentsStub(ch), rpc.SearchStub(ch)
            spec = pb.CollectionSpec(name="c")
            spec.index.type = "hnsw"
            cols.Create(pb.CreateCollectionRequest(spec=spec), timeout=30)
            rng = random.Random(1)
            for b in range(0, 2000, 100):
                docs.Upsert(pb.UpsertRequest(collection="c", documents=[
                    pb.Document(id=f"d{i}", text=text(rng, 12).encode()) for i in range(b, b + 100)]),
                    timeout=60)

            def one(i):
                r = random.Random(i)
                if upsert_every and i % upsert_every == upsert_every - 1:
                    docs.Upsert(pb.UpsertRequest(collection="c", documents=[
                        pb.Document(id=f"d{r.randrange(2000)}", text=text(r, 12).encode())
                        for _ in range(16)]), timeout=60)
                else:
                    search.NearText(pb.NearTextRequest(collection="c", query=text(r, 4).encode(), k=10,
                                                       mode="vector"), timeout=60)

            samples = []
            t0 = time.time()
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                for rnd in range(rounds):
                    list(pool.map(one, range(rnd * per_round, (rnd + 1) * per_round)))
                    samples.append(rss_kib(p.pid))
            secs = time.time() - t0
            ch.close()
            return samples, secs
        finally:
            p.terminate()
            p.wait(timeout=60)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--per-round", type=int, default=2000)
    ap.add_argument("--upsert-every", type=int, default=0)
    a = ap.parse_args()
    print(f"# rss_bench: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, "
          f"{a.rounds} rounds x {a.per_round} requests (near-text; every "
          f"{a.upsert_every or 'no'}th an upsert of 16), 8 clients")
    print("| allocator | RSS after round 1 (MiB) | RSS after last (MiB) | growth (bytes/request) "
          "| requests/s |")
    print("|---|---|---|---|---|")
    for name, env in VARIANTS:
        samples, secs = run_variant(a.build, env, a.rounds, a.per_round, a.upsert_every)
        growth = (samples[-1] - samples[0]) * 1024 / ((a.rounds - 1) * a.per_round)
        print(f"| {name} | {samples[0] / 1024:.1f} | {samples[-1] / 1024:.1f} | {growth:.0f} "
              f"| {a.rounds * a.per_round / secs:.0f} |", flush=True)


if __name__ == "__main__":
    main()
