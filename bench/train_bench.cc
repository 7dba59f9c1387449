// Training throughput and peak memory of the contrastive fine-tuning step
// (GradCache forward without activations, InfoNCE, recompute + backward per
// chunk, clipping, AdamW) for the full NeoBERT architecture (28 × 768,
// random weights) or a real BERT-family checkpoint (--model DIR, e.g.
// all-MiniLM-L6-v2, trained with its own pooling), at several sequence
// lengths, for the full model and for --train-layers N. Each configuration
// runs in a forked child so that its peak RSS is its own. Prints a table and
// the machine.
//
//   train_bench [--preset full | --model DIR] [--seq 128,512] [--pairs 4] [--steps 2]
//               [--train-layers 0,4] [--chunk-size 8] [--threads 0] [--device cpu]
// --device cuda (or cuda:N) runs the encoder's forward and backward on that
// GPU (encoder/train/cuda_train_model.h); the losses, clipping and AdamW stay
// on the host, as `neodb finetune --device cuda` runs them.
// --pairs takes a list too: at a fixed --chunk-size, peak memory should barely
// grow with the contrastive batch (that is what GradCache is for).
#include <cblas.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "encoder/checkpoint/presets.h"
#include "encoder/device.h"
#include "encoder/model.h"
#include "encoder/train/adamw.h"
#include "encoder/train/bert_checkpoint_io.h"
#include "encoder/train/grad_cache.h"
#include "encoder/train/train_device.h"
#include "encoder/train/train_model.h"

namespace {

using namespace neodb::encoder;
using namespace neodb::encoder::train;

struct Result {
  double seconds_per_step = 0;
  double tokens_per_second = 0;
  double peak_rss_mib = 0;
  double loss = 0;
};

std::vector<int64_t> ParseList(const char* s) {
  std::vector<int64_t> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::atoll(item.c_str()));
  return out;
}

// The preset's random NeoBERT, or the BERT checkpoint in model_dir.
TrainParams<float> MakeParams(const NeoBertConfig& base, const std::string& model_dir,
                              int64_t seq, Pooling* pooling) {
  if (!model_dir.empty()) {
    auto params = LoadBertTrainParams(model_dir);
    auto defaults = LoadModelDefaults(model_dir);
    if (!params.ok() || !defaults.ok()) {
      std::fprintf(stderr, "%s\n",
                   std::string((params.ok() ? defaults.status() : params.status()).message())
                       .c_str());
      _exit(1);
    }
    *pooling = defaults->pooling;
    return *std::move(params);
  }
  NeoBertConfig config = base;
  config.max_length = std::max<int64_t>(seq, config.max_length);
  *pooling = Pooling::kMean;
  return RandomParams<float>(config, 1, 0.02, 0.0);
}

