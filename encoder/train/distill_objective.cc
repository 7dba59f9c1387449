#include "encoder/train/distill_objective.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "encoder/train/json_lines.h"
#include "encoder/train/train_params.h"

namespace neodb::encoder::train {

absl::StatusOr<std::vector<TeacherText>> ParseTeacherTexts(const std::string& content,
                                                           const std::string& name,
                                                           const Tokenizer& tokenizer,
                                                           int64_t max_length) {
  std::vector<TeacherText> out;
  size_t dim = 0;
  std::istringstream in(content);
  std::string text;
  for (int64_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      return LineError(name, line, absl::StrCat("not valid JSON: ", e.what()));
    }
    if (!j.is_object()) return LineError(name, line, "expected a JSON object");
    const auto t = j.find("text");
    if (t == j.end() || !t->is_string() || t->get_ref<const std::string&>().empty()) {
      return LineError(name, line, "\"text\" must be a non-empty string");
    }
    const auto v = j.find("vector");
    if (v == j.end() || !v->is_array() || v->empty()) {
      return LineError(name, line, "\"vector\" must be a non-empty array of numbers");
    }
    if (dim == 0) dim = v->size();
    if (v->size() != dim) {
      return LineError(name, line,
                       absl::StrCat("\"vector\" has ", v->size(), " numbers, line 1's has ", dim));
    }
    TeacherText tt;
    tt.line = line;
    double norm = 0;
    for (const auto& x : *v) {
      if (!x.is_number() || !std::isfinite(x.get<double>())) {
        return LineError(name, line, "\"vector\" must hold finite numbers only");
      }
      tt.vector.push_back(x.get<float>());
      norm += x.get<double>() * x.get<double>();
    }
    if (!(norm > 0) || !std::isfinite(norm)) {
      return LineError(name, line, "\"vector\" has zero (or infinite) length");
    }
    const float inv = static_cast<float>(1.0 / std::sqrt(norm));
    for (float& x : tt.vector) x *= inv;
    auto ids = tokenizer.Tokenize(t->get_ref<const std::string&>());
    if (!ids.ok()) return LineError(name, line, absl::StrCat("text: ", ids.status().message()));
    if (static_cast<int64_t>(ids->size()) + 2 > max_length) {
      return LineError(name, line,
                       absl::StrCat("text is ", ids->size() + 2,
                                    " tokens with [CLS]/[SEP], over the maximum length ",
                                    max_length, " (shorten it where the teacher vector is made)"));
    }
    tt.ids.reserve(ids->size() + 2);
    tt.ids.push_back(tokenizer.special().cls);
    tt.ids.insert(tt.ids.end(), ids->begin(), ids->end());
    tt.ids.push_back(tokenizer.special().sep);
    out.push_back(std::move(tt));
  }
  if (out.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": a teacher file needs at least two texts, it has ", out.size()));
  }
  return out;
}

absl::StatusOr<std::vector<TeacherText>> ReadTeacherTexts(const std::string& path,
                                                          const Tokenizer& tokenizer,
                                                          int64_t max_length) {
  ASSIGN_OR_RETURN(const std::string content, ReadWholeFile(path, "teacher file"));
  return ParseTeacherTexts(content, path, tokenizer, max_length);
}

template <typename T>
double SimilarityDistillLoss(const T* student, const float* teacher_unit, int64_t n, int64_t c,
                             int64_t k, T* d_student) {
  // Unit student rows.
  std::vector<double> u(static_cast<size_t>(n * c), 0.0), norm(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t d = 0; d < c; ++d) s += static_cast<double>(student[i * c + d]) * student[i * c + d];
    norm[i] = std::sqrt(s);
    if (norm[i] > 0) {
      for (int64_t d = 0; d < c; ++d) u[i * c + d] = student[i * c + d] / norm[i];
    }
  }
  const double pairs = static_cast<double>(n) * static_cast<double>(n - 1);
  double loss = 0;
  // g[i][j] = d loss / d cos_s(i, j) (i != j), symmetric.
  std::vector<double> g(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = i + 1; j < n; ++j) {
      double cs = 0, ct = 0;
      for (int64_t d = 0; d < c; ++d) cs += u[i * c + d] * u[j * c + d];
      for (int64_t d = 0; d < k; ++d) {
        ct += static_cast<double>(teacher_unit[i * k + d]) * teacher_unit[j * k + d];
      }
      const double diff = cs - ct;
      loss += 2 * diff * diff / pairs;  // (i, j) and (j, i)
      g[i * n + j] = g[j * n + i] = 4 * diff / pairs;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    // d loss / d u_i = Σ_j g_ij u_j, then through u = x / |x|.
    std::vector<double> du(static_cast<size_t>(c), 0.0);
    for (int64_t j = 0; j < n; ++j) {
      if (j == i) continue;
      for (int64_t d = 0; d < c; ++d) du[d] += g[i * n + j] * u[j * c + d];
    }
    if (!(norm[i] > 0)) {
      std::fill(d_student + i * c, d_student + (i + 1) * c, T(0));
      continue;
    }
    double dot = 0;
    for (int64_t d = 0; d < c; ++d) dot += du[d] * u[i * c + d];
    for (int64_t d = 0; d < c; ++d) {
      d_student[i * c + d] = static_cast<T>((du[d] - dot * u[i * c + d]) / norm[i]);
    }
  }
  return loss;
}

