#!/usr/bin/python3
"""chaos: issue 47's failover proof with real processes. Three nats-servers in
one JetStream cluster and three `neodb serve --nats` nodes on loopback hold a
collection of 3 shards x 3 replicas; two writers upsert and delete through
gRPC on random live nodes while each cycle kills a random process with SIGKILL
(a nats-server or a neodb node, never two at once), waits for writes to go on,
restarts it on its data and ports, and waits again. Afterwards: no
acknowledged write lost, no deleted document back, every node's replicas the
same documents (Documents.List on each), Admin.Verify clean on each; searches
on a surviving node answer throughout (their failures are counted).

  /usr/bin/python3 bench/cluster/chaos.py [--build build] [--cycles 50] [--seed 7]

Exit status 0 when every check holds. Not in the suite (minutes of kills);
its results are in bench/cluster/README.md.
"""
import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_bench  # noqa: E402  (nats_server_binary, free_ports, start_neodb)

COLLECTION = "papers"


class Nats:
    """One nats-server of the cluster, restartable on the same ports."""

    def __init__(self, root, i, client_port, route_ports):
        self.dir = os.path.join(root, f"nats{i}")
        os.makedirs(self.dir, exist_ok=True)
        self.args = [cluster_bench.nats_server_binary(), "--jetstream", "--addr", "127.0.0.1",
                     "--port", str(client_port), "--store_dir", os.path.join(self.dir, "js"),
                     "--log", os.path.join(self.dir, "log"), "--server_name", f"n{i}",
                     "--cluster_name", "chaos", "--cluster",
                     f"nats://127.0.0.1:{route_ports[i]}", "--routes",
                     ",".join(f"nats://127.0.0.1:{p}" for p in route_ports)]
        self.url = f"nats://127.0.0.1:{client_port}"
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


