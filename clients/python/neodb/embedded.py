"""An embedded neodb: `neodb serve` started as a child process on a free
loopback port, with a client connected to it; closing the client stops it."""

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from typing import Any, List, Optional, Sequence

from neodb.client import Client
from neodb.errors import EmbeddedServerError


def _find_binary(binary: Optional[str]) -> str:
    candidate = binary or os.environ.get("NEODB_BINARY") or shutil.which("neodb")
    if not candidate or not os.access(candidate, os.X_OK):
        raise EmbeddedServerError(
            "no neodb binary: pass binary=, set NEODB_BINARY, or put `neodb` on PATH "
            "(looked at %r)" % candidate)
    return candidate


class EmbeddedClient(Client):
    """A Client that owns the server process it talks to. close() (or leaving
    the `with` block) stops the server cleanly (SIGTERM; SIGKILL after
    `stop_timeout` seconds)."""

    def __init__(self, address: str, process: subprocess.Popen, log_path: str,
                 timeout: float, stop_timeout: float):
        super().__init__(address, timeout=timeout)
        self.process = process
        self.log_path = log_path
        self._stop_timeout = stop_timeout

    def close(self) -> None:
        super().close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=self._stop_timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()


def _log_tail(path: str, limit: int = 4000) -> str:
    try:
        with open(path, "r", errors="replace") as f:
            return f.read()[-limit:]
    except OSError:
        return ""


def connect_embedded(data_dir: str, model: Optional[str] = None, binary: Optional[str] = None,
                     timeout: float = 30.0, startup_timeout: float = 120.0,
                     stop_timeout: float = 60.0,
                     extra_args: Optional[Sequence[str]] = None) -> EmbeddedClient:
    """Starts `neodb serve --data-dir data_dir` on 127.0.0.1 (a port the OS
    picks), waits until it answers, and returns a client of it.

    model: a model checkpoint directory (default: $NEODB_MODEL, else the
        server's default model).
    binary: the neodb executable (default: $NEODB_BINARY, then `neodb` on PATH).
    extra_args: more `neodb serve` flags (default: $NEODB_SERVE_ARGS, split
        on whitespace). The server's log goes to a file
    (client.log_path). Raises EmbeddedServerError, with the log, when the
    server exits or does not answer within `startup_timeout` seconds.
    """
    exe = _find_binary(binary)
    os.makedirs(data_dir, exist_ok=True)
    args: List[str] = [exe, "serve", "--listen", "127.0.0.1:0", "--data-dir", data_dir]
    model = model or os.environ.get("NEODB_MODEL")
    if model:
        args += ["--model", model]
    if extra_args is None:
        extra_args = os.environ.get("NEODB_SERVE_ARGS", "").split()
    args += list(extra_args)
    log = tempfile.NamedTemporaryFile(prefix="neodb-embedded-", suffix=".log", delete=False)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, text=True,
                            stdin=subprocess.DEVNULL)
    log.close()
    port: List[Any] = [None]

    def read() -> None:
        # stdout carries only the listening line ("... (port N)"); keep
        # draining it so the server never blocks on a full pipe.
        for line in proc.stdout:
            if port[0] is None and "(port " in line:
                try:
                    port[0] = int(line.split("(port ")[1].split(")")[0])
                except ValueError:
                    pass

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + startup_timeout
    while port[0] is None and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if port[0] is None:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
            raise EmbeddedServerError("neodb serve did not listen within %.0f s" %
                                      startup_timeout, _log_tail(log.name))
        raise EmbeddedServerError("neodb serve exited with status %d" % proc.returncode,
                                  _log_tail(log.name))
    client = EmbeddedClient("127.0.0.1:%d" % port[0], proc, log.name, timeout, stop_timeout)
    while not client.is_ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            client.close()
            raise EmbeddedServerError("neodb serve did not answer", _log_tail(log.name))
        time.sleep(0.05)
    return client
