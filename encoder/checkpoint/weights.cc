#include "encoder/checkpoint/weights.h"

#include <xxhash.h>

#include <bit>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/atomic_file.h"
#include "encoder/checkpoint/safetensors.h"
#include "encoder/checkpoint/safetensors_writer.h"

namespace neodb::encoder {

// model_id hashes shapes and F32 values as host bytes, which are the
// documented little-endian bytes only on a little-endian host.
static_assert(std::endian::native == std::endian::little);

namespace {

constexpr std::string_view kPrefix = "model.";
constexpr float kInitRange = 0.02f;

// One expected tensor: its unprefixed name, its shape under the config and
// where it lives in NeoBertWeights.
struct Slot {
  std::string name;
  Shape shape;
  Tensor* tensor;
};

// REQUIRES: w.layers.size() == w.config.num_hidden_layers. Order is the
// model_id order (EncoderTensorNames).
std::vector<Slot> EncoderSlots(NeoBertWeights& w) {
  const NeoBertConfig& c = w.config;
  const int64_t C = c.hidden_size, F = c.ffn_dim(), V = c.vocab_size;
  std::vector<Slot> slots;
  slots.push_back({"encoder.weight", {V, C}, &w.embeddings});
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    LayerWeights& l = w.layers[i];
    const std::string p = absl::StrCat("transformer_encoder.", i, ".");
    slots.push_back({p + "attention_norm.weight", {C}, &l.attention_norm});
    slots.push_back({p + "qkv.weight", {3 * C, C}, &l.qkv});
    slots.push_back({p + "wo.weight", {C, C}, &l.wo});
    slots.push_back({p + "ffn_norm.weight", {C}, &l.ffn_norm});
    slots.push_back({p + "ffn.w12.weight", {2 * F, C}, &l.w12});
    slots.push_back({p + "ffn.w3.weight", {C, F}, &l.w3});
  }
  slots.push_back({"layer_norm.weight", {C}, &w.final_norm});
  return slots;
}

std::vector<Slot> EncoderSlots(const NeoBertWeights& w) {
  // The slots are only read through in const contexts.
  return EncoderSlots(const_cast<NeoBertWeights&>(w));
}

std::string ShapeString(const Shape& s) { return absl::StrCat("[", absl::StrJoin(s, ", "), "]"); }

bool IsNormName(std::string_view name) {
  return name.find("norm.weight") != std::string_view::npos;
}

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [-range, range): the top 24 bits give an integer in
// [-2^23, 2^23), exact in float; one multiply rounds it the same way on every
// IEEE machine.
Tensor RandomUniform(const Shape& shape, uint64_t seed, std::string_view name) {
  Tensor t = Tensor::Empty(shape, DType::kF32);
  uint64_t state = XXH3_64bits_withSeed(name.data(), name.size(), seed);
  const float scale = kInitRange / 8388608.0f;  // exact: power-of-two scaling
  float* p = t.data<float>();
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = static_cast<int64_t>(SplitMix64(state) >> 40) - 8388608;
    p[i] = static_cast<float>(k) * scale;
  }
  return t;
}

Tensor Filled(const Shape& shape, float value) {
  Tensor t = Tensor::Empty(shape, DType::kF32);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = value;
  return t;
}

absl::Status CheckTensor(std::string_view name, const Tensor& t, const Shape& shape) {
  if (!t.defined()) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", std::string(name), " is missing"));
  }
  if (t.device() != Device::kCpu ||
      (t.dtype() != DType::kF32 && t.dtype() != DType::kF16 && t.dtype() != DType::kBF16)) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", std::string(name), " is ",
                                                   t.DebugString(),
                                                   "; expected a CPU F32/F16/BF16 tensor"));
  }
  if (t.shape() != shape) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", std::string(name), " has shape ",
                                                   ShapeString(t.shape()), "; the config needs ",
                                                   ShapeString(shape)));
  }
  return absl::OkStatus();
}

std::string ListNames(const std::vector<std::string>& names) {
  constexpr size_t kShown = 10;
  std::vector<std::string> shown;
  for (size_t i = 0; i < names.size() && i < kShown; ++i) shown.push_back("\"" + names[i] + "\"");
  std::string out = absl::StrJoin(shown, ", ");
  if (names.size() > kShown) absl::StrAppend(&out, " and ", names.size() - kShown, " more");
  return out;
}

}  // namespace

std::vector<std::string> EncoderTensorNames(int64_t num_layers) {
  NeoBertWeights w;
  w.config.num_hidden_layers = num_layers;
  w.layers.resize(num_layers);
  std::vector<std::string> names;
  for (Slot& s : EncoderSlots(w)) names.push_back(std::move(s.name));
  return names;
}

