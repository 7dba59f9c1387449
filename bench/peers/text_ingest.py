"""bench/peers/text_ingest.py: ingest of text with embedding, neodb against its peers (issue 51).

  python bench/peers/text_ingest.py all --size small|100k [--docs N] [--reps 3] [--systems a,b]
  python bench/peers/text_ingest.py one --system NAME --data DIR --docs N --out FILE

The first N passages (default 500 at small, 2,000 at 100k) of data.py's base set (texts.jsonl) go into each system,
from the first write until every document is searchable through its ANN
index (the same HNSW/IVF settings as peers.py):
  neodb: its built-in encoder (`neodb serve --model`, all-MiniLM-L6-v2), a
    VECTOR_SOURCE_MODEL collection with no keyword index (analyzer "none", as
    the peers build none), BulkIngest of the texts 1,000 a batch;
  each peer: the same model in ONNX Runtime in this client (ort_embed.py:
    every text embedded, then the peer's ingest of the vectors).
Figures per system and repetition: documents/s (wall), CPU s (this process +
the server's), and a check that both pipelines index the same thing: for 200
of the documents, their own text as a query (neodb NearText; the peers: ONNX
Runtime's query vector) must rank the document itself first (self@1). The
encoder is loaded and run once before the clock starts, on both sides. Before
the systems run, ONNX Runtime's vectors of those documents are compared with
neodb's from data.py (max |difference|, min cosine). Each run in a fresh child
process on a fresh directory; min / median / max over the repetitions.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import peers  # noqa: E402  (shared helpers: machine, versions, mmm, fmt, CPU of a process tree)

ORDER = peers.ORDER
CHECKS = 200


def load(data, n):
    texts = []
    with open(os.path.join(data, "texts.jsonl")) as f:
        for line in f:
            texts.append(json.loads(line))
            if len(texts) == n:
                break
    if len(texts) < n:
        raise SystemExit("text_ingest: %s has %d texts, asked for %d" % (data, len(texts), n))
    buckets = np.load(os.path.join(data, "buckets.npy"))[:n]
    return texts, np.arange(n), buckets


def check_rows(n):
    return [int(i) for i in np.linspace(0, n - 1, min(CHECKS, n))]


class NeodbText:
    """neodb embedding the texts itself."""

    def __init__(self, work, cache, model):
        import data
        data.stubs(cache)
        binary = os.environ.get("NEODB_BIN", os.path.join(ROOT, "build", "tools", "neodb", "neodb"))
        self.srv = data.NeodbServer(binary, os.path.join(work, "data"), model=model,
                                    log=os.path.join(work, "serve.log"))
        self.pb, self.rpc = self.srv.pb, self.srv.rpc
        pb = self.pb
        spec = pb.CollectionSpec(name="text", index=pb.IndexSpec(type="hnsw"), metric=pb.METRIC_COSINE,
                                 vectors=pb.VECTOR_SOURCE_MODEL, pooling=pb.POOLING_MEAN, analyzer="none")
        self.rpc.CollectionsStub(self.srv.channel).Create(pb.CreateCollectionRequest(spec=spec), timeout=60)
        self.config = ("built-in encoder (all-MiniLM-L6-v2, --model), HNSW M=32 efConstruction=40, cosine, "
                       "analyzer none, BulkIngest 1000/batch")

    def pids(self):
        return [self.srv.p.pid]

    def warm(self):
        # The server loads its model on first use: not part of the ingest.
        self.rpc.EmbeddingStub(self.srv.channel).Embed(self.pb.EmbedRequest(texts=[b"warm up"]), timeout=300)

    def ingest_texts(self, ids, texts, buckets):
        pb = self.pb

        def batches():
            for s in range(0, len(ids), 1000):
                yield pb.IngestBatch(collection="text", documents=[
                    pb.Document(id=str(ids[i]), text=texts[i].encode(),
                                metadata={"bucket": pb.Value(int_value=int(buckets[i]))})
                    for i in range(s, min(s + 1000, len(ids)))])
        r = self.rpc.DocumentsStub(self.srv.channel).BulkIngest(batches(), timeout=7200)
        assert r.documents == len(ids), r
        coll = self.rpc.CollectionsStub(self.srv.channel)
        while coll.Describe(pb.DescribeCollectionRequest(name="text")).info.index_size < len(ids):
            time.sleep(0.05)
        return {}

    def top1(self, text):
        r = self.rpc.SearchStub(self.srv.channel).NearText(
            self.pb.NearTextRequest(collection="text", query=text.encode(), k=1, ef_search=64), timeout=60)
        return int(r.hits[0].id) if r.hits else -1

    def close(self):
        self.srv.stop()


class PeerText:
    """A peer of systems.py fed by ONNX Runtime in this process."""

    def __init__(self, name, work, cache):
        import ort_embed
        import systems
        self.embed = ort_embed.OrtEmbedder(cache)
        self.system = systems.SYSTEMS[name](work, cache)
        ladder = self.system.ladder()
        self.setting = ladder[min(4, len(ladder) - 1)]

    @property
    def config(self):
        # Some adapters (LanceDB) describe themselves only once they have built their index.
        return "%s; vectors from %s in the client" % (getattr(self.system, "config", self.system.name),
                                                      self.embed.version)

    def pids(self):
        return self.system.mem_pids()

    def warm(self):
        self.embed(["warm up"])

    def ingest_texts(self, ids, texts, buckets):
        t0 = time.perf_counter()
        vecs = self.embed(texts)
        t1 = time.perf_counter()
        self.system.ingest(ids, vecs, buckets)
        return {"embed_s": t1 - t0, "ingest_s": time.perf_counter() - t1}

    def top1(self, text):
        got = self.system.search(self.embed([text])[0], 1, self.setting)
        return int(got[0]) if got else -1

    def close(self):
        self.system.close()


def one(a):
    import psutil
    texts, ids, buckets = load(a.data, a.docs)
    os.makedirs(a.tmp, exist_ok=True)
    work = tempfile.mkdtemp(prefix="neodb-text-%s-" % a.system, dir=a.tmp)
    res = {"system": a.system, "docs": a.docs}
    s = NeodbText(work, a.cache, a.model) if a.system == "neodb" else PeerText(a.system, work, a.cache)
    try:
        me = psutil.Process().pid
        s.warm()
        cpu0 = peers.proc_tree_cpu(s.pids() + [me])
        t0 = time.perf_counter()
        parts = s.ingest_texts(ids, texts, buckets)
        wall = time.perf_counter() - t0
        res["ingest"] = {"wall_s": wall, "cpu_s": peers.proc_tree_cpu(s.pids() + [me]) - cpu0,
                         "docs_per_s": a.docs / wall, **parts}
        rows = check_rows(a.docs)
        res["self_at_1"] = sum(s.top1(texts[i]) == i for i in rows) / len(rows)
        res["config"] = s.config
    finally:
        s.close()
        shutil.rmtree(work, ignore_errors=True)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)


def agreement(data, cache, n):
    """ONNX Runtime's vectors against neodb's (data.py) for the check rows."""
    import ort_embed
    texts, _, _ = load(data, n)
    rows = check_rows(n)
    ours = np.load(os.path.join(data, "base.npy"))[rows]
    theirs = ort_embed.OrtEmbedder(cache)([texts[i] for i in rows])
    return {"rows": len(rows), "max_abs_diff": float(np.abs(ours - theirs).max()),
            "min_cosine": float((ours * theirs).sum(axis=1).min())}


LINES = [("documents/s (to searchable)", "ingest.docs_per_s", True), ("wall s", "ingest.wall_s", False),
         ("CPU s (client + server)", "ingest.cpu_s", False), ("of which embedding s (client)", "ingest.embed_s", False),
         ("self@1 (200 documents)", "self_at_1", True)]


def run_all(a):
    data = os.path.join(a.cache, a.size)
    if not os.path.exists(os.path.join(data, "meta.json")):
        subprocess.run([sys.executable, os.path.join(HERE, "data.py"), "--size", a.size, "--cache", a.cache],
                       check=True)
    a.docs = a.docs or (500 if a.size == "small" else 2000)
    names = a.systems.split(",") if a.systems else ORDER
    m = peers.machine()
    agree = agreement(data, a.cache, a.docs)
    print("text: ONNX Runtime vs neodb vectors over %d documents: max |diff| %.2e, min cosine %.7f" % (
        agree["rows"], agree["max_abs_diff"], agree["min_cosine"]), file=sys.stderr)
    runs, errors = {n: [] for n in names}, {}
    t_start = time.time()
    for rep in range(a.reps):
        for name in names:
            out = os.path.join(a.tmp, "text-%s-%d.json" % (name, rep))
            cmd = [sys.executable, os.path.abspath(__file__), "one", "--system", name, "--data", data,
                   "--docs", str(a.docs), "--out", out, "--cache", a.cache, "--tmp", a.tmp, "--model", a.model]
            t0 = time.time()
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0 or not os.path.exists(out):
                errors[name] = {"rep": rep, "rc": p.returncode, "stderr_tail": (p.stderr or p.stdout)[-2000:]}
                print("text: %s rep %d FAILED rc=%d:\n%s" % (name, rep, p.returncode, errors[name]["stderr_tail"]),
                      file=sys.stderr)
                continue
            with open(out) as f:
                r = json.load(f)
            os.unlink(out)
            runs[name].append(r)
            print("text: rep %d %-11s %6.0f docs/s  wall %.1f s  cpu %.1f s  self@1 %.3f  (%.0f s)" % (
                rep, name, r["ingest"]["docs_per_s"], r["ingest"]["wall_s"], r["ingest"]["cpu_s"],
                r["self_at_1"], time.time() - t0), file=sys.stderr)
    m["uptime_end"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    m["total_wall_s"] = time.time() - t_start
    summary = {n: {path: peers.mmm([peers.get(r, path) for r in rs]) for _, path, _ in LINES}
               for n, rs in runs.items() if rs}
    shown = [n for n in names if n in summary]
    lines = ["| figure (min / median / max) | " + " | ".join(shown) + " | neodb / best peer |",
             "| --- |" + " --- |" * (len(shown) + 1)]
    for label, path, higher in LINES:
        cells, peer_medians = [], []
        for n in shown:
            v = summary[n][path]
            cells.append("-" if v is None else "%s / **%s** / %s" % tuple(peers.fmt(x) for x in v))
            if n != "neodb" and v is not None:
                peer_medians.append((v[1], n))
        ratio = "-"
        ours = summary.get("neodb", {}).get(path)
        if ours and peer_medians and path != "ingest.embed_s":
            best = (max if higher else min)(peer_medians)
            if best[0]:
                ratio = "%.2f× (%s)" % (ours[1] / best[0], best[1])
        lines.append("| %s | %s | %s |" % (label, " | ".join(cells), ratio))
    doc = {"size": a.size, "docs": a.docs, "reps": a.reps, "machine": m, "versions": peers.versions(),
           "agreement": agree, "summary": summary, "errors": errors, "runs": runs}
    try:
        from importlib.metadata import version
        doc["versions"]["onnxruntime"] = version("onnxruntime")
        doc["versions"]["tokenizers"] = version("tokenizers")
    except Exception:
        pass
    name = "%s-%s-text-%s.json" % (m["host"], time.strftime("%Y%m%dT%H%M", time.gmtime()), a.size)
    os.makedirs(a.results, exist_ok=True)
    path = os.path.join(a.results, name)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, default=str)
    print("\n%s, %d documents of %s, %d reps; %s; %s" % (m.get("cpu"), a.docs, a.size, a.reps,
                                                          m["uptime_start"], m["uptime_end"]))
    print("\n".join(lines))
    for n in shown:
        print("- %s: %s" % (n, runs[n][0]["config"]))
    for n, e in errors.items():
        print("- %s FAILED (rep %d, rc %d): %s" % (n, e["rep"], e["rc"], e["stderr_tail"].strip().splitlines()[-1:]))
    print("results: %s" % path)


def main():
    def own(p):
        p.add_argument("--docs", type=int, default=0, help="documents (default: 500 small, 2,000 100k)")
        p.add_argument("--model", default=os.environ.get("NEODB_MINILM_DIR") or
                       os.path.join(ROOT, "build", "testdata", "models", "all-minilm-l6-v2"))
    a = peers.parse_args(own)
    run_all(a) if a.cmd == "all" else one(a)


if __name__ == "__main__":
    main()
