#include "engine/vector_verify.h"

#include <algorithm>
#include <cmath>

#include "index/exact_search.h"

namespace neodb::engine {
namespace {

void Note(const std::string& id, uint64_t* count, std::vector<std::string>* ids) {
  ++*count;
  if (ids->size() < kVerifyMaxListedIds) ids->push_back(id);
}

double Cosine(std::span<const float> a, std::span<const float> b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += double{a[i]} * b[i];
    na += double{a[i]} * a[i];
    nb += double{b[i]} * b[i];
  }
  // Two zero vectors are the same vector; one zero vector matches nothing.
  if (na == 0 || nb == 0) return na == nb ? 1.0 : 0.0;
  return dot / std::sqrt(na * nb);
}

}  // namespace

// ε = 1 - min cosine, per precision. What differs between the run that
// stored a vector and this one is the order of floating-point sums (batch
// composition, packing, thread split, SIMD width, another machine after a
// restore, CPU against CUDA), and for the low precisions possibly the
// precision itself: a CPU without the instructions runs F32 and says so.
//  - F32: our CPU forward pass matches Hugging Face's PyTorch, an
//    independent implementation with its own sum orders, at cosine
//    1.000000000 (README, "Models"); the errors are ~1e-7 relative per
//    element. ε = 1e-4 leaves three orders of margin for CUDA's kernels and
//    stays far below what another text or a corrupted vector gives.
//  - BF16 / INT8: each run is within cosine 0.999 (BF16) / 0.99 (INT8) of
//    F32 (README, "CPU kernels and precision"). Two runs, each within angle
//    θ = acos(c) of F32, are within 2θ of each other: cos 2θ = 2c² - 1, which
//    is 0.996 for BF16 and 0.9602 for INT8; ε = 4e-3 and 4e-2.
double ReembedMinCosine(encoder::Precision precision) {
  switch (precision) {
    case encoder::Precision::kBf16:
      return 1.0 - 4e-3;
    case encoder::Precision::kInt8:
      return 1.0 - 4e-2;
    case encoder::Precision::kF32:
      break;
  }
  return 1.0 - 1e-4;
}

uint64_t SampleHash(std::string_view id) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : id) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

void VerifySample::Offer(const db::Document& d) {
  if (n_ == 0) return;
  const uint64_t h = SampleHash(d.id);
  if (heap_.size() < n_) {
    docs_.push_back(d);
    heap_.push({h, docs_.size() - 1});
    return;
  }
  if (h >= heap_.top().first) return;
  const size_t slot = heap_.top().second;
  heap_.pop();
  docs_[slot] = d;
  heap_.push({h, slot});
}

std::vector<db::Document> VerifySample::Take() {
  heap_ = {};
  return std::move(docs_);
}

void CompareWithIndex(const index::VectorIndex& index, const db::Document& d,
                      VectorVerifyReport* r) {
  const int dim = index.dimension();
  std::vector<float> held(dim);
  absl::Status s = index.Reconstruct(static_cast<int64_t>(d.internal_id), held);
  if (absl::IsNotFound(s)) return;  // counted as missing_from_index
  if (!s.ok()) {
    ++r->index_unchecked;
    if (r->index_unchecked_reason.empty()) r->index_unchecked_reason = std::string(s.message());
    return;
  }
  ++r->index_compared;
  if (d.vector.size() != static_cast<size_t>(dim)) {
    Note(d.id, &r->index_mismatches, &r->index_mismatch_ids);
    return;
  }
  std::vector<float> stored = d.vector;
  if (index.metric() == index::Metric::kCosine) index::NormalizeRows(stored.data(), 1, dim);
  // The index normalised the same bits with the same function, and its
  // snapshots keep floats bit for bit, so the two are equal; the slack only
  // spares a false alarm should a kernel's rounding ever change.
  for (int i = 0; i < dim; ++i) {
    if (std::fabs(stored[i] - held[i]) > 1e-6f * (1.0f + std::fabs(stored[i]))) {
      Note(d.id, &r->index_mismatches, &r->index_mismatch_ids);
      return;
    }
  }
}

void CompareReembedded(std::span<const db::Document> docs,
                       std::span<const encoder::Embedding> fresh, VectorVerifyReport* r) {
  for (size_t i = 0; i < docs.size() && i < fresh.size(); ++i) {
    ++r->reembed_checked;
    const auto& stored = docs[i].vector;
    const auto& now = fresh[i].vector;
    const double cos = stored.size() == now.size() ? Cosine(stored, now) : 0.0;
    r->reembed_lowest_cosine = std::min(r->reembed_lowest_cosine, cos);
    if (cos < r->reembed_min_cosine) {
      Note(docs[i].id, &r->reembed_mismatches, &r->reembed_mismatch_ids);
    }
  }
}

}  // namespace neodb::engine
