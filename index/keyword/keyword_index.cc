#include "index/keyword/keyword_index.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace neodb::keyword {
namespace {

// Best first: higher score, then lower id (deterministic ties).
bool Better(const KeywordHit& a, const KeywordHit& b) {
  return a.score != b.score ? a.score > b.score : a.id < b.id;
}

template <typename T>
uint64_t VectorBytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}

}  // namespace

KeywordIndex::KeywordIndex(const KeywordOptions& options)
    : options_(options), analyzer_(options.analyzer) {}

absl::StatusOr<std::unique_ptr<KeywordIndex>> KeywordIndex::Create(const KeywordOptions& options) {
  if (!std::isfinite(options.k1) || options.k1 < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("BM25 k1 must be finite and >= 0, got ", options.k1));
  }
  if (!(options.b >= 0 && options.b <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("BM25 b must be in [0, 1], got ", options.b));
  }
  return std::unique_ptr<KeywordIndex>(new KeywordIndex(options));
}

absl::StatusOr<KeywordIndex::DocTerms> KeywordIndex::AnalyzeDocument(
    std::span<const FieldText> fields) const {
  absl::flat_hash_map<std::string, float> tf;
  DocTerms doc;
  for (const FieldText& field : fields) {
    if (!std::isfinite(field.weight) || field.weight <= 0 || field.weight > kMaxFieldWeight) {
      return absl::InvalidArgumentError(
          absl::StrCat("field weight must be in (0, ", kMaxFieldWeight, "], got ", field.weight));
    }
    std::vector<Token> tokens = analyzer_.Analyze(field.text);
    doc.length += static_cast<double>(field.weight) * static_cast<double>(CountedLength(tokens));
    for (Token& t : tokens) tf[std::move(t.term)] += field.weight;
  }
  doc.terms.reserve(tf.size());
  for (auto& [term, f] : tf) doc.terms.emplace_back(term, f);
  return doc;
}

absl::Status KeywordIndex::Upsert(uint64_t id, std::span<const FieldText> fields) {
  ASSIGN_OR_RETURN(DocTerms doc, AnalyzeDocument(fields));
  absl::MutexLock lock(&mu_);
  RemoveLocked(id);
  return AddLocked(id, doc);
}

absl::Status KeywordIndex::Upsert(uint64_t id, std::string_view text) {
  FieldText field{text, 1.0f};
  return Upsert(id, std::span<const FieldText>(&field, 1));
}

absl::Status KeywordIndex::Upsert(uint64_t id, std::string_view text,
                                  std::optional<std::string_view> title, float title_weight) {
  FieldText fields[2] = {{text, 1.0f}, {}};
  size_t n = 1;
  if (title.has_value()) fields[n++] = {*title, title_weight};
  return Upsert(id, std::span<const FieldText>(fields, n));
}

uint32_t KeywordIndex::TermIdLocked(const std::string& term) {
  auto [it, inserted] = term_ids_.try_emplace(term, 0);
  if (!inserted) return it->second;
  uint32_t id;
  if (!free_terms_.empty()) {
    id = free_terms_.back();
    free_terms_.pop_back();
    term_text_[id] = term;
  } else {
    id = static_cast<uint32_t>(term_text_.size());
    term_text_.push_back(term);
    postings_.emplace_back();
  }
  it->second = id;
  return id;
}

