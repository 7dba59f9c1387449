#pragma once
// MetadataTable: internal id -> document id and metadata of every live
// document of a collection: what filters read during an index search, and
// what a search orders tied hits by (DocumentIds). A DerivedIndex that writes
// no snapshot: it is rebuilt from the store scan every startup does.
//
// A multi-tenant collection's table also keeps each tenant's ids (the
// tenant part of the stored id, tenant_scope.h): what a tenant's search scans
// and what its counts and selections read, so a tenant's query costs what its
// own documents cost, not the collection's.
//
// Besides the per-id map it keeps, per field, the ids holding each distinct
// value, so that a filter can be evaluated over the whole table once per
// query (FilterView::Dense) at the cost of one evaluation per distinct value
// instead of one metadata lookup per document.
//
// Thread-safety: safe for concurrent use. A FilterView holds a shared lock for
// its lifetime, so Apply waits for the searches that read the table.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "engine/derived_index.h"
#include "db/filter.h"
#include "index/id_bitmap.h"
#include "index/vector_index.h"

namespace neodb::engine {

class MetadataTable : public DerivedIndex {
 public:
  // multi_tenant: keep each tenant's ids (db::CollectionSpec::multi_tenant).
  explicit MetadataTable(bool multi_tenant = false) : multi_tenant_(multi_tenant) {}
  std::string_view kind() const override { return "metadata"; }
  absl::Status Apply(std::span<const Change> changes) override;
  absl::Status Save(Env*, const std::string&, uint64_t, const std::string&, int) const override {
    return absl::OkStatus();
  }
  absl::StatusOr<uint64_t> Load(const std::string&, const SnapshotKey&) override {
    return absl::NotFoundError("metadata is rebuilt from the store");
  }
  size_t size() const override;
  std::vector<int64_t> Ids() const override;

  // Dense() gives up (nullptr) on a filter naming a field that has had more
  // distinct values than this: it evaluates the filter once per distinct
  // value. Such a field's value sets are dropped and no longer kept (until the
  // table is rebuilt at startup), which bounds their memory: a field unique
  // to each document (a title) would otherwise copy every value.
  static constexpr size_t kMaxDenseDistinctValues = 4096;
  // Dense() gives up beyond this many bitmap bits per document (8 bytes
  // each): internal ids are global and grow with every overwrite, so the live
  // ids of a collection can be spread thinly over their range.
  static constexpr uint64_t kMaxBitsPerDocument = 64;

  // The document id of each of `ids`, in order; "" for an id that is not
  // live. Thread-safe. Not while this thread holds a FilterView of the table
  // (its lock is not reentrant): ask the view.
  std::vector<std::string> DocumentIds(std::span<const int64_t> ids) const;

  // The document ids of the live documents `filter` accepts (every one when
  // null), in byte order; what count, delete and update by filter select.
  // Non-empty `tenant`: that tenant's documents only (none unless the table
  // is multi-tenant). One filter evaluation per document. Thread-safe.
  std::vector<std::string> MatchingDocumentIds(const db::Filter* filter,
                                               std::string_view tenant = {}) const;
  // How many live documents `filter` accepts (every one when null), of
  // `tenant` when non-empty.
  uint64_t CountMatching(const db::Filter* filter, std::string_view tenant = {}) const;
  // Each tenant with live documents and how many, by name (multi-tenant
  // tables; empty otherwise).
  std::vector<std::pair<std::string, uint64_t>> TenantCounts() const;