Result RunOne(const NeoBertConfig& base, const std::string& model_dir, int64_t seq, int64_t pairs,
              int64_t steps, int64_t train_layers, int64_t chunk, const TrainingDevice& device) {
  Pooling pooling;
  TrainParams<float> params = MakeParams(base, model_dir, seq, &pooling);
  auto pass = MakeTrainingPass(params.layout, device);
  if (!pass.ok()) {
    std::fprintf(stderr, "%s\n", std::string(pass.status().message()).c_str());
    _exit(1);
  }
  TrainModel<float> model(params.layout, pooling, *pass);
  const int64_t begin = params.layout.TrainableBegin(train_layers);
  std::vector<float> grads(static_cast<size_t>(params.layout.total() - begin));
  AdamW optimizer(params.layout, begin, AdamWOptions{});
  SplitMix64 rng(2);
  auto text = [&] {
    std::vector<int32_t> ids(static_cast<size_t>(seq));
    ids.front() = 101;
    ids.back() = 102;
    for (int64_t i = 1; i + 1 < seq; ++i) ids[i] = static_cast<int32_t>(1000 + rng.Next() % 28000);
    return ids;
  };
  GradCacheOptions gc;
  gc.chunk_size = chunk;
  gc.train_layers = train_layers;
  Result r;
  double total = 0;
  int64_t timed = 0, tokens = 0;
  for (int64_t s = 0; s < steps; ++s) {
    ContrastiveBatch batch;
    for (int64_t i = 0; i < pairs; ++i)
      batch.queries.push_back(text()), batch.positives.push_back(text());
    const auto t0 = std::chrono::steady_clock::now();
    std::fill(grads.begin(), grads.end(), 0.0f);
    r.loss = GradCacheStep(model, params.values.data(), batch, gc, grads.data()).loss;
    ClipGradNorm(grads.data(), static_cast<int64_t>(grads.size()), 1.0);
    optimizer.Step(params.values.data(), grads.data(), 1e-5);
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0 || steps == 1) total += dt, ++timed, tokens += batch.num_tokens();
  }
  r.seconds_per_step = total / timed;
  r.tokens_per_second = static_cast<double>(tokens) / total;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  r.peak_rss_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;
  return r;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> seqs = {128, 512}, modes = {0, 4}, pair_counts = {4};
  int64_t steps = 2, chunk = 8, threads = 0;
  std::string preset = "full", model_dir, device_name = "cpu";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--seq")
      seqs = ParseList(argv[i + 1]);
    else if (flag == "--train-layers")
      modes = ParseList(argv[i + 1]);
    else if (flag == "--pairs")
      pair_counts = ParseList(argv[i + 1]);
    else if (flag == "--preset")
      preset = argv[i + 1];
    else if (flag == "--model")
      model_dir = argv[i + 1];
    else if (flag == "--steps")
      steps = std::atoll(argv[i + 1]);
    else if (flag == "--chunk-size")
      chunk = std::atoll(argv[i + 1]);
    else if (flag == "--threads")
      threads = std::atoll(argv[i + 1]);
    else if (flag == "--device")
      device_name = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (threads > 0) openblas_set_num_threads(static_cast<int>(threads));
  // Parsed here, resolved in each child: CUDA must not be initialised in a
  // process that forks children which use it.
  const auto request = ParseDevice(device_name);
  if (!request.ok()) {
    std::fprintf(stderr, "%s\n", std::string(request.status().message()).c_str());
    return 2;
  }
  const auto device = std::make_optional(TrainingDevice{
      request->kind == DeviceRequest::Kind::kCuda, request->index});
  auto config = neodb::encoder::PresetConfig(preset, 30522);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  int64_t layers = config->num_hidden_layers;
  std::string what = "preset " + preset + " (" + std::to_string(layers) + " layers x " +
                     std::to_string(config->hidden_size) + ", vocab 30522, random weights)";
  if (!model_dir.empty()) {
    auto m = LoadModel(model_dir);
    if (!m.ok() || (*m)->architecture() != Architecture::kBert) {
      std::fprintf(stderr, "--model: %s\n",
                   m.ok() ? "not a BERT checkpoint" : std::string(m.status().message()).c_str());
      return 2;
    }
    layers = (*m)->num_layers();
    what = model_dir + " (BERT, " + std::to_string(layers) + " layers x " +
           std::to_string((*m)->hidden_size()) + ", vocab " + std::to_string((*m)->vocab_size()) +
           ", its own pooling)";
  }
  std::printf("machine: %s, %u hardware threads; OpenBLAS %s, %d threads\n", CpuModel().c_str(),
              std::thread::hardware_concurrency(), openblas_get_config(),
              openblas_get_num_threads());
  std::printf(
      "model: %s, F32, encoder passes on %s; pairs/step = queries + positives (in-batch "
      "negatives); GradCache chunk %lld sequences; %lld steps (first untimed when > 1)\n\n",
      what.c_str(), TrainingDeviceName(*device).c_str(), static_cast<long long>(chunk),
      static_cast<long long>(steps));
  std::printf("| seq | pairs | trained | s/step | tokens/s | peak RSS (MiB) |\n");
  std::printf("|---:|---:|---|---:|---:|---:|\n");
  std::fflush(stdout);
  bool any_failed = false;
  for (int64_t seq : seqs) {
    for (int64_t pairs : pair_counts) {
      for (int64_t mode : modes) {
        int fds[2];
        if (pipe(fds) != 0) return 1;
        const pid_t pid = fork();
        if (pid == 0) {
          close(fds[0]);
          const Result r = RunOne(*config, model_dir, seq, pairs, steps, mode, chunk, *device);
          if (write(fds[1], &r, sizeof(r)) != sizeof(r)) _exit(1);
          _exit(0);
        }
        close(fds[1]);
        Result r;
        const bool got = read(fds[0], &r, sizeof(r)) == sizeof(r);
        close(fds[0]);
        int status = 0;
        waitpid(pid, &status, 0);
        const std::string trained = mode <= 0 || mode >= layers
                                        ? "all " + std::to_string(layers) + " layers + embeddings"
                                        : "top " + std::to_string(mode) + " layers";
        if (!got) {
          any_failed = true;
          std::printf("| %lld | %lld | %s | failed | | |\n", static_cast<long long>(seq),
                      static_cast<long long>(pairs), trained.c_str());
          continue;
        }
        std::printf("| %lld | %lld | %s | %.2f | %.1f | %.0f |\n", static_cast<long long>(seq),
                    static_cast<long long>(pairs), trained.c_str(), r.seconds_per_step,
                    r.tokens_per_second, r.peak_rss_mib);
        std::fflush(stdout);
      }
    }
  }
  return any_failed ? 1 : 0;
}
