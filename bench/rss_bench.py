#!/usr/bin/python3
"""rss_bench: resident memory of `neodb serve` over many mixed requests and after
an idle pause, per allocator setting (issue 19, "Bounded memory").

  /usr/bin/python3 bench/rss_bench.py [--build build] [--neodb BIN] [--requests 200000] [--docs 2000]
      [--warmup 10000] [--idle 45] [--variants NAME,...] [--trace] [--model fake|default|DIR]
      [--near-text-only | --ingest-only] [--sample-every 20000] [--slope-after 0] [--heaptrack FILE] [--smaps DIR]

For each variant it starts the server on 127.0.0.1 (free port) with the fake
embedder and a metrics endpoint, creates an HNSW collection with a keyword
index, loads --docs documents and runs --warmup mixed requests; RSS then is
the *start*. It runs --requests mixed requests from 8 client threads:

  35% near-text (vector)   15% keyword   15% hybrid   10% get of 8 ids
  15% upsert overwriting 8 existing ids
  10% delete 4 ids, then upsert them again (the live count stays --docs)

and samples VmRSS every second, then sends nothing for --idle seconds and
samples on. Peak is VmHWM (the kernel's high-water mark), checked against
--ceiling-mib (300: the ceiling bench/README.md states for this load). The server's own
view is sampled too: RocksDB memtables and block cache (metrics endpoint),
vectors in the HNSW index and the keyword index's estimated heap (Describe);
--trace prints those samples every 20k requests. At the end it checks that
the live document count is still --docs.

Issue 49 options: --model default serves the shipped default model instead of
the fake embedder (the query of each near-text call is then embedded);
--near-text-only makes every request a vector-mode near-text call;
--ingest-only makes every request an upsert of 8 existing ids with new text
(embedded; the live count stays --docs, and the HNSW index is rebuilt each
time its tombstones pass 20%, so its size is a sawtooth the trace shows);
--sample-every N samples every N requests and prints the RSS slope (MiB per
100k requests, least squares over the samples from --slope-after on);
--heaptrack FILE attaches heaptrack after the warm-up; --smaps DIR keeps the
server's /proc/PID/smaps at every sample. The server's CPU seconds are printed.

Not a test: numbers depend on the machine and on what else runs on it, which
is printed too.
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
import threading
import time
import urllib.request

JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
# name -> (environment, extra serve flags). Every variant but the first runs
# with the server's RocksDB memtable budget (--rocksdb-memtable-mib, default
# 32); the first shows RocksDB's own defaults, as the server had them before.
ARENA2 = {"MALLOC_ARENA_MAX": "2"}
NO_TRIM = ["--idle-trim", "0"]
# arena2 = glibc with MALLOC_ARENA_MAX=2; idle trim = the server's --idle-trim
# (on by default, tools/neodb/idle_trim.h).
VARIANTS = {
    "arena2 + RocksDB default memtables": (ARENA2, NO_TRIM + ["--rocksdb-memtable-mib", "0"]),
    "glibc": ({}, NO_TRIM),
    "arena2": (ARENA2, NO_TRIM),
    "jemalloc": ({"LD_PRELOAD": JEMALLOC}, NO_TRIM),
    "jemalloc background_thread": ({"LD_PRELOAD": JEMALLOC,
                                    "MALLOC_CONF": "background_thread:true"}, NO_TRIM),
    "glibc + idle trim": ({}, []),
    "arena2 + idle trim": (ARENA2, []),
    # Blocks of 64 KiB and more always mmapped (glibc's threshold otherwise rises to 32 MiB
    # after the first free of such a block), so a freed one goes back to the OS at once.
    "glibc mmap 64k": ({"MALLOC_MMAP_THRESHOLD_": "65536"}, NO_TRIM),
    "glibc encoder-threads 1": ({}, NO_TRIM + ["--encoder-threads", "1"]),
    "arena1": ({"MALLOC_ARENA_MAX": "1"}, NO_TRIM),
    "glibc no tcache": ({"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"}, NO_TRIM),
}
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray").split()


def proc_status(pid, field):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(field + r":\s+(\d+)", f.read()).group(1))


def find_descendant(root, comm):
    """The first process named comm under root (breadth first), or None."""
    todo = [root]
    while todo:
        pid = todo.pop(0)
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == comm:
                    return pid
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return None


def text(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


class Server:
    """`neodb serve` in a temporary data directory; stderr kept for its log."""

    def __init__(self, binary, env_extra, flags, tmp, model_flags=("--fake-model", "64"),
                 wrapper=()):
        self.log_path = os.path.join(tmp, "serve.log")
        self.log = open(self.log_path, "w")
        env = dict(os.environ, **env_extra)
        self.p = subprocess.Popen(
            list(wrapper) + [binary, "serve", "--data-dir", tmp + "/data",
             "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", *model_flags,
             "--snapshot-interval", "0"] + flags,
            stdout=subprocess.PIPE, stderr=self.log, env=env, text=True)
        self.port = self.metrics_port = None
        for line in self.p.stdout:
            m = re.search(r"\(metrics port (\d+)\)", line)
            if m:
                self.metrics_port = int(m.group(1))
            m = re.search(r"\(port (\d+)\)", line)
            if m:
                self.port = int(m.group(1))
                break
        if self.port is None:
            raise RuntimeError(f"server did not start; see {self.log_path}")
        # Under a wrapper (heaptrack) the server is a descendant of the Popen'd process.
        self.pid = self.p.pid
        if wrapper:
            self.pid = find_descendant(self.p.pid, os.path.basename(binary)[:15]) or self.p.pid

    def rss(self):
        return proc_status(self.pid, "VmRSS")

    def metrics(self):
        body = urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics",
                                      timeout=10).read().decode()
        out = {}
        for name, value in re.findall(r'^neodb_rocksdb_property\{name="rocksdb\.([a-z-]+)"\} (\d+)',
                                      body, re.M):
            out[name] = int(value)
        return out

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=60)
        self.log.close()


def run_variant(build, env_extra, flags, a):
    sys.path.insert(0, os.path.join(build, "proto", "python"))
    import grpc
    from neodb.v1 import neodb_pb2 as pb, neodb_pb2_grpc as rpc

    with tempfile.TemporaryDirectory() as tmp:
        model_flags = (("--fake-model", "64") if a.model == "fake" else
                       () if a.model == "default" else ("--model", a.model))
        srv = Server(a.neodb or os.path.join(build, "tools/neodb/neodb"), env_extra, flags, tmp,
                     model_flags, a.wrapper.split() if a.wrapper else ())
        try:
            ch = grpc.insecure_channel(f"127.0.0.1:{srv.port}")
            cols, docs, search = rpc.CollectionsStub(ch), rpc.DocumentsStub(ch), rpc.SearchStub(ch)
            spec = pb.CollectionSpec(name="c", analyzer="english")
            spec.index.type = "hnsw"
            cols.Create(pb.CreateCollectionRequest(spec=spec), timeout=30)

            def doc(r, i):
                return pb.Document(id=f"d{i}", text=text(r, 12).encode())

            rng = random.Random(1)
            for b in range(0, a.docs, 100):
                docs.Upsert(pb.UpsertRequest(collection="c", documents=[
                    doc(rng, i) for i in range(b, min(b + 100, a.docs))]), timeout=60)

            def one(i):
                r = random.Random(i)
                op = (r.randrange(35) if a.near_text_only else 80 if a.ingest_only else
                      r.randrange(100))
                if op < 65:
                    mode = "vector" if op < 35 else "keyword" if op < 50 else "hybrid"
                    search.NearText(pb.NearTextRequest(collection="c", query=text(r, 4).encode(),
                                                       k=10, mode=mode), timeout=60)
                elif op < 75:
                    docs.Get(pb.GetRequest(collection="c", ids=[
                        f"d{r.randrange(a.docs)}" for _ in range(8)]), timeout=60)
                elif op < 90:
                    docs.Upsert(pb.UpsertRequest(collection="c", documents=[
                        doc(r, r.randrange(a.docs)) for _ in range(8)]), timeout=60)
                else:
                    ids = [r.randrange(a.docs) for _ in range(4)]
                    docs.Delete(pb.DeleteRequest(collection="c", ids=[f"d{i}" for i in ids]),
                                timeout=60)
                    docs.Upsert(pb.UpsertRequest(collection="c", documents=[
                        doc(r, i) for i in ids]), timeout=60)

            def describe():
                if a.smaps:
                    with open(f"/proc/{srv.pid}/smaps") as src, \
                            open(os.path.join(a.smaps, f"smaps.{time.time():.0f}"), "w") as dst:
                        dst.write(src.read())
                info = cols.Describe(pb.DescribeCollectionRequest(name="c"), timeout=30).info
                m = srv.metrics()
                return {"rss": srv.rss(), "threads": proc_status(srv.pid, "Threads"),
                        "count": info.count, "index": info.index_size,
                        "keyword": info.keyword.memory_bytes,
                        "memtables": m.get("cur-size-all-mem-tables", 0),
                        "cache": m.get("block-cache-usage", 0)}

            samples = []  # (seconds since load start, RSS KiB)
            stop = threading.Event()

            def sampler(t0):
                while not stop.wait(1.0):
                    samples.append((time.time() - t0, srv.rss()))

            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                list(pool.map(one, range(10**9, 10**9 + a.warmup)))
                if a.heaptrack:
                    # heaptrack attached after the warm-up (through gdb): it sees what the
                    # load allocates, and what of that is still live when the server stops.
                    tracker = subprocess.Popen(["heaptrack", "-o", a.heaptrack, "-p",
                                                str(srv.pid)], stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL)
                    time.sleep(a.heaptrack_wait)
                start = describe()
                trace = [(0, start)]
                t0 = time.time()
                th = threading.Thread(target=sampler, args=(t0,), daemon=True)
                th.start()
                step = a.sample_every
                for b in range(0, a.requests, step):
                    list(pool.map(one, range(b, min(b + step, a.requests))))
                    trace.append((min(b + step, a.requests), describe()))
            load_s = time.time() - t0
            end = trace[-1][1]
            time.sleep(a.idle)
            stop.set()
            th.join()
            idle = describe()
            peak = proc_status(srv.pid, "VmHWM")
            ch.close()
            srv.log.flush()
            with open(srv.log_path) as f:
                trims = [line.strip() for line in f if "idle:" in line]
            cpu = proc_cpu_seconds(srv.pid)
            if idle["count"] != a.docs:
                print(f"# warning: {idle['count']} live documents, expected {a.docs}")
            return {"start": start, "end": end, "idle": idle, "peak": peak,
                    "max_sampled": max(s[1] for s in samples), "trace": trace,
                    "rps": a.requests / load_s, "cpu_s": cpu, "load_s": load_s, "trims": trims, "idle_samples": [s for s in samples
                                                                 if s[0] > load_s]}
        finally:
            srv.stop()
            if a.heaptrack:
                tracker.wait(timeout=300)


def proc_cpu_seconds(pid):
    """User + system CPU seconds the server has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def slope_per_100k(trace, skip, less_rocksdb=False):
    """Least-squares slope of RSS (MiB per 100k requests) over the trace's samples after the
    first `skip` requests; with less_rocksdb, of RSS less RocksDB's memtables and block cache
    (which fill up to their budgets under writes, by design)."""
    pts = [(n, (d["rss"] * 1024 - (d["memtables"] + d["cache"] if less_rocksdb else 0)) / 2**20)
           for n, d in trace if n >= skip]
    if len(pts) < 2:
        return float("nan")
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    den = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / den * 1e5 if den else float("nan")