  // An index::IdFilter over this table for `filter` (not owned; must outlive
  // the view; null: every document) within `tenant` (empty: every tenant).
  // Holds the table's shared lock while it lives, so the table does not
  // change under it. Thread-safe.
  class FilterView : public index::IdFilter {
   public:
    FilterView(const MetadataTable& table, const db::Filter& filter)
        : FilterView(table, &filter, {}) {}
    FilterView(const MetadataTable& table, const db::Filter* filter, std::string_view tenant);
    // A set lookup for the tenant, then one hash lookup and one filter
    // evaluation; a bit test once Dense() has built its bitmap (a hybrid
    // query's keyword leg asks about hundreds of ids after its vector leg
    // walked an HNSW graph with the bitmap).
    bool Allowed(int64_t id) const override {
      if (dense_ready_.load(std::memory_order_acquire)) return dense_->Test(id);
      if (tenant_ids_ != nullptr && !tenant_ids_->contains(id)) return false;
      if (filter_ == nullptr) return tenant_ids_ != nullptr || table_.docs_.contains(id);
      auto it = table_.docs_.find(id);
      return it != table_.docs_.end() && filter_->Matches(it->second.metadata);
    }
    // Built on the first call from the per-value id sets (and the tenant's
    // ids); nullptr past kMaxDenseDistinctValues or kMaxBitsPerDocument
    // (Allowed still works).
    const index::IdBitmap* Dense() const override;
    // A tenant's view: its ids, ascending (every allowed id is among them);
    // null for a view of the whole collection.
    const std::vector<int64_t>* Candidates() const override;
    // As MetadataTable::DocumentIds, under the lock this view holds.
    std::vector<std::string> DocumentIds(std::span<const int64_t> ids) const {
      return table_.DocumentIdsLocked(ids);
    }

   private:
    std::shared_lock<std::shared_mutex> lock_;
    const MetadataTable& table_;
    const db::Filter* filter_;
    const absl::flat_hash_set<int64_t>* tenant_ids_ = nullptr;
    mutable std::once_flag candidates_once_;
    mutable std::vector<int64_t> candidates_;  // set once, under candidates_once_
    mutable std::once_flag dense_once_;
    mutable std::optional<index::IdBitmap> dense_;  // set once, under dense_once_
    mutable std::atomic<bool> dense_ready_{false};  // dense_ is set (release/acquire)
  };

 private:
  struct Doc {
    std::string id;  // the document's (external) id
    db::Metadata metadata;
    size_t slot = 0;  // index in ids_
  };
  using ValueIds = std::map<db::Value, absl::flat_hash_set<int64_t>>;

  void AddLocked(int64_t id, const db::Document& doc);
  std::vector<std::string> DocumentIdsLocked(std::span<const int64_t> ids) const;
  void RemoveLocked(int64_t id);
  // The ids `filter` allows, as a bitmap over [first, last]; nullopt when a
  // field has more than kMaxDenseDistinctValues values. REQUIRES: mu_ held.
  std::optional<index::IdBitmap> EvaluateLocked(const db::Filter& filter, int64_t first,
                                                int64_t last) const;

  // The ids of `tenant` (null when it has none). REQUIRES: mu_ held.
  const absl::flat_hash_set<int64_t>* TenantIdsLocked(std::string_view tenant) const;
  // Calls fn(doc) for every live document of `tenant` (every one when
  // empty), in no order. REQUIRES: mu_ held.
  template <typename Fn>
  void ForEachDocLocked(std::string_view tenant, Fn fn) const {
    if (tenant.empty()) {
      for (const auto& [id, doc] : docs_) fn(doc);
    } else if (const auto* ids = TenantIdsLocked(tenant)) {
      for (int64_t id : *ids) fn(docs_.at(id));
    }
  }

  const bool multi_tenant_;
  mutable std::shared_mutex mu_;
  std::unordered_map<int64_t, Doc> docs_;
  // Multi-tenant tables: tenant -> its live ids.
  std::map<std::string, absl::flat_hash_set<int64_t>, std::less<>> tenant_ids_;
  std::vector<int64_t> ids_;                                // every live id, unordered
  std::map<std::string, ValueIds, std::less<>> value_ids_;  // field -> value -> ids
  std::set<std::string, std::less<>> too_many_values_;      // fields not in value_ids_
};

}  // namespace neodb::engine
