// Runs everywhere (no `gpu` label): with no usable CUDA device — none
// installed, no driver, a build without CUDA, or devices hidden with
// CUDA_VISIBLE_DEVICES — MakeCudaBackend returns a clear UNAVAILABLE status
// starting "no CUDA device", never crashes, so the caller can stay on the CPU
// and say why.
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "encoder/cuda/cuda_backend.h"
#include "gtest/gtest.h"

namespace neodb::encoder {
namespace {

std::shared_ptr<const NeoBertWeights> TinyWeights() {
  NeoBertWeights w;
  w.config.hidden_size = 128;
  w.config.num_attention_heads = 2;
  w.config.num_hidden_layers = 1;
  w.config.intermediate_size = 96;
  w.config.vocab_size = 10;
  w.embeddings = Tensor::Zeros({10, 128}, DType::kF32);
  LayerWeights l;
  l.attention_norm = Tensor::Zeros({128}, DType::kF32);
  l.qkv = Tensor::Zeros({384, 128}, DType::kF32);
  l.wo = Tensor::Zeros({128, 128}, DType::kF32);
  l.ffn_norm = Tensor::Zeros({128}, DType::kF32);
  l.w12 = Tensor::Zeros({128, 128}, DType::kF32);
  l.w3 = Tensor::Zeros({128, 64}, DType::kF32);
  w.layers.push_back(l);
  w.final_norm = Tensor::Zeros({128}, DType::kF32);
  return std::make_shared<const NeoBertWeights>(std::move(w));
}

TEST(CudaUnavailableTest, NoDeviceIsAClearUnavailableStatus) {
  // Hide every GPU from this process before the CUDA runtime starts: this
  // test binary makes no other CUDA call, and each test runs in its own
  // process under CTest.
  ASSERT_EQ(setenv("CUDA_VISIBLE_DEVICES", "-1", 1), 0);
  BackendOptions options;
  options.device = Device::kCuda;
  options.compute_dtype = DType::kBF16;
  auto backend = MakeCudaBackend(TinyWeights(), options);
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kUnavailable) << backend.status();
  EXPECT_EQ(backend.status().message().rfind("no CUDA device", 0), 0u) << backend.status();
  // A build without CUDA says so; a CUDA build reports the runtime's reason
  // (cudaErrorNoDevice with the devices hidden, cudaErrorInsufficientDriver
  // where no driver is installed).
  if (CudaBackendCompiled()) {
    EXPECT_EQ(backend.status().message().find("built without CUDA"), std::string::npos)
        << backend.status();
    EXPECT_NE(backend.status().message().find("cudaError"), std::string::npos)
        << backend.status();
  } else {
    EXPECT_NE(backend.status().message().find("built without CUDA"), std::string::npos)
        << backend.status();
  }
  std::printf("CudaBackendCompiled() = %d; status: %s\n", CudaBackendCompiled(),
              backend.status().ToString().c_str());
  // Asking again gives the same answer (no sticky state, no crash).
  EXPECT_EQ(MakeCudaBackend(TinyWeights(), options).status().code(),
            absl::StatusCode::kUnavailable);
  // Nor did it load cuBLASLt (opened only once a device is usable: a
  // CPU-only process does not carry its 60-150 MiB).
  std::ifstream maps("/proc/self/maps");
  const std::string mapped((std::istreambuf_iterator<char>(maps)),
                           std::istreambuf_iterator<char>());
  EXPECT_EQ(mapped.find("libcublasLt"), std::string::npos);
}

}  // namespace
}  // namespace neodb::encoder