absl::Status KeywordIndex::AddLocked(uint64_t id, const DocTerms& doc) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    if (id_of_slot_.size() >= std::numeric_limits<uint32_t>::max()) {
      return absl::ResourceExhaustedError("keyword index is full (2^32 - 1 documents)");
    }
    slot = static_cast<uint32_t>(id_of_slot_.size());
    id_of_slot_.push_back(0);
    length_.push_back(0);
    forward_.emplace_back();
  }
  slot_of_[id] = slot;
  id_of_slot_[slot] = id;
  length_[slot] = static_cast<float>(doc.length);
  total_length_ += length_[slot];
  std::vector<TermFreq>& forward = forward_[slot];
  forward.clear();
  forward.reserve(doc.terms.size());
  for (const auto& [term, tf] : doc.terms) {
    const uint32_t term_id = TermIdLocked(term);
    forward.push_back({term_id, tf});
    std::vector<Posting>& list = postings_[term_id];
    // New slots are the largest, so bulk ingest appends; a reused slot lands
    // in the middle (one memmove of the list's tail).
    auto pos = std::lower_bound(list.begin(), list.end(), slot,
                                [](const Posting& p, uint32_t s) { return p.slot < s; });
    list.insert(pos, Posting{slot, tf});
  }
  std::sort(forward.begin(), forward.end(),
            [](const TermFreq& a, const TermFreq& b) { return a.term < b.term; });
  postings_count_ += forward.size();
  return absl::OkStatus();
}

bool KeywordIndex::Remove(uint64_t id) {
  absl::MutexLock lock(&mu_);
  return RemoveLocked(id);
}

bool KeywordIndex::RemoveLocked(uint64_t id) {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return false;
  const uint32_t slot = it->second;
  slot_of_.erase(it);
  for (const TermFreq& tf : forward_[slot]) {
    std::vector<Posting>& list = postings_[tf.term];
    auto pos = std::lower_bound(list.begin(), list.end(), slot,
                                [](const Posting& p, uint32_t s) { return p.slot < s; });
    NEODB_CHECK(pos != list.end() && pos->slot == slot);
    list.erase(pos);
    if (list.empty()) {
      // Free the term so that the dictionary holds live terms only.
      term_ids_.erase(term_text_[tf.term]);
      std::string().swap(term_text_[tf.term]);
      std::vector<Posting>().swap(list);
      free_terms_.push_back(tf.term);
    }
  }
  postings_count_ -= forward_[slot].size();
  std::vector<TermFreq>().swap(forward_[slot]);
  total_length_ -= length_[slot];
  length_[slot] = 0;
  free_slots_.push_back(slot);
  if (slot_of_.empty()) total_length_ = 0;  // no drift survives an empty index
  return true;
}

absl::StatusOr<std::vector<KeywordHit>> KeywordIndex::Search(std::string_view query, int k,
                                                             const IdFilter& allow,
                                                             const CorpusStats* corpus) const {
  return Rank(query, k, allow, corpus, nullptr);
}

absl::StatusOr<std::vector<KeywordHit>> KeywordIndex::SearchAmong(
    std::string_view query, int k, std::span<const int64_t> ids, const IdFilter& allow,
    const CorpusStats* corpus) const {
  return Rank(query, k, allow, corpus, &ids);
}

