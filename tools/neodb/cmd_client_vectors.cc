// Client subcommands around vectors and the admin checks: near-vector (a
// vector from a JSON file or stdin), list (one page of documents), verify and
// reindex-status. Same flags and output style as cmd_client.cc: JSON lines on
// stdout, errors on stderr with a non-zero exit.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/env.h"
#include "tools/neodb/client_common.h"

namespace neodb::cli {
namespace {

// Reads all of `path` ("-" = stdin).
absl::StatusOr<std::string> ReadAll(const std::string& path) {
  if (path == "-") {
    std::ostringstream s;
    s << std::cin.rdbuf();
    return s.str();
  }
  absl::StatusOr<std::string> text = ReadFileToString(Env::Default(), path);
  if (absl::IsNotFound(text.status())) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  return text;
}

json DocumentToJson(const v1::Document& d) {
  json j{{"id", d.id()}};
  if (!d.text().empty()) j["text"] = d.text();
  if (!d.metadata().empty()) j["metadata"] = MetadataToJson(d.metadata());
  return j;
}

void RegisterNearVector(CLI::App& app) {
  auto f = std::make_shared<ClientFlags>();
  auto collection = std::make_shared<std::string>();
  auto path = std::make_shared<std::string>("-");
  auto filter = std::make_shared<std::string>();
  auto k = std::make_shared<int>(10);
  auto ef_search = std::make_shared<int>(0);
  auto nprobe = std::make_shared<int>(0);
  auto no_text = std::make_shared<bool>(false);
  auto include_vector = std::make_shared<bool>(false);
  CLI::App* c = AddClientCommand(&app, "near-vector", "Near-vector search", f.get());
  c->add_option("--collection", *collection, "Collection")->required();
  AddTenantFlag(c, f.get());
  c->add_option("vector", *path,
                "JSON file holding [numbers] or {\"vector\": [numbers]}; - = stdin")
      ->capture_default_str();
  c->add_option("--filter", *filter, "Metadata filter (JSON)");
  c->add_option("-k", *k, "Results")->capture_default_str();
  c->add_option("--ef-search", *ef_search, "HNSW beam width (0 = the index's default)");
  c->add_option("--nprobe", *nprobe, "IVF lists probed (0 = the index's default)");
  c->add_flag("--no-text", *no_text, "Do not return texts and metadata");
  c->add_flag("--include-vector", *include_vector, "Return each hit's stored vector");
  auto threshold = std::make_shared<float>(0);
  auto offset = std::make_shared<int>(0);
  auto* threshold_opt =
      c->add_option("--score-threshold", *threshold, "Only hits whose similarity is at least this");
  c->add_option("--offset", *offset, "Skip the first N hits (paging; offset + k <= 1000)");
  c->callback([=] {
    auto text = ReadAll(*path);
    ExitIfError(text.status());
    auto vector = ParseVectorJson(*text, *path == "-" ? "stdin" : *path);
    ExitIfError(vector.status());
    v1::NearVectorRequest req;
    req.set_collection(*collection);
    req.set_tenant(f->tenant);
    req.mutable_vector()->Add(vector->begin(), vector->end());
    req.set_k(*k);
    req.set_include_text(!*no_text);
    req.set_include_metadata(!*no_text);
    req.set_include_vector(*include_vector);
    req.set_ef_search(*ef_search);
    req.set_nprobe(*nprobe);
    req.set_filter_json(*filter);  // parsed by the server (db::ParseFilterJson)
    if (threshold_opt->count() > 0) req.set_score_threshold(*threshold);
    req.set_offset(*offset);
    const auto resp = CallOrExit<v1::Search>(*f, &v1::Search::Stub::NearVector, req);
    for (const auto& h : resp.hits()) {
      json j{{"id", h.id()}};
      if (!h.text().empty()) j["text"] = h.text();
      if (!h.metadata().empty()) j["metadata"] = MetadataToJson(h.metadata());
      PrintWithFloats(j, h.score(), {h.vector().data(), static_cast<size_t>(h.vector_size())});
    }
  });
}

void RegisterList(CLI::App& app) {
  auto f = std::make_shared<ClientFlags>();
  auto collection = std::make_shared<std::string>();
  auto page_size = std::make_shared<int>(100);
  auto page_token = std::make_shared<std::string>();
  auto all = std::make_shared<bool>(false);
  auto include_vector = std::make_shared<bool>(false);
  CLI::App* c =
      AddClientCommand(&app, "list", "List a collection's documents, a page at a time", f.get());
  c->add_option("--collection", *collection, "Collection")->required();
  AddTenantFlag(c, f.get());
  c->add_option("--page-size", *page_size, "Documents per page, 1..1000")->capture_default_str();
  c->add_option("--page-token", *page_token,
                "Where to go on: the next_page_token the last run printed on stderr");
  c->add_flag("--all", *all, "Follow next_page_token to the end");
  c->add_flag("--include-vector", *include_vector, "Return each document's stored vector");
  c->callback([=] {
    if (*page_size < 1 || *page_size > 1000) {
      ExitIfError(absl::InvalidArgumentError(
          absl::StrCat("--page-size is ", *page_size, "; it must be in 1..1000")));
    }
    auto stub = v1::Documents::NewStub(Connect(*f));
    std::string token = *page_token;
    do {
      v1::ListDocumentsRequest req;
      req.set_collection(*collection);
      req.set_tenant(f->tenant);
      req.set_page_size(*page_size);
      req.set_page_token(token);
      req.set_include_text(true);
      req.set_include_metadata(true);
      req.set_include_vector(*include_vector);
      const auto resp = CallOrExit(*stub, *f, &v1::Documents::Stub::List, req);
      for (const auto& d : resp.documents()) {
        PrintWithFloats(DocumentToJson(d), std::nullopt,
                        {d.vector().data(), static_cast<size_t>(d.vector_size())});
      }
      token = resp.next_page_token();
      // The token goes to stderr in page mode so stdout stays one document a line.
      if (!*all && !token.empty()) std::fprintf(stderr, "next_page_token: %s\n", token.c_str());
    } while (*all && !token.empty());
  });
}

void RegisterVerify(CLI::App& app) {
  auto f = std::make_shared<ClientFlags>();
  auto collection = std::make_shared<std::string>();
  CLI::App* c =
      AddClientCommand(&app, "verify", "Compare a collection's index with its store", f.get());
  c->add_option("--collection", *collection, "Collection")->required();
  auto full = std::make_shared<bool>(false);
  c->add_flag("--full", *full,
              "Embed every document's text again, not a sample of 64 (encoder time ~ the "
              "collection's ingest)");
  c->callback([=] {
    v1::VerifyRequest req;
    req.set_collection(*collection);
    req.set_full(*full);
    const auto r = CallOrExit<v1::Admin>(*f, &v1::Admin::Stub::Verify, req);
    auto ids = [](const auto& list) { return std::vector<std::string>(list.begin(), list.end()); };
    json out{{"stored", r.stored()},
             {"indexed", r.indexed()},
             {"missing_from_index", r.missing_from_index()},
             {"stale_in_index", r.stale_in_index()},
             {"foreign_model", r.foreign_model()},
             {"model_id", r.model_id()},
             {"vectors_compared", r.vectors_compared()},
             {"vector_mismatches", r.vector_mismatches()},
             {"vector_mismatch_ids", ids(r.vector_mismatch_ids())},
             {"vectors_unchecked", r.vectors_unchecked()},
             {"reembedded", r.reembedded()},
             {"reembed_mismatches", r.reembed_mismatches()},
             {"reembed_mismatch_ids", ids(r.reembed_mismatch_ids())},
             {"reembed_min_cosine", r.reembed_min_cosine()},
             {"reembed_lowest_cosine", r.reembed_lowest_cosine()}};
    // What was not checked is said, never passed over.
    if (r.vectors_unchecked() != 0) out["vectors_unchecked_reason"] = r.vectors_unchecked_reason();
    if (!r.reembed_skipped_reason().empty()) {
      out["reembed_skipped_reason"] = r.reembed_skipped_reason();
    }
    Print(out);
    // A script can trust the exit status: non-zero when they disagree.
    if (r.missing_from_index() != 0 || r.stale_in_index() != 0 || r.foreign_model() != 0 ||
        r.vector_mismatches() != 0 || r.reembed_mismatches() != 0) {
      std::fprintf(stderr, "neodb: collection '%s' is inconsistent\n", collection->c_str());
      throw ExitRequest{1};
    }
  });
}

void RegisterReindexStatus(CLI::App& app) {
  auto f = std::make_shared<ClientFlags>();
  auto collection = std::make_shared<std::string>();
  CLI::App* c =
      AddClientCommand(&app, "reindex-status", "A collection's reindex progress", f.get());
  c->add_option("--collection", *collection, "Collection")->required();
  c->callback([=] {
    v1::ReindexStatusRequest req;
    req.set_collection(*collection);
    const auto r = CallOrExit<v1::Admin>(*f, &v1::Admin::Stub::ReindexStatus, req);
    const char* state = "idle";
    switch (r.state()) {
      case v1::ReindexStatusResponse::RUNNING:
        state = "running";
        break;
      case v1::ReindexStatusResponse::DONE:
        state = "done";
        break;
      case v1::ReindexStatusResponse::FAILED:
        state = "failed";
        break;
      default:
        break;
    }
    json j{{"state", state},
           {"done", r.done()},
           {"total", r.total()},
           {"model_id", r.model_id()},
           {"committed", r.committed()}};
    if (!r.error().empty()) j["error"] = r.error();
    Print(j);
  });
}

}  // namespace

void RegisterClientVectorCommands(CLI::App& app) {
  RegisterNearVector(app);
  RegisterList(app);
  RegisterVerify(app);
  RegisterReindexStatus(app);
}

}  // namespace neodb::cli