template double SimilarityDistillLoss<float>(const float*, const float*, int64_t, int64_t,
                                             int64_t, float*);
template double SimilarityDistillLoss<double>(const double*, const float*, int64_t, int64_t,
                                              int64_t, double*);

template <typename T>
double DirectDistillLoss(const T* student, const float* teacher_unit, int64_t n, int64_t c,
                         T* d_student) {
  // loss = (1/n) Σ_i (1 - u_i·t_i), u_i = x_i / |x_i|;
  // d loss / d x_i = -(t_i - (u_i·t_i) u_i) / (n |x_i|).
  double loss = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T* x = student + i * c;
    const float* t = teacher_unit + i * c;
    double sq = 0, xt = 0;
    for (int64_t d = 0; d < c; ++d) {
      sq += static_cast<double>(x[d]) * x[d];
      xt += static_cast<double>(x[d]) * t[d];
    }
    const double norm = std::sqrt(sq);
    if (!(norm > 0)) {
      loss += 1.0 / static_cast<double>(n);
      std::fill(d_student + i * c, d_student + (i + 1) * c, T(0));
      continue;
    }
    const double cos = xt / norm;
    loss += (1 - cos) / static_cast<double>(n);
    const double scale = -1.0 / (static_cast<double>(n) * norm);
    for (int64_t d = 0; d < c; ++d) {
      d_student[i * c + d] = static_cast<T>(scale * (t[d] - cos * x[d] / norm));
    }
  }
  return loss;
}

template double DirectDistillLoss<float>(const float*, const float*, int64_t, int64_t, float*);
template double DirectDistillLoss<double>(const double*, const float*, int64_t, int64_t,
                                          double*);

absl::StatusOr<std::unique_ptr<DistillObjective>> DistillObjective::Create(
    std::vector<TeacherText> texts, const DistillOptions& options) {
  const int64_t n = static_cast<int64_t>(texts.size());
  if (options.batch_size < 2) {
    return absl::InvalidArgumentError("--distill-batch must be at least 2");
  }
  if (options.batch_size > n) {
    return absl::InvalidArgumentError(absl::StrCat("--distill-batch ", options.batch_size,
                                                   " is larger than the ", n, " teacher texts"));
  }
  if (options.chunk_size < 1) return absl::InvalidArgumentError("chunk size must be >= 1");
  if (!(options.direct_weight >= 0) || !std::isfinite(options.direct_weight)) {
    return absl::InvalidArgumentError("--direct-weight must be a number >= 0");
  }
  for (const TeacherText& t : texts) {
    if (t.vector.empty() || t.vector.size() != texts[0].vector.size() || t.ids.empty()) {
      return absl::InvalidArgumentError("teacher texts need vectors of one length and ids");
    }
  }
  std::unique_ptr<DistillObjective> d(new DistillObjective(std::move(texts), options));
  d->teacher_dim_ = static_cast<int64_t>(d->texts_[0].vector.size());
  return d;
}

std::vector<int64_t> DistillObjective::BatchForStep(int64_t step) const {
  const int64_t n = num_texts();
  const int64_t per_epoch = n / options_.batch_size;
  const int64_t epoch = step / per_epoch;
  const int64_t first = (step % per_epoch) * options_.batch_size;
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  // Its own stream, apart from the contrastive and MLM orders of one seed.
  SplitMix64 rng(options_.seed * 0x9e3779b97f4a7c15ULL + 0xd15711ULL +
                 static_cast<uint64_t>(epoch) * 0x2545f4914f6cdd1dULL);
  for (int64_t i = n - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(i + 1));
    std::swap(order[i], order[j]);
  }
  return {order.begin() + first, order.begin() + first + options_.batch_size};
}

