#!/usr/bin/python3
"""The installable Python package (clients/python) end to end.

Outside the venv (as CTest runs it with /usr/bin/python3): copies the package
to a scratch directory, makes a `python3 -m venv --system-site-packages` venv
there, `pip install --no-index --no-build-isolation`s the package into it
(offline; the stubs are generated from the .proto by the package's build
step), then re-runs this file with the venv's python and --in-venv.

Inside the venv: runs the README's two Python examples verbatim against an
embedded server (`neodb.connect_embedded`, the binary from NEODB_BINARY, a
tiny random model or the fake embedder), checks the vectors come back bit for
bit, and checks the refusals (wrong dimension, NaN, near-text without a query
model, a vector sent to a model collection) as NeodbError codes.

Usage: python_package_test.py [--fake-model]
"""

import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

SRC = os.path.abspath(os.environ.get("NEODB_SOURCE_DIR", "."))
BIN = os.path.abspath(os.environ.get("NEODB_BINARY_DIR", "build"))
NEODB = os.path.join(BIN, "tools", "neodb", "neodb")
FAKE = "--fake-model" in sys.argv
WORDS = ("neobert is a next generation encoder vector databases store embeddings bert was "
         "released in 2018 cosine similarity compares directions").split()


def setup_venv_and_rerun():
    tmp = tempfile.mkdtemp(prefix="neodb_pkg_test_")
    try:
        pkg = os.path.join(tmp, "python")
        shutil.copytree(os.path.join(SRC, "clients", "python"), pkg,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        venv = os.path.join(tmp, "venv")
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv],
                       check=True)
        env = dict(os.environ, NEODB_PROTO_ROOT=os.path.join(SRC, "proto"),
                   PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
        env.pop("NEODB_PYTHON_PROTO_DIR", None)  # the installed stubs, not the build's
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--no-index",
                        "--no-build-isolation", "--quiet", pkg], check=True, env=env)
        args = [os.path.join(venv, "bin", "python"), os.path.abspath(__file__), "--in-venv"]
        if FAKE:
            args.append("--fake-model")
        # From the scratch directory: `import neodb` must find the installed package.
        return subprocess.run(args, cwd=tmp, env=env).returncode
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def readme_examples():
    """The README's ```python blocks under an <!-- example: NAME --> marker."""
    with open(os.path.join(SRC, "README.md")) as f:
        text = f.read()
    found = dict(re.findall(r"<!-- example: ([\w-]+)[^>]*-->\s*```python\n(.*?)```", text,
                            re.S))
    assert set(found) == {"external-vectors", "built-in-encoder"}, sorted(found)
    return found


def f32_bits(xs):
    return struct.pack("<%df" % len(xs), *xs)


