// Client subcommands: talk to `neodb serve` over gRPC (neodb.v1). Every call
// carries a deadline (--timeout). Results go to stdout as JSON lines;
// progress and errors to stderr.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "clients/cpp/spec_names.h"
#include "common/atomic_file.h"
#include "common/env.h"
#include "common/float_text.h"
#include "common/line_reader.h"
#include "common/status_macros.h"
#include "grpcpp/grpcpp.h"
#include "index/keyword/analyzer_kind.h"
#include "index/keyword/fusion.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tools/neodb/client_common.h"
#include "tools/neodb/commands.h"
#include "tools/neodb/json_document.h"
#include "tools/neodb/progress_line.h"
#include "tools/neodb/reindex_wait.h"
#include "tools/neodb/search_table.h"
#include "tools/neodb/text_table.h"

namespace neodb::cli {
namespace {

// --- collections ------------------------------------------------------------

void RegisterCollections(CLI::App& app) {
  CLI::App* group = app.add_subcommand("collections", "Create, list, describe, drop collections");
  group->require_subcommand(1);

  {
    auto f = std::make_shared<ClientFlags>();
    auto spec = std::make_shared<v1::CollectionSpec>();
    auto index = std::make_shared<std::string>("flat");
    auto metric = std::make_shared<std::string>("cosine");
    auto pooling = std::make_shared<std::string>();  // empty: the model's own
    auto overflow = std::make_shared<std::string>("error");
    auto name = std::make_shared<std::string>();
    auto qp = std::make_shared<std::string>();
    auto dp = std::make_shared<std::string>();
    auto vectors = std::make_shared<std::string>("model");
    auto dimension = std::make_shared<int>(0);
    auto vectors_name = std::make_shared<std::string>();
    auto query_model = std::make_shared<std::string>();
    auto precision = std::make_shared<std::string>();
    CLI::App* c = AddClientCommand(group, "create", "Create a collection", f.get());
    c->add_option("name", *name, "Collection name")->required();
    c->add_option("--index", *index, "flat | hnsw | ivfpq | a factory string (HNSW32, IVF256,PQ16)")
        ->capture_default_str();
    c->add_option("--metric", *metric, "cosine | ip | l2")->capture_default_str();
    c->add_option("--pooling", *pooling,
                  "mean | cls (default: the model's own, from its sentence-transformers files; "
                  "mean when it has none)");
    c->add_option("--overflow", *overflow, "error | chunk (texts over the model length)")
        ->capture_default_str();
    c->add_option("--query-prefix", *qp, "Instruction prepended to queries");
    c->add_option("--document-prefix", *dp, "Instruction prepended to documents");
    c->add_option("--vectors", *vectors,
                  "model (the model embeds texts) | external (documents carry vectors)")
        ->capture_default_str();
    c->add_option("--dimension", *dimension, "Vector dimension (--vectors external)");
    c->add_option("--vectors-name", *vectors_name,
                  "What the external vectors are (model id external:<name>; default: the "
                  "collection name)");
    c->add_option("--query-model", *query_model,
                  "A model for near-text on external vectors: default | a model directory on "
                  "the server");
    auto analyzer = std::make_shared<std::string>("english");
    auto k1 = std::make_shared<double>(0.9);
    auto b = std::make_shared<double>(0.4);
    auto title_field = std::make_shared<std::string>();
    auto title_weight = std::make_shared<double>(1.0);
    c->add_option("--analyzer", *analyzer, "Keyword analyzer: english | simple | none")
        ->capture_default_str();
    c->add_option("--bm25-k1", *k1, "BM25 k1 (0..100)")->capture_default_str();
    c->add_option("--bm25-b", *b, "BM25 b (0..1)")->capture_default_str();
    c->add_option("--title-field", *title_field,
                  "A string metadata field also indexed for keyword search");
    c->add_option("--title-weight", *title_weight, "Its weight (> 0, <= 1000)")
        ->capture_default_str();
    c->add_option("--precision", *precision,
                  "Encoder precision of its vectors and queries: f32, bf16 or int8 (default: "
                  "the server's --precision)");
    auto fusion = std::make_shared<std::string>();
    auto alpha = std::make_shared<double>(-1);
    c->add_option("--fusion", *fusion,
                  "Default fusion of hybrid queries: adaptive (default) | weighted | rrf");
    c->add_option("--alpha", *alpha, "Its vector share for weighted (0..1; alone: weighted)");
    auto shards = std::make_shared<uint32_t>(0);
    auto replicas = std::make_shared<uint32_t>(0);
    c->add_option("--shards", *shards,
                  "A sharded collection of a cluster (a server started with --nats): its shards "
                  "(default: none, a collection of that server alone)");
    c->add_option("--replicas", *replicas, "Nodes holding each shard (with --shards; default 1)");
    auto multi_tenant = std::make_shared<bool>(false);
    c->add_flag("--multi-tenant", *multi_tenant,
                "Each document belongs to a tenant and every call names one (README, Tenants)");
    c->callback([=] {
      v1::CreateCollectionRequest req;
      req.set_shards(*shards);
      req.set_replicas(*replicas);
      auto* s = req.mutable_spec();
      s->set_name(*name);
      s->set_multi_tenant(*multi_tenant);
      s->mutable_index()->set_type(*index);
      // The server's names, read on this side (clients/cpp/spec_names.h).
      auto m = client::MetricFromName(*metric);
      ExitIfError(m.status());
      s->set_metric(*m);
      if (!pooling->empty()) {
        auto p = client::PoolingFromName(*pooling);
        ExitIfError(p.status());
        s->set_pooling(*p);
      }
      auto o = client::OverflowFromName(*overflow);
      ExitIfError(o.status());
      s->set_overflow(*o);
      s->set_query_prefix(*qp);
      s->set_document_prefix(*dp);
      if (*vectors == "external") {
        s->set_vectors(v1::VECTOR_SOURCE_EXTERNAL);
      } else if (*vectors != "model") {
        ExitIfError(absl::InvalidArgumentError(
            absl::StrCat("--vectors '", *vectors, "' is not one of model, external")));
      }
      s->set_dimension(*dimension);
      s->set_vectors_name(*vectors_name);
      // A local directory is sent absolute (as reindex --model does).
      std::error_code ec;
      const bool local = !query_model->empty() && *query_model != "default" &&
                         std::filesystem::exists(*query_model, ec);
      s->set_query_model(local ? std::filesystem::absolute(*query_model).string() : *query_model);
      // The one codec of the analyzer's names; the server range-checks k1, b.
      ExitIfError(keyword::ParseAnalyzerKind(*analyzer).status());
      s->set_analyzer(*analyzer);
      s->set_bm25_k1(*k1);
      s->set_bm25_b(*b);
      s->set_title_field(*title_field);
      s->set_title_weight(*title_weight);
      if (!precision->empty()) {
        ExitIfError(client::CheckPrecision(*precision));
        s->set_precision(*precision);
      }
      s->set_fusion(*fusion);
      if (*alpha != -1) s->set_fusion_alpha(*alpha);
      Print(
          InfoToJson(CallOrExit<v1::Collections>(*f, &v1::Collections::Stub::Create, req).info()));
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto name = std::make_shared<std::string>();
    auto fusion = std::make_shared<std::string>();
    auto alpha = std::make_shared<double>(-1);
    CLI::App* c = AddClientCommand(
        group, "set-fusion",
        "Set how the collection's hybrid queries fuse when they name no fusion", f.get());
    c->add_option("name", *name, "Collection name")->required();
    c->add_option("--fusion", *fusion, "adaptive | weighted | rrf");
    c->add_option("--alpha", *alpha, "The vector share for weighted (0..1; alone: weighted)");
    c->callback([=] {
      if (fusion->empty() && *alpha == -1) {
        ExitIfError(absl::InvalidArgumentError("set-fusion needs --fusion, --alpha or both"));
      }
      v1::SetFusionRequest req;
      req.set_name(*name);
      req.set_fusion(*fusion);
      if (*alpha != -1) req.set_alpha(*alpha);
      Print(InfoToJson(
          CallOrExit<v1::Collections>(*f, &v1::Collections::Stub::SetFusion, req).info()));
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    CLI::App* c = AddClientCommand(group, "list", "List collections", f.get());
    c->callback([=] {
      const auto resp = CallOrExit<v1::Collections>(*f, &v1::Collections::Stub::List,
                                                    v1::ListCollectionsRequest());
      for (const auto& i : resp.collections()) Print(InfoToJson(i));
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto name = std::make_shared<std::string>();
    CLI::App* c = AddClientCommand(group, "describe", "Describe a collection", f.get());
    c->add_option("name", *name, "Collection name")->required();
    auto as_json = std::make_shared<bool>(false);
    c->add_flag("--json", *as_json, "One JSON object (for scripts) instead of key: value lines");
    c->callback([=] {
      v1::DescribeCollectionRequest req;
      req.set_name(*name);
      const json info =
          InfoToJson(CallOrExit<v1::Collections>(*f, &v1::Collections::Stub::Describe, req).info());
      if (*as_json) {
        Print(info);
      } else {
        std::fputs(RenderKeyValues(info).c_str(), stdout);
      }
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto name = std::make_shared<std::string>();
    CLI::App* c =
        AddClientCommand(group, "drop", "Drop a collection and all its documents", f.get());
    c->add_option("name", *name, "Collection name")->required();
    c->callback([=] {
      v1::DropCollectionRequest req;
      req.set_name(*name);
      CallOrExit<v1::Collections>(*f, &v1::Collections::Stub::Drop, req);
    });
  }
}

// --- ingest -----------------------------------------------------------------

// Streams batches on this thread while a reader thread counts the server's
// acknowledgements: the progress line reports documents committed.
absl::Status Ingest(const ClientFlags& f, const std::string& collection, const std::string& path,
                    int batch_size) {
  absl::StatusOr<LineReader> in = LineReader::Open(Env::Default(), path);
  if (absl::IsNotFound(in.status())) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  RETURN_IF_ERROR(in.status());
  auto stub = v1::Documents::NewStub(Connect(f));
  grpc::ClientContext ctx;
  SetDeadline(&ctx, f);
  auto stream = stub->Ingest(&ctx);
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  v1::IngestAck last;
  ProgressLine progress;
  auto progress_text = [&](const v1::IngestAck& ack) {
    return absl::StrFormat("neodb ingest: %d documents committed (%.0f/s)", ack.documents(),
                           ack.documents() / std::max(seconds(), 1e-9));
  };
  std::thread reader([&] {
    v1::IngestAck ack;
    while (stream->Read(&ack)) {
      last = ack;
      progress.Update(progress_text(ack));
    }
  });
  v1::IngestBatch batch;
  batch.set_collection(collection);
  batch.set_tenant(f.tenant);
  auto flush = [&]() -> bool {
    if (batch.documents().empty()) return true;
    if (!stream->Write(batch)) return false;
    batch.clear_documents();
    return true;
  };
  absl::Status input = absl::OkStatus();
  std::string line;
  uint64_t line_no = 0;
  bool open = true;
  while (open) {
    absl::StatusOr<bool> more = in->ReadLine(&line);
    if (!more.ok()) {
      input = more.status();
      break;
    }
    if (!*more) break;
    ++line_no;
    absl::StatusOr<std::optional<v1::Document>> doc =
        ParseIngestLine(line, absl::StrCat(path, ":", line_no));
    if (!doc.ok()) {
      input = doc.status();
      break;
    }
    if (!doc->has_value()) continue;  // a blank line
    *batch.add_documents() = std::move(**doc);
    if (batch.documents_size() >= batch_size) open = flush();
  }
  // Bad input: what was sent stays committed, the rest is not sent.
  if (input.ok() && open) flush();
  stream->WritesDone();
  reader.join();
  grpc::Status s = stream->Finish();
  if (last.documents() > 0) progress.Finish(progress_text(last));
  if (!s.ok()) return CallStatus(s, f);
  RETURN_IF_ERROR(input);
  json out{{"documents", last.documents()},
           {"batches", last.batches()},
           {"tokens", last.tokens()},
           {"seconds", seconds()}};
  if (!last.consistency_token().empty()) out["consistency_token"] = last.consistency_token();
  Print(out);
  return absl::OkStatus();
}

// --- search, get, delete ------------------------------------------------------

// The --collection and positional ids arguments shared by get and delete.
struct IdsArgs {
  std::string collection;
  std::vector<std::string> ids;
};

void AddIdsOptions(CLI::App* c, IdsArgs* a) {
  c->add_option("--collection", a->collection, "Collection")->required();
  c->add_option("ids", a->ids, "Document ids")->required();
}

template <typename Request>
Request IdsRequest(const IdsArgs& a) {
  Request req;
  req.set_collection(a.collection);
  for (const auto& id : a.ids) req.add_ids(id);
  return req;
}

void RegisterDocuments(CLI::App& app) {
  {
    auto f = std::make_shared<ClientFlags>();
    auto collection = std::make_shared<std::string>();
    auto path = std::make_shared<std::string>();
    auto batch = std::make_shared<int>(64);
    CLI::App* c =
        AddClientCommand(&app, "ingest", "Stream a JSON-lines file of documents in", f.get());
    c->alias("import");  // the reverse of `export`
    f->timeout_s = 3600;
    c->add_option("--collection", *collection, "Collection")->required();
    c->add_option("file", *path,
                  "JSON lines: {\"id\",\"text\",\"metadata\",\"vector\"} (vector: external-vector "
                  "collections)")
        ->required();
    c->add_option("--batch", *batch, "Documents per stream message")->capture_default_str();
    AddTenantFlag(c, f.get());
    c->callback([=] { ExitIfError(Ingest(*f, *collection, *path, std::max(1, *batch))); });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto collection = std::make_shared<std::string>();
    auto query = std::make_shared<std::string>();
    auto filter = std::make_shared<std::string>();
    auto instruction = std::make_shared<std::string>();
    auto k = std::make_shared<int>(10);
    auto ef_search = std::make_shared<int>(0);
    auto nprobe = std::make_shared<int>(0);
    auto no_text = std::make_shared<bool>(false);
    CLI::App* c = AddClientCommand(&app, "search", "Near-text search", f.get());
    c->add_option("--collection", *collection, "Collection")->required();
    AddTenantFlag(c, f.get());
    c->add_option("query", *query, "Query text")->required();
    c->add_option("--filter", *filter, "Metadata filter (JSON)");
    c->add_option("-k", *k, "Results")->capture_default_str();
    c->add_option("--ef-search", *ef_search, "HNSW beam width (0 = the index's default)");
    c->add_option("--nprobe", *nprobe, "IVF lists probed (0 = the index's default)");
    auto* instr = c->add_option("--instruction", *instruction, "Override the query instruction");
    c->add_flag("--no-text", *no_text, "Do not return texts and metadata");
    auto mode = std::make_shared<std::string>("hybrid");
    auto fusion = std::make_shared<std::string>();
    auto alpha = std::make_shared<double>(0.5);
    auto explain = std::make_shared<bool>(false);
    c->add_option("--mode", *mode, "hybrid | keyword | vector")->capture_default_str();
    c->add_option("--fusion", *fusion, "Hybrid fusion: adaptive (default) | weighted | rrf");
    auto* alpha_opt = c->add_option("--alpha", *alpha,
                                    "Weighted fusion: the vector share, 0..1 (implies weighted)");
    c->add_flag("--explain", *explain, "Each hit carries its per-leg ranks and scores");
    auto threshold = std::make_shared<float>(0);
    auto offset = std::make_shared<int>(0);
    auto* threshold_opt = c->add_option("--score-threshold", *threshold,
                                        "Only hits scoring at least this (the mode's final score)");
    c->add_option("--offset", *offset, "Skip the first N hits (paging; offset + k <= 1000)");
    auto include_vector = std::make_shared<bool>(false);
    c->add_flag("--include-vector", *include_vector,
                "Return each hit's stored vector (implies --json)");
    auto as_json = std::make_shared<bool>(false);
    c->add_flag("--json", *as_json, "One JSON object per hit (for scripts) instead of a table");
    auto group_by = std::make_shared<std::string>();
    auto groups = std::make_shared<int>(10);
    auto group_size = std::make_shared<int>(3);
    c->add_option("--group-by", *group_by,
                  "Group the hits by this metadata field (\"author.name\" for a nested one)");
    c->add_option("--groups", *groups, "With --group-by: groups, best first")
        ->capture_default_str();
    c->add_option("--group-size", *group_size, "With --group-by: hits per group")
        ->capture_default_str();
    c->callback([=] {
      // The server's names, so a typo fails here with the server's words.
      ExitIfError(client::CheckSearchMode(*mode));
      if (!fusion->empty()) ExitIfError(keyword::ParseFusionMethod(*fusion).status());
      v1::NearTextRequest req;
      req.set_tenant(f->tenant);
      req.set_mode(*mode);
      req.set_fusion(*fusion);
      if (alpha_opt->count() > 0) req.set_alpha(*alpha);
      req.set_explain(*explain);
      req.set_collection(*collection);
      req.set_query(*query);
      req.set_k(*k);
      req.set_include_text(!*no_text);
      req.set_include_metadata(!*no_text);
      if (instr->count() > 0) req.set_instruction(*instruction);
      req.set_ef_search(*ef_search);
      req.set_nprobe(*nprobe);
      // The server parses it (db::ParseFilterJson: the one filter parser).
      req.set_filter_json(*filter);
      req.set_include_vector(*include_vector);
      if (threshold_opt->count() > 0) req.set_score_threshold(*threshold);
      req.set_offset(*offset);
      if (!group_by->empty()) {
        req.mutable_group_by()->set_field(*group_by);
        req.mutable_group_by()->set_groups(*groups);
        req.mutable_group_by()->set_group_size(*group_size);
      }
      const auto resp = CallOrExit<v1::Search>(*f, &v1::Search::Stub::NearText, req);
      if (!group_by->empty()) {
        // A group's header, then its hits: a table, or one JSON line per group.
        for (const v1::HitGroup& g : resp.groups()) {
          v1::SearchResponse one;  // the group's hits, with the search's mode and alpha
          one.set_mode(resp.mode());
          one.set_alpha(resp.alpha());
          one.set_model_id(resp.model_id());
          *one.mutable_hits() = g.hits();
          if (*as_json) {
            Print(json{{"value", ValueToJson(g.value())}, {"hits", HitsToJson(one)}});
          } else {
            std::printf("group %s\n", ValueToJson(g.value()).dump().c_str());
            const Marks marks = MarksFor(StdoutIsStyledTerminal());
            std::fputs(SearchTable(one, *query, *explain, marks).c_str(), stdout);
          }
        }
        return;
      }
      if (!*as_json && !*include_vector) {
        std::fputs(SearchTable(resp, *query, *explain, MarksFor(StdoutIsStyledTerminal())).c_str(),
                   stdout);
        return;
      }
      const json hits = HitsToJson(resp);
      for (int i = 0; i < resp.hits_size(); ++i) {
        const v1::Hit& h = resp.hits(i);
        if (h.vector_size() == 0) {
          Print(hits[i]);
          continue;
        }
        // Shortest round-trip digits, as `get --include-vector` prints them.
        json j = hits[i];
        j.erase("score");
        PrintWithFloats(j, h.score(), {h.vector().data(), static_cast<size_t>(h.vector_size())});
      }
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto args = std::make_shared<IdsArgs>();
    auto include_vector = std::make_shared<bool>(false);
    CLI::App* c = AddClientCommand(&app, "get", "Get documents by id", f.get());
    AddIdsOptions(c, args.get());
    AddTenantFlag(c, f.get());
    c->add_flag("--include-vector", *include_vector, "Return each document's stored vector");
    c->callback([=] {
      auto req = IdsRequest<v1::GetRequest>(*args);
      req.set_tenant(f->tenant);
      req.set_include_vector(*include_vector);
      const auto resp = CallOrExit<v1::Documents>(*f, &v1::Documents::Stub::Get, req);
      for (const auto& d : resp.documents()) {
        PrintWithFloats(
            json{{"id", d.id()}, {"text", d.text()}, {"metadata", MetadataToJson(d.metadata())}},
            std::nullopt, {d.vector().data(), static_cast<size_t>(d.vector_size())});
      }
      for (const auto& id : resp.missing_ids())
        std::fprintf(stderr, "neodb: '%s' not found\n", id.c_str());
      if (resp.missing_ids_size() > 0) throw ExitRequest{1};
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto args = std::make_shared<IdsArgs>();
    auto filter = std::make_shared<std::string>();
    CLI::App* c =
        AddClientCommand(&app, "delete", "Delete documents by id, or those a filter accepts",
                         f.get());
    c->add_option("--collection", args->collection, "Collection")->required();
    c->add_option("ids", args->ids, "Document ids (or --filter, or --all-of-tenant)");
    c->add_option("--filter", *filter, "A filter in its JSON form (README, Filters)");
    AddTenantFlag(c, f.get());
    auto all_of_tenant = std::make_shared<bool>(false);
    c->add_flag("--all-of-tenant", *all_of_tenant, "Delete every document of --tenant");
    c->callback([=] {
      auto req = IdsRequest<v1::DeleteRequest>(*args);
      req.set_filter_json(*filter);  // the server refuses ids and a filter together
      req.set_tenant(f->tenant);
      req.set_all_of_tenant(*all_of_tenant);
      const auto resp = CallOrExit<v1::Documents>(*f, &v1::Documents::Stub::Delete, req);
      json out{{"deleted", resp.deleted()}};
      if (!resp.consistency_token().empty()) out["consistency_token"] = resp.consistency_token();
      Print(out);
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto collection = std::make_shared<std::string>();
    CLI::App* c = AddClientCommand(
        &app, "tenants", "A multi-tenant collection's tenants and their document counts", f.get());
    c->add_option("--collection", *collection, "Collection")->required();
    c->callback([=] {
      v1::ListTenantsRequest req;
      req.set_collection(*collection);
      const auto resp = CallOrExit<v1::Documents>(*f, &v1::Documents::Stub::ListTenants, req);
      for (const auto& t : resp.tenants()) {
        Print(json{{"tenant", t.tenant()}, {"documents", t.documents()}});
      }
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto collection = std::make_shared<std::string>();
    auto filter = std::make_shared<std::string>();
    CLI::App* c = AddClientCommand(
        &app, "count", "Count a collection's documents, or those a filter accepts", f.get());
    c->add_option("--collection", *collection, "Collection")->required();
    AddTenantFlag(c, f.get());
    c->add_option("--filter", *filter, "A filter in its JSON form (README, Filters)");
    c->callback([=] {
      v1::CountRequest req;
      req.set_collection(*collection);
      req.set_tenant(f->tenant);
      req.set_filter_json(*filter);
      const auto resp = CallOrExit<v1::Documents>(*f, &v1::Documents::Stub::Count, req);
      Print(json{{"count", resp.count()}});
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto args = std::make_shared<IdsArgs>();
    auto filter = std::make_shared<std::string>();
    auto set = std::make_shared<std::string>();
    auto remove = std::make_shared<std::vector<std::string>>();
    auto replace = std::make_shared<bool>(false);
    CLI::App* c = AddClientCommand(
        &app, "update",
        "Change the metadata of documents by id or by filter, keeping texts and vectors",
        f.get());
    c->add_option("--collection", args->collection, "Collection")->required();
    c->add_option("ids", args->ids, "Document ids (or --filter)");
    c->add_option("--filter", *filter, "A filter in its JSON form (README, Filters)");
    c->add_option("--set", *set,
                  "A JSON object of fields to set (objects are merged key by key)");
    c->add_option("--remove", *remove, "A field to remove (\"author.name\" for a nested one)");
    c->add_flag("--replace", *replace, "The metadata becomes --set's object, whole");
    AddTenantFlag(c, f.get());
    c->callback([=] {
      auto req = IdsRequest<v1::UpdateMetadataRequest>(*args);
      req.set_tenant(f->tenant);
      req.set_filter_json(*filter);
      if (!set->empty()) {
        json j = json::parse(*set, nullptr, /*allow_exceptions=*/false);
        if (!j.is_object()) {
          std::fprintf(stderr, "neodb: --set must be a JSON object\n");
          throw ExitRequest{2};
        }
        if (absl::Status st = JsonToMetadata(j, req.mutable_metadata()); !st.ok()) {
          std::fprintf(stderr, "neodb: --set: %s\n", std::string(st.message()).c_str());
          throw ExitRequest{2};
        }
      }
      for (const auto& r : *remove) req.add_remove(r);
      if (*replace) req.set_mode(v1::UpdateMetadataRequest::REPLACE);
      const auto resp = CallOrExit<v1::Documents>(*f, &v1::Documents::Stub::UpdateMetadata, req);
      Print(json{{"matched", resp.matched()}, {"updated", resp.updated()}});
      for (const auto& id : resp.missing_ids()) {
        std::fprintf(stderr, "neodb: '%s' not found\n", id.c_str());
      }
      if (resp.missing_ids_size() > 0) throw ExitRequest{1};
    });
  }
}

// --- admin ------------------------------------------------------------------

void RegisterAdmin(CLI::App& app) {
  {
    auto f = std::make_shared<ClientFlags>();
    CLI::App* c = AddClientCommand(&app, "stats", "Server statistics", f.get());
    auto as_json = std::make_shared<bool>(false);
    c->add_flag("--json", *as_json, "One JSON object (for scripts) instead of key: value lines");
    c->callback([=] {
      const auto r = CallOrExit<v1::Admin>(*f, &v1::Admin::Stub::Stats, v1::StatsRequest());
      const auto list = CallOrExit<v1::Collections>(*f, &v1::Collections::Stub::List,
                                                    v1::ListCollectionsRequest());
      json keyword = json::object();
      for (const auto& i : list.collections()) {
        keyword[i.spec().name()] = KeywordInfoToJson(i.keyword());
      }
      const json out{{"model_id", r.model_id()},
                 {"dimension", r.dimension()},
                 {"collections", r.collections()},
                 {"documents", r.documents()},
                 {"snapshot_loads", r.snapshot_loads()},
                 {"index_rebuilds", r.index_rebuilds()},
                 {"replayed_changes", r.replayed_changes()},
                 {"snapshots_written", r.snapshots_written()},
                 {"embed_queue_depth", r.embed_queue_depth()},
                 {"embedded_texts", r.embedded_texts()},
                 {"embedded_tokens", r.embedded_tokens()},
                 {"encoder_seconds", r.encoder_seconds()},
                 {"keyword_snapshot_loads", r.keyword_snapshot_loads()},
                 {"keyword_rebuilds", r.keyword_rebuilds()},
                 {"device", r.device()},
                 {"cpu_kernels", r.cpu_kernels()},
                 {"models_dir", r.models_dir()},
                 {"keyword", keyword}};
      if (*as_json) {
        Print(out);
      } else {
        std::fputs(RenderKeyValues(out).c_str(), stdout);
      }
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    CLI::App* c = AddClientCommand(&app, "snapshot", "Snapshot every index now", f.get());
    c->callback([=] {
      const auto r = CallOrExit<v1::Admin>(*f, &v1::Admin::Stub::Snapshot, v1::SnapshotRequest());
      Print(json{{"collections", r.collections()}, {"covered_seq", r.covered_seq()}});
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto out = std::make_shared<std::string>();
    CLI::App* c = AddClientCommand(
        &app, "backup",
        "Online backup into a new directory inside the server's --backup-dir", f.get());
    c->add_option("--out", *out, "New backup directory (relative: inside --backup-dir)")
        ->required();
    c->callback([=] {
      v1::BackupRequest req;
      req.set_dir(*out);
      const auto r = CallOrExit<v1::Admin>(*f, &v1::Admin::Stub::Backup, req);
      Print(json{{"path", r.path()},
                 {"covered_seq", r.covered_seq()},
                 {"files", r.files()},
                 {"bytes", r.bytes()},
                 {"models", r.models()}});
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    CLI::App* group = app.add_subcommand("cluster", "A cluster of servers started with --nats");
    group->require_subcommand(1);
    CLI::App* c = AddClientCommand(
        group, "status",
        "Live nodes, and each sharded collection's shards with their replicas' positions and "
        "lag (from the nodes' heartbeats, a few seconds old at most)",
        f.get());
    c->callback([=] {
      const auto r = CallOrExit<v1::Admin>(*f, &v1::Admin::Stub::ClusterStatus,
                                           v1::ClusterStatusRequest());
      json nodes = json::array();
      for (const auto& n : r.nodes()) nodes.push_back({{"node", n.node_id()}, {"address", n.address()}});
      json collections = json::array();
      for (const auto& c : r.collections()) {
        json shards = json::array();
        for (const auto& s : c.shard_status()) {
          json replicas = json::array();
          for (const auto& x : s.replicas()) {
            replicas.push_back({{"node", x.node_id()},
                                {"live", x.live()},
                                {"position", x.position()},
                                {"lag", x.lag()}});
          }
          shards.push_back(
              {{"shard", s.shard()}, {"last_sequence", s.last_sequence()}, {"replicas", replicas}});
        }
        collections.push_back({{"name", c.name()},
                               {"shards", c.shards()},
                               {"replicas", c.replicas()},
                               {"shard_status", shards}});
      }
      Print(json{{"answered_by", r.node_id()}, {"nodes", nodes}, {"collections", collections}});
    });
    auto rf = std::make_shared<ClientFlags>();
    auto collection = std::make_shared<std::string>();
    CLI::App* r = AddClientCommand(
        group, "rebalance",
        "Place a sharded collection's shards again over the live nodes (a new node gets its "
        "share, a dead node's replicas move to live ones); new replicas catch up before the old "
        "ones leave. Waits up to --timeout (default 600 s); run it again if it runs out",
        rf.get());
    rf->timeout_s = 600;
    r->add_option("collection", *collection, "Collection")->required();
    r->callback([=] {
      v1::ClusterRebalanceRequest req;
      req.set_collection(*collection);
      const auto resp = CallOrExit<v1::Admin>(*rf, &v1::Admin::Stub::ClusterRebalance, req);
      json moves = json::array();
      for (const auto& m : resp.moves()) {
        moves.push_back({{"shard", m.shard()},
                         {"added", std::vector<std::string>(m.added().begin(), m.added().end())},
                         {"removed",
                          std::vector<std::string>(m.removed().begin(), m.removed().end())}});
      }
      Print(json{{"collection", *collection}, {"moves", moves}});
    });
    auto bf = std::make_shared<ClientFlags>();
    auto bcollection = std::make_shared<std::string>();
    auto bdir = std::make_shared<std::string>();
    CLI::App* b = AddClientCommand(
        group, "backup",
        "Back up a sharded collection from its log (every document's last change, vectors "
        "included) into a new directory under the answering server's --backup-dir",
        bf.get());
    bf->timeout_s = 3600;
    b->add_option("collection", *bcollection, "Collection")->required();
    b->add_option("dir", *bdir, "New directory (relative: inside --backup-dir)")->required();
    b->callback([=] {
      v1::ClusterBackupRequest req;
      req.set_collection(*bcollection);
      req.set_dir(*bdir);
      const auto resp = CallOrExit<v1::Admin>(*bf, &v1::Admin::Stub::ClusterBackup, req);
      Print(json{{"collection", *bcollection},
                 {"path", resp.path()},
                 {"changes", resp.changes()},
                 {"consistency_token", resp.consistency_token()}});
    });
    auto rsf = std::make_shared<ClientFlags>();
    auto rdir = std::make_shared<std::string>();
    auto ras = std::make_shared<std::string>();
    auto rshards = std::make_shared<uint32_t>(0);
    auto rreplicas = std::make_shared<uint32_t>(0);
    CLI::App* rs = AddClientCommand(
        group, "restore",
        "Create a sharded collection from a `cluster backup` directory (under the server's "
        "--backup-dir); its documents go to the new collection's log with their vectors",
        rsf.get());
    rsf->timeout_s = 3600;
    rs->add_option("dir", *rdir, "Backup directory (relative: inside --backup-dir)")->required();
    rs->add_option("--as", *ras, "The new collection's name (default: the backup's)");
    rs->add_option("--shards", *rshards, "Shards (default: the backup's)");
    rs->add_option("--replicas", *rreplicas, "Replicas of each shard (default: the backup's)");
    rs->callback([=] {
      v1::ClusterRestoreRequest req;
      req.set_dir(*rdir);
      req.set_collection(*ras);
      req.set_shards(*rshards);
      req.set_replicas(*rreplicas);
      const auto resp = CallOrExit<v1::Admin>(*rsf, &v1::Admin::Stub::ClusterRestore, req);
      Print(json{{"collection", resp.collection()},
                 {"changes", resp.changes()},
                 {"consistency_token", resp.consistency_token()}});
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto collection = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto no_vectors = std::make_shared<bool>(false);
    CLI::App* c = AddClientCommand(
        &app, "export",
        "Write a collection as JSONL ({id, text, metadata, vector, vector_model_id}; `import` "
        "reads it, and takes the vectors as they are into a collection on the same model)",
        f.get());
    c->add_option("--collection", *collection, "Collection")->required();
    c->add_option("--out", *out, "Output file (written whole, then renamed into place)")
        ->required();
    AddTenantFlag(c, f.get());
    c->add_flag("--no-vectors", *no_vectors,
                "Leave the vectors out (an import then embeds the texts with its own model)");
    c->callback([=] {
      // Written whole under a temporary name, synced, then renamed into place
      // (common/atomic_file.h): an interrupted export leaves no partial file.
      auto file = AtomicFileWriter::Create(Env::Default(), *out, *out + ".partial");
      ExitIfError(file.status());
      auto stub = v1::Documents::NewStub(Connect(*f));
      v1::ListDocumentsRequest req;
      req.set_collection(*collection);
      req.set_tenant(f->tenant);
      req.set_page_size(1000);
      req.set_include_text(true);
      req.set_include_metadata(true);
      req.set_include_vector(!*no_vectors);
      uint64_t n = 0;
      do {
        const auto r = CallOrExit(*stub, *f, &v1::Documents::Stub::List, req);
        for (const auto& d : r.documents()) {
          json j{{"id", d.id()}, {"text", d.text()}, {"metadata", MetadataToJson(d.metadata())}};
          if (d.vector_size() > 0) j["vector_model_id"] = d.vector_model_id();
          std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace);
          if (d.vector_size() > 0) {
            // Shortest round-trip digits: the import stores the same bits.
            line.pop_back();
            line += ",\"vector\":";
            AppendFloatJsonArray(&line,
                                 std::span<const float>(d.vector().data(), d.vector().size()));
            line += "}";
          }
          line += "\n";
          ExitIfError(file->Append(line));
          ++n;
        }
        req.set_page_token(r.next_page_token());
      } while (!req.page_token().empty());
      ExitIfError(file->Commit());
      std::fprintf(stderr, "neodb: exported %llu documents to %s\n",
                   static_cast<unsigned long long>(n), out->c_str());
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto collection = std::make_shared<std::string>();
    auto model = std::make_shared<std::string>();
    auto no_wait = std::make_shared<bool>(false);
    CLI::App* c = AddClientCommand(&app, "reindex",
                                   "Re-embed a collection (optionally with a new model)", f.get());
    c->add_option("--collection", *collection, "Collection")->required();
    c->add_option("--model", *model,
                  "Model checkpoint directory (a path on this machine is sent absolute)");
    c->add_flag("--no-wait", *no_wait, "Return once started");
    c->callback([=] {
      auto stub = v1::Admin::NewStub(Connect(*f));
      {
        v1::ReindexRequest req;
        req.set_collection(*collection);
        // The collection records this directory: make a local path absolute
        // so it means the same whatever directory the server runs in.
        std::error_code ec;
        const bool local = !model->empty() && std::filesystem::exists(*model, ec);
        req.set_model_dir(local ? std::filesystem::absolute(*model).string() : *model);
        CallOrExit(*stub, *f, &v1::Admin::Stub::Reindex, req);
      }
      if (*no_wait) return;
      v1::ReindexStatusRequest req;
      req.set_collection(*collection);
      ProgressLine progress;
      const auto r = WaitForReindex(
          [&]() -> absl::StatusOr<v1::ReindexStatusResponse> {
            return CallOrExit(*stub, *f, &v1::Admin::Stub::ReindexStatus, req);
          },
          *collection, "neodb reindex", progress);
      ExitIfError(r.status());
      Print(json{{"state", "done"}, {"documents", r->total()}, {"model_id", r->model_id()}});
    });
  }
}

}  // namespace

void RegisterClientCommands(CLI::App& app) {
  RegisterCollections(app);
  RegisterDocuments(app);
  RegisterAdmin(app);
  RegisterClientVectorCommands(app);
  RegisterClientQueryCommands(app);
}

}  // namespace neodb::cli
