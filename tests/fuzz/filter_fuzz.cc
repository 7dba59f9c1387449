// Fuzzes db::ParseFilterJson, the one filter grammar (the CLI's --filter and
// the API's filter_json are this JSON; the API's Filter message is converted
// to the same AST). Oracle (filter.h): an accepted filter passes Validate()
// and can be matched against any metadata without crashing.
#include "db/filter.h"
#include "tests/fuzz/fuzz_util.h"

using neodb::db::Filter;
using neodb::db::Metadata;

namespace {

// Documents whose fields the seed filters name, with every value type.
const std::vector<Metadata>& Documents() {
  static const auto* docs = new std::vector<Metadata>{
      {},
      {{"year", int64_t{2021}}, {"tag", std::string("a")}, {"score", 0.5}, {"ok", true}},
      {{"year", 2019.5}, {"tag", std::string("")}, {"ok", false}, {"n", int64_t{-1}}},
      {{"year", std::string("2020")}, {"tag", int64_t{3}}, {"x", std::string("\xe2\x82\xac")}},
      // The rich types the rich seeds name: arrays, nested objects,
      // datetimes, geo points (and a dotted top-level key written before
      // keys lost their dots).
      {{"tags", neodb::db::Array{{std::string("a"), int64_t{1}, 2.5}}},
       {"author", neodb::db::Object{{{"name", std::string("Ada")}}}},
       {"published", neodb::db::DateTime{1714521600000000}},
       {"loc", neodb::db::GeoPoint{52.52, 13.405}},
       {"author.name", std::string("legacy")}},
  };
  return *docs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<Filter> filter = neodb::db::ParseFilterJson(neodb::fuzz::AsView(data, size));
  if (!filter.ok()) {
    FUZZ_CHECK(filter.status().code() == absl::StatusCode::kInvalidArgument);
    return 0;
  }
  FUZZ_CHECK(filter->Validate().ok());
  for (const Metadata& m : Documents()) {
    // Ne is exactly Not(Eq) (filter.h): a filter and its negation never agree.
    const bool match = filter->Matches(m);
    FUZZ_CHECK(Filter::Not(*filter).Matches(m) == !match);
  }
  (void)filter->DebugString();
  return 0;
}
