#include "research/keyword_eval/beir_dataset.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace neodb::tools {
namespace {

absl::StatusOr<std::vector<nlohmann::json>> ReadJsonl(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::vector<nlohmann::json> rows;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      rows.push_back(nlohmann::json::parse(line));
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", n, ": ", e.what()));
    }
  }
  return rows;
}

std::string StringField(const nlohmann::json& row, const char* key) {
  auto it = row.find(key);
  return it != row.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

absl::StatusOr<BeirDataset> LoadBeirDataset(const std::string& dir, const std::string& split) {
  BeirDataset data;
  absl::StatusOr<std::vector<nlohmann::json>> corpus = ReadJsonl(dir + "/corpus.jsonl");
  if (!corpus.ok()) return corpus.status();
  for (const nlohmann::json& row : *corpus) {
    data.corpus.push_back(
        {StringField(row, "_id"), StringField(row, "title"), StringField(row, "text")});
  }
  absl::StatusOr<std::vector<nlohmann::json>> queries = ReadJsonl(dir + "/queries.jsonl");
  if (!queries.ok()) return queries.status();
  std::map<std::string, std::string> all;
  for (const nlohmann::json& row : *queries)
    all[StringField(row, "_id")] = StringField(row, "text");

  const std::string qrels_path = dir + "/qrels/" + split + ".tsv";
  std::ifstream in(qrels_path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", qrels_path));
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cols = absl::StrSplit(line, '\t');
    if (cols.size() != 3) continue;
    int score = 0;
    if (!absl::SimpleAtoi(cols[2], &score)) continue;  // the header line
    if (score <= 0) continue;
    auto it = all.find(cols[0]);
    if (it == all.end())
      return absl::InvalidArgumentError(absl::StrCat("qrels query ", cols[0], " has no text"));
    data.queries[cols[0]] = it->second;
  }
  return data;
}

absl::StatusOr<Run> LoadRun(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  Run run;
  std::string q, d, s;
  while (in >> q >> d >> s) {
    float score;
    if (!absl::SimpleAtof(s, &score))
      return absl::InvalidArgumentError(absl::StrCat(path, ": bad score ", s));
    run[q].emplace_back(d, score);
  }
  for (auto& [query, docs] : run) {
    std::stable_sort(docs.begin(), docs.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
  }
  return run;
}

}  // namespace neodb::tools
