#include "engine/metadata_table.h"

#include <algorithm>
#include <cstdint>

#include "engine/tenant_scope.h"

namespace neodb::engine {

absl::Status MetadataTable::Apply(std::span<const Change> changes) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  for (const Change& c : changes) {
    if (c.removed != 0) RemoveLocked(c.removed);
    if (c.added) {
      const auto id = static_cast<int64_t>(c.added->internal_id);
      RemoveLocked(id);  // a replayed change may add an id twice
      AddLocked(id, *c.added);
    }
  }
  return absl::OkStatus();
}

void MetadataTable::AddLocked(int64_t id, const db::Document& doc) {
  docs_[id] = Doc{doc.id, doc.metadata, ids_.size()};
  ids_.push_back(id);
  if (multi_tenant_) {
    const std::string_view tenant = TenantOfStoredId(doc.id);
    auto t = tenant_ids_.find(tenant);
    if (t == tenant_ids_.end()) t = tenant_ids_.try_emplace(std::string(tenant)).first;
    t->second.insert(id);
  }
  for (const auto& [field, value] : doc.metadata) {
    if (too_many_values_.count(field)) continue;
    ValueIds& values = value_ids_[field];
    values[value].insert(id);
    if (values.size() > kMaxDenseDistinctValues) {
      value_ids_.erase(field);
      too_many_values_.insert(field);
    }
  }
}

void MetadataTable::RemoveLocked(int64_t id) {
  auto it = docs_.find(id);
  if (it == docs_.end()) return;
  if (multi_tenant_) {
    auto t = tenant_ids_.find(TenantOfStoredId(it->second.id));
    if (t != tenant_ids_.end()) {
      t->second.erase(id);
      if (t->second.empty()) tenant_ids_.erase(t);
    }
  }
  for (const auto& [field, value] : it->second.metadata) {
    auto f = value_ids_.find(field);
    if (f == value_ids_.end()) continue;  // in too_many_values_
    auto v = f->second.find(value);
    v->second.erase(id);
    if (v->second.empty()) f->second.erase(v);
    if (f->second.empty()) value_ids_.erase(f);
  }
  // Swap-remove from ids_.
  const size_t slot = it->second.slot;
  if (slot + 1 != ids_.size()) {
    ids_[slot] = ids_.back();
    docs_[ids_[slot]].slot = slot;
  }
  ids_.pop_back();
  docs_.erase(it);
}

std::vector<std::string> MetadataTable::DocumentIds(std::span<const int64_t> ids) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return DocumentIdsLocked(ids);
}

std::vector<std::string> MetadataTable::DocumentIdsLocked(std::span<const int64_t> ids) const {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (int64_t id : ids) {
    auto it = docs_.find(id);
    out.push_back(it == docs_.end() ? std::string() : it->second.id);
  }
  return out;
}

const absl::flat_hash_set<int64_t>* MetadataTable::TenantIdsLocked(std::string_view tenant) const {
  auto t = tenant_ids_.find(tenant);
  return t == tenant_ids_.end() ? nullptr : &t->second;
}

std::vector<std::string> MetadataTable::MatchingDocumentIds(const db::Filter* filter,
                                                            std::string_view tenant) const {
  std::vector<std::string> out;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    ForEachDocLocked(tenant, [&](const Doc& doc) {
      if (filter == nullptr || filter->Matches(doc.metadata)) out.push_back(doc.id);
    });
  }
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t MetadataTable::CountMatching(const db::Filter* filter, std::string_view tenant) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (filter == nullptr) {
    if (tenant.empty()) return docs_.size();
    const auto* ids = TenantIdsLocked(tenant);
    return ids == nullptr ? 0 : ids->size();
  }
  uint64_t n = 0;
  ForEachDocLocked(tenant, [&](const Doc& doc) { n += filter->Matches(doc.metadata) ? 1 : 0; });
  return n;
}

std::vector<std::pair<std::string, uint64_t>> MetadataTable::TenantCounts() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::pair<std::string, uint64_t>> out;
  out.reserve(tenant_ids_.size());
  for (const auto& [tenant, ids] : tenant_ids_) out.emplace_back(tenant, ids.size());
  return out;
}

size_t MetadataTable::size() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return docs_.size();
}

