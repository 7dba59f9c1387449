#include "encoder/model.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "encoder/core/file_util.h"
#include "encoder/cuda/cuda_backend.h"
#include "encoder/models/bert.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder {
namespace {

using nlohmann::json;

constexpr size_t kMaxJsonBytes = size_t{1} << 20;

class NeoBertModel final : public Model {
 public:
  explicit NeoBertModel(std::shared_ptr<const NeoBertWeights> w) : w_(std::move(w)) {}
  Architecture architecture() const override { return Architecture::kNeoBert; }
  int64_t hidden_size() const override { return w_->config.hidden_size; }
  int64_t vocab_size() const override { return w_->config.vocab_size; }
  int64_t max_length() const override { return w_->config.max_length; }
  int64_t num_layers() const override { return w_->config.num_hidden_layers; }
  int64_t parameter_count() const override { return ParameterCount(*w_); }
  const std::string& model_id() const override { return w_->model_id; }
  absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(const BackendOptions& options,
                                                       Precision cpu_precision) const override {
    if (options.device == Device::kCuda) return MakeCudaBackend(w_, options);
    return MakeCpuBackend(w_, options.num_threads, cpu_precision);
  }
  std::shared_ptr<const NeoBertWeights> neobert() const override { return w_; }

 private:
  std::shared_ptr<const NeoBertWeights> w_;
};

class BertModel final : public Model {
 public:
  explicit BertModel(std::shared_ptr<const BertWeights> w)
      : w_(std::move(w)), parameters_(ParameterCount(*w_)) {}
  Architecture architecture() const override { return Architecture::kBert; }
  int64_t hidden_size() const override { return w_->config.hidden_size; }
  int64_t vocab_size() const override { return w_->config.vocab_size; }
  int64_t max_length() const override { return w_->config.max_position_embeddings; }
  int64_t num_layers() const override { return w_->config.num_hidden_layers; }
  int64_t parameter_count() const override { return parameters_; }
  const std::string& model_id() const override { return w_->model_id; }
  absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(const BackendOptions& options,
                                                       Precision cpu_precision) const override {
    if (options.device == Device::kCuda) {
      return absl::UnimplementedError(
          "the BERT architecture has no CUDA bodies yet; run it on the CPU (--device cpu)");
    }
    return std::unique_ptr<Backend>(
        new BertCpuBackend(w_, options.num_threads, cpu_precision));
  }

 private:
  std::shared_ptr<const BertWeights> w_;
  int64_t parameters_;
};

// Parses a JSON file of the model directory; nullopt-like null when absent.
absl::StatusOr<json> ReadJsonIfPresent(const std::string& path) {
  if (!IsRegularFile(path)) return json();
  ASSIGN_OR_RETURN(const std::string text, ReadWholeFile(path, kMaxJsonBytes));
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": invalid JSON: ", e.what()));
  }
}

// neodb_model.json: {"hybrid": {"fusion": "weighted", "alpha": 0.5}, ...};
// other keys (the measurements behind the choice) are for people.
absl::Status ReadHybrid(const std::string& path, ModelDefaults* out) {
  ASSIGN_OR_RETURN(const json j, ReadJsonIfPresent(path));
  if (j.is_null()) return absl::OkStatus();
  if (!j.is_object()) return absl::InvalidArgumentError(path + ": must be a JSON object");
  auto it = j.find("hybrid");
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object()) return absl::InvalidArgumentError(path + ": \"hybrid\" must be an object");
  const json& h = *it;
  if (auto f = h.find("fusion"); f != h.end()) {
    if (!f->is_string() || f->get<std::string>().empty() || f->get<std::string>().size() > 32) {
      return absl::InvalidArgumentError(path + ": hybrid.fusion must be a fusion's name");
    }
    out->hybrid_fusion = f->get<std::string>();
  }
  if (auto a = h.find("alpha"); a != h.end()) {
    if (!a->is_number() || !(a->get<double>() >= 0 && a->get<double>() <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": hybrid.alpha must be a number in 0..1, got ", a->dump()));
    }
    out->hybrid_alpha = a->get<double>();
  }
  return absl::OkStatus();
}

absl::Status ReadPooling(const json& j, const std::string& path, ModelDefaults* out) {
  if (!j.is_object()) return absl::InvalidArgumentError(path + ": must be a JSON object");
  // Newer sentence-transformers write "pooling_mode"; older ones a flag per mode.
  if (auto it = j.find("pooling_mode"); it != j.end() && it->is_string()) {
    const std::string mode = it->get<std::string>();
    if (mode == "cls") {
      out->pooling = Pooling::kCls;
    } else if (mode == "mean") {
      out->pooling = Pooling::kMean;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": pooling_mode \"", mode, "\"; neodb pools by the [CLS] token or the mean"));
    }
    return absl::OkStatus();
  }
  std::vector<std::string> on;
  for (const auto& [key, value] : j.items()) {
    if (absl::StartsWith(key, "pooling_mode_") && value.is_boolean() && value.get<bool>()) {
      on.push_back(key);
    }
  }
  if (on.size() != 1 || (on[0] != "pooling_mode_cls_token" && on[0] != "pooling_mode_mean_tokens")) {
    std::string modes;
    for (const std::string& m : on) absl::StrAppend(&modes, modes.empty() ? "" : ", ", m);
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": pooling modes {", modes,
        "}; neodb pools by exactly one of pooling_mode_cls_token, pooling_mode_mean_tokens"));
  }
  out->pooling = on[0] == "pooling_mode_cls_token" ? Pooling::kCls : Pooling::kMean;
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadPrompt(const json& prompts, const std::string& path,
                                       std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    auto it = prompts.find(key);
    if (it == prompts.end()) continue;
    if (!it->is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": prompts.", key, " must be a string"));
    }
    return it->get<std::string>();
  }
  return std::string();
}

}  // namespace

