#include "engine/model_settings.h"

#include "absl/strings/str_cat.h"
#include "engine/embed_settings.h"
#include "index/keyword/fusion.h"

namespace neodb::engine {

absl::StatusOr<ModelSettings> ModelSettingsOf(const encoder::ModelDefaults& d) {
  ModelSettings m;
  m.pooling = std::string(PoolingName(d.pooling));
  m.query_instruction = d.query_prefix;
  m.document_instruction = d.document_prefix;
  keyword::FusionMethod method = keyword::FusionOptions{}.method;
  if (!d.hybrid_fusion.empty()) {
    auto parsed = keyword::ParseFusionMethod(d.hybrid_fusion);
    if (!parsed.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the model's neodb_model.json names hybrid fusion \"", d.hybrid_fusion,
          "\" (expected adaptive, weighted or rrf); name a fusion for the collection"));
    }
    method = *parsed;
    m.fusion_alpha = d.hybrid_alpha;
  }
  m.fusion = std::string(keyword::FusionMethodName(method));
  return m;
}

bool AdoptModelSettings(const ModelSettings& from, const ModelSettings& to,
                        db::CollectionSpec* spec) {
  bool changed = false;
  if (spec->pooling == from.pooling && spec->pooling != to.pooling) {
    spec->pooling = to.pooling;
    changed = true;
  }
  if (spec->query_instruction == from.query_instruction &&
      spec->document_instruction == from.document_instruction &&
      (spec->query_instruction != to.query_instruction ||
       spec->document_instruction != to.document_instruction)) {
    spec->query_instruction = to.query_instruction;
    spec->document_instruction = to.document_instruction;
    changed = true;
  }
  // The alpha counts only for weighted fusion; adaptive and rrf match by name.
  const bool at_from = spec->fusion == from.fusion &&
                       (from.fusion != "weighted" || spec->fusion_alpha == from.fusion_alpha);
  if (at_from && (spec->fusion != to.fusion ||
                  (to.fusion == "weighted" && spec->fusion_alpha != to.fusion_alpha))) {
    spec->fusion = to.fusion;
    spec->fusion_alpha = to.fusion_alpha;
    changed = true;
  }
  return changed;
}

}  // namespace neodb::engine