std::vector<int64_t> MetadataTable::Ids() const {
  std::vector<int64_t> ids;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    ids = ids_;
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::optional<index::IdBitmap> MetadataTable::EvaluateLocked(const db::Filter& filter,
                                                             int64_t first, int64_t last) const {
  using Op = db::Filter::Op;
  switch (filter.op()) {
    case Op::kAnd:
    case Op::kOr: {
      std::optional<index::IdBitmap> out;
      for (const db::Filter& child : filter.children()) {
        std::optional<index::IdBitmap> b = EvaluateLocked(child, first, last);
        if (!b) return std::nullopt;
        if (!out) {
          out = std::move(b);
        } else if (filter.op() == Op::kAnd) {
          out->And(*b);
        } else {
          out->Or(*b);
        }
      }
      return out;  // Validate() guarantees a child
    }
    case Op::kNot: {
      std::optional<index::IdBitmap> child = EvaluateLocked(filter.children()[0], first, last);
      if (!child) return std::nullopt;
      index::IdBitmap out(first, last);
      for (int64_t id : ids_) out.Set(id);
      out.AndNot(*child);
      return out;
    }
    default:
      break;
  }
  // A comparison reads one top-level field (a dotted path reads inside the
  // first name's object), so it has one answer per distinct value of that
  // field, and one for the documents lacking it: ask Matches itself (the
  // semantics stay db::Filter's) once for each.
  const std::string& path = filter.field();
  std::string_view top = path;
  if (const size_t dot = path.find('.'); dot != std::string::npos) {
    // db::FindPath prefers a top-level key equal to the whole path (written
    // before keys lost their dots): with such a key about, a document's
    // answer depends on two fields; leave it to Allowed.
    if (value_ids_.count(path) || too_many_values_.count(path)) return std::nullopt;
    top = top.substr(0, dot);
  }
  if (too_many_values_.count(top)) return std::nullopt;
  index::IdBitmap out(first, last);
  auto field = value_ids_.find(top);
  if (field != value_ids_.end()) {
    db::Metadata one;
    for (const auto& [value, ids] : field->second) {
      one.clear();
      one.emplace(std::string(top), value);
      if (!filter.Matches(one)) continue;
      for (int64_t id : ids) out.Set(id);
    }
  }
  if (filter.Matches(db::Metadata{})) {
    // Also every document lacking the field.
    index::IdBitmap has(first, last);
    if (field != value_ids_.end()) {
      for (const auto& [value, ids] : field->second) {
        for (int64_t id : ids) has.Set(id);
      }
    }
    for (int64_t id : ids_) {
      if (!has.Test(id)) out.Set(id);
    }
  }
  return out;
}

namespace {
// An empty set: the ids of a tenant that has no documents.
const absl::flat_hash_set<int64_t> kNoIds;
}  // namespace

MetadataTable::FilterView::FilterView(const MetadataTable& table, const db::Filter* filter,
                                      std::string_view tenant)
    : lock_(table.mu_), table_(table), filter_(filter) {
  if (!tenant.empty()) {
    tenant_ids_ = table.TenantIdsLocked(tenant);
    if (tenant_ids_ == nullptr) tenant_ids_ = &kNoIds;
  }
}

const std::vector<int64_t>* MetadataTable::FilterView::Candidates() const {
  if (tenant_ids_ == nullptr) return nullptr;
  std::call_once(candidates_once_, [this] {
    candidates_.assign(tenant_ids_->begin(), tenant_ids_->end());
    std::sort(candidates_.begin(), candidates_.end());
  });
  return &candidates_;
}

const index::IdBitmap* MetadataTable::FilterView::Dense() const {
  std::call_once(dense_once_, [this] {
    const std::vector<int64_t>& ids = table_.ids_;
    if (ids.empty()) {
      dense_.emplace();
      return;
    }
    const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
    // Internal ids are positive (db::Store counts from 1); anything else
    // keeps the per-id path.
    if (*lo < 0) return;
    const uint64_t bits = static_cast<uint64_t>(*hi - *lo) + 1;
    if (bits > kMaxBitsPerDocument * ids.size()) return;
    std::optional<index::IdBitmap> tenant;
    if (tenant_ids_ != nullptr) {
      tenant.emplace(*lo, *hi);
      for (int64_t id : *tenant_ids_) tenant->Set(id);
    }
    if (filter_ == nullptr) {
      if (!tenant) return;  // a view of everything needs no bitmap
      dense_ = std::move(tenant);
    } else {
      dense_ = table_.EvaluateLocked(*filter_, *lo, *hi);
      if (dense_ && tenant) dense_->And(*tenant);
    }
    if (dense_) dense_ready_.store(true, std::memory_order_release);
  });
  return dense_ ? &*dense_ : nullptr;
}

}  // namespace neodb::engine
