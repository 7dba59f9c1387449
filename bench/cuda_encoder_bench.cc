// cuda_encoder_bench: NeoBERT forward throughput on one GPU (full
// architecture, random weights), next to the GPU's measured BF16 GEMM rate.
//
//   cuda_encoder_bench [--lengths 128,512,1024,2048,4096,8192] [--tokens 16384]
//                      [--min_seconds 2] [--dtype bf16|f16|f32] [--chunk 0]
//                      [--attention pipelined|tiled128|tiled64|scalar] [--seed 1]
//                      [--write_checkpoint DIR] [--dump DIR] [--json FILE]
//
// For each length L it runs batches of max(1, tokens / L) sequences of exactly
// L tokens (forward + mean pooling, everything on the device; ids uploaded
// each pass) and reports tokens/s and the model's FLOP rate as a fraction of
// a cuBLASLt BF16 GEMM measured in the same run. --write_checkpoint writes the
// same random weights as config.json + model.safetensors for
// bench/torch_baseline.py; --dump writes a small mixed batch and our pooled
// vectors so that the baseline can check it computes the same function.
// Prints a table and the machine; a benchmark, not a test.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "encoder/checkpoint/weights.h"
#include "encoder/cuda/cuda_check.h"
#include "encoder/cuda/cuda_context.h"
#include "encoder/cuda/cuda_neobert.h"
#include "encoder/cuda/cuda_weights.h"
#include "encoder/cuda/device_buffer.h"
#include "encoder/cuda/gemm.h"

namespace neodb::encoder::cuda {
namespace {

struct Flags {
  std::vector<int> lengths = {128, 512, 1024, 2048, 4096, 8192};
  int64_t tokens = 16384;
  int64_t chunk = 0;
  AttentionKernel attention = AttentionKernel::kPipelined;
  std::string attention_name = "pipelined";
  double min_seconds = 2.0;
  DType dtype = DType::kBF16;
  uint64_t seed = 1;
  std::string write_checkpoint, dump, json;
};

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--lengths" && value(&v)) {
      f->lengths.clear();
      for (absl::string_view s : absl::StrSplit(v, ',')) {
        int n;
        if (!absl::SimpleAtoi(s, &n) || n < 1) return false;
        f->lengths.push_back(n);
      }
    } else if (a == "--tokens" && value(&v)) {
      if (!absl::SimpleAtoi(v, &f->tokens) || f->tokens < 1) return false;
    } else if (a == "--attention" && value(&v)) {
      if (v == "pipelined")
        f->attention = AttentionKernel::kPipelined;
      else if (v == "tiled128")
        f->attention = AttentionKernel::kTiled128;
      else if (v == "tiled64")
        f->attention = AttentionKernel::kTiled64;
      else if (v == "scalar")
        f->attention = AttentionKernel::kScalar;
      else
        return false;
      f->attention_name = v;
    } else if (a == "--chunk" && value(&v)) {
      if (!absl::SimpleAtoi(v, &f->chunk) || f->chunk < 0) return false;
    } else if (a == "--min_seconds" && value(&v)) {
      if (!absl::SimpleAtod(v, &f->min_seconds)) return false;
    } else if (a == "--seed" && value(&v)) {
      if (!absl::SimpleAtoi(v, &f->seed)) return false;
    } else if (a == "--dtype" && value(&v)) {
      if (v == "bf16")
        f->dtype = DType::kBF16;
      else if (v == "f16")
        f->dtype = DType::kF16;
      else if (v == "f32")
        f->dtype = DType::kF32;
      else
        return false;
    } else if (a == "--write_checkpoint" && value(&v)) {
      f->write_checkpoint = v;
    } else if (a == "--dump" && value(&v)) {
      f->dump = v;
    } else if (a == "--json" && value(&v)) {
      f->json = v;
    } else {
      return false;
    }
  }
  return true;
}

// Seconds per call of `fn` on `stream`, timed with events over enough calls
// to last min_seconds (after 2 warm-up calls).
template <typename Fn>
absl::StatusOr<double> TimeOnStream(cudaStream_t stream, double min_seconds, int* calls, Fn fn) {
  for (int i = 0; i < 2; ++i) RETURN_IF_ERROR(fn());
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  cudaEvent_t start, stop;
  CUDA_RETURN_IF_ERROR(cudaEventCreate(&start));
  CUDA_RETURN_IF_ERROR(cudaEventCreate(&stop));
  int n = 0;
  double elapsed = 0;
  int batch = 1;
  while (elapsed < min_seconds) {
    CUDA_RETURN_IF_ERROR(cudaEventRecord(start, stream));
    for (int i = 0; i < batch; ++i) RETURN_IF_ERROR(fn());
    CUDA_RETURN_IF_ERROR(cudaEventRecord(stop, stream));
    CUDA_RETURN_IF_ERROR(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start, stop));
    elapsed += ms / 1e3;
    n += batch;
    batch = std::min(batch * 2, 64);
  }
  CUDA_RETURN_IF_ERROR(cudaEventDestroy(start));
  CUDA_RETURN_IF_ERROR(cudaEventDestroy(stop));
  *calls = n;
  return elapsed / n;
}