absl::StatusOr<std::vector<KeywordHit>> KeywordIndex::Rank(
    std::string_view query, int k, const IdFilter& allow, const CorpusStats* corpus,
    const std::span<const int64_t>* among) const {
  if (k < 1 || k > kMaxSearchK) {
    return absl::InvalidArgumentError(absl::StrCat("k must be in [1, ", kMaxSearchK, "], got ", k));
  }
  // Query term frequencies, analysed outside the lock.
  absl::flat_hash_map<std::string, int> qtf;
  for (Token& t : analyzer_.Analyze(query)) ++qtf[std::move(t.term)];

  absl::ReaderMutexLock lock(&mu_);
  if (slot_of_.empty() || qtf.empty()) return std::vector<KeywordHit>{};
  const bool global = corpus != nullptr && corpus->documents > 0 && corpus->total_length > 0 &&
                      std::isfinite(corpus->total_length);
  const double n = static_cast<double>(global ? corpus->documents : slot_of_.size());
  const double total = global ? corpus->total_length : total_length_;
  const double avg = total > 0 ? total / n : 1.0;
  const double k1 = options_.k1;
  const double b = options_.b;

  // Each query term's weight: its count in the query, its idf, (k1 + 1).
  absl::flat_hash_map<uint32_t, double> weight_of;
  for (const auto& [term, count] : qtf) {
    auto it = term_ids_.find(term);
    if (it == term_ids_.end()) continue;
    double df = static_cast<double>(postings_[it->second].size());
    if (global) {
      auto g = corpus->document_frequency.find(term);
      // Never below this index's own count (a bad corpus must not make idf
      // undefined: n - df + 0.5 stays above 0 only while df <= n), unless
      // the corpus is a part of this index (a tenant's documents).
      if (g != corpus->document_frequency.end()) {
        const double given = static_cast<double>(g->second);
        df = std::min(n, corpus->part_of_index ? given : std::max(df, given));
      }
    }
    weight_of[it->second] = count * std::log(1.0 + (n - df + 0.5) / (df + 0.5)) * (k1 + 1.0);
  }
  auto term_score = [&](double weight, double tf, uint32_t slot) {
    const double norm = k1 * (1.0 - b + b * static_cast<double>(length_[slot]) / avg);
    return weight * tf / (tf + norm);
  };

  // Scores by slot: over every posting of the query's terms, or, given
  // `among` (a tenant's few documents), over those documents' own terms
  // (forward_), so the cost is theirs and not the collection's.
  std::vector<std::pair<uint32_t, double>> scored;
  if (among != nullptr) {
    for (int64_t id : *among) {
      auto it = slot_of_.find(static_cast<uint64_t>(id));
      if (it == slot_of_.end()) continue;
      double sum = 0;
      for (const TermFreq& t : forward_[it->second]) {
        auto w = weight_of.find(t.term);
        if (w != weight_of.end()) sum += term_score(w->second, t.tf, it->second);
      }
      if (sum != 0.0) scored.emplace_back(it->second, sum);
    }
  } else {
    std::vector<double> acc(id_of_slot_.size(), 0.0);
    std::vector<uint32_t> touched;
    for (const auto& [term, weight] : weight_of) {
      for (const Posting& p : postings_[term]) {
        if (acc[p.slot] == 0.0) touched.push_back(p.slot);
        acc[p.slot] += term_score(weight, p.tf, p.slot);
      }
    }
    scored.reserve(touched.size());
    for (uint32_t slot : touched) scored.emplace_back(slot, acc[slot]);
  }

  // Keep the best k allowed hits in a heap whose top is the worst kept hit.
  // The filter is asked only about a hit that would enter the heap: a common
  // query word matches most of the collection, and the filter (a metadata
  // lookup) would otherwise cost more than the scoring.
  std::vector<KeywordHit> heap;
  heap.reserve(std::min<size_t>(scored.size(), static_cast<size_t>(k)));
  for (const auto& [slot, score] : scored) {
    KeywordHit hit{id_of_slot_[slot], static_cast<float>(score)};
    const bool full = heap.size() == static_cast<size_t>(k);
    if (full && !Better(hit, heap.front())) continue;
    if (allow && !allow(hit.id)) continue;
    if (!full) {
      heap.push_back(hit);
      std::push_heap(heap.begin(), heap.end(), Better);
    } else if (Better(hit, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), Better);
      heap.back() = hit;
      std::push_heap(heap.begin(), heap.end(), Better);
    }
  }
  std::sort_heap(heap.begin(), heap.end(), Better);
  return heap;
}

CorpusStats KeywordIndex::TermStatistics(std::string_view query, const IdFilter& within) const {
  std::vector<std::string> terms;
  for (Token& t : analyzer_.Analyze(query)) terms.push_back(std::move(t.term));
  CorpusStats s;
  absl::ReaderMutexLock lock(&mu_);
  if (!within) {
    s.documents = slot_of_.size();
    s.total_length = total_length_;
  } else {
    for (const auto& [id, slot] : slot_of_) {
      if (!within(id)) continue;
      ++s.documents;
      s.total_length += length_[slot];
    }
  }
  for (const std::string& term : terms) {
    if (s.document_frequency.contains(term)) continue;
    uint64_t df = 0;
    if (auto it = term_ids_.find(term); it != term_ids_.end()) {
      const std::vector<Posting>& list = postings_[it->second];
      if (!within) {
        df = list.size();
      } else {
        for (const Posting& p : list) df += within(id_of_slot_[p.slot]) ? 1 : 0;
      }
    }
    s.document_frequency[term] = df;
  }
  return s;
}

