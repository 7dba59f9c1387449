"""bench/peers/neodb_breakdown.py: where neodb's memory, disk and filtered-query time go
on the peers data set (the sub-measurements behind bench/peers/README.md).

  /opt/neodb-peers/venv/bin/python bench/peers/neodb_breakdown.py --data build/cache/peers/100k [--perf]

Starts `neodb serve` (NEODB_BIN), reads its RSS empty, loads the vectors as
peers.py does, snapshots, then prints: RSS after load, du of each entry of
the data directory, and p50 of 1000 queries (ef 24) unfiltered and at 10% / 1%.
With --perf, `perf record` samples the server during the 10% filtered queries
(--perf-on picks another pass) and the top symbols (self time) are printed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def top_symbols(data):
    """perf report's symbols with at least 2% of the samples (self time)."""
    r = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "symbol", "--stdio", "-g",
                        "none", "--percent-limit", "1"], capture_output=True, text=True)
    return [" ".join(l.split())[:160] for l in r.stdout.splitlines() if l.strip() and not l.startswith("#")][:25]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--cache", default=os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "cache",
                                                    "peers"))
    ap.add_argument("--perf", action="store_true")
    ap.add_argument("--perf-on", default="filter10", choices=["all", "filter10", "filter1"],
                    help="which query pass --perf samples (default: the 10%% filter)")
    ap.add_argument("--perf-ingest", action="store_true", help="profile the load instead (then exits)")
    a = ap.parse_args()
    sys.path.insert(0, HERE)
    import psutil
    import systems
    base = np.load(os.path.join(a.data, "base.npy"))
    queries = np.load(os.path.join(a.data, "queries.npy"))
    buckets = np.load(os.path.join(a.data, "buckets.npy"))
    work = tempfile.mkdtemp(prefix="neodb-breakdown-")
    s = systems.NeodbSystem(work, a.cache)
    out = {}
    try:
        proc = psutil.Process(s.srv.p.pid)
        out["rss_empty_mib"] = proc.memory_info().rss / 2 ** 20
        perf = None
        if a.perf_ingest:
            perf = subprocess.Popen(["perf", "record", "-F", "499", "-g", "-o", os.path.join(work, "perf.data"),
                                     "-p", str(s.srv.p.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)
        t0 = time.perf_counter()
        s.ingest(np.arange(len(base)), base, buckets)
        out["ingest_s"] = time.perf_counter() - t0
        if perf:
            perf.send_signal(2)
            perf.wait()
            out["perf_ingest_top"] = top_symbols(os.path.join(work, "perf.data"))
            print(json.dumps(out, indent=1))
            return
        s.after_load()
        out["rss_loaded_mib"] = proc.memory_info().rss / 2 ** 20
        d = s.data_dir
        out["du_mib"] = {}
        for e in sorted(os.listdir(d)):
            r = subprocess.run(["du", "-sb", os.path.join(d, e)], capture_output=True, text=True)
            out["du_mib"][e] = int(r.stdout.split()[0]) / 2 ** 20
        for sub in sorted(os.listdir(d)):
            p = os.path.join(d, sub)
            if os.path.isdir(p):
                for e in sorted(os.listdir(p)):
                    r = subprocess.run(["du", "-sb", os.path.join(p, e)], capture_output=True, text=True)
                    mib = int(r.stdout.split()[0]) / 2 ** 20
                    if mib >= 1:
                        out["du_mib"][sub + "/" + e] = mib
        for flt, name in ((None, "all"), (10, "filter10"), (1, "filter1")):
            for q in queries[:100]:
                s.search(q, 10, 24, flt)
            perf = None
            if a.perf and name == a.perf_on:
                perf = subprocess.Popen(["perf", "record", "-F", "999", "-g", "-o", os.path.join(work, "perf.data"),
                                         "-p", str(s.srv.p.pid)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
                time.sleep(1)
            lat = []
            for q in queries:
                t = time.perf_counter()
                s.search(q, 10, 24, flt)
                lat.append(time.perf_counter() - t)
            out["p50_ms_" + name] = float(np.percentile(lat, 50) * 1000)
            if perf:
                perf.send_signal(2)
                perf.wait()
                out["perf_%s_top" % name] = top_symbols(os.path.join(work, "perf.data"))
        out["rss_after_search_mib"] = proc.memory_info().rss / 2 ** 20
    finally:
        s.close()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
