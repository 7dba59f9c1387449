// cuBLASLt is opened on first use (encoder/cuda/cublaslt_api.h). Runs in every
// CUDA build, with or without a device: opening the library and calling its
// device-free entry points needs no GPU.
#include "encoder/cuda/cublaslt_api.h"

#include <fstream>
#include <iterator>
#include <string>

#include "gtest/gtest.h"

namespace neodb::encoder::cuda {
namespace {

bool CublasLtMapped() {
  std::ifstream maps("/proc/self/maps");
  const std::string all((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  return all.find("libcublasLt") != std::string::npos;
}

// One test, so the order of the checks holds whatever gtest runs first.
TEST(CublasLtApiTest, OpensOnFirstUseAndResolvesEveryEntry) {
  EXPECT_FALSE(CublasLtMapped()) << "linked at start-up instead of opened on first use";
  absl::StatusOr<const CublasLtApi*> api = LoadCublasLt();
  ASSERT_TRUE(api.ok()) << api.status();
  EXPECT_TRUE(CublasLtMapped());
  const CublasLtApi& lt = **api;
  for (const void* fn :
       {reinterpret_cast<const void*>(lt.Create), reinterpret_cast<const void*>(lt.Destroy),
        reinterpret_cast<const void*>(lt.GetStatusName),
        reinterpret_cast<const void*>(lt.GetStatusString),
        reinterpret_cast<const void*>(lt.Matmul),
        reinterpret_cast<const void*>(lt.MatmulAlgoGetHeuristic),
        reinterpret_cast<const void*>(lt.MatmulDescCreate),
        reinterpret_cast<const void*>(lt.MatmulDescDestroy),
        reinterpret_cast<const void*>(lt.MatmulDescSetAttribute),
        reinterpret_cast<const void*>(lt.MatmulPreferenceCreate),
        reinterpret_cast<const void*>(lt.MatmulPreferenceDestroy),
        reinterpret_cast<const void*>(lt.MatmulPreferenceSetAttribute),
        reinterpret_cast<const void*>(lt.MatrixLayoutCreate),
        reinterpret_cast<const void*>(lt.MatrixLayoutDestroy)}) {
    EXPECT_NE(fn, nullptr);
  }
  // Real calls into the library that need no device.
  EXPECT_STREQ(Lt().GetStatusName(CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED");
  cublasLtMatrixLayout_t layout = nullptr;
  ASSERT_EQ(Lt().MatrixLayoutCreate(&layout, CUDA_R_16BF, 64, 32, 64), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(Lt().MatrixLayoutDestroy(layout), CUBLAS_STATUS_SUCCESS);
  // A second load is the same table.
  absl::StatusOr<const CublasLtApi*> again = LoadCublasLt();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *api);
}

TEST(CublasLtApiTest, AMissingLibraryIsUnavailableAndNamed) {
  absl::StatusOr<CublasLtApi> api = LoadCublasLtFrom("/nonexistent/libcublasLt.so.13");
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(api.status().message().find("/nonexistent/libcublasLt.so.13"), std::string::npos)
      << api.status();
}

TEST(CublasLtApiTest, ALibraryWithoutTheEntriesIsUnavailableAndNamed) {
  // libm is in every process and exports no cuBLASLt entry.
  absl::StatusOr<CublasLtApi> api = LoadCublasLtFrom("libm.so.6");
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(api.status().message().find("has no cublasLtCreate"), std::string::npos)
      << api.status();
}

}  // namespace
}  // namespace neodb::encoder::cuda
