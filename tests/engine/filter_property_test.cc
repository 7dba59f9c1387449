// Property test of the filter grammar on rich metadata, through the engine:
// random documents (every value type: scalars, arrays, nested objects,
// datetimes, geo points, missing fields, a field holding a type it usually
// does not) and thousands of random filters (every op, nested and/or/not,
// mismatched operand types) written as JSON. Each filter is parsed by
// db::ParseFilterJson and run through engine::Database::NearVector (a Flat
// and an HNSW collection, k past the collection's size: the metadata table's
// per-id and bitmap paths), and through a MetadataTable's FilterView (Allowed
// and the Dense bitmap). Every answer must equal the brute-force evaluation
// below, written from filter.h's contract without db::Filter.
// Seeds are fixed and printed; a failure names the seed and the filter.
#include <cmath>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "db/filter.h"
#include "db/metadata_types.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "engine/metadata_table.h"
#include "gtest/gtest.h"
#include "tests/engine/engine_test_util.h"

namespace neodb::engine {
namespace {

using db::Array;
using db::DateTime;
using db::GeoPoint;
using db::Metadata;
using db::Object;
using db::Value;
using Json = nlohmann::json;

constexpr int kDim = 4;
constexpr int64_t kHour = 3600LL * 1000000;
constexpr int64_t kBaseTime = 1714521600000000;  // 2024-05-01T00:00:00Z

// ---- Generators. Small domains, so that equality and ranges often hit.
class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  uint64_t Next(uint64_t n) { return rng_() % n; }
  bool Chance(int percent) { return static_cast<int>(Next(100)) < percent; }
  double Uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng_);
  }

  Value Scalar() {
    switch (Next(4)) {
      case 0:
        return std::string(1, "abc"[Next(3)]) + (Chance(20) ? "x" : "");
      case 1:
        return static_cast<int64_t>(Next(7)) - 2;
      case 2:
        return static_cast<double>(Next(9)) / 2 - 1;  // -1, -0.5, ..., 3 (ints too)
      default:
        return Chance(50);
    }
  }
  Value Time() { return DateTime{kBaseTime + (static_cast<int64_t>(Next(7)) - 3) * kHour}; }
  GeoPoint Point() {
    if (Chance(25)) return {Uniform(-5, 5), Chance(50) ? Uniform(175, 180) : Uniform(-180, -175)};
    return {Uniform(-10, 10), Uniform(-10, 10)};
  }
  Value ScalarArray() {
    Array a;
    const uint64_t n = Next(5);
    for (uint64_t i = 0; i < n; ++i) a.items.push_back(Chance(70) ? StringOrInt() : Scalar());
    return a;
  }
  Value StringOrInt() {
    if (Chance(50)) return std::string(1, "abc"[Next(3)]);
    return static_cast<int64_t>(Next(5));
  }
  Value AnyValue(int depth) {
    switch (Next(depth > 0 ? 5 : 4)) {
      case 0:
        return Scalar();
      case 1:
        return ScalarArray();
      case 2:
        return Time();
      case 3:
        return Point();
      default:
        return NestedObject(depth - 1);
    }
  }
  Value NestedObject(int depth) {
    Object o;
    if (Chance(75)) o.fields["x"] = Chance(80) ? StringOrInt() : AnyValue(0);
    if (Chance(60)) o.fields["t"] = Time();
    if (depth > 0 && Chance(60)) {
      Object y;
      if (Chance(80)) y.fields["z"] = Chance(50) ? ScalarArray() : Scalar();
      o.fields["y"] = y;
    }
    return o;
  }

  // Each field usually holds its own type, sometimes another (mismatch),
  // and is missing a quarter of the time.
  Metadata Document() {
    Metadata m;
    auto put = [&](const char* name, Value usual) {
      if (Chance(25)) return;
      m[name] = Chance(10) ? AnyValue(1) : std::move(usual);
    };
    put("s", std::string(1, "abc"[Next(3)]));
    put("i", static_cast<int64_t>(Next(7)) - 2);
    put("d", Scalar());
    put("b", Chance(50));
    put("tags", ScalarArray());
    put("t", Time());
    put("g", Point());
    put("o", NestedObject(1));
    return m;
  }

 private:
  std::mt19937_64 rng_;
};

const char* const kFields[] = {"s", "i", "d", "b", "tags", "t", "g", "o",
                               "o.x", "o.t", "o.y.z", "o.y", "o.nope", "s.x", "nope"};

// ---- The filter the test draws: a tree it renders as JSON and evaluates
// itself.
struct Node {
  std::string op;  // and or not | eq ne lt lte gt gte in contains_any contains_all exists
                   // geo_radius geo_bbox
  std::string field;
  std::vector<Value> values;
  bool exists = true;
  GeoPoint a, b;  // center | top_left, bottom_right
  double meters = 0;
  std::vector<Node> kids;
};