class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import neodb
        cls.neodb = neodb
        # Installed, not picked up from the source tree.
        assert "site-packages" in neodb.__file__, neodb.__file__
        cls.tmp = tempfile.mkdtemp(prefix="neodb_pkg_run_")
        os.environ["NEODB_BINARY"] = NEODB
        if FAKE:
            os.environ["NEODB_SERVE_ARGS"] = "--fake-model 32 --snapshot-interval 0"
            os.environ["NEODB_MODEL"] = "fake:1"
        else:
            vocab = os.path.join(cls.tmp, "vocab.txt")
            with open(vocab, "w") as f:
                tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS + list(
                    "abcdefghijklmnopqrstuvwxyz0123456789.-")
                f.write("\n".join(dict.fromkeys(tokens)) + "\n")  # each token once
            model = os.path.join(cls.tmp, "model")
            subprocess.run([NEODB, "model", "init", "--preset", "tiny", "--vocab", vocab,
                            "--out", model], check=True, stdout=subprocess.DEVNULL, timeout=120)
            os.environ["NEODB_MODEL"] = model
            os.environ["NEODB_SERVE_ARGS"] = "--snapshot-interval 0"
        os.chdir(cls.tmp)  # the README's ./neodb-data lands here

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_example(self, name):
        scope = {}
        exec(compile(readme_examples()[name], "README.md:" + name, "exec"), scope)
        return scope

    def test_readme_external_vectors(self):
        scope = self.run_example("external-vectors")
        hits, objects = scope["hits"], scope["objects"]
        self.assertEqual(len(hits), 3)
        by_id = {o["id"]: o for o in objects}
        # Documents 1 and 3 point almost where the query does (cosine above 0.99,
        # in either order), 4 is next (near orthogonal), 2 opposite.
        self.assertEqual({h.id for h in hits[:2]}, {"1", "3"})
        self.assertEqual(hits[2].id, "4")
        self.assertGreater(hits[1].score, 0.99)
        for h in hits:
            # Bit for bit: the float32 the client sent is the float32 returned.
            self.assertEqual(f32_bits(h.vector), f32_bits(by_id[h.id]["vector"]), h.id)
            self.assertEqual(h.metadata, by_id[h.id]["metadata"])
            self.assertEqual(h.text, by_id[h.id]["text"])

    def test_readme_builtin_encoder(self):
        scope = self.run_example("built-in-encoder")
        hits = scope["hits"]
        # year >= 2019 leaves documents 1 and 2; the query is document 1's text.
        self.assertEqual(len(hits), 2)
        self.assertEqual(hits[0].id, "1")
        self.assertEqual(hits[0].text, "NeoBERT is a next-generation encoder.")
        self.assertAlmostEqual(hits[0].score, 1.0, delta=1e-4)
        self.assertIsNone(hits[0].vector)

    def test_handles_errors_and_paging(self):
        neodb = self.neodb
        import grpc
        with neodb.connect_embedded(os.path.join(self.tmp, "data2")) as client:
            c = client.collections.create("ext", vectors="external", dimension=3,
                                          vectors_name="mine")
            info = c.info()
            self.assertEqual((info.vectors, info.dimension, info.model_id),
                             ("external", 3, "external:mine"))
            self.assertTrue(client.collections.exists("ext"))
            self.assertFalse(client.collections.exists("nope"))
            self.assertIn("ext", [i.name for i in client.collections.list()])

            def code(fn):
                with self.assertRaises(neodb.NeodbError) as e:
                    fn()
                return e.exception.code, e.exception.message

            code_, msg = code(lambda: c.insert_many([{"id": "a", "vector": [1.0, 2.0]}]))
            self.assertEqual(code_, grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("has 2 values", msg)
            code_, msg = code(lambda: c.insert_many([{"id": "a", "vector": [1.0, float("nan"),
                                                                          2.0]}]))
            self.assertEqual(code_, grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("non-finite", msg)
            code_, msg = code(lambda: c.insert_many([{"id": "a", "text": "no vector"}]))
            self.assertEqual(code_, grpc.StatusCode.INVALID_ARGUMENT)
            code_, msg = code(lambda: c.near_text("hello"))
            self.assertEqual(code_, grpc.StatusCode.FAILED_PRECONDITION)
            self.assertIn("near-vector", msg)
            code_, _ = code(lambda: c.near_vector([1.0, 2.0]))
            self.assertEqual(code_, grpc.StatusCode.INVALID_ARGUMENT)
            code_, _ = code(lambda: client.collections.get("nope").near_vector([1, 2, 3]))
            self.assertEqual(code_, grpc.StatusCode.NOT_FOUND)

            # Paging over every document, vectors bit for bit, progress counted.
            vectors = {"d%03d" % i: [i + 0.1, -1.0 / (i + 3), 3.14159265 * i + 1]
                       for i in range(250)}
            seen = []
            ids = c.insert_many([{"id": k, "vector": v, "metadata": {"i": int(k[1:])}}
                                 for k, v in vectors.items()], batch_size=64,
                                progress=seen.append)
            self.assertEqual(ids, sorted(vectors))
            self.assertEqual(seen, [64, 128, 192, 250])
            got = list(c.iterate(page_size=100, include_vector=True))
            self.assertEqual([d.id for d in got], sorted(vectors))
            for d in got:
                self.assertEqual(f32_bits(d.vector), f32_bits(vectors[d.id]), d.id)
            one = c.get("d007", include_vector=True)
            self.assertEqual(f32_bits(one.vector), f32_bits(vectors["d007"]))
            self.assertEqual(c.get(["d001", "zz"]), [c.get("d001"), None])
            hits = c.near_vector(vectors["d010"], limit=5, filter={"field": "i", "lt": 10},
                                 include_vector=True)
            self.assertEqual(len(hits), 5)
            self.assertTrue(all(h.metadata["i"] < 10 for h in hits))
            self.assertEqual(c.delete(["d001", "zz"]), 1)
            self.assertEqual(len(c), 249)

            m = client.collections.create("m")
            code_, msg = code(lambda: m.insert_many([{"text": "a", "vector": [1.0]}]))
            self.assertEqual(code_, grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("embeds its texts", msg)
            client.collections.delete("m")
            self.assertFalse(client.collections.exists("m"))
            proc = client.process
        self.assertEqual(proc.returncode, 0)  # stopped cleanly on leaving the block


if __name__ == "__main__":
    if "--in-venv" not in sys.argv:
        sys.exit(setup_venv_and_rerun())
    argv = [a for a in sys.argv if a not in ("--in-venv", "--fake-model")]
    unittest.main(argv=argv, verbosity=2)
