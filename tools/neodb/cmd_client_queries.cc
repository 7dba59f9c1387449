// neodb recommend, neodb search-batch: the search calls past one query's
// top-k (Search.Recommend, Search.BatchNearText), for people (a table) and
// scripts (--json, one JSON object per line).
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/line_reader.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "tools/neodb/client_common.h"
#include "tools/neodb/commands.h"
#include "tools/neodb/search_table.h"
#include "tools/neodb/text_table.h"

namespace neodb::cli {
namespace {

void PrintHits(const v1::SearchResponse& resp, const std::string& query, bool as_json) {
  if (!as_json) {
    std::fputs(SearchTable(resp, query, false, MarksFor(StdoutIsStyledTerminal())).c_str(), stdout);
    return;
  }
  for (const json& h : HitsToJson(resp)) Print(h);
}

// One line of a batch file: {"query": "...", "mode", "k", "filter" (a JSON
// object or its text), "fusion", "alpha", "offset", "score_threshold"}.
absl::StatusOr<v1::NearTextRequest> QueryOfLine(const std::string& line, size_t number) {
  const std::string where = absl::StrCat("line ", number);
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return absl::InvalidArgumentError(where + ": not a JSON object");
  if (!j.contains("query") || !j["query"].is_string()) {
    return absl::InvalidArgumentError(where + ": \"query\" (a string) is required");
  }
  v1::NearTextRequest q;
  q.set_query(j["query"].get<std::string>());
  q.set_include_text(true);
  q.set_include_metadata(true);
  for (const auto& [key, value] : j.items()) {
    if (key == "query") continue;
    if (key == "mode" && value.is_string()) {
      q.set_mode(value.get<std::string>());
    } else if (key == "fusion" && value.is_string()) {
      q.set_fusion(value.get<std::string>());
    } else if (key == "k" && value.is_number_integer()) {
      q.set_k(value.get<int>());
    } else if (key == "offset" && value.is_number_integer()) {
      q.set_offset(value.get<int>());
    } else if (key == "alpha" && value.is_number()) {
      q.set_alpha(value.get<double>());
    } else if (key == "score_threshold" && value.is_number()) {
      q.set_score_threshold(value.get<float>());
    } else if (key == "filter" && (value.is_object() || value.is_string())) {
      q.set_filter_json(value.is_string() ? value.get<std::string>() : value.dump());
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": unknown key or wrong type: \"", key, "\""));
    }
  }
  return q;
}

}  // namespace

void RegisterClientQueryCommands(CLI::App& app) {
  {
    auto f = std::make_shared<ClientFlags>();
    auto collection = std::make_shared<std::string>();
    auto positive = std::make_shared<std::vector<std::string>>();
    auto negative = std::make_shared<std::vector<std::string>>();
    auto filter = std::make_shared<std::string>();
    auto k = std::make_shared<int>(10);
    auto weight = std::make_shared<double>(1);
    auto as_json = std::make_shared<bool>(false);
    CLI::App* c = AddClientCommand(
        &app, "recommend",
        "Documents like the --positive ones and unlike the --negative ones (by id)", f.get());
    c->add_option("--collection", *collection, "Collection")->required();
    AddTenantFlag(c, f.get());
    c->add_option("--positive", *positive, "An example to be near (repeatable)")->required();
    c->add_option("--negative", *negative, "An example to be far from (repeatable)");
    auto* weight_opt = c->add_option("--negative-weight", *weight,
                                     "w in q = P + w (P - N), 0..10 (default 1)");
    c->add_option("--filter", *filter, "A filter in its JSON form (README, Filters)");
    c->add_option("-k", *k, "Results")->capture_default_str();
    c->add_flag("--json", *as_json, "One JSON object per hit (for scripts) instead of a table");
    c->callback([=] {
      v1::RecommendRequest req;
      req.set_collection(*collection);
      req.set_tenant(f->tenant);
      for (const auto& id : *positive) req.add_positive_ids(id);
      for (const auto& id : *negative) req.add_negative_ids(id);
      if (weight_opt->count() > 0) req.set_negative_weight(*weight);
      req.set_filter_json(*filter);
      req.set_k(*k);
      req.set_include_text(true);
      req.set_include_metadata(true);
      const auto resp = CallOrExit<v1::Search>(*f, &v1::Search::Stub::Recommend, req);
      PrintHits(resp, "", *as_json);
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto collection = std::make_shared<std::string>();
    auto path = std::make_shared<std::string>();
    CLI::App* c = AddClientCommand(
        &app, "search-batch",
        "Many near-text queries in one call, from a JSON-lines file: one JSON line of hits (or "
        "of an error) per query, in order",
        f.get());
    c->add_option("--collection", *collection, "Collection")->required();
    AddTenantFlag(c, f.get());
    c->add_option("file", *path,
                  "JSON lines {\"query\",\"mode\",\"k\",\"filter\",\"fusion\",\"alpha\","
                  "\"offset\",\"score_threshold\"}; - = stdin")
        ->required();
    c->callback([=] {
      // A file through the Env; "-" is standard input.
      std::optional<LineReader> file;
      if (*path != "-") {
        absl::StatusOr<LineReader> opened = LineReader::Open(Env::Default(), *path);
        if (!opened.ok()) {
          std::fprintf(stderr, "neodb: cannot read %s (%s)\n", path->c_str(),
                       std::string(opened.status().message()).c_str());
          throw ExitRequest{1};
        }
        file.emplace(*std::move(opened));
      }
      auto next_line = [&file](std::string* line) -> bool {
        if (!file) return static_cast<bool>(std::getline(std::cin, *line));
        absl::StatusOr<bool> more = file->ReadLine(line);
        if (!more.ok()) {
          std::fprintf(stderr, "neodb: %s\n", std::string(more.status().message()).c_str());
          throw ExitRequest{1};
        }
        return *more;
      };
      v1::BatchNearTextRequest req;
      req.set_collection(*collection);
      req.set_tenant(f->tenant);
      std::string line;
      for (size_t number = 1; next_line(&line); ++number) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        absl::StatusOr<v1::NearTextRequest> q = QueryOfLine(line, number);
        if (!q.ok()) {
          std::fprintf(stderr, "neodb: %s\n", std::string(q.status().message()).c_str());
          throw ExitRequest{2};
        }
        *req.add_queries() = std::move(*q);
      }
      const auto resp = CallOrExit<v1::Search>(*f, &v1::Search::Stub::BatchNearText, req);
      bool failed = false;
      for (int i = 0; i < resp.results_size(); ++i) {
        const v1::BatchSearchResult& r = resp.results(i);
        if (r.code() != 0) {
          failed = true;
          Print(json{{"query", i}, {"error", {{"code", r.code()}, {"message", r.message()}}}});
        } else {
          Print(json{{"query", i}, {"hits", HitsToJson(r.response())}});
        }
      }
      if (failed) throw ExitRequest{1};
    });
  }
}

}  // namespace neodb::cli
