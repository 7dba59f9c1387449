#!/usr/bin/env bash
# Builds FAISS 1.12.0 with its AVX2 and AVX-512 kernels into a prefix that
# neodb's CMake uses instead of Debian's libfaiss-dev 1.7.3 (built without
# them) when it exists (cmake/NeodbDeps.cmake, NEODB_FAISS_PREFIX). Opt-in: not
# part of tools/install_deps.sh or CI (about 30 minutes on 2 cores; issue 51,
# bench/README.md "FAISS with the host's SIMD").
#
# Source: the FAISS tree vendored in the crates.io crate faiss-sys 0.7.0
# (FAISS 1.12.0; fetched with cargo, checked against a pinned SHA-256). Debian
# 12 serves only 1.7.3's source, and PyPI's faiss-cpu 1.12.0 sdist carries no
# C++ sources.
#
# FAISS 1.12 builds one SIMD level per library: libfaiss (generic x86-64),
# libfaiss_avx2 (AVX2, FMA, F16C) and libfaiss_avx512 (AVX-512 F/CD/VL/DQ/BW).
# All three go into the prefix as the same file name, libfaiss.so:
#   lib/libfaiss.so                          generic
#   lib/glibc-hwcaps/x86-64-v3/libfaiss.so   the AVX2 build
#   lib/glibc-hwcaps/x86-64-v4/libfaiss.so   the AVX-512 build
# and glibc's dynamic loader (2.33+, Debian 12 has 2.36) loads the best one the
# CPU supports each time a program starts: a host without AVX-512 gets the
# AVX2 build, one without AVX2 the generic one. `ld.so --help` lists the
# levels the host supports. The x86-64-v3/v4 levels require every flag the
# FAISS builds were compiled with.
#
# CPU only: no GPU, no Python, no MKL; BLAS and LAPACK are Debian's OpenBLAS
# (libopenblas-dev, as tools/install_deps.sh installs it); -O3 (Release).
#   NEODB_FAISS_PREFIX  install prefix (default /opt/neodb-faiss)
#   NEODB_FAISS_WORK    source and build directory (default /tmp/neodb-faiss-build)
#   NEODB_JOBS          parallel jobs (default nproc)
set -euo pipefail
PREFIX=${NEODB_FAISS_PREFIX:-/opt/neodb-faiss}
WORK=${NEODB_FAISS_WORK:-/tmp/neodb-faiss-build}
JOBS=${NEODB_JOBS:-$(nproc)}
CRATE=faiss-sys
CRATE_VERSION=0.7.0
CRATE_SHA256=c4a8fa67f7070bb81f41dc71c98813b3e40a66bedab12d6c2ac2af50f0837a7e
FAISS_VERSION=1.12.0

if [ "$(uname -m)" != x86_64 ]; then
  echo "build_faiss.sh: x86-64 only (this is $(uname -m))" >&2
  exit 1
fi
command -v cargo >/dev/null || { echo "build_faiss.sh: needs cargo (to fetch the crate)" >&2; exit 1; }
start=$SECONDS
mkdir -p "$WORK"

# 1. The crate, through cargo, into a CARGO_HOME of our own.
export CARGO_HOME="$WORK/cargo-home"
mkdir -p "$WORK/fetch/src"
cat >"$WORK/fetch/Cargo.toml" <<EOF
[package]
name = "neodb-faiss-fetch"
version = "0.0.0"
edition = "2021"
[dependencies]
$CRATE = "=$CRATE_VERSION"
EOF
: >"$WORK/fetch/src/lib.rs"
cargo fetch --manifest-path "$WORK/fetch/Cargo.toml"
crate_file=$(find "$CARGO_HOME/registry/cache" -name "$CRATE-$CRATE_VERSION.crate" | head -n1)
echo "$CRATE_SHA256  $crate_file" | sha256sum -c -
rm -rf "$WORK/src"
mkdir -p "$WORK/src"
tar -xzf "$crate_file" -C "$WORK/src"
SRC="$WORK/src/$CRATE-$CRATE_VERSION/faiss"
grep -q "VERSION $FAISS_VERSION" "$SRC/CMakeLists.txt" || {
  echo "build_faiss.sh: $SRC is not FAISS $FAISS_VERSION" >&2
  exit 1
}

# 2. One configure, three libraries (FAISS_OPT_LEVEL=avx512 builds and
# installs libfaiss, libfaiss_avx2 and libfaiss_avx512).
cmake -S "$SRC" -B "$WORK/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$PREFIX" \
  -DCMAKE_INSTALL_LIBDIR=lib \
  -DBUILD_SHARED_LIBS=ON \
  -DBUILD_TESTING=OFF \
  -DFAISS_OPT_LEVEL=avx512 \
  -DFAISS_ENABLE_GPU=OFF \
  -DFAISS_ENABLE_PYTHON=OFF \
  -DFAISS_ENABLE_C_API=OFF \
  -DFAISS_ENABLE_EXTRAS=OFF \
  -DFAISS_ENABLE_MKL=OFF \
  -DBLA_VENDOR=OpenBLAS
cmake --build "$WORK/build" -j"$JOBS" --target faiss faiss_avx2 faiss_avx512
# A previous build of ours is replaced whole; anything else is left alone.
if [ -e "$PREFIX" ] && [ -n "$(ls -A "$PREFIX")" ] && [ ! -f "$PREFIX/NEODB_FAISS_BUILD" ]; then
  echo "build_faiss.sh: $PREFIX exists and is not a build of this script; choose another" >&2
  exit 1
fi
rm -rf "$PREFIX"
cmake --install "$WORK/build"

# 3. The SIMD builds under the generic one's name, where the loader looks.
# (Their SONAME stays libfaiss_avx2.so / libfaiss_avx512.so: the loader finds
# a library by the file name a program asks for, so that is harmless.)
install -D -m 0755 "$PREFIX/lib/libfaiss_avx2.so" "$PREFIX/lib/glibc-hwcaps/x86-64-v3/libfaiss.so"
install -D -m 0755 "$PREFIX/lib/libfaiss_avx512.so" "$PREFIX/lib/glibc-hwcaps/x86-64-v4/libfaiss.so"
echo "FAISS $FAISS_VERSION (crates.io $CRATE $CRATE_VERSION), generic + x86-64-v3 + x86-64-v4" \
  >"$PREFIX/NEODB_FAISS_BUILD"
echo "build_faiss.sh: FAISS $FAISS_VERSION in $PREFIX ($((SECONDS - start)) s, -j$JOBS)"
