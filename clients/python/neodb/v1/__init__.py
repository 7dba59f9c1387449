"""Generated gRPC stubs (neodb_pb2, neodb_pb2_grpc) land here when the package is
built (setup.py). In the source tree, without an install, the stubs of a CMake
build are found through $NEODB_PYTHON_PROTO_DIR (<build>/proto/python)."""

import os as _os

_proto_dir = _os.environ.get("NEODB_PYTHON_PROTO_DIR")
if _proto_dir:
    __path__.append(_os.path.join(_proto_dir, "neodb", "v1"))  # noqa: F821
