"""Build step of the neodb package: generates the gRPC stubs neodb/v1/neodb_pb2*.py
from the .proto (protoc --python_out, grpc_python_plugin) into the build tree.

The .proto is found at ../../proto (the repository layout), or at
$NEODB_PROTO_ROOT. protoc comes from Debian's protobuf-compiler and
grpc_python_plugin from protobuf-compiler-grpc (both build dependencies of
neodb, tools/install_deps.sh); grpc_tools is not packaged by Debian, hence the
plugin. The generated code imports `neodb.v1.neodb_pb2`: it lives inside this
package, whose name is the proto package's first component.
"""

import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildPyWithStubs(build_py):
    def run(self):
        super().run()
        root = os.environ.get("NEODB_PROTO_ROOT", os.path.join(HERE, "..", "..", "proto"))
        proto = os.path.join(root, "neodb", "v1", "neodb.proto")
        protoc = shutil.which("protoc")
        plugin = shutil.which("grpc_python_plugin")
        missing = [what for what, ok in ((proto, os.path.isfile(proto)),
                                         ("protoc (apt-get install protobuf-compiler)", protoc),
                                         ("grpc_python_plugin (apt-get install "
                                          "protobuf-compiler-grpc)", plugin)) if not ok]
        if missing:
            raise SystemExit("neodb: cannot generate the gRPC stubs; missing: " +
                             ", ".join(missing) + " (set NEODB_PROTO_ROOT to the repository's "
                             "proto/ directory when building outside it)")
        out = self.build_lib
        os.makedirs(os.path.join(out, "neodb", "v1"), exist_ok=True)
        subprocess.run([protoc, "-I", root, "--python_out=" + out, "--grpc_out=" + out,
                        "--plugin=protoc-gen-grpc=" + plugin, proto], check=True)


setup(cmdclass={"build_py": BuildPyWithStubs})
