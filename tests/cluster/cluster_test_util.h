#pragma once
// What the cluster tests share: a node's database options (no fsync, no
// periodic snapshots) and a collection's content as id -> text, read from
// the store page by page, to compare nodes with each other and with what the
// writers were acknowledged.
#include <map>
#include <string>

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

}  // namespace neodb::cluster::testing