def mib(kib):
    return f"{kib / 1024:.1f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--neodb", help="the server binary (default: BUILD/tools/neodb/neodb)")
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=10000)
    ap.add_argument("--idle", type=float, default=45)
    ap.add_argument("--variants", default=",".join(VARIANTS),
                    help="comma-separated names from: " + ", ".join(VARIANTS))
    ap.add_argument("--ceiling-mib", type=float, default=300,
                    help="the stated ceiling the peak is checked against (bench/README.md)")
    ap.add_argument("--trace", action="store_true",
                    help="print RSS, memtables, block cache and index sizes every --sample-every requests")
    ap.add_argument("--sample-every", type=int, default=20000,
                    help="requests between two samples of the trace (and of the slope)")
    ap.add_argument("--model", default="fake",
                    help="fake (--fake-model 64, the default), default (the shipped default model) "
                         "or a model directory")
    ap.add_argument("--near-text-only", action="store_true",
                    help="every request a near-text call in vector mode (the query is embedded)")
    ap.add_argument("--ingest-only", action="store_true",
                    help="every request an upsert of 8 existing ids with new text (embedded)")
    ap.add_argument("--wrapper", help="command the server runs under (its process must keep the "
                    "binary's name)")
    ap.add_argument("--smaps", metavar="DIR",
                    help="copy the server's /proc/PID/smaps into DIR at every sample")
    ap.add_argument("--heaptrack", metavar="FILE",
                    help="attach heaptrack (heaptrack -p) after the warm-up, writing FILE.zst")
    ap.add_argument("--heaptrack-wait", type=float, default=15,
                    help="seconds to let heaptrack attach before the load starts")
    ap.add_argument("--slope-after", type=int, default=0,
                    help="the RSS slope counts the samples from this many requests on (warm-up)")
    a = ap.parse_args()
    if a.smaps:
        os.makedirs(a.smaps, exist_ok=True)
    model = "?"
    with open("/proc/cpuinfo") as f:
        m = re.search(r"model name\s*:\s*(.*)", f.read())
        model = m.group(1) if m else model
    print(f"# rss_bench: {platform.node()} {platform.machine()}, {model}, {os.cpu_count()} CPUs, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"# model {a.model}; {a.docs} documents, {a.warmup} warm-up + {a.requests} "
          f"{'near-text' if a.near_text_only else 'upsert' if a.ingest_only else 'mixed'} "
          f"requests from 8 "
          f"clients, then {a.idle:.0f} s idle")
    rows = []
    for name in a.variants.split(","):
        env, flags = VARIANTS[name]
        r = run_variant(a.build, env, flags, a)
        rows.append((name, r))
        s, e, i = r["start"]["rss"], r["end"]["rss"], r["idle"]["rss"]
        print(f"# {name}: start {mib(s)} MiB, peak {mib(r['peak'])}, end {mib(e)}, "
              f"idle {mib(i)} ({(i - s) * 100 / s:+.1f}%), {r['rps']:.0f} requests/s, "
              f"load average {os.getloadavg()[0]:.2f}; server CPU {r['cpu_s']:.0f} s over "
              f"{r['load_s']:.0f} s of load + idle; RSS slope "
              f"{slope_per_100k(r['trace'], a.slope_after):+.1f} MiB per 100k requests "
              f"(samples from {a.slope_after}); less memtables and block cache "
              f"{slope_per_100k(r['trace'], a.slope_after, True):+.1f}", flush=True)
        if a.trace:
            print("#   requests | RSS MiB | memtables MiB | block cache MiB | HNSW vectors "
                  "| keyword MiB | live docs | threads")
            for n, d in r["trace"] + [("idle", r["idle"])]:
                print(f"#   {n} | {mib(d['rss'])} | {d['memtables'] / 2**20:.1f} "
                      f"| {d['cache'] / 2**20:.1f} | {d['index']} | {d['keyword'] / 2**20:.2f} "
                      f"| {d['count']} | {d['threads']}")
            print("#   idle RSS (MiB, every 5 s): " + " ".join(
                mib(kib) for _, kib in r["idle_samples"][::5]))
            for line in r["trims"]:
                print("#   server: " + line[line.index("idle:"):])
            sys.stdout.flush()
    print(f"| variant | start (MiB) | peak (MiB) | peak under {a.ceiling_mib:.0f} | end of load (MiB) "
          "| after idle (MiB) | idle vs start | within 10% | requests/s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, r in rows:
        s, i = r["start"]["rss"], r["idle"]["rss"]
        under = "yes" if r["peak"] <= a.ceiling_mib * 1024 else "no"
        print(f"| {name} | {mib(s)} | {mib(r['peak'])} | {under} | {mib(r['end']['rss'])} | {mib(i)} "
              f"| {(i - s) * 100 / s:+.1f}% | {'yes' if i <= 1.1 * s else 'no'} "
              f"| {r['rps']:.0f} |")


if __name__ == "__main__":
    main()
