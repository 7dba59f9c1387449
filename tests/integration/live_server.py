"""A live `neodb serve --http` for the Python tests that drive it with
PyPI packages (openai_embeddings_test.py, schemathesis_test.py).

Those packages live in the test venv ($NEODB_PYTEST_VENV, default
/opt/neodb-pytest/venv, made by tools/install_python_test_deps.sh): CTest runs
a test with /usr/bin/python3 and rerun_in_venv() runs it again with the venv's
python. The server listens on ports the OS picks; Server waits for the lines
that print them, not for a time.
"""

import os
import subprocess
import sys
import threading

SRC = os.path.abspath(os.environ.get("NEODB_SOURCE_DIR", "."))
BIN = os.path.abspath(os.environ.get("NEODB_BINARY_DIR", "build"))
VENV = os.environ.get("NEODB_PYTEST_VENV", "/opt/neodb-pytest/venv")
NEODB = os.path.join(BIN, "tools", "neodb", "neodb")
FAKE = "--fake-model" in sys.argv
WORDS = ("the cat sat on a mat dogs run fast vector search finds near texts "
         "é ü 日本 ok").split()


def rerun_in_venv(script):
    """Runs `script` with the venv's python and --in-venv; its exit code."""
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        print("%s: no test venv at %s: run tools/install_python_test_deps.sh "
              "(tools/install_deps.sh does)" % (os.path.basename(script), VENV), file=sys.stderr)
        return 1
    return subprocess.run([py, os.path.abspath(script), "--in-venv"] + sys.argv[1:]).returncode


def model_args(tmp, words=WORDS):
    """A tiny random model made here over `words`, or the fake embedder
    (--fake-model). python_client_test.py uses it too."""
    if FAKE:
        return ["--fake-model", "32", "--model", "fake:1"]
    vocab = os.path.join(tmp, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + list(words)) + "\n")
    model = os.path.join(tmp, "model")
    subprocess.run([NEODB, "model", "init", "--preset", "tiny", "--vocab", vocab, "--out", model],
                   check=True, stdout=subprocess.DEVNULL, timeout=300)
    return ["--model", model]


class Server:
    """`neodb serve` with gRPC and --http on 127.0.0.1, ports the OS picks;
    its log in tmp/server.log. Started once it printed both ports."""

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
        self.http = "http://127.0.0.1:%d" % self.ports["(HTTP port "]

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        self.proc.terminate()
        return self.proc.wait(timeout=120)
