#!/usr/bin/python3
"""The Python client's search features past a plain top-k, against the real
`neodb serve --fake-model 32` (started by neodb.connect_embedded on a free
port): near_text/near_vector with score_threshold, offset and group_by,
recommend, batch_near_text with a bad query among good ones, and a
multi-tenant collection through with_tenant().
Run by CTest with NEODB_BINARY_DIR set."""

import os
import shutil
import sys
import tempfile
import unittest

SRC = os.environ.get("NEODB_SOURCE_DIR", ".")
BIN = os.environ.get("NEODB_BINARY_DIR", "build")
sys.path.insert(0, os.path.join(SRC, "clients", "python"))
os.environ.setdefault("NEODB_PYTHON_PROTO_DIR", os.path.join(BIN, "proto", "python"))
os.environ["NEODB_BINARY"] = os.path.join(BIN, "tools", "neodb", "neodb")
os.environ["NEODB_SERVE_ARGS"] = "--fake-model 32 --snapshot-interval 0"
import neodb  # noqa: E402
from neodb import NeodbError  # noqa: E402

WORDS = "apple river stone cloud tiger maple ocean ember".split()


class PythonSearchFeaturesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="neodb_pysf_")
        cls.client = neodb.connect_embedded(os.path.join(cls.tmp, "data"))
        cls.docs = cls.client.collections.create("docs")
        cls.docs.insert_many([
            {"id": "d%02d" % i,
             "text": " ".join(WORDS[(i * j + j) % 8] for j in range(1, 5)),
             "metadata": {"g": "abc"[i % 3], "author": {"name": "xy"[i % 2]}}}
            for i in range(30)])

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_threshold_and_offset(self):
        all_hits = self.docs.near_text("apple river", limit=10, mode="vector")
        page = self.docs.near_text("apple river", limit=4, offset=3, mode="vector")
        self.assertEqual([h.id for h in page], [h.id for h in all_hits[3:7]])
        t = all_hits[4].score
        cut = self.docs.near_text("apple river", limit=10, mode="vector", score_threshold=t)
        self.assertTrue(all(h.score >= t for h in cut))
        self.assertGreaterEqual(len(cut), 5)
        with self.assertRaises(NeodbError) as e:
            self.docs.near_text("apple", limit=10, offset=995)
        self.assertEqual(e.exception.code.name, "INVALID_ARGUMENT")

    def test_count_update_and_delete_by_filter(self):
        c = self.client.collections.create("bulk")
        c.insert_many([{"id": "b%02d" % i, "text": WORDS[i % 8],
                        "metadata": {"n": i, "author": {"name": "xy"[i % 2], "age": i}}}
                       for i in range(20)])
        self.assertEqual(c.count(), 20)
        self.assertEqual(c.count(filter={"field": "n", "lt": 5}), 5)
        before = c.get("b03", include_vector=True)
        r = c.update_metadata(filter={"field": "author.name", "eq": "y"},
                              set={"tag": "odd", "author": {"city": "oslo"}},
                              remove=["author.age"])
        self.assertEqual((r["matched"], r["updated"]), (10, 10))
        after = c.get("b03", include_vector=True)
        self.assertEqual(after.metadata, {"n": 3, "tag": "odd",
                                          "author": {"name": "y", "city": "oslo"}})
        self.assertEqual((after.text, after.vector), (before.text, before.vector))
        r = c.update_metadata(ids=["b00", "nope"], set={"only": True}, replace=True)
        self.assertEqual(r, {"matched": 1, "updated": 1, "missing_ids": ["nope"]})
        self.assertEqual(c.get("b00").metadata, {"only": True})
        self.assertEqual(c.delete(filter={"field": "tag", "eq": "odd"}), 10)
        self.assertEqual(c.count(), 10)
        with self.assertRaises(NeodbError) as e:
            c.delete(ids=["b02"], filter={"field": "n", "eq": 2})
        self.assertEqual(e.exception.code.name, "INVALID_ARGUMENT")

    def test_group_by_nested_field(self):
        groups = self.docs.near_text("stone cloud", group_by="author.name", groups=2,
                                     group_size=3)
        self.assertEqual(sorted(g.value for g in groups), ["x", "y"])
        for g in groups:
            self.assertEqual(len(g.hits), 3)
            self.assertTrue(all(h.metadata["author"]["name"] == g.value for h in g.hits))

    def test_recommend(self):
        vec = self.docs.get("d01", include_vector=True).vector
        hits = self.docs.recommend(positive=["d00", vec], negative=["d02"], limit=5)
        self.assertEqual(len(hits), 5)
        self.assertFalse({"d00", "d02"} & {h.id for h in hits})
        with self.assertRaises(NeodbError) as e:
            self.docs.recommend(positive=["d00", "nope"])
        self.assertEqual(e.exception.code.name, "NOT_FOUND")
        self.assertIn("nope", e.exception.message)

    def test_batch_near_text(self):
        answers = self.docs.batch_near_text(
            ["apple", {"query": "", "mode": "vector"}, {"query": "ocean", "limit": 3}])
        self.assertEqual(len(answers), 3)
        self.assertEqual([h.id for h in answers[0]],
                         [h.id for h in self.docs.near_text("apple")])
        self.assertIsInstance(answers[1], NeodbError)
        self.assertEqual(answers[1].code.name, "INVALID_ARGUMENT")
        self.assertEqual(len(answers[2]), 3)

    def test_tenants(self):
        mt = self.client.collections.create("mt", multi_tenant=True)
        self.assertTrue(mt.info().multi_tenant)
        acme, globex = mt.with_tenant("acme"), mt.with_tenant("globex")
        for t in (acme, globex):
            t.insert_many([{"id": "d%d" % i, "text": "%s %s" % (t.tenant, WORDS[i % 8]),
                            "metadata": {"n": i}} for i in range(8)])
        self.assertEqual(mt.tenants(), {"acme": 8, "globex": 8})
        self.assertEqual((len(acme), acme.count(filter={"field": "n", "lt": 3})), (8, 3))
        self.assertTrue(acme.get("d1").text.startswith("acme"))
        self.assertIsNone(acme.get("globex/d1"))
        for mode in ("vector", "keyword", "hybrid"):
            hits = acme.near_text("globex apple", limit=20, mode=mode)
            self.assertTrue(hits)
            self.assertTrue(all(h.text.startswith("acme") for h in hits), mode)
        self.assertEqual(sorted(d.id for d in acme.iterate()), ["d%d" % i for i in range(8)])
        hits = acme.recommend(positive=["d0"], limit=20)
        self.assertEqual(len(hits), 7)
        self.assertEqual(acme.update_metadata(filter={"field": "n", "gte": 0},
                                              set={"seen": True})["updated"], 8)
        self.assertEqual(globex.count(filter={"field": "seen", "exists": True}), 0)
        with self.assertRaises(NeodbError) as e:
            mt.count()  # no tenant
        self.assertEqual(e.exception.code.name, "INVALID_ARGUMENT")
        self.assertEqual(acme.delete_tenant(), 8)
        self.assertEqual(mt.tenants(), {"globex": 8})
        self.assertEqual(len(globex), 8)


if __name__ == "__main__":
    unittest.main(verbosity=2)
