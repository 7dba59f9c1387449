#!/usr/bin/python3
"""tail_latency_bench: near-text latency unloaded, then under ingest load (issue 49).

  /usr/bin/python3 bench/tail_latency_bench.py [--build build] [--neodb BIN] [--model default]
      [--docs 2000] [--queries 1000] [--rounds 3] [--oversized-words 3000]

It starts `neodb serve` (free port, temporary data directory) with the model
named (default: the shipped default model, so every query is embedded) and
creates one HNSW collection with a keyword index and overflow CHUNK, loaded
with --docs documents. Then, --rounds times:

  unloaded  one client sends --queries vector-mode NearText calls (k 10), one
            after another, and keeps each call's wall-clock latency;
  loaded    the same client sends the same queries while
              - two clients ingest at full speed (Ingest streams of 32 new
                documents of ~100 words a batch, two batches unacknowledged
                at most, so the server always has the next one), and
              - one client streams oversized documents (--oversized-words
                words each, chunked by the server into windows of the model's
                length: the encoder's heaviest work), 2 a batch.
            Load starts before the first timed query and stops after the last.

Per round it prints p50/p99/max of both phases, their p99 ratio (issue 49's
target: p99 under load <= 10x unloaded), the documents/s ingested during the
loaded phase (so a "load" that did not run shows), and the server's CPU
seconds. The summary gives min/median/max over the rounds. Every call must
succeed; a failure ends the run.

Not a test: latencies depend on the machine and what else runs on it; the
host, its load average and the model are printed with the figures.
"""
import argparse
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rss_bench import Server, WORDS, proc_cpu_seconds  # noqa: E402  (one server launcher)


