#!/usr/bin/python3
"""HTTP/2 floods against a live `neodb serve` while a normal client works.

gRPC 1.51 (Debian) has none of the later fixes for HTTP/2 rapid reset
(CVE-2023-44487); the server configures the mitigations 1.51 offers
(api/http2_limits.h). Raw HTTP/2 clients (http2_flood.py, over the h2
package) flood the gRPC port over many connections at once:
 - rapid reset: HEADERS, the request, RST_STREAM, thousands of times, on
   NearText, Upsert and the BulkIngest stream;
 - pings with no call open: each connection must end in GOAWAY
   ENHANCE_YOUR_CALM "too_many_pings" (the keepalive policy);
 - twice the connection's stream cap of calls opened at once, again and
   again;
 - header lists twice the metadata limit.
Meanwhile two normal clients (the neodb package over grpcio) call Stats,
List, Upsert and NearText in a loop: every one of their calls must succeed,
also under rapid reset of the unary calls (their work waits for a worker of
ours and a reset call leaves the queue unrun, api/unary_reactor.h), and the
server must be alive and answering afterwards. That the floods happened is
checked too: each sent its quota, and the server's /metrics counted unary
calls it answered CANCELLED. Counts, not times: nothing here depends on the
machine's speed. Http2LimitsFlagsTest checks that the serve
flags reach gRPC (the SETTINGS it advertises, the idle close, a refusal).

Run with /usr/bin/python3 by CTest, again in the test venv where h2 is
(live_server.py).

Usage: http2_flood_test.py [--fake-model]
"""

import os
import shutil
import sys
import re
import tempfile
import threading
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live_server import BIN, SRC, Server, rerun_in_venv  # noqa: E402

sys.path.insert(0, os.path.join(SRC, "clients", "python"))
os.environ.setdefault("NEODB_PYTHON_PROTO_DIR", os.path.join(BIN, "proto", "python"))

RESETS_PER_FLOOD = 3000
PING_ROUNDS_PER_FLOOD = 8  # connections, each sent a burst of pings
STREAM_CAP = 32  # the server's --max-streams-per-connection default
# The normal client's deadline: a bound against a hang on a loaded machine,
# not a latency target.
CALL_TIMEOUT_S = 300


class NormalClient(threading.Thread):
    """Calls Stats, List, Upsert and NearText in turn until `stop` is set,
    then `min_rounds` rounds more; counts each call's outcome."""

    def __init__(self, client, docs, stop, min_rounds, tag):
        super().__init__(daemon=True)
        self.client, self.docs, self.stop, self.min_rounds, self.tag = (
            client, docs, stop, min_rounds, tag)
        self.ok = {}
        self.failures = []

    def run(self):
        calls = [
            ("stats", lambda i: self.client.stats()),
            ("list", lambda i: self.client.collections.list()),
            ("upsert", lambda i: self.docs.upsert(
                [{"id": "%s-%d" % (self.tag, i), "text": "the cat sat on a mat %d" % i}])),
            ("near_text", lambda i: self.docs.near_text("cat on a mat", limit=3)),
        ]
        rounds = after = 0
        while after < self.min_rounds:
            if self.stop.is_set():
                after += 1
            for name, call in calls:
                try:
                    call(rounds)
                    self.ok[name] = self.ok.get(name, 0) + 1
                except Exception as e:  # noqa: BLE001 (every failure is reported)
                    self.failures.append("%s: %r" % (name, e))
            rounds += 1


