#!/usr/bin/python3
"""The official `openai` Python package (PyPI, pinned in
tools/python_test_requirements.txt) against a live `neodb serve --http`:
`client.embeddings.create` gets the same vectors as gRPC `Embedding.Embed`,
bit for bit (Embed asked for mean pooling, normalised, as the endpoint is),
with encoding_format float, base64, and the package's default (it asks for
base64 and decodes it itself); a wrong key, an unknown model and `dimensions`
are refused as the package's own error types, and the server stays up.

CTest runs this with /usr/bin/python3; it re-runs itself with the python of
the test venv ($NEODB_PYTEST_VENV, default /opt/neodb-pytest/venv, made by
tools/install_python_test_deps.sh), where openai is installed and Debian's
grpcio is visible. The server listens on ports the OS picks; the test waits
for the lines that print them, not for a time.

Usage: openai_embeddings_test.py [--fake-model]
"""

import base64
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import unittest

SRC = os.path.abspath(os.environ.get("NEODB_SOURCE_DIR", "."))
BIN = os.path.abspath(os.environ.get("NEODB_BINARY_DIR", "build"))
VENV = os.environ.get("NEODB_PYTEST_VENV", "/opt/neodb-pytest/venv")
NEODB = os.path.join(BIN, "tools", "neodb", "neodb")
FAKE = "--fake-model" in sys.argv
WORDS = ("the cat sat on a mat dogs run fast vector search finds near texts "
         "é ü 日本 ok").split()
TEXTS = ["the cat sat on the mat", "dogs run fast", "日本 é ü " * 40, "vector search"]


def rerun_in_venv():
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        print("openai_embeddings_test: no test venv at %s: run tools/install_python_test_deps.sh "
              "(tools/install_deps.sh does)" % VENV, file=sys.stderr)
        return 1
    return subprocess.run([py, os.path.abspath(__file__), "--in-venv"] + sys.argv[1:]).returncode


sys.path.insert(0, os.path.join(SRC, "clients", "python"))
os.environ.setdefault("NEODB_PYTHON_PROTO_DIR", os.path.join(BIN, "proto", "python"))


def model_args(tmp):
    if FAKE:
        return ["--fake-model", "32", "--model", "fake:1"]
    vocab = os.path.join(tmp, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS) + "\n")
    model = os.path.join(tmp, "model")
    subprocess.run([NEODB, "model", "init", "--preset", "tiny", "--vocab", vocab, "--out", model],
                   check=True, stdout=subprocess.DEVNULL, timeout=300)
    return ["--model", model]


class Server:
    """`neodb serve` with gRPC and --http on ports the OS picks. Startup is
    known from the printed ports: the server prints them once it listens."""

    def __init__(self, tmp, extra=()):
        self.log = os.path.join(tmp, "server.log")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [NEODB, "serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0",
                 "--data-dir", os.path.join(tmp, "data"), "--snapshot-interval", "0"]
                + model_args(tmp) + list(extra),
                stdout=subprocess.PIPE, stderr=log, text=True)
        self.ports = {}
        ready = threading.Event()

        def read():
            for line in self.proc.stdout:
                for tag in ("(port ", "(HTTP port "):
                    if tag in line and tag not in self.ports:
                        self.ports[tag] = int(line.split(tag)[1].split(")")[0])
                if len(self.ports) == 2:
                    ready.set()
            ready.set()  # the process ended: stop waiting

        threading.Thread(target=read, daemon=True).start()
        ready.wait()
        if len(self.ports) != 2:
            self.proc.kill()
            with open(self.log) as f:
                raise RuntimeError("server did not start (exit %s):\n%s" % (self.proc.wait(),
                                                                          f.read()))
        self.grpc = "127.0.0.1:%d" % self.ports["(port "]
        self.http = "http://127.0.0.1:%d/v1" % self.ports["(HTTP port "]

    def stop(self):
        self.proc.terminate()
        return self.proc.wait(timeout=120)


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
        cls.client = openai.OpenAI(base_url=cls.server.http, api_key=cls.key, max_retries=0)
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
        bad = self.openai.OpenAI(base_url=self.server.http, api_key="not-a-key", max_retries=0)
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
        sys.exit(rerun_in_venv())
    unittest.main(argv=[sys.argv[0]], verbosity=2)
