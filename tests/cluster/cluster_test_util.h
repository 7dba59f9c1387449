#pragma once
// What the cluster tests share: a node's database options (no fsync, no
// periodic snapshots) and a collection's content as id -> text, read from
// the store page by page, to compare nodes with each other and with what the
// writers were acknowledged.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "cluster/cluster_map.h"
#include "cluster/cluster_node.h"
#include "cluster/nats_client.h"
#include "engine/database.h"
#include "gtest/gtest.h"

namespace neodb::cluster::testing {

inline engine::DatabaseOptions NodeOptions(const std::string& dir) {
  engine::DatabaseOptions o;
  o.data_dir = dir;
  o.sync_writes = false;
  o.snapshot_interval = absl::ZeroDuration();
  return o;
}

inline std::map<std::string, std::string> Contents(engine::Database& db,
                                                   const std::string& collection) {
  std::map<std::string, std::string> out;
  std::string token;
  while (true) {
    auto page = db.List(collection, token, 1000);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) break;
    for (const db::Document& d : page->documents) out[d.id] = d.text;
    if (page->next_page_token.empty()) break;
    token = page->next_page_token;
  }
  return out;
}

// One in-process node of a test cluster.
struct InProcessNode {
  std::string id;
  std::unique_ptr<engine::Database> db;
  std::unique_ptr<NatsClient> nats;
  std::unique_ptr<ClusterMap> map;
  std::unique_ptr<ClusterNode> node;
};

// A fresh directory for the running test: <tmp>/<prefix>_<test>_<pid>.
inline std::filesystem::path FreshTestRoot(const std::string& prefix) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() /
      absl::StrCat(prefix, "_", ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                   "_", getpid());
  std::filesystem::remove_all(root);
  return root;
}

// `collection` of `db` as a cluster map entry at generation 0 with `shards`
// shards (placement left empty): what a ShardWriter writes to.
inline ShardedCollection EntryOf(engine::Database& db, const std::string& collection,
                                 uint32_t shards) {
  ShardedCollection c;
  auto info = db.DescribeCollection(collection);
  EXPECT_TRUE(info.ok()) << info.status();
  if (info.ok()) {
    c.spec = info->spec;
    c.model_id = info->spec.model_id;
  }
  c.shards = shards;
  return c;
}

}  // namespace neodb::cluster::testing