std::string_view ArchitectureName(Architecture architecture) {
  return architecture == Architecture::kBert ? "bert" : "neobert";
}

std::shared_ptr<const Model> MakeNeoBertModel(std::shared_ptr<const NeoBertWeights> weights) {
  return std::make_shared<const NeoBertModel>(std::move(weights));
}

std::shared_ptr<const Model> MakeBertModel(std::shared_ptr<const BertWeights> weights) {
  return std::make_shared<const BertModel>(std::move(weights));
}

absl::StatusOr<Architecture> ReadArchitecture(const std::string& dir) {
  const std::string path = dir + "/config.json";
  ASSIGN_OR_RETURN(const std::string text, ReadWholeFile(path, kMaxJsonBytes));
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": invalid JSON: ", e.what()));
  }
  const auto it = j.is_object() ? j.find("model_type") : j.end();
  if (it != j.end() && it->is_string()) {
    if (it->get<std::string>() == "neobert") return Architecture::kNeoBert;
    if (it->get<std::string>() == "bert") return Architecture::kBert;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": model_type ", it == j.end() ? "is missing" : it->dump(),
      "; neodb runs \"neobert\" and \"bert\" (BERT, MiniLM, BGE, E5, GTE checkpoints)"));
}

absl::StatusOr<std::shared_ptr<const Model>> LoadModel(const std::string& dir) {
  ASSIGN_OR_RETURN(const Architecture arch, ReadArchitecture(dir));
  if (arch == Architecture::kBert) {
    ASSIGN_OR_RETURN(BertWeights w, LoadBertCheckpoint(dir));
    return MakeBertModel(std::make_shared<const BertWeights>(std::move(w)));
  }
  ASSIGN_OR_RETURN(NeoBertWeights w, LoadCheckpoint(dir));
  return MakeNeoBertModel(std::make_shared<const NeoBertWeights>(std::move(w)));
}

absl::StatusOr<ModelDefaults> LoadModelDefaults(const std::string& dir) {
  ModelDefaults d;
  const std::string modules_path = dir + "/modules.json";
  ASSIGN_OR_RETURN(const json modules, ReadJsonIfPresent(modules_path));
  std::string pooling_dir = "1_Pooling";
  if (!modules.is_null()) {
    if (!modules.is_array()) {
      return absl::InvalidArgumentError(modules_path + ": must be a JSON array of modules");
    }
    for (const json& m : modules) {
      if (!m.is_object() || !m.contains("type") || !m["type"].is_string()) {
        return absl::InvalidArgumentError(modules_path + ": every module needs a string \"type\"");
      }
      const std::string type = m["type"].get<std::string>();
      const std::string path = m.contains("path") && m["path"].is_string()
                                   ? m["path"].get<std::string>()
                                   : std::string();
      if (absl::EndsWith(type, ".Normalize")) {
        d.normalize = true;
      } else if (absl::EndsWith(type, ".Pooling")) {
        // A module path is a subdirectory name; refuse anything that climbs out.
        if (path.empty() || path.find('/') != std::string::npos || path == "." || path == "..") {
          return absl::InvalidArgumentError(
              absl::StrCat(modules_path, ": the pooling module's path \"", path,
                           "\" must name a subdirectory of the model"));
        }
        pooling_dir = path;
      } else if (!absl::EndsWith(type, ".Transformer")) {
        return absl::InvalidArgumentError(absl::StrCat(
            modules_path, ": module type \"", type,
            "\"; neodb runs Transformer, Pooling and Normalize modules only"));
      }
    }
  }
  const std::string pooling_path = dir + "/" + pooling_dir + "/config.json";
  ASSIGN_OR_RETURN(const json pooling, ReadJsonIfPresent(pooling_path));
  if (!pooling.is_null()) RETURN_IF_ERROR(ReadPooling(pooling, pooling_path, &d));

  const std::string sbert_path = dir + "/sentence_bert_config.json";
  ASSIGN_OR_RETURN(const json sbert, ReadJsonIfPresent(sbert_path));
  if (sbert.is_object() && sbert.contains("max_seq_length") && !sbert["max_seq_length"].is_null()) {
    const json& m = sbert["max_seq_length"];
    if (!m.is_number_integer() || m.get<int64_t>() < 3) {
      return absl::InvalidArgumentError(
          absl::StrCat(sbert_path, ": max_seq_length must be an integer >= 3, got ", m.dump()));
    }
    d.max_length = m.get<int64_t>();
  }

  const std::string st_path = dir + "/config_sentence_transformers.json";
  ASSIGN_OR_RETURN(const json st, ReadJsonIfPresent(st_path));
  if (st.is_object() && st.contains("prompts") && !st["prompts"].is_null()) {
    const json& prompts = st["prompts"];
    if (!prompts.is_object()) {
      return absl::InvalidArgumentError(st_path + ": \"prompts\" must be an object");
    }
    ASSIGN_OR_RETURN(d.query_prefix, ReadPrompt(prompts, st_path, {"query"}));
    ASSIGN_OR_RETURN(d.document_prefix,
                     ReadPrompt(prompts, st_path, {"document", "passage", "corpus"}));
  }
  RETURN_IF_ERROR(ReadHybrid(dir + "/neodb_model.json", &d));
  return d;
}

}  // namespace neodb::encoder