std::vector<float> DistillObjective::Embed(const TrainModel<float>& model, const float* params,
                                           const std::vector<int64_t>& idx) const {
  const int64_t c = model.layout().hidden_size();
  const int64_t n = static_cast<int64_t>(idx.size());
  std::vector<float> emb(static_cast<size_t>(n * c));
  for (int64_t start = 0; start < n; start += options_.chunk_size) {
    PackedBatch chunk;
    chunk.offsets = {0};
    for (int64_t t = start; t < std::min(n, start + options_.chunk_size); ++t) {
      AppendSequence(&chunk, texts_[idx[t]].ids);
    }
    model.Forward(params, chunk, 0, nullptr, model.pooling(), emb.data() + start * c, nullptr);
  }
  return emb;
}

DistillStepLoss DistillObjective::AccumulateStep(const TrainModel<float>& model,
                                                 const float* params, int64_t step,
                                                 float grad_scale, int64_t grad_begin,
                                                 float* grads) const {
  const int64_t c = model.layout().hidden_size();
  const std::vector<int64_t> idx = BatchForStep(step);
  const int64_t n = static_cast<int64_t>(idx.size());
  const std::vector<float> emb = Embed(model, params, idx);
  DistillStepLoss out;
  for (int64_t i = 0; i < n; ++i) out.tokens += static_cast<int64_t>(texts_[idx[i]].ids.size());
  std::vector<float> d_emb(emb.size());
  out.loss = Loss(emb, idx, c, d_emb.data());
  for (float& x : d_emb) x *= grad_scale;
  std::vector<float> pooled;
  TrainModel<float>::Activations acts;
  for (int64_t start = 0; start < n; start += options_.chunk_size) {
    PackedBatch chunk;
    chunk.offsets = {0};
    for (int64_t t = start; t < std::min(n, start + options_.chunk_size); ++t) {
      AppendSequence(&chunk, texts_[idx[t]].ids);
    }
    pooled.resize(static_cast<size_t>(chunk.batch_size() * c));
    model.Forward(params, chunk, 0, nullptr, model.pooling(), pooled.data(), &acts);
    model.Backward(params, chunk, acts, d_emb.data() + start * c, grad_begin, grads);
  }
  return out;
}

double DistillObjective::Evaluate(const TrainModel<float>& model, const float* params,
                                  int64_t step) const {
  const int64_t c = model.layout().hidden_size();
  const std::vector<int64_t> idx = BatchForStep(step);
  const std::vector<float> emb = Embed(model, params, idx);
  std::vector<float> d_emb(emb.size());
  return Loss(emb, idx, c, d_emb.data());
}

double DistillObjective::Loss(const std::vector<float>& emb, const std::vector<int64_t>& idx,
                              int64_t c, float* d_emb) const {
  const int64_t n = static_cast<int64_t>(idx.size());
  std::vector<float> teacher(static_cast<size_t>(n * teacher_dim_));
  for (int64_t i = 0; i < n; ++i) {
    std::copy(texts_[idx[i]].vector.begin(), texts_[idx[i]].vector.end(),
              teacher.begin() + i * teacher_dim_);
  }
  double loss =
      SimilarityDistillLoss<float>(emb.data(), teacher.data(), n, c, teacher_dim_, d_emb);
  if (UsesDirectTerm(c)) {
    const float w = static_cast<float>(options_.direct_weight);
    std::vector<float> d_direct(emb.size());
    loss += options_.direct_weight *
            DirectDistillLoss<float>(emb.data(), teacher.data(), n, c, d_direct.data());
    for (size_t i = 0; i < d_direct.size(); ++i) d_emb[i] += w * d_direct[i];
  }
  return loss;
}

nlohmann::json DistillObjective::Identity() const {
  nlohmann::json id = {{"batch_size", options_.batch_size},
                       {"seed", options_.seed},
                       {"texts", num_texts()},
                       {"teacher_dim", teacher_dim_}};
  // Only when set, so checkpoints made before the term existed still resume.
  if (options_.direct_weight > 0) id["direct_weight"] = options_.direct_weight;
  return id;
}

}  // namespace neodb::encoder::train
