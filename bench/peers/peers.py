"""bench/peers/peers.py: neodb side by side with its peers on the same vectors (issue 51).

  python bench/peers/peers.py all --size small|100k [--reps 3] [--systems a,b] [--qps-seconds S]
                                   [--pass-seconds P] [--pass-min-queries M]
  python bench/peers/peers.py one --system NAME --data DIR --out FILE   (one fresh load, one process)

`all` runs, for each repetition, every system in a fresh child process on a
fresh temp dir (one at a time), so each figure has one value per repetition:
  ingest: vectors/s from the first write to all vectors searchable through the
    ANN index (index build included; index build time also apart where the
    system builds it after the writes), wall and CPU (this process + the
    server's processes);
  tune: the cheapest setting of the system's ladder whose recall@10 over all
    queries is >= 0.95 against the exact top 10 (data.py);
  search: with that setting, one client, every query once after a warm-up
    pass: p50/p99 latency and recall; then 8 client threads for S seconds: QPS;
  filtered: bucket < 10 (10%) and bucket < 1 (1%), same setting: recall, p50, p99;
  memory: RSS (and PSS) after the searches of the processes that hold the
    data: the server's (neodb, PostgreSQL: all its processes, PSS summed) or,
    for the embedded ones, this process after it dropped its own copy of the
    vectors (its baseline before importing the peer is reported too);
  disk: du of the system's directory after load (neodb after a snapshot,
    PostgreSQL after a checkpoint, FAISS = the written index).
All clients are Python, the same for every system.

Query budget: each pass over the queries (a tuning step, the warm-up, the
measured pass, each filtered pass) stops once it has run P seconds and at
least M queries (default at 100k: 10 s and 200; at small: none). A system that
answers in under P/len(queries) seconds runs every query as before; a slow
one (Milvus Lite at ~40 ms, Chroma's filtered search at ~50 ms) runs a prefix
of the queries, the same prefix for every pass of the same length, and its
recall is over that prefix (each figure records how many queries it used).
"""
import argparse
import gc
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ORDER = ["neodb", "faiss-cpu", "milvus-lite", "chromadb", "lancedb", "pgvector"]
TARGET = 0.95


def proc_tree_cpu(pids):
    import psutil
    total = 0.0
    for pid in set(pids):
        try:
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def mem_of(pids):
    import psutil
    if not pids:
        pids = [os.getpid()]
    rss = pss = 0
    for pid in set(pids):
        try:
            m = psutil.Process(pid).memory_full_info()
            rss += m.rss
            pss += m.pss
        except psutil.Error:
            pass
    return rss, pss


def du(path):
    out = subprocess.run(["du", "-sb", path], capture_output=True, text=True)
    return int(out.stdout.split()[0]) if out.returncode == 0 else None


def recall(got, truth, k=10):
    """Over the queries answered: `got` may be a prefix of the queries."""
    hits = 0
    for g, t in zip(got, truth):
        hits += len(set(g[:k]) & set(int(x) for x in t[:k]))
    return hits / (k * min(len(got), len(truth)))


def run_queries(system, queries, setting, flt=None, k=10, budget=None):
    """Every query in order; with `budget` (seconds, min queries), stops after
    the first one to end past the seconds once at least min queries ran."""
    lat, got = [], []
    t0 = time.perf_counter()
    for i, q in enumerate(queries):
        if budget and budget[0] > 0 and i >= budget[1] and time.perf_counter() - t0 >= budget[0]:
            break
        t = time.perf_counter()
        got.append(system.search(q, k, setting, flt))
        lat.append(time.perf_counter() - t)
    return got, lat


def pct(xs, p):
    return float(np.percentile(np.asarray(xs) * 1000.0, p))


