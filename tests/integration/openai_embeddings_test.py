#!/usr/bin/python3
"""The official `openai` Python package (PyPI, pinned in
tools/python_test_requirements.txt) against a live `neodb serve --http`:
`client.embeddings.create` gets the same vectors as gRPC `Embedding.Embed`,
bit for bit (Embed asked for mean pooling, normalised, as the endpoint is),
with encoding_format float, base64, and the package's default (it asks for
base64 and decodes it itself); a wrong key, an unknown model and `dimensions`
are refused as the package's own error types, and the server stays up.

Run with /usr/bin/python3 by CTest, again in the test venv where openai is
(live_server.py).

Usage: openai_embeddings_test.py [--fake-model]
"""

import base64
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live_server import BIN, NEODB, SRC, Server, rerun_in_venv  # noqa: E402

TEXTS = ["the cat sat on the mat", "dogs run fast", "日本 é ü " * 40, "vector search"]

sys.path.insert(0, os.path.join(SRC, "clients", "python"))
os.environ.setdefault("NEODB_PYTHON_PROTO_DIR", os.path.join(BIN, "proto", "python"))


def f32_bits(xs):
    """The float32 bytes of `xs`: a double that is not exactly a float32 fails."""
    out = struct.pack("<%df" % len(xs), *xs)
    back = struct.unpack("<%df" % len(xs), out)
    assert list(back) == list(xs), "not float32 values"
    return out


class OpenAiEmbeddingsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import neodb
        import openai
        cls.openai = openai
        cls.tmp = tempfile.mkdtemp(prefix="neodb_openai_")
        # A key file with one read key: the openai package sends it as a Bearer token.
        keys = os.path.join(cls.tmp, "keys")
        cls.key = subprocess.run([NEODB, "keys", "add", "--role", "read", "--key-file", keys],
                                 check=True, capture_output=True, text=True).stdout.strip()
        # Class cleanups run even when setUpClass fails half way (no server left behind).
        cls.addClassCleanup(shutil.rmtree, cls.tmp, ignore_errors=True)
        cls.server = Server(cls.tmp, ["--key-file", keys])
        cls.addClassCleanup(cls.server.stop)
        cls.grpc = neodb.connect(cls.server.grpc, api_key=cls.key)
        cls.addClassCleanup(cls.grpc.close)
        # /v1/embeddings is mean pooling, normalised: the same asked of gRPC.
        cls.want, cls.model_id = cls.grpc.embed(TEXTS, pooling="mean", normalize=True)
        cls.base_url = cls.server.http + "/v1"
        cls.client = openai.OpenAI(base_url=cls.base_url, api_key=cls.key, max_retries=0)
        cls.addClassCleanup(cls.client.close)

    def check_same(self, got):
        self.assertEqual(len(got), len(self.want))
        for i, (g, w) in enumerate(zip(got, self.want)):
            self.assertEqual(f32_bits(g), f32_bits(w), "text %d" % i)

    def test_float(self):
        r = self.client.embeddings.create(model="default", input=TEXTS, encoding_format="float")
        self.assertEqual(r.object, "list")
        self.assertEqual(r.model, self.model_id)
        self.assertEqual([d.index for d in r.data], list(range(len(TEXTS))))
        self.assertGreater(r.usage.prompt_tokens, 0)
        self.check_same([d.embedding for d in r.data])

    def test_base64(self):
        r = self.client.embeddings.create(model=self.model_id, input=TEXTS,
                                          encoding_format="base64")
        got = []
        for d in r.data:
            raw = base64.b64decode(d.embedding)
            got.append(list(struct.unpack("<%df" % (len(raw) // 4), raw)))
        self.check_same(got)

    def test_package_default(self):
        """No encoding_format: the package asks for base64 and decodes it."""
        r = self.client.embeddings.create(model="default", input=TEXTS)
        self.check_same([d.embedding for d in r.data])

    def test_one_string(self):
        r = self.client.embeddings.create(model="default", input=TEXTS[0],
                                          encoding_format="float")
        # Alone, not beside the others: a text's vector may differ in its last
        # bits with the batch it was embedded in, for gRPC as for HTTP.
        want, _ = self.grpc.embed(TEXTS[:1], pooling="mean", normalize=True)
        self.assertEqual(f32_bits(r.data[0].embedding), f32_bits(want[0]))

    def test_refusals(self):
        bad = self.openai.OpenAI(base_url=self.base_url, api_key="not-a-key", max_retries=0)
        with self.assertRaises(self.openai.AuthenticationError):
            bad.embeddings.create(model="default", input=["x"])
        bad.close()
        with self.assertRaises(self.openai.NotFoundError) as e:
            self.client.embeddings.create(model="no-such-model", input=["x"])
        self.assertIn("no-such-model", str(e.exception))
        with self.assertRaises(self.openai.BadRequestError):
            self.client.embeddings.create(model="default", input=["x"], dimensions=8)
        # The server is still up and answers.
        r = self.client.embeddings.create(model="default", input=TEXTS, encoding_format="float")
        self.check_same([d.embedding for d in r.data])


if __name__ == "__main__":
    if "--in-venv" not in sys.argv:
        sys.exit(rerun_in_venv(__file__))
    unittest.main(argv=[sys.argv[0]], verbosity=2)
