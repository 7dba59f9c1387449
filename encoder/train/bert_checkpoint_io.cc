#include "encoder/train/bert_checkpoint_io.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/env.h"
#include "encoder/checkpoint/bert_weights.h"
#include "encoder/checkpoint/safetensors.h"
#include "encoder/checkpoint/safetensors_writer.h"
#include "encoder/checkpoint/weights.h"

namespace neodb::encoder::train {
namespace {

namespace fs = std::filesystem;

// Weight files of any framework: replaced by the trained model.safetensors,
// never copied (a stale pytorch_model.bin beside it would be a second,
// different model in the same directory).
bool IsWeightsFile(const std::string& name) {
  for (const char* ext : {".safetensors", ".safetensors.zst", ".bin", ".pt", ".pth", ".h5",
                          ".msgpack", ".ot", ".onnx", ".ckpt"}) {
    if (absl::EndsWith(name, ext)) return true;
  }
  return false;
}

// sentence-transformers module directories: "<index>_<Name>" (1_Pooling,
// 2_Normalize, 2_Dense). Other directories (onnx/, openvino/) hold exports
// of the old weights and are not copied.
bool IsModuleDir(const std::string& name) {
  size_t i = 0;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
  return i > 0 && i < name.size() && name[i] == '_';
}

// Files that record how the source's weights were made (a previous run's
// lineage, report and loss curve; neodb_import.json, whose package and
// weights_sha256 name the source's weights, not the trained ones) or what was
// done with them (adapt.json, which --rollback reads from the model a
// collection is on). The trained
// output gets its own or none. neodb_model.json is copied: the hybrid fusion
// it names is a property of the kind of model (a pretrained retriever's
// vector leg earns weighted 0.5, index/keyword/README.md), which fine-tuning
// keeps; adapt calibrates a collection's own fusion when it applies.
bool IsAboutTheOldWeights(const std::string& name) {
  for (const char* f : {"lineage.json", "finetune.json", "loss.csv", "loss.png", "adapt.json",
                        "neodb_import.json"}) {
    if (name == f) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<TrainParams<float>> LoadBertTrainParams(const std::string& dir,
                                                       std::string* model_id) {
  ASSIGN_OR_RETURN(const BertWeights validated, LoadBertCheckpoint(dir));
  if (model_id != nullptr) *model_id = validated.model_id;
  TrainParams<float> params{ParamLayout(validated.config)};
  std::map<std::string, const ParamEntry*> by_name;
  for (const ParamEntry& e : params.layout.entries()) by_name.emplace(e.name, &e);
  ASSIGN_OR_RETURN(const std::string path, WeightsFilePath(dir));
  ASSIGN_OR_RETURN(const SafetensorsFile file, SafetensorsFile::Open(path));
  for (const SafetensorsFile::TensorInfo& t : file.tensors()) {
    const std::string bare = absl::StartsWith(t.name, "bert.") ? t.name.substr(5) : t.name;
    auto it = by_name.find(bare);
    if (it == by_name.end()) continue;  // pooler, heads, position_ids: validated as ignorable
    const ParamEntry& e = *it->second;
    ASSIGN_OR_RETURN(const Tensor f32, file.Load(t.name));
    if (f32.numel() != e.numel) {  // LoadBertCheckpoint checked the shapes; defensive
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": tensor \"", t.name, "\" has ", f32.numel(), " values, not ",
                       e.numel));
    }
    std::copy(f32.data<float>(), f32.data<float>() + e.numel, params.at(e));
    by_name.erase(it);
  }
  if (!by_name.empty()) {  // unreachable after LoadBertCheckpoint; defensive
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": missing tensor \"", by_name.begin()->first, "\""));
  }
  return params;
}

absl::Status SaveBertTrainParams(const TrainParams<float>& params, const std::string& source_dir,
                                 const std::string& out_dir, DType dtype) {
  NEODB_CHECK(params.layout.architecture() == Architecture::kBert);
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(source_dir, ec)) {
    const std::string name = entry.path().filename().string();
    const fs::path to = fs::path(out_dir) / name;
    // Through the Env (common/env.h), each copy synced.
    if (entry.is_regular_file(ec) && !IsWeightsFile(name) && !IsAboutTheOldWeights(name) &&
        name[0] != '.') {
      RETURN_IF_ERROR(Env::Default()->CopyFile(entry.path().string(), to.string()));
    } else if (entry.is_directory(ec) && IsModuleDir(name)) {
      RETURN_IF_ERROR(Env::Default()->DeleteTree(to.string()));
      RETURN_IF_ERROR(Env::Default()->CopyTree(entry.path().string(), to.string()));
    }
    if (ec) {
      return absl::InternalError(absl::StrCat("cannot read ", entry.path().string(), ": ",
                                              ec.message()));
    }
  }
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot list ", source_dir, ": ", ec.message()));
  }
  std::vector<NamedTensor> tensors;
  for (const ParamEntry& e : params.layout.entries()) {
    Tensor t = Tensor::Empty(e.shape, DType::kF32);
    std::copy(params.at(e), params.at(e) + e.numel, t.data<float>());
    tensors.push_back({e.name, std::move(t)});
  }
  return WriteSafetensors(out_dir + "/model.safetensors", std::move(tensors), dtype,
                          {{"format", "pt"}});
}

}  // namespace neodb::encoder::train
