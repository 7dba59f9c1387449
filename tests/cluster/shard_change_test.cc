// The parts of the cluster that need no server: where a document lives, the
// wire form of a shard's change (hostile bytes included) and the consistency
// token's text.
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "cluster/shard_change.h"
#include "cluster/shard_map.h"
#include "cluster/shard_writer.h"
#include "gtest/gtest.h"

namespace neodb::cluster {
namespace {

TEST(ShardMapTest, EveryNodeComputesTheSameShard) {
  // xxHash64 is defined byte for byte: these hold on every host, forever
  // (a change would move every stored document to another shard).
  EXPECT_EQ(ShardOf("doc-1", 1), 0u);
  const uint32_t a = ShardOf("doc-1", 3);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(ShardOf("doc-1", 3), a);
  EXPECT_LT(a, 3u);
  EXPECT_EQ(ShardStreamName("papers", 2), "neodb-papers-2");
  EXPECT_EQ(ShardSubjects("papers", 2), "neodb.papers.2.*");
  // The id is hex: any bytes make one subject token.
  EXPECT_EQ(DocumentSubject("papers", 2, std::string("a.b c\0*", 7)),
            "neodb.papers.2.612e622063002a");
}

TEST(ShardMapTest, DocumentsSpreadOverShards) {
  constexpr int kDocs = 30000, kShards = 6;
  std::map<uint32_t, int> per;
  for (int i = 0; i < kDocs; ++i) ++per[ShardOf(absl::StrCat("id", i), kShards)];
  ASSERT_EQ(per.size(), static_cast<size_t>(kShards));
  // Binomial(30000, 1/6): sd 64.5 around 5000; 6 sd is far past chance.
  for (const auto& [shard, n] : per) {
    EXPECT_NEAR(n, kDocs / kShards, 6 * 64.5) << "shard " << shard;
  }
}

TEST(ShardChangeTest, RoundTrips) {
  ShardChange up;
  up.op = ShardChange::Op::kUpsert;
  up.document.id = "d1";
  up.document.text = "some text";
  up.document.metadata["year"] = db::Value(int64_t{2024});
  up.document.vector = {0.5f, -1.25f, 3.0f};
  up.document.model_id = "m";
  up.document.internal_id = 99;  // each replica numbers its own
  auto back = DecodeShardChange(EncodeShardChange(up));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->op, ShardChange::Op::kUpsert);
  EXPECT_EQ(back->document.id, "d1");
  EXPECT_EQ(back->document.text, "some text");
  EXPECT_EQ(back->document.vector, up.document.vector);
  EXPECT_EQ(back->document.model_id, "m");
  EXPECT_EQ(back->document.internal_id, 0u);
  EXPECT_EQ(back->document.metadata.at("year"), db::Value(int64_t{2024}));

  ShardChange del;
  del.op = ShardChange::Op::kDelete;
  del.id = std::string("x\0y", 3);
  back = DecodeShardChange(EncodeShardChange(del));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->op, ShardChange::Op::kDelete);
  EXPECT_EQ(back->doc_id(), del.id);
}

TEST(ShardChangeTest, HostileBytesAreRefusedWithAReason) {
  ShardChange up;
  up.document.id = "d1";
  up.document.vector = {1.0f};
  const std::string good = EncodeShardChange(up);
  const std::string long_id(db::kMaxDocumentIdBytes + 1, 'x');
  const std::pair<std::string, std::string> cases[] = {
      {"", "too short"},
      {std::string("\x01", 1), "too short"},
      {std::string("\x02U", 2) + good.substr(2), "version 2"},
      {std::string("\x01Z", 2), "unknown op"},
      {std::string("\x01" "D", 2), "has 0 bytes"},
      {std::string("\x01" "D", 2) + long_id, "ids have"},
      {good.substr(0, good.size() - 3), "bad document"},
      {std::string("\x01U", 2) + "garbage", "bad document"},
  };
  for (const auto& [bytes, why] : cases) {
    auto r = DecodeShardChange(bytes);
    ASSERT_FALSE(r.ok()) << why;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status();
  }
  // Every prefix of a good message is refused or decodes, never crashes.
  for (size_t n = 0; n < good.size(); ++n) (void)DecodeShardChange(good.substr(0, n));
}

TEST(ConsistencyTokenTest, FormatsAndParses) {
  ConsistencyToken t{{0, 17}, {2, 5}};
  EXPECT_EQ(FormatToken(t), "0:17,2:5");
  auto back = ParseToken("0:17,2:5");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, t);
  EXPECT_TRUE(ParseToken("")->empty());
  for (const char* bad : {"0", "0:", ":1", "a:1", "0:1,0:2", "0:1,", "99999:1", "0:-1"}) {
    EXPECT_FALSE(ParseToken(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace neodb::cluster