CorpusStats KeywordIndex::TermStatistics(std::string_view query,
                                         std::span<const int64_t> ids) const {
  std::vector<std::string> terms;
  for (Token& t : analyzer_.Analyze(query)) terms.push_back(std::move(t.term));
  CorpusStats s;
  s.part_of_index = true;
  absl::ReaderMutexLock lock(&mu_);
  // The query's terms by id; a term the index lacks has df 0.
  for (const std::string& term : terms) s.document_frequency.try_emplace(term, 0);
  // Pointers into document_frequency: taken after its last insert, so stable.
  absl::flat_hash_map<uint32_t, uint64_t*> df_of;
  for (auto& [term, df] : s.document_frequency) {
    if (auto it = term_ids_.find(term); it != term_ids_.end()) df_of[it->second] = &df;
  }
  // Counted from the listed documents' own terms (forward_), not from the
  // terms' postings over the whole index: a tenant's cost, not the index's.
  for (int64_t id : ids) {
    auto it = slot_of_.find(static_cast<uint64_t>(id));
    if (it == slot_of_.end()) continue;
    ++s.documents;
    s.total_length += length_[it->second];
    for (const TermFreq& t : forward_[it->second]) {
      if (auto d = df_of.find(t.term); d != df_of.end()) ++*d->second;
    }
  }
  return s;
}

KeywordStats KeywordIndex::Stats() const {
  absl::ReaderMutexLock lock(&mu_);
  KeywordStats s;
  s.documents = slot_of_.size();
  s.terms = term_ids_.size();
  s.postings = postings_count_;
  s.average_length = s.documents ? total_length_ / static_cast<double>(s.documents) : 0;
  uint64_t bytes = VectorBytes(term_text_) + VectorBytes(postings_) + VectorBytes(free_terms_) +
                   VectorBytes(id_of_slot_) + VectorBytes(length_) + VectorBytes(forward_) +
                   VectorBytes(free_slots_);
  for (const std::string& t : term_text_) bytes += t.capacity() > 15 ? t.capacity() + 1 : 0;
  for (const auto& list : postings_) bytes += VectorBytes(list);
  for (const auto& list : forward_) bytes += VectorBytes(list);
  // Hash tables: a control byte and a slot per bucket; term keys are strings.
  bytes += term_ids_.capacity() * (1 + sizeof(std::pair<std::string, uint32_t>));
  for (const auto& [term, id] : term_ids_) bytes += term.capacity() > 15 ? term.capacity() + 1 : 0;
  bytes += slot_of_.capacity() * (1 + sizeof(std::pair<uint64_t, uint32_t>));
  s.memory_bytes = bytes;
  return s;
}

size_t KeywordIndex::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return slot_of_.size();
}

bool KeywordIndex::Contains(uint64_t id) const {
  absl::ReaderMutexLock lock(&mu_);
  return slot_of_.contains(id);
}

std::vector<uint64_t> KeywordIndex::Ids() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<uint64_t> ids;
  ids.reserve(slot_of_.size());
  for (const auto& [id, slot] : slot_of_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<std::string> KeywordIndex::Terms() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<std::string> terms;
  terms.reserve(term_ids_.size());
  for (const auto& [term, id] : term_ids_) terms.push_back(term);
  std::sort(terms.begin(), terms.end());
  return terms;
}

TermPostings KeywordIndex::Postings(std::string_view term) const {
  absl::ReaderMutexLock lock(&mu_);
  TermPostings out;
  auto it = term_ids_.find(std::string(term));
  if (it == term_ids_.end()) return out;
  for (const Posting& p : postings_[it->second]) out.emplace_back(id_of_slot_[p.slot], p.tf);
  std::sort(out.begin(), out.end());
  return out;
}

double KeywordIndex::DocumentLength(uint64_t id) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = slot_of_.find(id);
  return it == slot_of_.end() ? -1.0 : static_cast<double>(length_[it->second]);
}

}  // namespace neodb::keyword