class Http2FloodTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import neodb
        cls.tmp = tempfile.mkdtemp(prefix="neodb_h2flood_")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, ignore_errors=True)
        cls.server = Server(cls.tmp)
        cls.addClassCleanup(cls.server.stop)
        cls.client = neodb.connect(cls.server.grpc, timeout=CALL_TIMEOUT_S)
        cls.addClassCleanup(cls.client.close)
        cls.docs = cls.client.collections.create("docs")
        cls.docs.upsert([{"id": "d%d" % i, "text": "dogs run fast %d" % i} for i in range(20)])

    def run_floods(self, floods):
        """Runs `floods` while two normal clients work; returns the clients
        once every flood has sent its quota and each client has made five
        more rounds, which must all succeed."""
        stop = threading.Event()
        normal = [NormalClient(self.client, self.docs, stop, min_rounds=5, tag="n%d" % i)
                  for i in range(2)]
        for t in normal + floods:
            t.start()
        for f in floods:
            f.join()
        stop.set()
        for t in normal:
            t.join()
        for f in floods:
            print("%-14s sent %5d over %4d connections, GOAWAYs %s" % (
                type(f).__name__, f.sent, f.connections,
                sorted(set(f.goaways)) if f.goaways else "none"), file=sys.stderr)
            self.assertIsNone(f.error)
            self.assertEqual(f.sent, f.quota, type(f).__name__)
        for t in normal:
            print("normal client %s: %s calls OK, %d failed%s" % (
                t.tag, t.ok, len(t.failures), sorted(set(t.failures))), file=sys.stderr)
            for name in ("stats", "list", "upsert", "near_text"):
                self.assertGreaterEqual(t.ok.get(name, 0), 5, name)
        return normal

    def calls_by_code(self, *methods):
        """The calls to `methods` ("/neodb.v1.Search/NearText") the server
        finished so far, by status code, from its /metrics."""
        with urllib.request.urlopen(self.server.http + "/metrics", timeout=CALL_TIMEOUT_S) as r:
            text = r.read().decode()
        codes = {}
        for m in methods:
            pattern = (r'^neodb_requests_total\{transport="grpc",method="%s",code="(\w+)"\} '
                       r'(\d+)$' % re.escape(m))
            for code, n in re.findall(pattern, text, re.M):
                codes[code] = codes.get(code, 0) + int(n)
        return codes

    def check_still_serving(self):
        self.assertTrue(self.server.alive())
        self.assertTrue(self.client.is_ready())
        self.docs.upsert([{"id": "after", "text": "the cat sat on a mat"}])
        self.assertEqual([d.id for d in self.docs.get(["after"])], ["after"])
        self.assertTrue(self.docs.near_text("cat", limit=3))

    def test_connection_floods(self):
        """Pings, oversized header lists and rapid reset of the ingest stream
        (a callback method: no handler thread): every normal call succeeds."""
        import http2_flood as hf
        from neodb.v1 import neodb_pb2 as pb
        addr = self.server.grpc
        batch = pb.IngestBatch(collection="docs", documents=[
            pb.Document(id="flood-stream", text=b"ok")]).SerializeToString()
        pings = [hf.PingFlood(addr, PING_ROUNDS_PER_FLOOD) for _ in range(2)]
        big = hf.BigHeaders(addr, 20, "/neodb.v1.Collections/List", pad_bytes=16 << 10)
        ingest = [hf.RapidReset(addr, RESETS_PER_FLOOD, "/neodb.v1.Documents/BulkIngest", batch)
                  for _ in range(2)]
        normal = self.run_floods(pings + [big] + ingest)
        for t in normal:
            self.assertEqual(t.failures, [], "a normal call failed under the floods")
        # Pings with no call open: the server closed every such connection,
        # saying why (a GOAWAY can be lost when the close resets the socket
        # before it is read, so not every round needs to see one).
        for f in pings:
            print("ping flood: %d pings, %d rounds, %d GOAWAYs read" % (
                f.pings, f.sent, len(f.goaways)), file=sys.stderr)
            self.assertEqual(f.unanswered, 0)
            self.assertGreaterEqual(len(f.goaways), 1)
            for code, debug in f.goaways:
                self.assertEqual(code, "ENHANCE_YOUR_CALM")
                self.assertIn("too_many_pings", debug)
        print("oversized header lists: %s" % sorted(set(big.answers)), file=sys.stderr)
        self.check_still_serving()

    def test_unary_call_floods(self):
        """Rapid reset of NearText and Upsert, and twice the stream cap of
        NearText calls opened at once and dropped with their connection.
        The unary calls run on gRPC's callback API (api/unary_reactor.h): a
        call's work waits in a bounded queue for a worker of ours, and a
        call reset while it waits leaves the queue without running, so the
        resets take nothing from other clients: every normal call succeeds
        (on 1.51's sync server gRPC refused some of them with
        RESOURCE_EXHAUSTED "Server Threadpool Exhausted"). Not vacuous: each
        flood sent its quota of resets, and the server counted reset calls
        it finished CANCELLED."""
        import http2_flood as hf
        from neodb.v1 import neodb_pb2 as pb
        addr = self.server.grpc
        near_text = pb.NearTextRequest(collection="docs", query=b"cat sat on a mat",
                                       k=10).SerializeToString()
        upsert = pb.UpsertRequest(collection="docs", documents=[
            pb.Document(id="flood", text=b"vector search finds near texts")]).SerializeToString()
        flooded = ("/neodb.v1.Search/NearText", "/neodb.v1.Documents/Upsert")
        before = self.calls_by_code(*flooded)
        floods = [
            hf.RapidReset(addr, RESETS_PER_FLOOD, "/neodb.v1.Search/NearText", near_text),
            hf.RapidReset(addr, RESETS_PER_FLOOD, "/neodb.v1.Search/NearText", near_text),
            hf.RapidReset(addr, RESETS_PER_FLOOD, "/neodb.v1.Documents/Upsert", upsert),
        ] + [hf.TooManyStreams(addr, 20 * 2 * STREAM_CAP, "/neodb.v1.Search/NearText",
                               per_round=2 * STREAM_CAP) for _ in range(2)]
        normal = self.run_floods(floods)
        resets = sum(f.sent for f in floods if isinstance(f, hf.RapidReset))
        self.assertEqual(resets, 3 * RESETS_PER_FLOOD)
        after = self.calls_by_code(*flooded)
        seen = {code: n - before.get(code, 0) for code, n in after.items()
                if n > before.get(code, 0)}
        print("rapid resets sent: %d; calls to the flooded methods the server finished, by "
              "code: %s" % (resets, seen), file=sys.stderr)
        # The resets reached the server as calls, which it finished without
        # their work: CANCELLED, or, for a call whose request gRPC never
        # read, INVALID_ARGUMENT (api/request_parse_errors.h: 1.51's callback
        # server does not tell that from a request that does not parse).
        # The normal clients' calls are the OKs.
        self.assertGreater(sum(n for code, n in seen.items() if code != "OK"), 0)
        for t in normal:
            self.assertEqual(t.failures, [], "a normal call failed under the unary floods")
        print("streams past the cap reset by the server: %s" % [
            f.refused_streams for f in floods if isinstance(f, hf.TooManyStreams)], file=sys.stderr)
        self.check_still_serving()