def one(a):
    import psutil
    sys.path.insert(0, HERE)
    base = np.load(os.path.join(a.data, "base.npy"))
    queries = np.load(os.path.join(a.data, "queries.npy"))
    buckets = np.load(os.path.join(a.data, "buckets.npy"))
    gt = {None: np.load(os.path.join(a.data, "gt_all.npy")), 10: np.load(os.path.join(a.data, "gt_f10.npy")),
          1: np.load(os.path.join(a.data, "gt_f1.npy"))}
    baseline_rss = psutil.Process().memory_info().rss
    import systems
    os.makedirs(a.tmp, exist_ok=True)
    work = tempfile.mkdtemp(prefix="neodb-peers-%s-" % a.system, dir=a.tmp)
    res = {"system": a.system, "n": len(base), "queries": len(queries)}
    budget = (a.pass_seconds, a.pass_min_queries) if a.pass_seconds > 0 else None
    res["pass_budget"] = {"seconds": a.pass_seconds, "min_queries": a.pass_min_queries}
    system = systems.SYSTEMS[a.system](work, a.cache)
    try:
        me = psutil.Process()
        ids = np.arange(len(base))
        pids = system.mem_pids()
        cpu0, wall0 = proc_tree_cpu(pids + [me.pid]), time.perf_counter()
        system.ingest(ids, base, buckets)
        wall = time.perf_counter() - wall0
        pids = system.mem_pids()
        res["ingest"] = {"wall_s": wall, "cpu_s": proc_tree_cpu(pids + [me.pid]) - cpu0,
                         "vectors_per_s": len(base) / wall}
        res["config"] = system.config
        res["index_type"] = system.after_load()
        res["disk_bytes"] = du(system.data_dir)
        del base
        gc.collect()
        # Tune: the cheapest setting reaching TARGET recall@10.
        ladder = []
        chosen = None
        for setting in system.ladder():
            got, lat = run_queries(system, queries, setting, budget=budget)
            r = recall(got, gt[None])
            ladder.append({"setting": setting, "recall": r, "p50_ms": pct(lat, 50), "queries": len(got)})
            if r >= TARGET:
                chosen = setting
                break
        if chosen is None:
            chosen = ladder[-1]["setting"]
        res["ladder"] = ladder
        res["setting"] = chosen
        # Single client: one warm-up pass, one measured pass.
        run_queries(system, queries, chosen, budget=budget)
        c0, s0 = proc_tree_cpu(pids + [me.pid]), proc_tree_cpu(pids)
        t0 = time.perf_counter()
        got, lat = run_queries(system, queries, chosen, budget=budget)
        w = time.perf_counter() - t0
        s1 = proc_tree_cpu(pids)
        res["search"] = {"recall": recall(got, gt[None]), "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99),
                         "mean_ms": pct(lat, 50) and float(np.mean(lat) * 1000), "wall_s": w,
                         "cpu_ms_per_query": (proc_tree_cpu(pids + [me.pid]) - c0) * 1000 / len(got),
                         "server_cpu_ms_per_query": (s1 - s0) * 1000 / len(got) if pids else None,
                         "queries": len(got)}
        # 8 clients.
        res["qps8"] = qps(system, queries, chosen, 8, a.qps_seconds, pids + [me.pid])
        # Filtered.
        for flt, name in ((10, "filter10"), (1, "filter1")):
            run_queries(system, queries[:50], chosen, flt)
            got, lat = run_queries(system, queries, chosen, flt, budget=budget)
            res[name] = {"recall": recall(got, gt[flt]), "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99),
                         "queries": len(got)}
        rss, pss = mem_of(system.mem_pids())
        res["memory"] = {"rss_bytes": rss, "pss_bytes": pss,
                         "process": "server" if system.mem_pids() else "this client process (embedded)",
                         "client_baseline_rss_bytes": baseline_rss}
        for attr in ("version", "pgversion"):
            if hasattr(system, attr):
                res[attr] = getattr(system, attr)
    finally:
        system.close()
        shutil.rmtree(work, ignore_errors=True)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1, default=str)