Value Operand(Gen& g) {
  switch (g.Next(6)) {
    case 0:
    case 1:
      return g.StringOrInt();
    case 2:
    case 3:
      return g.Scalar();
    default:
      return g.Time();
  }
}

Node RandomLeaf(Gen& g) {
  static const char* const kOps[] = {"eq", "ne", "lt", "lte", "gt", "gte", "in",
                                     "contains_any", "contains_all", "exists", "geo_radius",
                                     "geo_bbox"};
  Node n;
  n.op = kOps[g.Next(std::size(kOps))];
  n.field = kFields[g.Next(std::size(kFields))];
  if (n.op == "exists") {
    n.exists = g.Chance(50);
  } else if (n.op == "geo_radius") {
    n.a = g.Point();
    n.meters = g.Chance(50) ? g.Uniform(1e3, 5e5) : g.Uniform(5e5, 3e6);
  } else if (n.op == "geo_bbox") {
    GeoPoint p = g.Point(), q = g.Point();
    n.a = {std::max(p.lat, q.lat), p.lon};
    n.b = {std::min(p.lat, q.lat), q.lon};  // top_left.lon > bottom_right.lon: crosses 180
  } else if (n.op == "in" || n.op == "contains_any" || n.op == "contains_all") {
    // One type per list (int and double may mix), as Validate requires.
    const Value first = Operand(g);
    n.values.push_back(first);
    const uint64_t more = g.Next(3);
    for (uint64_t i = 0; i < more; ++i) {
      Value v = Operand(g);
      const bool numeric = [](const Value& x) { return x.index() == 1 || x.index() == 2; }(v);
      const bool first_numeric = first.index() == 1 || first.index() == 2;
      if (v.index() == first.index() || (numeric && first_numeric)) n.values.push_back(v);
    }
  } else {
    Value v = Operand(g);
    if (std::holds_alternative<bool>(v) && n.op != "eq" && n.op != "ne") n.op = "eq";
    n.values.push_back(v);
  }
  return n;
}

Node RandomNode(Gen& g, int depth) {
  if (depth == 0 || g.Chance(35)) return RandomLeaf(g);
  Node n;
  switch (g.Next(3)) {
    case 0:
      n.op = "not";
      n.kids.push_back(RandomNode(g, depth - 1));
      break;
    case 1:
      n.op = "and";
      for (uint64_t i = 0, k = 1 + g.Next(3); i < k; ++i) n.kids.push_back(RandomNode(g, depth - 1));
      break;
    default:
      n.op = "or";
      for (uint64_t i = 0, k = 1 + g.Next(3); i < k; ++i) n.kids.push_back(RandomNode(g, depth - 1));
      break;
  }
  return n;
}

Json ValueJson(const Value& v) {
  switch (v.index()) {
    case 0:
      return std::get<std::string>(v);
    case 1:
      return std::get<int64_t>(v);
    case 2:
      return std::get<double>(v);
    case 3:
      return std::get<bool>(v);
    default:
      return Json{{"datetime", db::FormatDateTime(std::get<DateTime>(v))}};
  }
}

Json ToJson(const Node& n) {
  if (n.op == "and" || n.op == "or") {
    Json list = Json::array();
    for (const Node& k : n.kids) list.push_back(ToJson(k));
    return Json{{n.op, list}};
  }
  if (n.op == "not") return Json{{"not", ToJson(n.kids[0])}};
  Json j{{"field", n.field}};
  if (n.op == "exists") {
    j["exists"] = n.exists;
  } else if (n.op == "geo_radius") {
    j["geo_radius"] = Json{{"lat", n.a.lat}, {"lon", n.a.lon}, {"meters", n.meters}};
  } else if (n.op == "geo_bbox") {
    j["geo_bbox"] = Json{{"top_left", {{"lat", n.a.lat}, {"lon", n.a.lon}}},
                         {"bottom_right", {{"lat", n.b.lat}, {"lon", n.b.lon}}}};
  } else if (n.op == "in" || n.op == "contains_any" || n.op == "contains_all") {
    Json list = Json::array();
    for (const Value& v : n.values) list.push_back(ValueJson(v));
    j[n.op] = list;
  } else {
    j[n.op] = ValueJson(n.values[0]);
  }
  return j;
}

