#!/usr/bin/python3
"""A property-based run of the server's own OpenAPI document against a live
`neodb serve --http`, with schemathesis (PyPI, pinned in
tools/python_test_requirements.txt): every operation of /openapi.json gets
generated requests, valid and invalid (its coverage and fuzzing phases,
negative data included), and each answer must be no server error (5xx),
carry a status code and content type the document lists, and match the
document's response schema. Deterministic: schemathesis' deterministic
generation (no seed, no example database), a fixed number of examples per
operation, one worker; no time budget. The server must still answer /healthz afterwards.

A collection and documents exist before the run, so operations that name one
by chance (schemathesis does not know the names) are not all 404s.

Run with /usr/bin/python3 by CTest, again in the test venv (live_server.py).
Usage: schemathesis_test.py [--fake-model]
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live_server import VENV, Server, rerun_in_venv  # noqa: E402

CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,"
          "response_schema_conformance")
EXAMPLES = int(os.environ.get("NEODB_SCHEMATHESIS_EXAMPLES", "10"))  # per operation and phase


def post(base, path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.load(r)


def main():
    tmp = tempfile.mkdtemp(prefix="neodb_schemathesis_")
    server = None
    try:
        server = Server(tmp)
        post(server.http, "/v1/rpc/Collections/Create", {"spec": {"name": "docs"}})
        post(server.http, "/v1/rpc/Documents/Upsert", {
            "collection": "docs",
            "documents": [{"id": "a", "text": "the cat sat on the mat"},
                          {"id": "b", "text": "dogs run fast", "metadata": {
                              "year": {"int_value": "2024"}}}]})
        cmd = [os.path.join(VENV, "bin", "st"), "run", server.http + "/openapi.json",
               "--checks", CHECKS, "--max-examples", str(EXAMPLES),
               "--generation-deterministic", "--workers", "1", "--no-color"]
        print(" ".join(cmd), flush=True)
        # In the scratch directory: schemathesis keeps a .schemathesis/ in its cwd.
        run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             cwd=tmp)
        print(run.stdout)
        summary = re.search(r"(\d+) generated, (.*)", run.stdout)
        print("schemathesis_test: %s; exit %d" % (summary.group(0) if summary else "no summary",
                                                  run.returncode))
        # The server is still up and answering.
        with urllib.request.urlopen(server.http + "/healthz") as r:
            health = json.load(r)
        ok = run.returncode == 0 and summary is not None and server.alive() and \
            health.get("status") == "SERVING"
        if not ok:
            with open(server.log) as f:
                print("--- server log (last 60 lines)\n" + "".join(f.readlines()[-60:]))
        return 0 if ok else 1
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if "--in-venv" not in sys.argv:
        sys.exit(rerun_in_venv(__file__))
    sys.exit(main())