def qps(system, queries, setting, clients, seconds, pids):
    """`clients` threads, each with its own client (connection) where the
    system has them, made before the clock starts and closed after the CPU
    is read (PostgreSQL's backends are processes of their own)."""
    handles = [system.new_client() for _ in range(clients)]
    pids = list(pids) + system.mem_pids()
    counts = [0] * clients
    errors = []
    stop = [0.0]

    def worker(i):
        try:
            c = handles[i]
            j = i * 37
            while time.perf_counter() < stop[0]:
                if c is not None:
                    system.search(queries[j % len(queries)], 10, setting, None, c)
                else:
                    system.search(queries[j % len(queries)], 10, setting)
                counts[i] += 1
                j += 1
        except Exception as e:  # noqa
            errors.append(repr(e))
    ts = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    c0 = proc_tree_cpu(pids)
    t0 = time.perf_counter()
    stop[0] = t0 + seconds
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    w = time.perf_counter() - t0
    out = {"qps": sum(counts) / w, "clients": clients, "wall_s": w, "cpu_s": proc_tree_cpu(pids) - c0}
    for h in handles:
        if hasattr(h, "close"):
            try:
                h.close()
            except Exception:
                pass
    if errors:
        out["errors"] = errors[:3]
    return out


def versions():
    v = {}
    try:
        from importlib.metadata import version
        for p in ("faiss-cpu", "milvus-lite", "pymilvus", "chromadb", "lancedb", "pgserver", "psycopg",
                  "pgvector", "numpy", "grpcio"):
            try:
                v[p] = version(p)
            except Exception:
                v[p] = None
    except Exception:
        pass
    return v


def machine():
    m = {"host": socket.gethostname(), "python": platform.python_version(), "nproc": os.cpu_count()}
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in lscpu.splitlines():
            if line.startswith("Model name:"):
                m["cpu"] = line.split(":", 1)[1].strip()
            if line.startswith("Flags:"):
                fl = line.split(":", 1)[1].split()
                m["avx2"] = "avx2" in fl
                m["avx512f"] = "avx512f" in fl
    except Exception:
        pass
    nb = os.environ.get("NEODB_BIN", os.path.join(ROOT, "build", "tools", "neodb", "neodb"))
    if os.path.exists(nb):
        m["neodb_bin_mtime_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(nb)))
    m["uptime_start"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    try:
        m["neodb_commit"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                                           text=True).stdout.strip()
        m["neodb_dirty"] = bool(subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "engine", "index",
                                                "db", "api", "tools/neodb"], capture_output=True,
                                               text=True).stdout.strip())
    except Exception:
        pass
    return m