// ---- The brute-force oracle (filter.h's contract, from scratch).
const Value* Resolve(const Metadata& m, const std::string& path) {
  if (m.count(path)) return &m.at(path);
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1) {
    parts.push_back(path.substr(start, dot - start));
  }
  parts.push_back(path.substr(start));
  const Metadata* level = &m;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!level->count(parts[i])) return nullptr;
    const Value& v = level->at(parts[i]);
    if (i + 1 == parts.size()) return &v;
    if (!std::holds_alternative<Object>(v)) return nullptr;
    level = &std::get<Object>(v).fields;
  }
  return nullptr;
}

std::vector<Value> Elements(const Value& v) {
  if (const auto* a = std::get_if<Array>(&v)) return a->items;
  return {v};
}

// -1/0/1, or nullopt for incomparable types.
std::optional<int> Order(const Value& x, const Value& y) {
  auto num = [](const Value& v) -> std::optional<long double> {
    if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<long double>(*i);
    if (const auto* d = std::get_if<double>(&v)) return static_cast<long double>(*d);
    return std::nullopt;
  };
  auto sign = [](auto a, auto b) { return a < b ? -1 : (b < a ? 1 : 0); };
  if (num(x) && num(y)) return sign(*num(x), *num(y));
  if (std::holds_alternative<std::string>(x) && std::holds_alternative<std::string>(y)) {
    return sign(std::get<std::string>(x), std::get<std::string>(y));
  }
  if (std::holds_alternative<bool>(x) && std::holds_alternative<bool>(y)) {
    return sign(std::get<bool>(x), std::get<bool>(y));
  }
  if (std::holds_alternative<DateTime>(x) && std::holds_alternative<DateTime>(y)) {
    return sign(std::get<DateTime>(x).micros, std::get<DateTime>(y).micros);
  }
  return std::nullopt;
}

bool Same(const Value& x, const Value& y) { return Order(x, y) == std::optional<int>(0); }

double Haversine(const GeoPoint& p, const GeoPoint& q) {
  const double r = M_PI / 180;
  const double a = std::pow(std::sin((q.lat - p.lat) * r / 2), 2) +
                   std::cos(p.lat * r) * std::cos(q.lat * r) *
                       std::pow(std::sin((q.lon - p.lon) * r / 2), 2);
  return 2 * 6371008.8 * std::atan2(std::sqrt(a), std::sqrt(1 - a));
}

bool Oracle(const Node& n, const Metadata& m) {
  if (n.op == "and") {
    for (const Node& k : n.kids) {
      if (!Oracle(k, m)) return false;
    }
    return true;
  }
  if (n.op == "or") {
    for (const Node& k : n.kids) {
      if (Oracle(k, m)) return true;
    }
    return false;
  }
  if (n.op == "not") return !Oracle(n.kids[0], m);
  const Value* v = Resolve(m, n.field);
  if (n.op == "exists") return (v != nullptr) == n.exists;
  if (n.op == "ne") {
    if (v == nullptr) return true;
    for (const Value& e : Elements(*v)) {
      if (Same(e, n.values[0])) return false;
    }
    return true;
  }
  if (v == nullptr) return false;
  if (n.op == "geo_radius" || n.op == "geo_bbox") {
    const auto* p = std::get_if<GeoPoint>(v);
    if (p == nullptr) return false;
    if (n.op == "geo_radius") return Haversine(*p, n.a) <= n.meters;
    if (p->lat > n.a.lat || p->lat < n.b.lat) return false;
    return n.a.lon <= n.b.lon ? (p->lon >= n.a.lon && p->lon <= n.b.lon)
                              : (p->lon >= n.a.lon || p->lon <= n.b.lon);
  }
  const std::vector<Value> elements = Elements(*v);
  auto has = [&](const Value& want) {
    for (const Value& e : elements) {
      if (Same(e, want)) return true;
    }
    return false;
  };
  if (n.op == "in" || n.op == "contains_any") {
    for (const Value& w : n.values) {
      if (has(w)) return true;
    }
    return false;
  }
  if (n.op == "contains_all") {
    for (const Value& w : n.values) {
      if (!has(w)) return false;
    }
    return true;
  }
  for (const Value& e : elements) {
    std::optional<int> c = Order(e, n.values[0]);
    if (!c) continue;
    if ((n.op == "eq" && *c == 0) || (n.op == "lt" && *c < 0) || (n.op == "lte" && *c <= 0) ||
        (n.op == "gt" && *c > 0) || (n.op == "gte" && *c >= 0)) {
      return true;
    }
  }
  return false;
}

// ---- The test.
class FilterPropertyTest : public EngineTest {};

