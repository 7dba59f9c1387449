// MetadataTable::FilterView: the bitmap Dense() builds from the per-value id
// sets must allow exactly the ids Allowed() does, for any filter, after any
// sequence of adds, overwrites and deletes.
#include "engine/metadata_table.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace neodb::engine {
namespace {

db::Value RandomValue(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0:
      return std::string(1, static_cast<char>('a' + rng() % 4));
    case 1:
      return static_cast<int64_t>(rng() % 7) - 2;
    case 2:
      return static_cast<double>(rng() % 9) / 2 - 1;  // ints too, as doubles
    default:
      return rng() % 2 == 0;
  }
}

const char* const kFields[] = {"a", "b", "c"};

db::Metadata RandomMetadata(std::mt19937_64& rng) {
  db::Metadata m;
  for (const char* f : kFields) {
    if (rng() % 3 != 0) m[f] = RandomValue(rng);  // a field is absent a third of the time
  }
  return m;
}

db::Filter RandomLeaf(std::mt19937_64& rng) {
  std::string f = kFields[rng() % 3];
  db::Value v = RandomValue(rng);
  const bool is_bool = std::holds_alternative<bool>(v);
  switch (rng() % (is_bool ? 4 : 8)) {
    case 0:
      return db::Filter::Eq(f, v);
    case 1:
      return db::Filter::Ne(f, v);
    case 2:
      return db::Filter::Exists(f);
    case 3: {
      std::vector<db::Value> vs{v};
      if (!is_bool)
        vs.push_back(std::holds_alternative<std::string>(v) ? db::Value{"c"}
                                                            : db::Value{int64_t{1}});
      return db::Filter::In(f, vs);
    }
    case 4:
      return db::Filter::Lt(f, v);
    case 5:
      return db::Filter::Le(f, v);
    case 6:
      return db::Filter::Gt(f, v);
    default:
      return db::Filter::Ge(f, v);
  }
}

db::Filter RandomFilter(std::mt19937_64& rng, int depth) {
  if (depth == 0 || rng() % 3 == 0) return RandomLeaf(rng);
  switch (rng() % 3) {
    case 0:
      return db::Filter::Not(RandomFilter(rng, depth - 1));
    case 1:
      return db::Filter::And({RandomFilter(rng, depth - 1), RandomFilter(rng, depth - 1)});
    default:
      return db::Filter::Or({RandomFilter(rng, depth - 1), RandomFilter(rng, depth - 1),
                             RandomFilter(rng, depth - 1)});
  }
}

Change Add(int64_t id, db::Metadata m, int64_t removed = 0) {
  Change c;
  c.removed = removed;
  c.added.emplace();
  c.added->internal_id = static_cast<uint64_t>(id);
  c.added->metadata = std::move(m);
  return c;
}

TEST(MetadataTableTest, DenseBitmapAllowsExactlyWhatAllowedDoes) {
  std::mt19937_64 rng(3);
  MetadataTable table;
  std::vector<int64_t> live;
  int64_t next = 5;  // internal ids need not start at 1
  for (int round = 0; round < 20; ++round) {
    // A batch of adds, overwrites (new id, old removed) and deletes.
    std::vector<Change> changes;
    for (int i = 0; i < 50; ++i) {
      const int what = static_cast<int>(rng() % 10);
      if (what < 6 || live.empty()) {
        changes.push_back(Add(next, RandomMetadata(rng)));
        live.push_back(next++);
        continue;
      }
      const size_t at = rng() % live.size();
      const int64_t old = live[at];
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
      if (what < 8) {
        changes.push_back(Add(next, RandomMetadata(rng), old));
        live.push_back(next++);
      } else {
        Change del;
        del.removed = old;
        changes.push_back(del);
      }
    }
    ASSERT_TRUE(table.Apply(changes).ok());
    ASSERT_EQ(table.size(), live.size());
    for (int f = 0; f < 20; ++f) {
      const db::Filter filter = RandomFilter(rng, 3);
      ASSERT_TRUE(filter.Validate().ok()) << filter.DebugString();
      MetadataTable::FilterView view(table, filter);
      // Allowed answers per id until Dense() is built, from the bitmap after.
      std::vector<bool> per_id;
      for (int64_t id = 0; id <= next + 1; ++id) per_id.push_back(view.Allowed(id));
      const index::IdBitmap* dense = view.Dense();
      ASSERT_NE(dense, nullptr) << filter.DebugString();
      EXPECT_EQ(view.Dense(), dense);  // built once
      size_t allowed = 0;
      for (int64_t id = 0; id <= next + 1; ++id) {
        const bool want = per_id[static_cast<size_t>(id)];
        allowed += want;
        ASSERT_EQ(dense->Test(id), want) << filter.DebugString() << " id " << id;
        ASSERT_EQ(view.Allowed(id), want) << filter.DebugString() << " id " << id;
      }
      EXPECT_EQ(dense->Count(), allowed);
    }
  }
}

TEST(MetadataTableTest, DenseGivesUpOnManyDistinctValuesAndSparseIds) {
  MetadataTable table;
  std::vector<Change> changes;
  for (int64_t id = 1; id <= 5000; ++id) changes.push_back(Add(id, {{"t", id}, {"b", id % 2}}));
  ASSERT_TRUE(table.Apply(changes).ok());
  const db::Filter by_t = db::Filter::Lt("t", int64_t{100});
  {
    // (A view holds the table's shared lock: scoped, so that Apply below runs.)
    MetadataTable::FilterView many(table, by_t);
    EXPECT_EQ(many.Dense(), nullptr);  // 5000 distinct values of t
    EXPECT_TRUE(many.Allowed(99));
    EXPECT_FALSE(many.Allowed(100));
  }
  const db::Filter by_b = db::Filter::Eq("b", int64_t{1});
  {
    MetadataTable::FilterView few(table, by_b);
    ASSERT_NE(few.Dense(), nullptr);
    EXPECT_EQ(few.Dense()->Count(), 2500u);
  }
  // t's value sets were dropped when it passed the limit: removing documents
  // does not bring them back (that takes a rebuild at startup).
  std::vector<Change> deletes;
  for (int64_t id = 100; id <= 5000; ++id) {
    Change del;
    del.removed = id;
    deletes.push_back(del);
  }
  ASSERT_TRUE(table.Apply(deletes).ok());
  {
    MetadataTable::FilterView still(table, by_t);
    EXPECT_EQ(still.Dense(), nullptr);
    MetadataTable::FilterView few(table, by_b);
    ASSERT_NE(few.Dense(), nullptr);
    EXPECT_EQ(few.Dense()->Count(), 50u);  // odd ids 1..99
  }
  // One far-away id: the live ids now span far more than 64 bits each.
  ASSERT_TRUE(table.Apply(std::vector<Change>{Add(int64_t{1} << 40, {{"b", int64_t{1}}})}).ok());
  MetadataTable::FilterView sparse(table, by_b);
  EXPECT_EQ(sparse.Dense(), nullptr);
  EXPECT_TRUE(sparse.Allowed(int64_t{1} << 40));
}

}  // namespace
}  // namespace neodb::engine