def text(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def percentile(sorted_ms, q):
    """Nearest-rank percentile of an ascending list."""
    i = max(0, min(len(sorted_ms) - 1, int(round(q / 100 * len(sorted_ms) + 0.5)) - 1))
    return sorted_ms[i]


def summary(ms):
    s = sorted(ms)
    return {"p50": percentile(s, 50), "p99": percentile(s, 99), "max": s[-1], "n": len(s)}


class Ingester(threading.Thread):
    """One client streaming batches into the collection until stopped."""

    def __init__(self, pb, docs_stub, name, words, per_batch, seed):
        super().__init__(daemon=True)
        self.pb, self.docs, self.name = pb, docs_stub, name
        self.words, self.per_batch, self.rng = words, per_batch, random.Random(seed)
        self.stop = threading.Event()
        self.cv = threading.Condition()
        self.sent = 0
        self.acked = 0
        self.error = None

    def batches(self):
        n = 0
        while not self.stop.is_set():
            # At most two batches unacknowledged: the server always has the next batch at
            # hand (full speed), and stopping does not leave a flow-control window's worth
            # of queued batches (minutes of oversized documents) to drain.
            with self.cv:
                while self.sent - self.acked >= 2 * self.per_batch and not self.stop.is_set():
                    self.cv.wait(0.5)
            if self.stop.is_set():
                return
            batch = self.pb.IngestBatch(collection="c", documents=[
                self.pb.Document(id=f"{self.name}-{n + i}", text=text(self.rng, self.words).encode())
                for i in range(self.per_batch)])
            n += self.per_batch
            self.sent = n
            yield batch

    def run(self):
        try:
            # Ingest (bidi) acks each batch once committed: the stream keeps one batch
            # in flight plus gRPC's flow-control window, i.e. "as fast as acks come".
            for ack in self.docs.Ingest(self.batches(), timeout=3600):
                with self.cv:
                    self.acked = ack.documents
                    self.cv.notify_all()
        except Exception as e:  # reported by the caller
            self.error = e


def timed_queries(pb, search, queries):
    out = []
    for q in queries:
        t = time.perf_counter()
        search.NearText(pb.NearTextRequest(collection="c", query=q.encode(), k=10, mode="vector"),
                        timeout=120)
        out.append((time.perf_counter() - t) * 1e3)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--neodb", help="the server binary (default: BUILD/tools/neodb/neodb)")
    ap.add_argument("--model", default="default",
                    help="default (the shipped default model), fake, or a model directory")
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--oversized-words", type=int, default=3000)
    ap.add_argument("--serve-flags", default="", help="extra `neodb serve` flags")
    a = ap.parse_args()

    sys.path.insert(0, os.path.join(a.build, "proto", "python"))
    import grpc
    from neodb.v1 import neodb_pb2 as pb, neodb_pb2_grpc as rpc

    with open("/proc/cpuinfo") as f:
        m = re.search(r"model name\s*:\s*(.*)", f.read())
    print(f"# tail_latency_bench: {platform.node()}, {m.group(1) if m else '?'}, "
          f"{os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"# model {a.model}; {a.docs} documents; {a.queries} vector near-text queries per phase; "
          f"load: 2 ingest streams (32 x ~100 words) + 1 stream of {a.oversized_words}-word "
          f"documents (chunked); {a.rounds} rounds", flush=True)

    model_flags = (("--fake-model", "64") if a.model == "fake" else
                   () if a.model == "default" else ("--model", a.model))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        srv = Server(a.neodb or os.path.join(a.build, "tools/neodb/neodb"), {},
                     a.serve_flags.split(), tmp, model_flags)
        try:
            ch = grpc.insecure_channel(f"127.0.0.1:{srv.port}")
            cols, docs, search = rpc.CollectionsStub(ch), rpc.DocumentsStub(ch), rpc.SearchStub(ch)
            spec = pb.CollectionSpec(name="c", analyzer="english", overflow=pb.OVERFLOW_CHUNK)
            spec.index.type = "hnsw"
            cols.Create(pb.CreateCollectionRequest(spec=spec), timeout=30)
            rng = random.Random(1)
            for b in range(0, a.docs, 100):
                docs.Upsert(pb.UpsertRequest(collection="c", documents=[
                    pb.Document(id=f"d{i}", text=text(rng, 60).encode())
                    for i in range(b, min(b + 100, a.docs))]), timeout=120)
            qrng = random.Random(2)
            queries = [text(qrng, 6) for _ in range(a.queries)]
            timed_queries(pb, search, queries[:100])  # warm-up
            for r in range(a.rounds):
                cpu0 = proc_cpu_seconds(srv.pid)
                idle = summary(timed_queries(pb, search, queries))
                load = [Ingester(pb, docs, f"r{r}a", 100, 32, 10 + r),
                        Ingester(pb, docs, f"r{r}b", 100, 32, 20 + r),
                        Ingester(pb, docs, f"r{r}o", a.oversized_words, 2, 30 + r)]
                for t in load:
                    t.start()
                time.sleep(2.0)  # streams running before the first timed query
                acked0 = [t.acked for t in load]
                t0 = time.perf_counter()
                busy = summary(timed_queries(pb, search, queries))
                secs = time.perf_counter() - t0
                acked1 = [t.acked for t in load]
                for t in load:
                    t.stop.set()
                for t in load:
                    t.join(timeout=600)
                    if t.error is not None:
                        raise RuntimeError(f"ingest stream {t.name} failed: {t.error}")
                rate = [(b - a_) / secs for a_, b in zip(acked0, acked1)]
                row = {"idle": idle, "busy": busy, "ratio": busy["p99"] / idle["p99"],
                       "docs_s": rate[0] + rate[1], "big_s": rate[2],
                       "cpu": proc_cpu_seconds(srv.pid) - cpu0,
                       "loadavg": os.getloadavg()[0]}
                rows.append(row)
                print(f"# round {r + 1}: unloaded p50 {idle['p50']:.2f} p99 {idle['p99']:.2f} "
                      f"max {idle['max']:.2f} ms | loaded p50 {busy['p50']:.2f} "
                      f"p99 {busy['p99']:.2f} max {busy['max']:.2f} ms | p99 ratio "
                      f"{row['ratio']:.2f} | ingest {row['docs_s']:.0f} docs/s + "
                      f"{row['big_s']:.1f} oversized docs/s during the loaded phase | server CPU "
                      f"{row['cpu']:.0f} s | load average {row['loadavg']:.2f}", flush=True)
            info = cols.Describe(pb.DescribeCollectionRequest(name="c"), timeout=30).info
            print(f"# collection at the end: {info.count} documents")
            ch.close()
        finally:
            srv.stop()

    def mmm(key, sub=None):
        v = sorted(r[key][sub] if sub else r[key] for r in rows)
        return f"{v[0]:.2f} / {statistics.median(v):.2f} / {v[-1]:.2f}"

    print("| figure (min / median / max over rounds) | value |")
    print("|---|---|")
    print(f"| unloaded p50 (ms) | {mmm('idle', 'p50')} |")
    print(f"| unloaded p99 (ms) | {mmm('idle', 'p99')} |")
    print(f"| loaded p50 (ms) | {mmm('busy', 'p50')} |")
    print(f"| loaded p99 (ms) | {mmm('busy', 'p99')} |")
    print(f"| p99 loaded / unloaded | {mmm('ratio')} |")
    print(f"| ingest during load (docs/s, 2 streams) | {mmm('docs_s')} |")
    print(f"| oversized docs/s during load | {mmm('big_s')} |")
    worst = max(r["ratio"] for r in rows)
    print(f"# target p99 ratio <= 10: {'met' if worst <= 10 else 'NOT met'} "
          f"(worst round {worst:.2f})")


if __name__ == "__main__":
    main()