TEST_F(FilterPropertyTest, EngineResultsEqualBruteForce) {
  constexpr uint64_t kSeeds[] = {1, 20240501, 977};
  constexpr int kDocs = 150;
  constexpr int kFilters = 1500;
  size_t checked = 0, nonempty = 0, partial = 0;
  for (const uint64_t seed : kSeeds) {
    std::cout << "[ seed     ] " << seed << ": " << kDocs << " documents, " << kFilters
              << " filters\n";
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    TearDown();
    SetUp();
    OpenWith(BaseOptions(), std::make_unique<FakeEmbedder>(kDim, 32, 1));
    Gen g(seed);
    const std::vector<std::string> kinds = {"Flat", "HNSW16"};
    for (const std::string& kind : kinds) {
      db::CollectionSpec spec;
      spec.name = kind == "Flat" ? "flat" : "hnsw";
      spec.index_spec = kind;
      VectorOptions v;
      v.source = VectorSource::kExternal;
      v.dimension = kDim;
      ASSERT_TRUE(db_->CreateCollection(spec, v).ok());
    }
    // Documents: written, a fifth overwritten, a tenth deleted.
    std::map<std::string, Metadata> live;
    MetadataTable table;
    std::map<std::string, int64_t> table_ids;
    int64_t next_id = 1;
    auto write = [&](const std::string& id, Metadata m) {
      DocumentInput d;
      d.id = id;
      d.metadata = m;
      d.vector = std::vector<float>(kDim);
      for (float& x : *d.vector) x = static_cast<float>(g.Uniform(-1, 1));
      ASSERT_TRUE(db::ValidateMetadata(m).ok()) << db::ValidateMetadata(m);
      for (const char* c : {"flat", "hnsw"}) {
        auto r = db_->Upsert(c, {d}, absl::InfiniteFuture());
        ASSERT_TRUE(r.ok()) << r.status();
      }
      Change change;
      change.removed = table_ids.count(id) ? table_ids[id] : 0;
      change.added.emplace();
      change.added->id = id;
      change.added->internal_id = static_cast<uint64_t>(next_id);
      change.added->metadata = m;
      table_ids[id] = next_id++;
      ASSERT_TRUE(table.Apply({&change, 1}).ok());
      live[id] = std::move(m);
    };
    for (int i = 0; i < kDocs; ++i) write(absl::StrCat("d", i), g.Document());
    for (int i = 0; i < kDocs; i += 5) write(absl::StrCat("d", i), g.Document());
    for (int i = 3; i < kDocs; i += 10) {
      const std::string id = absl::StrCat("d", i);
      for (const char* c : {"flat", "hnsw"}) ASSERT_TRUE(db_->Delete(c, {id}).ok());
      Change change;
      change.removed = table_ids[id];
      ASSERT_TRUE(table.Apply({&change, 1}).ok());
      table_ids.erase(id);
      live.erase(id);
    }

    for (int f = 0; f < kFilters; ++f) {
      const Node node = RandomNode(g, 3);
      const std::string json = ToJson(node).dump();
      SCOPED_TRACE(json);
      absl::StatusOr<db::Filter> filter = db::ParseFilterJson(json);
      ASSERT_TRUE(filter.ok()) << filter.status();
      std::set<std::string> want;
      for (const auto& [id, m] : live) {
        if (Oracle(node, m)) want.insert(id);
      }
      ++checked;
      if (!want.empty()) ++nonempty;
      if (!want.empty() && want.size() < live.size()) ++partial;
      // The engine: both collections, every live document within reach.
      SearchParams q;
      q.k = kMaxSearchK;
      q.filter = *filter;
      q.index.ef_search = kMaxEfSearch;
      for (const char* c : {"flat", "hnsw"}) {
        auto r = db_->NearVector(c, std::vector<float>(kDim, 0.5f), q);
        ASSERT_TRUE(r.ok()) << r.status();
        std::set<std::string> got;
        for (const Hit& h : r->hits) got.insert(h.id);
        ASSERT_EQ(got, want) << c;
      }
      // The metadata table on its own: per id, and the bitmap.
      MetadataTable::FilterView view(table, *filter);
      std::set<std::string> allowed;
      for (const auto& [id, internal] : table_ids) {
        if (view.Allowed(internal)) allowed.insert(id);
      }
      ASSERT_EQ(allowed, want) << "Allowed";
      if (const index::IdBitmap* dense = view.Dense()) {
        std::set<std::string> bits;
        for (const auto& [id, internal] : table_ids) {
          if (dense->Test(internal)) bits.insert(id);
        }
        ASSERT_EQ(bits, want) << "Dense";
      }
    }
  }
  std::cout << "[ checked  ] " << checked << " filters; " << nonempty << " matched some document, "
            << partial << " some but not all\n";
  // The generator must stay useful: most filters split the documents.
  EXPECT_GT(partial, checked / 3);
}

}  // namespace
}  // namespace neodb::engine