def mmm(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return [min(xs), statistics.median(xs), max(xs)]


def get(r, path):
    for p in path.split("."):
        if r is None or p not in r:
            return None
        r = r[p]
    return r


# line: (label, path, scale, higher_is_better)
LINES = [
    ("ingest vectors/s (to searchable)", "ingest.vectors_per_s", 1, True),
    ("ingest wall s", "ingest.wall_s", 1, False),
    ("ingest CPU s", "ingest.cpu_s", 1, False),
    ("recall@10 (tuned)", "search.recall", 1, True),
    ("p50 ms, 1 client", "search.p50_ms", 1, False),
    ("p99 ms, 1 client", "search.p99_ms", 1, False),
    ("CPU ms/query, 1 client", "search.cpu_ms_per_query", 1, False),
    ("server CPU ms/query, 1 client", "search.server_cpu_ms_per_query", 1, False),
    ("QPS, 8 clients", "qps8.qps", 1, True),
    ("filter 10%: recall@10", "filter10.recall", 1, True),
    ("filter 10%: p50 ms", "filter10.p50_ms", 1, False),
    ("filter 10%: p99 ms", "filter10.p99_ms", 1, False),
    ("filter 1%: recall@10", "filter1.recall", 1, True),
    ("filter 1%: p50 ms", "filter1.p50_ms", 1, False),
    ("filter 1%: p99 ms", "filter1.p99_ms", 1, False),
    ("memory MiB (RSS)", "memory.rss_bytes", 1 / 2 ** 20, False),
    ("memory MiB (PSS)", "memory.pss_bytes", 1 / 2 ** 20, False),
    ("disk MiB after load", "disk_bytes", 1 / 2 ** 20, False),
]


def fmt(x):
    if x is None:
        return "-"
    if abs(x) >= 100:
        return "%.0f" % x
    if abs(x) >= 10:
        return "%.1f" % x
    if abs(x) >= 1:
        return "%.2f" % x
    return "%.3f" % x


def table(summary, systems):
    """Markdown table; the last two columns: neodb's median over the best
    database peer's median (FAISS, a library without storage, left out) and
    over faiss-cpu's (the index library's ceiling)."""
    rows = ["| figure (min / median / max) | " + " | ".join(systems) +
            " | neodb / best database peer | neodb / faiss-cpu |",
            "| --- |" + " --- |" * (len(systems) + 2)]
    for label, path, scale, hib in LINES:
        cells, med = [], {}
        for s in systems:
            v = summary.get(s, {}).get(path)
            if v is None:
                cells.append("-")
                continue
            v = [x * scale for x in v]
            med[s] = v[1]
            cells.append("%s / **%s** / %s" % (fmt(v[0]), fmt(v[1]), fmt(v[2])))
        peers = {s: m for s, m in med.items() if s not in ("neodb", "faiss-cpu")}
        ratio, rf = "-", "-"
        if "neodb" in med and peers:
            best = max(peers.values()) if hib else min(peers.values())
            bname = [s for s, m in peers.items() if m == best][0]
            if best:
                ratio = "%.2f× (%s)" % (med["neodb"] / best, bname)
        if "neodb" in med and med.get("faiss-cpu"):
            rf = "%.2f×" % (med["neodb"] / med["faiss-cpu"])
        rows.append("| %s | %s | %s | %s |" % (label, " | ".join(cells), ratio, rf))
    return "\n".join(rows)


def compact(doc):
    c = {k: doc[k] for k in ("size", "reps", "machine", "versions", "data", "errors")}
    c["summary"] = {s: {k: ([round(x, 4) for x in v] if v else v) for k, v in lines.items()}
                    for s, lines in doc["summary"].items()}
    c["systems"] = {s: {"config": rs[0].get("config"), "index_type": rs[0].get("index_type"),
                        "settings": [r.get("setting") for r in rs]} for s, rs in doc["runs"].items() if rs}
    return c


def run_all(a):
    size_dir = os.path.join(a.cache, a.size)
    if not os.path.exists(os.path.join(size_dir, "meta.json")):
        subprocess.run([sys.executable, os.path.join(HERE, "data.py"), "--size", a.size, "--cache", a.cache],
                       check=True)
    systems = [s for s in (a.systems.split(",") if a.systems else ORDER)]
    qps_s = a.qps_seconds or (5.0 if a.size == "small" else 10.0)
    pass_s = a.pass_seconds if a.pass_seconds >= 0 else (0.0 if a.size == "small" else 10.0)
    results = {s: [] for s in systems}
    errors = {}
    m = machine()
    t_start = time.time()
    os.makedirs(a.tmp, exist_ok=True)
    for rep in range(a.reps):
        for s in systems:
            if s in errors and rep > 0 and errors[s].get("fatal"):
                continue
            out = os.path.join(a.tmp, "one-%s-%d.json" % (s, rep))
            cmd = [sys.executable, os.path.abspath(__file__), "one", "--system", s, "--data", size_dir, "--out",
                   out, "--cache", a.cache, "--tmp", a.tmp, "--qps-seconds", str(qps_s),
                   "--pass-seconds", str(pass_s), "--pass-min-queries", str(a.pass_min_queries)]
            t0 = time.time()
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0 or not os.path.exists(out):
                tail = (p.stderr or p.stdout)[-2000:]
                errors[s] = {"rep": rep, "rc": p.returncode, "stderr_tail": tail, "fatal": rep == 0}
                print("peers: %s rep %d FAILED rc=%d:\n%s" % (s, rep, p.returncode, tail), file=sys.stderr)
                continue
            with open(out) as f:
                r = json.load(f)
            os.unlink(out)
            results[s].append(r)
            print("peers: rep %d %-11s ingest %7.0f v/s  setting %-10s recall %.3f  p50 %.2f ms  p99 %.2f ms  "
                  "qps8 %.0f  f10 %.3f  f1 %.3f  rss %.0f MiB  disk %.0f MiB  (%.0f s)" % (
                      rep, s, r["ingest"]["vectors_per_s"], r["setting"], r["search"]["recall"],
                      r["search"]["p50_ms"], r["search"]["p99_ms"], r["qps8"]["qps"], r["filter10"]["recall"],
                      r["filter1"]["recall"], r["memory"]["rss_bytes"] / 2 ** 20, (r["disk_bytes"] or 0) / 2 ** 20,
                      time.time() - t0), file=sys.stderr)
    m["uptime_end"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    m["total_wall_s"] = time.time() - t_start
    summary = {}
    for s, rs in results.items():
        if not rs:
            continue
        summary[s] = {path: mmm([get(r, path) for r in rs]) for _, path, _, _ in LINES}
    with open(os.path.join(size_dir, "meta.json")) as f:
        meta = json.load(f)
    doc = {"size": a.size, "reps": a.reps, "machine": m, "versions": versions(), "data": meta,
           "summary": summary, "errors": errors,
           "runs": {s: [{k: v for k, v in r.items()} for r in rs] for s, rs in results.items()}}
    name = "%s-%s-%s.json" % (m["host"], time.strftime("%Y%m%dT%H%M", time.gmtime()), a.size)
    full = os.path.join(a.cache, "results", name)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        json.dump(doc, f, indent=1, default=str)
    # The committed file stays small: the summary, settings and configs; every
    # run with its tuning ladder is in the full file under the cache.
    path = os.path.join(a.results, name)
    os.makedirs(a.results, exist_ok=True)
    with open(path, "w") as f:
        json.dump(compact(doc), f, indent=1, default=str)
    shown = [s for s in systems if s in summary]
    print("\n%s, %d vectors x 384 (%s), %d queries, %d reps; %s; %s" % (
        m.get("cpu"), meta["base"], meta["corpus"], meta["queries"], a.reps, m["uptime_start"], m["uptime_end"]))
    print(table(summary, shown))
    for s in shown:
        print("- %s: %s; setting %s" % (s, results[s][0].get("config"), [r["setting"] for r in results[s]]))
    for s, e in errors.items():
        print("- %s FAILED (rep %d, rc %d): %s" % (s, e["rep"], e["rc"], e["stderr_tail"].strip().splitlines()[-1:]))
    print("results: %s (all runs: %s)" % (path, full))


def parse_args(own):
    """The `all` and `one` subcommands every harness script has (peers.py,
    text_ingest.py), with `own(parser)` adding the script's own arguments to both."""
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("all", "one"):
        p = sub.add_parser(name)
        p.add_argument("--cache", default=os.path.join(ROOT, "build", "cache", "peers"))
        p.add_argument("--tmp", default=os.path.join(ROOT, "build", "cache", "peers", "tmp"))
        own(p)
    pa = sub.choices["all"]
    pa.add_argument("--size", default="small")
    pa.add_argument("--reps", type=int, default=3)
    pa.add_argument("--systems", default="")
    pa.add_argument("--results", default=os.path.join(HERE, "results"))
    po = sub.choices["one"]
    po.add_argument("--system", required=True)
    po.add_argument("--data", required=True)
    po.add_argument("--out", required=True)
    return ap.parse_args()


def main():
    def own(p):
        p.add_argument("--qps-seconds", type=float, default=0)
        # Query budget per pass (module docstring): -1 = the size's default, 0 = none.
        p.add_argument("--pass-seconds", type=float, default=-1)
        p.add_argument("--pass-min-queries", type=int, default=200)
    a = parse_args(own)
    if a.cmd == "one":
        a.qps_seconds = a.qps_seconds or 5.0
        a.pass_seconds = max(a.pass_seconds, 0.0)
        one(a)
    else:
        run_all(a)


if __name__ == "__main__":
    main()
