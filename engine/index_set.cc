#include "engine/index_set.h"

#include "common/status_macros.h"
#include "index/index_factory.h"

namespace neodb::engine {

absl::StatusOr<std::unique_ptr<IndexSet>> IndexSet::Make(const CollectionSettings& settings) {
  std::unique_ptr<IndexSet> s(new IndexSet());
  ASSIGN_OR_RETURN(std::unique_ptr<index::VectorIndex> v,
                   index::MakeIndex(settings.spec.index_spec,
                                    static_cast<int>(settings.spec.dimension), settings.metric));
  s->vector_ = std::make_unique<VectorPart>(std::move(v));
  s->metadata_ = std::make_unique<MetadataTable>(settings.spec.multi_tenant);
  ASSIGN_OR_RETURN(s->keyword_, KeywordPart::Make(settings));
  s->all_ = {s->vector_.get(), s->metadata_.get(), s->keyword_.get()};
  return s;
}

absl::Status IndexSet::Apply(std::span<const Change> changes) {
  for (DerivedIndex* d : all_) RETURN_IF_ERROR(d->Apply(changes));
  return absl::OkStatus();
}

bool IndexSet::NeedsRebuild() const {
  for (const DerivedIndex* d : all_) {
    if (d->NeedsRebuild()) return true;
  }
  return false;
}

}  // namespace neodb::engine
