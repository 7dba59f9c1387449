# Every dependency comes from a Debian 12 package (tools/install_deps.sh).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(absl REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(spdlog REQUIRED)
find_package(CLI11 CONFIG QUIET)
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
# oneDNN (libdnnl-dev): the encoder's CPU GEMMs, dispatched on CPUID features.
find_package(dnnl CONFIG REQUIRED)
find_package(OpenMP REQUIRED)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
pkg_check_modules(SENTENCEPIECE REQUIRED IMPORTED_TARGET sentencepiece)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
# zstd: model directories may hold model.safetensors.zst (encoder/checkpoint/safetensors.h).
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)

if(NEODB_BUILD_SERVER)
  find_package(RocksDB REQUIRED)
  # FAISS: tools/build_faiss.sh's build (1.12, AVX2/AVX-512 kernels picked by
  # the loader per CPU) when NEODB_FAISS_PREFIX holds one, else Debian's
  # libfaiss-dev 1.7.3 (no SIMD kernels). -DNEODB_FAISS_PREFIX= forces Debian's.
  set(NEODB_FAISS_PREFIX "/opt/neodb-faiss" CACHE PATH
      "Prefix of a FAISS built by tools/build_faiss.sh (used when it exists)")
  if(NEODB_FAISS_PREFIX AND EXISTS "${NEODB_FAISS_PREFIX}/share/faiss/faiss-config.cmake")
    find_package(faiss CONFIG REQUIRED PATHS "${NEODB_FAISS_PREFIX}" NO_DEFAULT_PATH)
  else()
    find_package(faiss REQUIRED)
  endif()
  message(STATUS "neodb: FAISS ${faiss_VERSION} (${faiss_DIR})")
  find_package(Protobuf REQUIRED)
  find_package(gRPC CONFIG REQUIRED)
  # NATS's C client (libnats-dev): the cluster's shard logs on JetStream.
  # Through pkg-config: Debian's cnats CMake package names a static library
  # the package does not ship, so find_package(cnats) fails.
  pkg_check_modules(NATS REQUIRED IMPORTED_TARGET libnats)
endif()

if(NEODB_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
  include(NeodbTesting)
endif()
if(NEODB_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