class Http2LimitsFlagsTest(unittest.TestCase):
    """The serve flags reach gRPC: a server started with other values than
    the defaults advertises them in its SETTINGS, and closes a connection
    left idle past --max-connection-idle."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="neodb_h2flags_")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, ignore_errors=True)
        cls.server = Server(cls.tmp, ["--max-streams-per-connection", "5",
                                      "--max-metadata-bytes", "4096",
                                      "--max-connection-idle", "1"])
        cls.addClassCleanup(cls.server.stop)

    def test_settings_advertise_the_flags(self):
        import http2_flood as hf
        settings = hf.server_settings(self.server.grpc)
        self.assertEqual(settings.get("MAX_CONCURRENT_STREAMS"), 5, settings)
        self.assertEqual(settings.get("MAX_HEADER_LIST_SIZE"), 4096, settings)

    def test_idle_connection_is_closed(self):
        import http2_flood as hf
        goaway = hf.idle_until_closed(self.server.grpc)
        # The GOAWAY says why ("enter idle"; 1.51 sends it as INTERNAL_ERROR),
        # unless the close reset the socket before it was read (then the
        # close itself is the answer).
        if goaway is not None:
            self.assertIn("idle", goaway[1])
        self.assertTrue(self.server.alive())

    def test_refuses_a_ping_policy_without_strikes(self):
        from live_server import NEODB
        import subprocess
        r = subprocess.run([NEODB, "serve", "--data-dir", os.path.join(self.tmp, "other"),
                            "--listen", "127.0.0.1:0", "--max-ping-strikes", "0",
                            "--fake-model", "8", "--model", "fake:1"],
                           capture_output=True, text=True, timeout=CALL_TIMEOUT_S)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--max-ping-strikes is 0", r.stderr)


if __name__ == "__main__":
    if "--in-venv" not in sys.argv:
        sys.exit(rerun_in_venv(__file__))
    unittest.main(argv=[sys.argv[0]], verbosity=2)
