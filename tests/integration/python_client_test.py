#!/usr/bin/python3
"""Python end-to-end test: the real `neodb serve` on 127.0.0.1, driven by the
`neodb` package (clients/python) imported from the source tree, over Debian's
python3-grpcio and the build's stubs generated from the .proto only
(<build>/proto/python; python_package_test.py covers the installed package).
Run by CTest with NEODB_BINARY_DIR set.
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
sys.path.insert(0, os.path.join(SRC, "clients", "python"))
os.environ.setdefault("NEODB_PYTHON_PROTO_DIR", os.path.join(BIN, "proto", "python"))
import grpc  # noqa: E402
import live_server  # noqa: E402  (this folder: the tiny model's arguments)
import neodb  # noqa: E402
from neodb import NeodbError  # noqa: E402

NEODB = os.path.join(BIN, "tools", "neodb", "neodb")
FAKE = "--fake-model" in sys.argv
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango").split()


def model_args(tmp):
    return live_server.model_args(tmp, WORDS)


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
        cls.client = neodb.connect(cls.server.address)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        rc = cls.server.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)
        assert rc == 0, "server exit code %d" % rc

    def test_ingest_search_filter(self):
        py = self.client.collections.create("py")
        rng = random.Random(3)
        docs = [{"id": "d%d" % i, "text": " ".join(rng.choice(WORDS) for _ in range(8)),
                 "metadata": {"i": i, "half": "low" if i < 100 else "high", "w": i / 10.0}}
                for i in range(200)]
        acked = []
        self.assertEqual(py.insert_many(docs, batch_size=50, progress=acked.append),
                         [d["id"] for d in docs])
        self.assertEqual(acked, [50, 100, 150, 200])
        self.assertEqual(py.info().count, 200)
        hits = py.near_text(docs[17]["text"], limit=3, mode="hybrid")
        self.assertEqual(hits[0].text, docs[17]["text"])
        hits = py.near_text(docs[17]["text"], limit=10,
                            filter={"and": [{"field": "half", "eq": "high"},
                                            {"field": "i", "gte": 150, "lt": 160}]})
        self.assertEqual(len(hits), 10)
        self.assertEqual(sorted(h.metadata["i"] for h in hits), list(range(150, 160)))
        found, missing = py.get(["d3", "zzz"])
        self.assertEqual(found.metadata["half"], "low")
        self.assertIsNone(missing)
        self.assertEqual(py.delete(["d3"]), 1)
        v = py.verify()
        self.assertEqual((v["stored"], v["indexed"], v["stale_in_index"]), (199, 199, 0))
        stats = self.client.stats()
        vecs, model_id = self.client.embed(["alpha bravo"])
        self.assertEqual(len(vecs[0]), stats["dimension"])
        self.assertEqual(model_id, stats["model_id"])

    def test_keyword_and_hybrid_modes(self):
        c = self.client
        kw = c.collections.create("kw", analyzer="english", bm25_k1=1.2, bm25_b=0.75,
                                  title_field="title", title_weight=2.0)
        info = kw.info()
        self.assertEqual((info.analyzer, info.bm25_k1, info.bm25_b), ("english", 1.2, 0.75))
        self.assertEqual((info.title_field, info.title_weight), ("title", 2.0))
        kw.insert_many([{"id": "a", "text": "alpha bravo", "metadata": {"title": "zulu"}},
                        {"id": "b", "text": "charlie delta", "metadata": {"title": "echo"}},
                        {"id": "c", "text": "zulu zulu golf", "metadata": {"title": "hotel"}}])
        # keyword: only documents holding a query word, the title counted twice.
        hits = kw.near_text("zulu", limit=10, mode="keyword", explain=True)
        self.assertEqual(sorted(h.id for h in hits), ["a", "c"])
        for i, h in enumerate(hits):
            self.assertEqual(h.explain["keyword_rank"], i + 1)
            self.assertEqual(h.explain["vector_rank"], 0)
            self.assertEqual(h.explain["mode"], "keyword")
        hits = kw.near_text("zulu", limit=10, alpha=0.5, explain=True)
        self.assertEqual(len(hits), 3)  # the vector leg returns every document
        self.assertEqual(hits[0].explain["alpha"], 0.5)
        self.assertEqual(hits[0].explain["mode"], "hybrid")
        self.assertIsNone(kw.near_text("zulu", limit=1)[0].explain)  # only when asked
        hits = kw.near_text("zulu", limit=2, mode="vector", fusion="rrf")
        self.assertEqual(len(hits), 2)
        self.assertEqual(kw.info().keyword["documents"], 3)
        for bad in ({"mode": "fuzzy"}, {"fusion": "mean"}, {"alpha": 2.0},
                    {"fusion": "adaptive", "alpha": 0.2}):
            with self.assertRaises(NeodbError) as e:
                kw.near_text("zulu", **bad)
            self.assertEqual(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT, bad)
        # The collection's default fusion: queries that name none use it.
        info = kw.info()
        self.assertEqual(info.fusion, "adaptive")
        # No alpha beside adaptive: a described collection's settings create one as it is.
        self.assertIsNone(info.fusion_alpha)
        copy = c.collections.create("kw_copy", analyzer=info.analyzer, bm25_k1=info.bm25_k1,
                                    bm25_b=info.bm25_b, title_field=info.title_field,
                                    title_weight=info.title_weight, fusion=info.fusion,
                                    fusion_alpha=info.fusion_alpha)
        self.assertEqual((copy.info().fusion, copy.info().bm25_k1), ("adaptive", 1.2))
        c.collections.delete("kw_copy")
        info = kw.set_fusion(alpha=0.25)
        self.assertEqual((info.fusion, info.fusion_alpha), ("weighted", 0.25))
        hits = kw.near_text("zulu", limit=10, explain=True)
        self.assertEqual(hits[0].explain["alpha"], 0.25)
        for bad in ({"fusion": "mean"}, {"alpha": 1.5}, {"fusion": "rrf", "alpha": 0.2}):
            with self.assertRaises(NeodbError) as e:
                kw.set_fusion(**bad)
            self.assertEqual(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT, bad)
        self.assertEqual(kw.info().fusion_alpha, 0.25)
        v = kw.verify()
        self.assertEqual((v["keyword_indexed"], v["keyword_missing"], v["keyword_stale"]),
                         (3, 0, 0))
        self.assertTrue(v["keyword_content_matches"])

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
        with self.assertRaises(NeodbError) as e:
            c.collections.get("no_such_collection").near_text("alpha")
        self.assertEqual(e.exception.code, grpc.StatusCode.NOT_FOUND)
        err = c.collections.create("err")
        for write in (err.insert_many, err.upsert):
            with self.assertRaises(NeodbError) as e:
                write([{"id": "a", "text": ""}])
            self.assertEqual(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("empty", e.exception.message)
        ids = err.upsert([{"id": "u", "text": "alpha"}, {"text": "bravo"}])
        self.assertEqual(ids[0], "u")
        self.assertTrue(ids[1])  # generated by the server
        self.assertEqual([d.text for d in err.get(ids)], ["alpha", "bravo"])
        with self.assertRaises(NeodbError) as e:
            err.near_vector([1.0, 2.0])
        self.assertEqual(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        with self.assertRaises(NeodbError) as e:
            c.collections.create("err")
        self.assertEqual(e.exception.code, grpc.StatusCode.ALREADY_EXISTS)
        self.assertGreaterEqual(c.stats()["collections"], 1)  # still up



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
                anonymous = neodb.connect(server.address, api_key="")
                with self.assertRaises(NeodbError) as e:
                    anonymous.stats()
                self.assertEqual(e.exception.code, grpc.StatusCode.UNAUTHENTICATED)
                anonymous.close()
                boss = neodb.connect(server.address, api_key=admin)
                boss.collections.create("k")
                # Streaming calls carry the key too.
                boss.collections.get("k").insert_many([{"id": "a", "text": "alpha bravo"}])
                boss.close()
                os.environ["NEODB_API_KEY"] = read
                try:
                    reader = neodb.connect(server.address)
                finally:
                    del os.environ["NEODB_API_KEY"]
                k = reader.collections.get("k")
                self.assertEqual([h.id for h in k.near_text("alpha bravo", limit=1)], ["a"])
                with self.assertRaises(NeodbError) as e:
                    k.insert_many([{"id": "b", "text": "charlie"}])
                self.assertEqual(e.exception.code, grpc.StatusCode.PERMISSION_DENIED)
                reader.close()
            finally:
                self.assertEqual(server.stop(), 0)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