absl::Status CheckWeights(const NeoBertWeights& w) {
  RETURN_IF_ERROR(w.config.Validate());
  if (static_cast<int64_t>(w.layers.size()) != w.config.num_hidden_layers) {
    return absl::InvalidArgumentError(absl::StrCat("weights have ", w.layers.size(),
                                                   " layers; the config needs ",
                                                   w.config.num_hidden_layers));
  }
  for (const Slot& s : EncoderSlots(w)) RETURN_IF_ERROR(CheckTensor(s.name, *s.tensor, s.shape));
  if (w.decoder_weight.has_value() != w.decoder_bias.has_value()) {
    return absl::InvalidArgumentError("decoder.weight and decoder.bias must come together");
  }
  if (w.decoder_weight.has_value()) {
    const int64_t V = w.config.vocab_size, C = w.config.hidden_size;
    RETURN_IF_ERROR(CheckTensor("decoder.weight", *w.decoder_weight, {V, C}));
    RETURN_IF_ERROR(CheckTensor("decoder.bias", *w.decoder_bias, {V}));
  }
  return absl::OkStatus();
}

int64_t ParameterCount(const NeoBertWeights& w) {
  int64_t n = 0;
  for (const Slot& s : EncoderSlots(w)) n += s.tensor->numel();
  if (w.decoder_weight) n += w.decoder_weight->numel();
  if (w.decoder_bias) n += w.decoder_bias->numel();
  return n;
}

std::string ComputeModelId(const NeoBertWeights& w) {
  XXH3_state_t* state = XXH3_createState();
  NEODB_CHECK(state != nullptr);
  XXH3_64bits_reset(state);
  const std::string config = w.config.ToJson("float32");
  XXH3_64bits_update(state, config.data(), config.size());
  for (const Slot& s : EncoderSlots(w)) {
    XXH3_64bits_update(state, s.name.c_str(), s.name.size() + 1);  // with the NUL
    const Shape& shape = s.tensor->shape();
    XXH3_64bits_update(state, shape.data(), shape.size() * sizeof(int64_t));
    const Tensor f32 = s.tensor->ToF32();  // no copy for F32
    XXH3_64bits_update(state, f32.raw_data(), f32.nbytes());
  }
  const uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  char buf[20];
  std::snprintf(buf, sizeof(buf), "nb-%016llx", static_cast<unsigned long long>(h));
  return buf;
}

NeoBertWeights RandomWeights(const NeoBertConfig& config, uint64_t seed, bool with_decoder) {
  NEODB_CHECK(config.Validate().ok());
  NeoBertWeights w;
  w.config = config;
  w.layers.resize(config.num_hidden_layers);
  for (Slot& s : EncoderSlots(w)) {
    *s.tensor = IsNormName(s.name) ? Filled(s.shape, 1.0f) : RandomUniform(s.shape, seed, s.name);
  }
  if (with_decoder) {
    w.decoder_weight =
        RandomUniform({config.vocab_size, config.hidden_size}, seed, "decoder.weight");
    w.decoder_bias = Filled({config.vocab_size}, 0.0f);
  }
  w.model_id = ComputeModelId(w);
  return w;
}

absl::Status SaveCheckpoint(const NeoBertWeights& w, const std::string& dir,
                            const SaveOptions& options) {
  RETURN_IF_ERROR(CheckWeights(w));
  std::string torch_dtype;
  switch (options.dtype) {
    case DType::kF32:
      torch_dtype = "float32";
      break;
    case DType::kF16:
      torch_dtype = "float16";
      break;
    case DType::kBF16:
      torch_dtype = "bfloat16";
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("checkpoints are stored as F32, F16 or BF16, not ",
                       std::string(DTypeName(options.dtype))));
  }
  std::vector<NamedTensor> tensors;
  for (const Slot& s : EncoderSlots(w)) {
    tensors.push_back({absl::StrCat(std::string(kPrefix), s.name), *s.tensor});
  }
  if (w.decoder_weight) {
    tensors.push_back({"decoder.weight", *w.decoder_weight});
    tensors.push_back({"decoder.bias", *w.decoder_bias});
  }
  RETURN_IF_ERROR(WriteSafetensors(dir + "/model.safetensors", std::move(tensors), options.dtype,
                                   {{"format", "pt"}}));
  return WriteFileAtomically(Env::Default(), dir + "/config.json", {w.config.ToJson(torch_dtype)});
}

