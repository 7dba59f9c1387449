#!/usr/bin/python3
"""Python end-to-end test: the real `neodb serve` on 127.0.0.1, driven from
Debian's python3-grpcio through stubs generated from the .proto only
(tools/python_client). Run by CTest with NEODB_BINARY_DIR set.
Usage: python_client_test.py [--fake-model]"""

import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

SRC = os.environ.get("NEODB_SOURCE_DIR", ".")
BIN = os.environ.get("NEODB_BINARY_DIR", "build")
sys.path.insert(0, os.path.join(SRC, "tools", "python_client"))
os.environ.setdefault("NEODB_PYTHON_PROTO_DIR", os.path.join(BIN, "proto", "python"))
import grpc  # noqa: E402
from neodb_client import NeodbClient  # noqa: E402

NEODB = os.path.join(BIN, "tools", "neodb", "neodb")
FAKE = "--fake-model" in sys.argv
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango").split()


def model_args(tmp):
    if FAKE:
        return ["--fake-model", "32", "--model", "fake:1"]
    vocab = os.path.join(tmp, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS) + "\n")
    model = os.path.join(tmp, "model")
    subprocess.run([NEODB, "model", "init", "--preset", "tiny", "--vocab", vocab, "--out", model],
                   check=True, stdout=subprocess.DEVNULL, timeout=120)
    return ["--model", model]


class Server:
    def __init__(self, tmp, extra=()):
        self.proc = subprocess.Popen(
            [NEODB, "serve", "--listen", "127.0.0.1:0", "--data-dir", os.path.join(tmp, "data"),
             "--snapshot-interval", "0"] + model_args(tmp) + list(extra),
            stdout=subprocess.PIPE, text=True)
        port = [None]

        def read():
            for line in self.proc.stdout:
                if "(port " in line and port[0] is None:
                    port[0] = int(line.split("(port ")[1].split(")")[0])
        threading.Thread(target=read, daemon=True).start()
        deadline = time.time() + 60
        while port[0] is None and time.time() < deadline and self.proc.poll() is None:
            time.sleep(0.02)
        if port[0] is None:
            self.proc.kill()
            raise RuntimeError("server did not start")
        self.address = "127.0.0.1:%d" % port[0]

    def stop(self):
        self.proc.terminate()
        return self.proc.wait(timeout=60)


class PythonClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="neodb_py_")
        cls.server = Server(cls.tmp)
        cls.client = NeodbClient(cls.server.address)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        rc = cls.server.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)
        assert rc == 0, "server exit code %d" % rc

    def test_ingest_search_filter(self):
        c = self.client
        c.create_collection("py")
        rng = random.Random(3)
        docs = [{"id": "d%d" % i, "text": " ".join(rng.choice(WORDS) for _ in range(8)),
                 "metadata": {"i": i, "half": "low" if i < 100 else "high", "w": i / 10.0}}
                for i in range(200)]
        n, batches, tokens = c.ingest("py", docs, batch=50)
        self.assertEqual((n, batches), (200, 4))
        self.assertGreater(tokens, 200 * 8)
        self.assertEqual(c.describe("py").count, 200)
        hits = c.search("py", docs[17]["text"], k=3)
        self.assertEqual(hits[0]["text"], docs[17]["text"])
        hits = c.search("py", docs[17]["text"], k=10,
                        filter={"and": [{"field": "half", "eq": "high"},
                                        {"field": "i", "gte": 150, "lt": 160}]})
        self.assertEqual(len(hits), 10)
        self.assertEqual(sorted(h["metadata"]["i"] for h in hits), list(range(150, 160)))
        found, missing = c.get("py", ["d3", "zzz"])
        self.assertEqual(found["d3"]["metadata"]["half"], "low")
        self.assertEqual(missing, ["zzz"])
        self.assertEqual(c.delete("py", ["d3"]), 1)
        v = c.verify("py")
        self.assertEqual((v.stored, v.indexed, v.stale_in_index), (199, 199, 0))
        vecs, model_id = c.embed(["alpha bravo"])
        self.assertEqual(len(vecs[0]), c.stats().dimension)
        self.assertEqual(model_id, c.stats().model_id)

    def test_keyword_and_hybrid_modes(self):
        c = self.client
        c.create_collection("kw", analyzer="english", bm25_k1=1.2, bm25_b=0.75,
                            title_field="title", title_weight=2.0)
        info = c.describe("kw")
        self.assertEqual((info.spec.analyzer, info.spec.bm25_k1, info.spec.bm25_b),
                         ("english", 1.2, 0.75))
        self.assertEqual((info.spec.title_field, info.spec.title_weight), ("title", 2.0))
        c.upsert("kw", [{"id": "a", "text": "alpha bravo", "metadata": {"title": "zulu"}},
                        {"id": "b", "text": "charlie delta", "metadata": {"title": "echo"}},
                        {"id": "c", "text": "zulu zulu golf", "metadata": {"title": "hotel"}}])
        # keyword: only documents holding a query word, the title counted twice.
        hits = c.search("kw", "zulu", k=10, mode="keyword", explain=True)
        self.assertEqual(sorted(h["id"] for h in hits), ["a", "c"])
        for i, h in enumerate(hits):
            self.assertEqual(h["explain"]["keyword_rank"], i + 1)
            self.assertEqual(h["explain"]["vector_rank"], 0)
            self.assertEqual(h["explain"]["mode"], "keyword")
        hits = c.search("kw", "zulu", k=10, alpha=0.5, explain=True)
        self.assertEqual(len(hits), 3)  # the vector leg returns every document
        self.assertEqual(hits[0]["explain"]["alpha"], 0.5)
        self.assertEqual(hits[0]["explain"]["mode"], "hybrid")
        hits = c.search("kw", "zulu", k=2, mode="vector", fusion="rrf")
        self.assertEqual(len(hits), 2)
        self.assertEqual(c.describe("kw").keyword.documents, 3)
        for bad in ({"mode": "fuzzy"}, {"fusion": "mean"}, {"alpha": 2.0},
                    {"fusion": "adaptive", "alpha": 0.2}):
            with self.assertRaises(grpc.RpcError) as e:
                c.search("kw", "zulu", **bad)
            self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, bad)
        # The collection's default fusion: queries that name none use it.
        self.assertEqual(c.describe("kw").spec.fusion, "adaptive")
        # No alpha beside adaptive: a described spec creates a collection as it is.
        spec = c.describe("kw").spec
        self.assertFalse(spec.HasField("fusion_alpha"))
        spec.name = "kw_copy"
        copy = c.collections.Create(c.pb.CreateCollectionRequest(spec=spec), timeout=c.timeout)
        self.assertEqual(copy.info.spec.fusion, "adaptive")
        c.drop("kw_copy")
        info = c.set_fusion("kw", alpha=0.25)
        self.assertEqual((info.spec.fusion, info.spec.fusion_alpha), ("weighted", 0.25))
        hits = c.search("kw", "zulu", k=10, explain=True)
        self.assertEqual(hits[0]["explain"]["alpha"], 0.25)
        for bad in ({"fusion": "mean"}, {"alpha": 1.5}, {"fusion": "rrf", "alpha": 0.2}):
            with self.assertRaises(grpc.RpcError) as e:
                c.set_fusion("kw", **bad)
            self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, bad)
        self.assertEqual(c.describe("kw").spec.fusion_alpha, 0.25)
        v = c.verify("kw")
        self.assertEqual((v.keyword_indexed, v.keyword_missing, v.keyword_stale), (3, 0, 0))
        self.assertTrue(v.keyword_content_matches)

    def test_reflection_lists_services(self):
        # Raw bytes: ServerReflectionRequest{list_services: ""} is field 7,
        # length 0. python3-grpcio has no reflection module; the wire is enough.
        call = self.client.channel.stream_stream(
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
        responses = list(call(iter([b"\x3a\x00"]), timeout=30))
        self.assertEqual(len(responses), 1)
        for name in (b"neodb.v1.Collections", b"neodb.v1.Documents", b"neodb.v1.Search",
                     b"neodb.v1.Embedding", b"neodb.v1.Admin", b"grpc.health.v1.Health"):
            self.assertIn(name, responses[0])

    def test_errors(self):
        c = self.client
        with self.assertRaises(grpc.RpcError) as e:
            c.search("no_such_collection", "alpha")
        self.assertEqual(e.exception.code(), grpc.StatusCode.NOT_FOUND)
        c.create_collection("err")
        with self.assertRaises(grpc.RpcError) as e:
            c.upsert("err", [{"id": "a", "text": ""}])
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("empty", e.exception.details())
        with self.assertRaises(grpc.RpcError) as e:
            c.search_vector("err", [1.0, 2.0])
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        with self.assertRaises(grpc.RpcError) as e:
            c.create_collection("err")
        self.assertEqual(e.exception.code(), grpc.StatusCode.ALREADY_EXISTS)
        self.assertGreaterEqual(c.stats().collections, 1)  # still up



def add_key(tmp, role):
    """`neodb keys add`: the key it prints once."""
    out = subprocess.run([NEODB, "keys", "add", "--role", role, "--key-file",
                          os.path.join(tmp, "keys")], check=True, capture_output=True,
                         text=True, timeout=60)
    return out.stdout.strip()


class PythonClientKeysTest(unittest.TestCase):
    """The client's api_key (and $NEODB_API_KEY) against a --key-file server."""

    def test_keys_and_roles(self):
        tmp = tempfile.mkdtemp(prefix="neodb_pykeys_")
        try:
            read, admin = add_key(tmp, "read"), add_key(tmp, "admin")
            server = Server(tmp, ["--key-file", os.path.join(tmp, "keys")])
            try:
                anonymous = NeodbClient(server.address, api_key="")
                with self.assertRaises(grpc.RpcError) as e:
                    anonymous.stats()
                self.assertEqual(e.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
                anonymous.close()
                boss = NeodbClient(server.address, api_key=admin)
                boss.create_collection("k")
                # Streaming calls carry the key too.
                boss.ingest("k", [{"id": "a", "text": "alpha bravo"}])
                boss.close()
                os.environ["NEODB_API_KEY"] = read
                try:
                    reader = NeodbClient(server.address)
                finally:
                    del os.environ["NEODB_API_KEY"]
                self.assertEqual([h["id"] for h in reader.search("k", "alpha bravo", k=1)], ["a"])
                with self.assertRaises(grpc.RpcError) as e:
                    reader.upsert("k", [{"id": "b", "text": "charlie"}])
                self.assertEqual(e.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
                reader.close()
            finally:
                self.assertEqual(server.stop(), 0)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