class Node:
    """One neodb node; a restart keeps its data directory, its port changes
    (the other nodes learn it from its heartbeat)."""

    def __init__(self, args, root, name, urls):
        self.args, self.root, self.name, self.urls = args, root, name, urls
        self.proc, self.addr = None, None

    def start(self):
        self.proc, self.addr = cluster_bench.start_neodb(
            self.args.neodb, self.root, self.name, 32,
            ["--nats", ",".join(self.urls), "--node-id", self.name])
        # Drain its output so it never blocks on a full pipe.
        threading.Thread(target=lambda p=self.proc: [None for _ in p.stdout], daemon=True).start()

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--cycles", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    args.neodb = os.path.join(args.build, "tools/neodb/neodb")
    sys.path.insert(0, os.path.join(args.build, "proto/python"))
    import grpc
    from neodb.v1 import neodb_pb2 as pb
    from neodb.v1 import neodb_pb2_grpc as rpc

    root = tempfile.mkdtemp(prefix="neodb_chaos_")
    ports = cluster_bench.free_ports(6)
    servers = [Nats(root, i, ports[i], ports[3:]) for i in range(3)]
    for s in servers:
        s.start()
    urls = [s.url for s in servers]
    nodes = [Node(args, root, name, urls) for name in "abc"]
    for n in nodes:
        n.start()
    lock = threading.Lock()  # guards nodes' addresses and the counters
    stubs = {}

    def stub(kind, addr):
        key = (kind, addr)
        if key not in stubs:
            ch = grpc.insecure_channel(addr)
            stubs[key] = {"docs": rpc.DocumentsStub, "search": rpc.SearchStub,
                          "cols": rpc.CollectionsStub, "admin": rpc.AdminStub}[kind](ch)
        return stubs[key]

    req = pb.CreateCollectionRequest(shards=3, replicas=3)
    req.spec.name = COLLECTION
    for attempt in range(200):
        try:
            stub("cols", nodes[0].addr).Create(req, timeout=30)
            break
        except grpc.RpcError:
            if attempt == 199:
                raise
            time.sleep(0.3)

    down = set()  # indexes into nodes that are killed now
    stop = threading.Event()
    acked = [0]
    expected, uncertain = {}, set()
    counts = {"acked": 0, "failed": 0, "reads": 0, "read_failures": 0}

    def live_addr(rng):
        with lock:
            up = [n.addr for i, n in enumerate(nodes) if i not in down]
        return rng.choice(up)

    def writer(w):
        rng = random.Random(args.seed * 100 + w)
        op = 0
        while not stop.is_set():
            op += 1
            ids = [f"w{w}-{rng.randrange(150)}" for _ in range(rng.randint(1, 4))]
            texts = {}
            try:
                addr = live_addr(rng)
                if rng.random() < 0.25:
                    stub("docs", addr).Delete(pb.DeleteRequest(collection=COLLECTION, ids=ids),
                                              timeout=10)
                    texts = {i: None for i in ids}
                else:
                    u = pb.UpsertRequest(collection=COLLECTION)
                    for j, i in enumerate(ids):
                        d = u.documents.add()
                        d.id = i
                        d.text = f"text {op}/{j} of {i}".encode()
                        texts[i] = f"text {op}/{j} of {i}"
                    stub("docs", addr).Upsert(u, timeout=10)
                with lock:
                    for i, t in texts.items():
                        expected[i] = t
                        uncertain.discard(i)
                    counts["acked"] += 1
            except grpc.RpcError:
                with lock:
                    uncertain.update(ids)
                    counts["failed"] += 1

    def reader():
        rng = random.Random(args.seed)
        while not stop.is_set():
            try:
                stub("search", live_addr(rng)).NearText(
                    pb.NearTextRequest(collection=COLLECTION, query=b"text of w0-1", k=5,
                                       mode="keyword"), timeout=10)
            except grpc.RpcError:
                with lock:
                    counts["read_failures"] += 1
            with lock:
                counts["reads"] += 1
            time.sleep(0.02)

    def progress(n, limit=180):
        """Seconds until `n` more writes are acknowledged (None: not within `limit`)."""
        with lock:
            start = counts["acked"]
        t0 = time.monotonic()
        while time.monotonic() - t0 < limit:
            with lock:
                if counts["acked"] >= start + n:
                    return time.monotonic() - t0
            time.sleep(0.01)
        return None

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(2)]
    threads.append(threading.Thread(target=reader))
    for t in threads:
        t.start()
    chaos = random.Random(args.seed)
    pauses, ok = [], True
    progress(5)
    for c in range(args.cycles):
        victim = chaos.randrange(6)
        if victim < 3:
            what = f"nats-server {victim}"
            servers[victim].kill()
        else:
            what = f"node {'abc'[victim - 3]}"
            with lock:
                down.add(victim - 3)
            nodes[victim - 3].kill()
        pause = progress(5)
        if pause is None:
            print(f"cycle {c}: no write acknowledged within 180 s after killing {what}")
            ok = False
            break
        pauses.append(pause)
        if victim < 3:
            servers[victim].start()
        else:
            nodes[victim - 3].start()
            with lock:
                down.discard(victim - 3)
        if progress(5) is None:
            print(f"cycle {c}: no write acknowledged within 180 s after restarting {what}")
            ok = False
            break
        print(f"cycle {c}: {what} killed, writes on after {pause * 1000:.0f} ms", flush=True)
    stop.set()
    for t in threads:
        t.join()

    # Settle what failures left unknown, then compare every node with the writers.
    for i in sorted(uncertain):
        stub("docs", nodes[0].addr).Delete(pb.DeleteRequest(collection=COLLECTION, ids=[i]),
                                           timeout=120)
        expected[i] = None
    want = {i: t for i, t in expected.items() if t is not None}
    for n in nodes:
        deadline = time.monotonic() + 180
        while True:  # until its replicas have caught up (lag 0 in its heartbeats)
            st = stub("admin", n.addr).ClusterStatus(pb.ClusterStatusRequest(), timeout=30)
            lag = [r.lag for c in st.collections for s in c.shard_status for r in s.replicas
                   if r.node_id == n.name]
            if lag and max(lag) == 0:
                break
            if time.monotonic() > deadline:
                print(f"node {n.name}: replicas still behind: {lag}")
                ok = False
                break
            time.sleep(0.5)
        got, token = {}, ""
        while True:
            page = stub("docs", n.addr).List(
                pb.ListDocumentsRequest(collection=COLLECTION, page_token=token, page_size=1000,
                                        include_text=True), timeout=60)
            for d in page.documents:
                got[d.id] = d.text.decode()
            token = page.next_page_token
            if not token:
                break
        lost = [i for i in want if i not in got]
        wrong = [i for i in want if i in got and got[i] != want[i]]
        back = [i for i in got if i not in want]
        v = stub("admin", n.addr).Verify(pb.VerifyRequest(collection=COLLECTION), timeout=120)
        clean = (v.stored == len(got) and v.missing_from_index == 0 and v.stale_in_index == 0
                 and v.keyword_content_matches)
        print(f"node {n.name}: {len(got)} documents; lost {len(lost)}, other text {len(wrong)}, "
              f"deleted back {len(back)}; verify {'clean' if clean else 'NOT clean: ' + str(v)}")
        ok = ok and not lost and not wrong and not back and clean
    pauses.sort()
    print(f"cycles {len(pauses)}, writes acknowledged {counts['acked']}, failed "
          f"{counts['failed']}, reads {counts['reads']} (failed {counts['read_failures']}), "
          f"documents {len(want)}; write pause after a kill, s: min {pauses[0]:.2f} median "
          f"{pauses[len(pauses) // 2]:.2f} max {pauses[-1]:.2f}; "
          f"{'PASS' if ok else 'FAIL'}")
    for n in nodes:
        n.kill()
    for s in servers:
        s.kill()
    shutil.rmtree(root, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
