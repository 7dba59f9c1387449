"""Errors of the neodb client: every failed call raises NeodbError carrying the
gRPC status code and the server's message."""

from typing import Optional

import grpc


class NeodbError(Exception):
    """A call the server (or the channel) refused.

    Attributes:
        code: the grpc.StatusCode (INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION, ...).
        message: the server's message, as sent.
    """

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__("%s: %s" % (code.name, message))
        self.code = code
        self.message = message


class EmbeddedServerError(NeodbError):
    """The embedded server could not be started (or died)."""

    def __init__(self, message: str, log: Optional[str] = None):
        super().__init__(grpc.StatusCode.UNAVAILABLE,
                         message + ("\n--- server log ---\n" + log if log else ""))


def from_rpc_error(e: grpc.RpcError) -> NeodbError:
    """The NeodbError of a failed call."""
    code = e.code() if hasattr(e, "code") else grpc.StatusCode.UNKNOWN
    details = e.details() if hasattr(e, "details") else str(e)
    return NeodbError(code, details or "")