absl::StatusOr<std::string> WeightsFilePath(const std::string& dir) {
  const std::string plain = dir + "/model.safetensors";
  const std::string compressed = plain + ".zst";
  std::error_code ec;
  const bool has_plain = std::filesystem::exists(plain, ec);
  const bool has_compressed = std::filesystem::exists(compressed, ec);
  if (has_plain && has_compressed) {
    return absl::InvalidArgumentError(absl::StrCat(
        dir, " holds both model.safetensors and model.safetensors.zst; keep one"));
  }
  return has_compressed ? compressed : plain;
}

absl::StatusOr<NeoBertWeights> LoadCheckpoint(const std::string& dir, const LoadOptions& options) {
  NeoBertWeights w;
  ASSIGN_OR_RETURN(w.config, NeoBertConfig::FromFile(dir + "/config.json"));
  ASSIGN_OR_RETURN(const std::string path, WeightsFilePath(dir));
  ASSIGN_OR_RETURN(SafetensorsFile file, SafetensorsFile::Open(path));
  w.layers.resize(w.config.num_hidden_layers);

  // Resolve every expected name to a stored one (with or without "model.").
  std::set<std::string> claimed;
  std::vector<std::string> missing;
  std::vector<std::pair<Slot, const SafetensorsFile::TensorInfo*>> found;
  auto resolve = [&](Slot slot, bool allow_prefix) -> absl::Status {
    const SafetensorsFile::TensorInfo* bare = file.Find(slot.name);
    const SafetensorsFile::TensorInfo* prefixed =
        allow_prefix ? file.Find(std::string(kPrefix) + slot.name) : nullptr;
    if (bare != nullptr && prefixed != nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": tensor \"", slot.name,
                                                     "\" is stored both with and without the "
                                                     "\"model.\" prefix"));
    }
    const SafetensorsFile::TensorInfo* info = bare != nullptr ? bare : prefixed;
    if (info == nullptr) {
      missing.push_back(slot.name);
      return absl::OkStatus();
    }
    claimed.insert(info->name);
    if (info->shape != slot.shape) {
      if (slot.name == "encoder.weight" && info->shape.size() == 2 &&
          info->shape[1] == slot.shape[1]) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": tensor \"", info->name, "\" has ", info->shape[0],
                         " rows but config.json has vocab_size ", w.config.vocab_size));
      }
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": tensor \"", info->name, "\" has shape ", ShapeString(info->shape),
                       "; config.json needs ", ShapeString(slot.shape)));
    }
    found.emplace_back(std::move(slot), info);
    return absl::OkStatus();
  };
  for (Slot& s : EncoderSlots(w)) RETURN_IF_ERROR(resolve(std::move(s), true));
  if (!missing.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": missing tensor", missing.size() > 1 ? "s " : " ", ListNames(missing),
                     " (looked up with and without the \"model.\" prefix)"));
  }

  // The MLM head: recognised always, loaded on request.
  const int64_t V = w.config.vocab_size, C = w.config.hidden_size;
  Tensor decoder_weight, decoder_bias;
  const bool has_weight = file.Find("decoder.weight") != nullptr;
  const bool has_bias = file.Find("decoder.bias") != nullptr;
  if (has_weight != has_bias) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": has \"", has_weight ? "decoder.weight" : "decoder.bias",
                     "\" without \"", has_weight ? "decoder.bias" : "decoder.weight", "\""));
  }
  if (options.load_decoder && !has_weight) {
    return absl::NotFoundError(absl::StrCat(
        path, ": no MLM head (\"decoder.weight\", \"decoder.bias\") but load_decoder is set"));
  }
  if (has_weight) {
    RETURN_IF_ERROR(resolve({"decoder.weight", {V, C}, &decoder_weight}, false));
    RETURN_IF_ERROR(resolve({"decoder.bias", {V}, &decoder_bias}, false));
  }

  std::vector<std::string> extra;
  for (const SafetensorsFile::TensorInfo& t : file.tensors()) {
    if (!claimed.count(t.name)) extra.push_back(t.name);
  }
  if (!extra.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": unexpected tensor",
                                                   extra.size() > 1 ? "s " : " ", ListNames(extra),
                                                   " (not part of a NeoBERT with this config)"));
  }

  for (auto& [slot, info] : found) {
    if (!options.load_decoder && slot.name.rfind("decoder.", 0) == 0) continue;
    ASSIGN_OR_RETURN(*slot.tensor, file.Load(info->name));
  }
  if (options.load_decoder) {
    w.decoder_weight = std::move(decoder_weight);
    w.decoder_bias = std::move(decoder_bias);
  }
  w.model_id = ComputeModelId(w);
  return w;
}

}  // namespace neodb::encoder