// The best of a few large BF16 GEMMs (BF16 out, F32 accumulate): the
// "measured BF16 GEMM rate" the model is compared with.
absl::StatusOr<double> MeasureBf16GemmFlops(const CudaContext& ctx, Gemm& gemm) {
  double best = 0;
  for (int64_t s : {4096, 8192}) {
    ASSIGN_OR_RETURN(DeviceBuffer a, DeviceBuffer::Allocate(s * s * 2));
    ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::Allocate(s * s * 2));
    ASSIGN_OR_RETURN(DeviceBuffer c, DeviceBuffer::Allocate(s * s * 2));
    // Random data: constant inputs draw less power and run faster than real
    // ones, which would flatter the reference rate.
    std::vector<uint16_t> staged(s * s);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uniform(-1.f, 1.f);
    for (auto& x : staged) x = F32ToBF16(uniform(rng));
    CUDA_RETURN_IF_ERROR(cudaMemcpy(a.get(), staged.data(), a.size(), cudaMemcpyHostToDevice));
    CUDA_RETURN_IF_ERROR(cudaMemcpy(b.get(), staged.data(), b.size(), cudaMemcpyHostToDevice));
    int calls = 0;
    ASSIGN_OR_RETURN(double sec, TimeOnStream(ctx.stream(), 1.0, &calls, [&] {
                       return gemm.Run(a.get(), b.get(), c.get(), s, s, s, DType::kBF16,
                                       DType::kBF16, 0.f);
                     }));
    const double flops = 2.0 * s * s * s / sec;
    std::printf("  cuBLASLt BF16 GEMM %lldx%lldx%lld: %.1f TFLOP/s\n", static_cast<long long>(s),
                static_cast<long long>(s), static_cast<long long>(s), flops / 1e12);
    best = std::max(best, flops);
  }
  return best;
}

absl::Status WriteFile(const std::string& path, const void* data, size_t bytes) {
  FILE* fp = std::fopen(path.c_str(), "wb");
  if (fp == nullptr) return absl::InternalError("cannot create " + path);
  const bool ok = std::fwrite(data, 1, bytes, fp) == bytes;
  if (std::fclose(fp) != 0 || !ok) return absl::InternalError("write failed: " + path);
  return absl::OkStatus();
}

// A mixed batch and our mean-pooled output, for torch_baseline.py --compare:
// ids.i32, offsets.i64, pooled_mean.f32 (raw little-endian arrays).
absl::Status Dump(CudaNeoBert& model, int64_t vocab, int64_t hidden, const std::string& dir) {
  PackedBatch batch;
  std::mt19937_64 rng(12345);
  for (int len : {1, 7, 64, 65, 300, 1000}) {
    for (int i = 0; i < len; ++i) batch.ids.push_back(static_cast<int32_t>(rng() % vocab));
    batch.offsets.push_back(batch.offsets.back() + len);
  }
  RETURN_IF_ERROR(model.Validate(batch));
  RETURN_IF_ERROR(model.Forward(batch));
  RETURN_IF_ERROR(model.Pool(Pooling::kMean));
  std::vector<float> pooled(batch.batch_size() * hidden);
  CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  CUDA_RETURN_IF_ERROR(
      cudaMemcpy(pooled.data(), model.pooled(), pooled.size() * 4, cudaMemcpyDeviceToHost));
  RETURN_IF_ERROR(WriteFile(dir + "/ids.i32", batch.ids.data(), batch.ids.size() * 4));
  RETURN_IF_ERROR(WriteFile(dir + "/offsets.i64", batch.offsets.data(), batch.offsets.size() * 8));
  RETURN_IF_ERROR(WriteFile(dir + "/pooled_mean.f32", pooled.data(), pooled.size() * 4));
  std::printf("  dumped %lld sequences (%lld tokens) and their mean-pooled vectors to %s\n",
              static_cast<long long>(batch.batch_size()),
              static_cast<long long>(batch.total_tokens()), dir.c_str());
  return absl::OkStatus();
}

