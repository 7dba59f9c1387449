#!/usr/bin/python3
"""cluster_bench: one `neodb serve` against three `neodb serve --nats` nodes on
loopback (issue 47): ingest documents/s to searchable, and query p50/p99 on a
node holding every shard and on one that fans out.

  /usr/bin/python3 bench/cluster/cluster_bench.py [--build build] [--docs 5000]
      [--batch 100] [--queries 300] [--runs 3] [--fake-dim 384]

Setups, each started fresh per run in a temporary directory:
  single   neodb serve alone (no NATS), an ordinary collection
  c3x3     three nats-servers in one JetStream cluster and three nodes; the
           collection has 3 shards x 3 replicas (R3 logs): every node holds
           every shard, so a search is answered by the node asked
  c3x1     the same cluster; 3 shards x 1 replica (R1 logs): a node lacks
           shards, so a search on it fans out to the others and merges

Ingest: --docs documents in Documents.Upsert calls of --batch from one client
(to node a; the cluster embeds on the node that takes the write), timed until
a search carrying the last write's consistency token sees the last document
on node a (searchable there). Queries: --queries keyword NearText (k=10) from
one client to node a, after the ingest; p50 and p99. Each figure is reported
as min/median/max over --runs.

The model is the fake embedder (--fake-model: deterministic vectors, no
encoder work) so that what is measured is the database and the log, not the
encoder; with a real model ingest is encoder-bound on every setup alike and
each node embeds the writes it takes (README, "Beyond one machine").

Not a test: numbers depend on the machine and its load, printed with them.
"""
import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time



def nats_server_binary():
    """The nats-server the tests use too: NEODB_NATS_SERVER, else the one
    tools/install_deps.sh builds, else the one on PATH (Debian's)."""
    for b in (os.environ.get("NEODB_NATS_SERVER"), "/opt/neodb-nats/bin/nats-server"):
        if b and os.access(b, os.X_OK):
            return b
    return "nats-server"

def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def start_nats(root, n):
    routes = free_ports(n)
    procs, urls = [], []
    for i in range(n):
        d = os.path.join(root, f"nats{i}")
        os.makedirs(os.path.join(d, "ports"))
        args = [nats_server_binary(), "--jetstream", "--addr", "127.0.0.1", "--port", "-1",
                "--store_dir", os.path.join(d, "js"), "--ports_file_dir", os.path.join(d, "ports"),
                "--log", os.path.join(d, "log")]
        if n > 1:
            args += ["--server_name", f"n{i}", "--cluster_name", "bench",
                     "--cluster", f"nats://127.0.0.1:{routes[i]}",
                     "--routes", ",".join(f"nats://127.0.0.1:{p}" for p in routes)]
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(p)
        for _ in range(600):
            files = os.listdir(os.path.join(d, "ports"))
            if files:
                with open(os.path.join(d, "ports", files[0])) as f:
                    text = f.read()
                if text.strip():
                    urls.append(json.loads(text)["nats"][0])
                    break
            time.sleep(0.05)
        else:
            sys.exit("nats-server did not start")
    return procs, urls


def start_neodb(binary, root, name, fake_dim, extra):
    d = os.path.join(root, name)
    p = subprocess.Popen([binary, "serve", "--data-dir", d, "--fake-model", str(fake_dim),
                          "--listen", "127.0.0.1:0"] + extra,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in p.stdout:
        if "(port " in line:
            port = int(line.split("(port ")[1].split(")")[0])
            return p, f"127.0.0.1:{port}"
    sys.exit(f"neodb {name} did not start")


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def run_once(args, setup, v1, grpc):
    root = tempfile.mkdtemp(prefix=f"neodb_cluster_bench_{setup}_")
    procs = []
    try:
        nodes = []
        if setup == "single":
            p, addr = start_neodb(args.neodb, root, "a", args.fake_dim, [])
            procs.append(p)
            nodes.append(addr)
        else:
            nats, urls = start_nats(root, 3)
            procs += nats
            for name in "abc":
                p, addr = start_neodb(args.neodb, root, name, args.fake_dim,
                                      ["--nats", ",".join(urls), "--node-id", name])
                procs.append(p)
                nodes.append(addr)
        stubs = []
        for addr in nodes:
            ch = grpc.insecure_channel(addr)
            stubs.append((v1.CollectionsStub(ch), v1.DocumentsStub(ch), v1.SearchStub(ch)))
        req = v1pb.CreateCollectionRequest()
        req.spec.name = "bench"
        if setup != "single":
            req.shards = 3
            req.replicas = 3 if setup == "c3x3" else 1
        # The JetStream cluster elects its leaders after start: retry the create.
        for attempt in range(100):
            try:
                stubs[0][0].Create(req, timeout=30)
                break
            except grpc.RpcError as e:
                if attempt == 99:
                    raise
                time.sleep(0.3)
        docs, search = stubs[0][1], stubs[0][2]
        t0 = time.perf_counter()
        token = ""
        for start in range(0, args.docs, args.batch):
            u = v1pb.UpsertRequest(collection="bench")
            for i in range(start, min(args.docs, start + args.batch)):
                d = u.documents.add()
                d.id = f"doc{i}"
                d.text = f"document {i} about topic {i % 97} and subject {i % 31}".encode()
            r = docs.Upsert(u, timeout=120)
            token = r.consistency_token
        last = f"doc{args.docs - 1}"
        q = v1pb.NearTextRequest(collection="bench", query=f"document {args.docs - 1}".encode(),
                                 k=10, mode="keyword", consistency_token=token)
        while True:
            hits = search.NearText(q, timeout=120).hits
            if any(h.id == last for h in hits):
                break
        ingest = args.docs / (time.perf_counter() - t0)
        lat = []
        for i in range(args.queries):
            q = v1pb.NearTextRequest(collection="bench", query=f"topic {i % 97} subject".encode(),
                                     k=10, mode="keyword")
            s = time.perf_counter()
            search.NearText(q, timeout=60)
            lat.append((time.perf_counter() - s) * 1000)
        return ingest, percentile(lat, 0.5), percentile(lat, 0.99)
    finally:
        for p in procs:
            p.kill()
            p.wait()
        shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--neodb", default=None)
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--fake-dim", type=int, default=384)
    ap.add_argument("--setups", default="single,c3x3,c3x1")
    args = ap.parse_args()
    args.neodb = args.neodb or os.path.join(args.build, "tools/neodb/neodb")
    sys.path.insert(0, os.path.join(args.build, "proto/python"))
    global v1pb
    import grpc
    from neodb.v1 import neodb_pb2 as v1pb
    from neodb.v1 import neodb_pb2_grpc as v1
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"host: {cpu}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; "
          f"{platform.python_version()}; nats-server "
          f"{subprocess.run([nats_server_binary(), '--version'], capture_output=True, text=True).stdout.strip()}")
    print(f"docs {args.docs} in batches of {args.batch}, {args.queries} keyword queries, "
          f"fake model dim {args.fake_dim}, {args.runs} runs; figures min/median/max")
    for setup in args.setups.split(","):
        rs = [run_once(args, setup, v1, grpc) for _ in range(args.runs)]
        def mmm(i, fmt):
            xs = [r[i] for r in rs]
            return "/".join(fmt.format(x) for x in (min(xs), statistics.median(xs), max(xs)))
        print(f"{setup:7s} ingest docs/s {mmm(0, '{:.0f}')}   query p50 ms {mmm(1, '{:.2f}')}"
              f"   p99 ms {mmm(2, '{:.2f}')}", flush=True)


if __name__ == "__main__":
    main()