absl::Status Run(const Flags& flags) {
  ASSIGN_OR_RETURN(auto ctx, CudaContext::Create(0));
  const DeviceInfo& info = ctx->info();
  int driver = 0, runtime = 0;
  CUDA_RETURN_IF_ERROR(cudaDriverGetVersion(&driver));
  CUDA_RETURN_IF_ERROR(cudaRuntimeGetVersion(&runtime));
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::printf("device: %s (cc %d.%d, %d SMs, %.1f GiB), driver %d, runtime %d, %s\n",
              info.name.c_str(), info.cc_major, info.cc_minor, info.sm_count,
              info.total_memory / double(1 << 30), driver, runtime, date);

  Gemm gemm(ctx.get());
  ASSIGN_OR_RETURN(const double gemm_flops, MeasureBf16GemmFlops(*ctx, gemm));

  NeoBertConfig cfg;  // the released architecture (NEOBERT.md §1)
  const int max_len = *std::max_element(flags.lengths.begin(), flags.lengths.end());
  // RoPE has no table: lengths past the release's 4096 are computed the same way.
  cfg.max_length = std::max<int64_t>(cfg.max_length, max_len);
  // The checkpoint room's initialisation (uniform ±0.02, norms at 1).
  const NeoBertWeights weights = RandomWeights(cfg, flags.seed, /*with_decoder=*/false);
  if (!flags.write_checkpoint.empty()) {
    RETURN_IF_ERROR(SaveCheckpoint(weights, flags.write_checkpoint));
    std::printf("  wrote the random weights to %s\n", flags.write_checkpoint.c_str());
  }
  ASSIGN_OR_RETURN(CudaWeights dw, CudaWeights::Upload(weights, flags.dtype));
  CudaNeoBert model(ctx.get(), &dw);
  model.set_chunk_tokens(flags.chunk);
  model.set_attention_kernel(flags.attention);
  if (!flags.dump.empty())
    RETURN_IF_ERROR(Dump(model, cfg.vocab_size, cfg.hidden_size, flags.dump));

  const double c = cfg.hidden_size, f = dw.ffn, layers = cfg.num_hidden_layers;
  const double gemm_flops_per_token = 2.0 * layers * (3 * c * c + c * c + 2 * f * c + f * c);
  std::printf("dtype %s, slices of %lld tokens (0: whole pass), attention %s\n",
              std::string(DTypeName(flags.dtype)).c_str(), static_cast<long long>(flags.chunk),
              flags.attention_name.c_str());
  std::printf("\n%7s %6s %12s %10s %10s %12s\n", "length", "batch", "tokens/s", "ms/pass",
              "TFLOP/s", "% BF16 GEMM");
  std::string json =
      "{\"device\": \"" + info.name + "\", \"date\": \"" + date +
      "\", \"chunk\": " + std::to_string(flags.chunk) + ", \"attention\": \"" +
      flags.attention_name + "\"" + ", \"dtype\": \"" + std::string(DTypeName(flags.dtype)) +
      "\", \"gemm_bf16_tflops\": " + std::to_string(gemm_flops / 1e12) + ", \"rows\": [";
  std::mt19937_64 rng(flags.seed);
  for (size_t li = 0; li < flags.lengths.size(); ++li) {
    const int len = flags.lengths[li];
    const int64_t batch_size = std::max<int64_t>(1, flags.tokens / len);
    PackedBatch batch;
    for (int64_t b = 0; b < batch_size; ++b) {
      for (int i = 0; i < len; ++i) {
        batch.ids.push_back(static_cast<int32_t>(rng() % cfg.vocab_size));
      }
      batch.offsets.push_back(batch.offsets.back() + len);
    }
    RETURN_IF_ERROR(model.Validate(batch));
    int calls = 0;
    ASSIGN_OR_RETURN(double sec, TimeOnStream(ctx->stream(), flags.min_seconds, &calls, [&] {
                       RETURN_IF_ERROR(model.Forward(batch));
                       return model.Pool(Pooling::kMean);
                     }));
    const double tokens_per_s = batch.total_tokens() / sec;
    // Attention: q·kᵀ and p·v, 2·L·C multiply-adds each per token and layer.
    const double flops_per_token = gemm_flops_per_token + layers * 4.0 * len * c;
    const double model_flops = tokens_per_s * flops_per_token;
    std::printf("%7d %6lld %12.0f %10.2f %10.1f %11.1f%%\n", len,
                static_cast<long long>(batch_size), tokens_per_s, sec * 1e3, model_flops / 1e12,
                100.0 * model_flops / gemm_flops);
    std::fflush(stdout);
    json += std::string(li ? ", " : "") + "{\"length\": " + std::to_string(len) +
            ", \"batch\": " + std::to_string(batch_size) +
            ", \"tokens_per_s\": " + std::to_string(tokens_per_s) +
            ", \"tflops\": " + std::to_string(model_flops / 1e12) +
            ", \"gemm_fraction\": " + std::to_string(model_flops / gemm_flops) + "}";
  }
  json += "]}\n";
  if (!flags.json.empty()) RETURN_IF_ERROR(WriteFile(flags.json, json.data(), json.size()));
  return absl::OkStatus();
}

}  // namespace
}  // namespace neodb::encoder::cuda

int main(int argc, char** argv) {
  neodb::encoder::cuda::Flags flags;
  if (!neodb::encoder::cuda::ParseFlags(argc, argv, &flags)) {
    std::fprintf(
        stderr,
        "usage: %s [--lengths 128,512,...] [--tokens N] [--min_seconds S] "
        "[--dtype bf16|f16|f32] [--chunk TOKENS] [--attention pipelined|tiled128|tiled64|scalar] "
        "[--seed N] [--write_checkpoint DIR] "
        "[--dump DIR] [--json FILE]\n",
        argv[0]);
    return 2;
  }
  const absl::Status st = neodb::encoder::cuda::Run(flags);
  if (!st.ok()) {
    std::fprintf(stderr, "cuda_encoder_bench: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
