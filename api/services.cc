#include "api/services.h"

#include <filesystem>
#include <optional>
#include <set>
#include <type_traits>
#include <system_error>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "api/auth/api_keys.h"
#include "api/auth/caller_role.h"
#include "api/auth/model_paths.h"
#include "api/convert.h"
#include "api/document_batch.h"
#include "api/fan_out.h"
#include "api/grpc_status.h"
#include "api/ingest_reactors.h"
#include "api/search_features.h"
#include "api/tenant_ids.h"
#include "api/unary_reactor.h"
#include "cluster/shard_map.h"
#include "common/status_macros.h"
#include "neodb/v1/neodb.grpc.pb.h"

namespace neodb::api {
namespace {

namespace pb = google::protobuf;

// Whether the caller's key may call Admin/Reindex: true on a server without
// keys, else only for the admin role (method_roles.cc gives Reindex to admin).
bool CallerMayReindex(const grpc::ServerContextBase& ctx) {
  const std::optional<Role> role = CallerRole(ctx);
  return !role || *role == Role::kAdmin;
}

using engine::Database;
using engine::DatabaseStats;
using engine::ReindexProgress;
using engine::SearchResult;

grpc::Status Error(const absl::Status& s) { return ToGrpcStatus(s); }

// FAILED_PRECONDITION when `feature` (non-empty) is asked of a sharded
// collection: the cluster does not carry it yet.
absl::Status RefuseIfSharded(cluster::ClusterNode* cluster, const std::string& feature,
                             const std::string& collection) {
  if (feature.empty() || cluster == nullptr || !cluster->IsSharded(collection)) {
    return absl::OkStatus();
  }
  return NotYetForSharded(feature, collection);
}

// A service's unary methods, both ways in: gRPC's callback methods run each
// body on the workers (Run; unary_reactor.h), and the HTTP JSON API runs the
// same body on its own thread (Find, through FindUnaryBody). Each service
// adds its bodies once, by method name, in its constructor.
class UnaryMethods {
 public:
  virtual ~UnaryMethods() = default;

  // The body of `full_method` ("/neodb.v1.Search/NearText"); null when this
  // service has none by that name.
  UnaryBody Find(std::string_view full_method) const {
    auto it = bodies_.find(std::string(full_method));  // at start-up only
    return it == bodies_.end() ? nullptr : it->second;
  }

 protected:
  // `service`: the generated service's full name ("neodb.v1.Search").
  UnaryMethods(WorkerPool* workers, std::string service)
      : workers_(workers), service_(std::move(service)) {}

  template <class Svc, class Req, class Resp>
  using Body = grpc::Status (Svc::*)(grpc::ServerContextBase*, const Req*, Resp*);

  template <class Svc, class Req, class Resp>
  void Add(const char* method, Svc* svc, Body<Svc, Req, Resp> body) {
    bodies_.emplace(absl::StrCat("/", service_, "/", method),
                    [svc, body](grpc::ServerContextBase* ctx, const pb::Message& req,
                                pb::Message* resp) {
                      // JsonRpc builds both from the method's descriptor.
                      NEODB_CHECK(req.GetDescriptor() == Req::descriptor() &&
                                  resp->GetDescriptor() == Resp::descriptor());
                      return (svc->*body)(ctx, static_cast<const Req*>(&req),
                                          static_cast<Resp*>(resp));
                    });
  }

  template <class Svc, class Req, class Resp>
  grpc::ServerUnaryReactor* Run(grpc::CallbackServerContext* ctx, const Req* req, Resp* resp,
                                Svc* svc, Body<Svc, Req, Resp> body) {
    return StartUnary(workers_, ctx, [=] { return (svc->*body)(ctx, req, resp); });
  }

 private:
  WorkerPool* const workers_;
  const std::string service_;
  absl::flat_hash_map<std::string, UnaryBody> bodies_;
};

class CollectionsService final : public v1::Collections::CallbackService, public UnaryMethods {
 public:
  CollectionsService(Database* db, cluster::ClusterNode* cluster, WorkerPool* workers)
      : UnaryMethods(workers, v1::Collections::service_full_name()), db_(db), cluster_(cluster) {
    Add("Create", this, &CollectionsService::DoCreate);
    Add("List", this, &CollectionsService::DoList);
    Add("Describe", this, &CollectionsService::DoDescribe);
    Add("Drop", this, &CollectionsService::DoDrop);
    Add("SetFusion", this, &CollectionsService::DoSetFusion);
  }

  // gRPC's callback methods: each runs its body on the workers (unary_reactor.h).
  grpc::ServerUnaryReactor* Create(grpc::CallbackServerContext* ctx,
                                   const v1::CreateCollectionRequest* req,
                                   v1::CreateCollectionResponse* resp) override {
    return Run(ctx, req, resp, this, &CollectionsService::DoCreate);
  }
  grpc::ServerUnaryReactor* List(grpc::CallbackServerContext* ctx,
                                 const v1::ListCollectionsRequest* req,
                                 v1::ListCollectionsResponse* resp) override {
    return Run(ctx, req, resp, this, &CollectionsService::DoList);
  }
  grpc::ServerUnaryReactor* Describe(grpc::CallbackServerContext* ctx,
                                     const v1::DescribeCollectionRequest* req,
                                     v1::DescribeCollectionResponse* resp) override {
    return Run(ctx, req, resp, this, &CollectionsService::DoDescribe);
  }
  grpc::ServerUnaryReactor* Drop(grpc::CallbackServerContext* ctx,
                                 const v1::DropCollectionRequest* req,
                                 v1::DropCollectionResponse* resp) override {
    return Run(ctx, req, resp, this, &CollectionsService::DoDrop);
  }
  grpc::ServerUnaryReactor* SetFusion(grpc::CallbackServerContext* ctx,
                                      const v1::SetFusionRequest* req,
                                      v1::SetFusionResponse* resp) override {
    return Run(ctx, req, resp, this, &CollectionsService::DoSetFusion);
  }

 private:
  // The bodies, one per unary method: gRPC's and the HTTP JSON API's (FindUnaryBody).
  grpc::Status DoCreate(grpc::ServerContextBase*,
                        const v1::CreateCollectionRequest* req,
                        v1::CreateCollectionResponse* resp) {
    auto spec = FromProto(req->spec());
    if (!spec.ok()) return Error(spec.status());
    auto vectors = VectorOptionsFromProto(req->spec());
    if (!vectors.ok()) return Error(vectors.status());
    if (req->shards() > 0 || req->replicas() > 0) {
      if (cluster_ == nullptr) {
        return Error(absl::FailedPreconditionError(
            "shards and replicas need a cluster: this server was started without --nats"));
      }
      if (vectors->source != engine::VectorSource::kModel) {
        return Error(absl::UnimplementedError(
            "a sharded collection embeds with the model: client vectors are not sharded yet"));
      }
      if (spec->multi_tenant) {
        return Error(absl::UnimplementedError("multi-tenant collections are not sharded yet"));
      }
      auto c = cluster_->CreateCollection(std::move(*spec), std::max<uint32_t>(1, req->shards()),
                                          std::max<uint32_t>(1, req->replicas()));
      if (!c.ok()) return Error(c.status());
      auto info = db_->DescribeCollection(c->spec.name);
      if (!info.ok()) return Error(info.status());
      ToProto(*info, resp->mutable_info());
      return grpc::Status::OK;
    }
    auto info = db_->CreateCollection(std::move(*spec), *vectors);
    if (!info.ok()) return Error(info.status());
    ToProto(*info, resp->mutable_info());
    return grpc::Status::OK;
  }
  grpc::Status DoList(grpc::ServerContextBase*,
                      const v1::ListCollectionsRequest*,
                      v1::ListCollectionsResponse* resp) {
    auto all = db_->ListCollections();
    if (!all.ok()) return Error(all.status());
    for (const auto& info : *all) ToProto(info, resp->add_collections());
    return grpc::Status::OK;
  }
  grpc::Status DoDescribe(grpc::ServerContextBase*,
                          const v1::DescribeCollectionRequest* req,
                          v1::DescribeCollectionResponse* resp) {
    auto info = db_->DescribeCollection(req->name());
    if (!info.ok()) return Error(info.status());
    ToProto(*info, resp->mutable_info());
    return grpc::Status::OK;
  }
  grpc::Status DoDrop(grpc::ServerContextBase*,
                      const v1::DropCollectionRequest* req,
                      v1::DropCollectionResponse*) {
    // A sharded collection is dropped from the cluster (every node's copy and its log).
    if (cluster_ != nullptr && cluster_->IsSharded(req->name())) {
      return Error(cluster_->DropCollection(req->name()));
    }
    return Error(db_->DropCollection(req->name()));
  }
  grpc::Status DoSetFusion(grpc::ServerContextBase*,
                           const v1::SetFusionRequest* req,
                           v1::SetFusionResponse* resp) {
    auto f = FusionFromProto(req->fusion(), req->has_alpha(), req->alpha());
    if (!f.ok()) return Error(f.status());
    auto info = db_->SetDefaultFusion(req->name(), std::string(keyword::FusionMethodName(f->method)),
                                      f->alpha);
    if (!info.ok()) return Error(info.status());
    ToProto(*info, resp->mutable_info());
    return grpc::Status::OK;
  }

 private:
  Database* db_;
  cluster::ClusterNode* cluster_;
};

// Every method on the callback API: the ingest streams (ingest_reactors.h)
// and the unary calls (unary_reactor.h).
class DocumentsService final : public v1::Documents::CallbackService, public UnaryMethods {
 public:
  DocumentsService(Database* db, const ServiceLimits& limits, StreamGate* streams,
                   WorkerPool* stream_workers, WorkerPool* unary_workers,
                   cluster::ClusterNode* cluster)
      : UnaryMethods(unary_workers, v1::Documents::service_full_name()),
        db_(db),
        cluster_(cluster),
        limits_(limits),
        ingest_{.db = db, .cluster = cluster, .limits = limits, .gate = streams,
                .workers = stream_workers} {
    Add("Upsert", this, &DocumentsService::DoUpsert);
    Add("Get", this, &DocumentsService::DoGet);
    Add("Delete", this, &DocumentsService::DoDelete);
    Add("Count", this, &DocumentsService::DoCount);
    Add("UpdateMetadata", this, &DocumentsService::DoUpdateMetadata);
    Add("List", this, &DocumentsService::DoList);
    Add("ListTenants", this, &DocumentsService::DoListTenants);
  }

  // gRPC's callback methods: each runs its body on the workers (unary_reactor.h).
  grpc::ServerUnaryReactor* Upsert(grpc::CallbackServerContext* ctx,
                                   const v1::UpsertRequest* req,
                                   v1::UpsertResponse* resp) override {
    return Run(ctx, req, resp, this, &DocumentsService::DoUpsert);
  }
  grpc::ServerUnaryReactor* Get(grpc::CallbackServerContext* ctx,
                                const v1::GetRequest* req,
                                v1::GetResponse* resp) override {
    return Run(ctx, req, resp, this, &DocumentsService::DoGet);
  }
  grpc::ServerUnaryReactor* Delete(grpc::CallbackServerContext* ctx,
                                   const v1::DeleteRequest* req,
                                   v1::DeleteResponse* resp) override {
    return Run(ctx, req, resp, this, &DocumentsService::DoDelete);
  }
  grpc::ServerUnaryReactor* Count(grpc::CallbackServerContext* ctx,
                                  const v1::CountRequest* req,
                                  v1::CountResponse* resp) override {
    return Run(ctx, req, resp, this, &DocumentsService::DoCount);
  }
  grpc::ServerUnaryReactor* UpdateMetadata(grpc::CallbackServerContext* ctx,
                                           const v1::UpdateMetadataRequest* req,
                                           v1::UpdateMetadataResponse* resp) override {
    return Run(ctx, req, resp, this, &DocumentsService::DoUpdateMetadata);
  }
  grpc::ServerUnaryReactor* List(grpc::CallbackServerContext* ctx,
                                 const v1::ListDocumentsRequest* req,
                                 v1::ListDocumentsResponse* resp) override {
    return Run(ctx, req, resp, this, &DocumentsService::DoList);
  }
  grpc::ServerUnaryReactor* ListTenants(grpc::CallbackServerContext* ctx,
                                        const v1::ListTenantsRequest* req,
                                        v1::ListTenantsResponse* resp) override {
    return Run(ctx, req, resp, this, &DocumentsService::DoListTenants);
  }

  grpc::ServerReadReactor<v1::IngestBatch>* BulkIngest(grpc::CallbackServerContext* ctx,
                                                       v1::BulkIngestResponse* resp) override {
    return NewBulkIngestReactor(&ingest_, ctx, resp);
  }

  grpc::ServerBidiReactor<v1::IngestBatch, v1::IngestAck>* Ingest(
      grpc::CallbackServerContext* ctx) override {
    return NewIngestReactor(&ingest_, ctx);
  }

 private:
  // The bodies, one per unary method: gRPC's and the HTTP JSON API's (FindUnaryBody).
  grpc::Status DoUpsert(grpc::ServerContextBase* ctx,
                        const v1::UpsertRequest* req,
                        v1::UpsertResponse* resp) {
    cluster::ConsistencyToken token;
    auto ids = UpsertBatch({db_, cluster_}, limits_, ctx, req->collection(), req->tenant(),
                           req->documents(), nullptr, &token);
    if (!ids.ok()) return Error(ids.status());
    for (auto& id : *ids) resp->add_ids(std::move(id));
    if (!token.empty()) resp->set_consistency_token(cluster::FormatToken(token));
    return grpc::Status::OK;
  }

  grpc::Status DoGet(grpc::ServerContextBase*, const v1::GetRequest* req, v1::GetResponse* resp) {
    std::vector<std::string> ids(req->ids().begin(), req->ids().end());
    if (ids.size() > static_cast<size_t>(limits_.max_documents_per_request)) {
      return Error(TooMany(ids.size(), "ids"));
    }
    auto scoped = ScopeIds(*db_, req->collection(), req->tenant(), ids);
    if (!scoped.ok()) return Error(scoped.status());
    auto docs = db_->Get(req->collection(), scoped->stored);
    if (!docs.ok()) return Error(docs.status());
    for (size_t i = 0; i < ids.size(); ++i) {
      if ((*docs)[i]) {
        ToVisible(scoped->scope, &*(*docs)[i]);
        ToProto(*(*docs)[i], true, true, req->include_vector(), resp->add_documents());
      } else {
        resp->add_missing_ids(ids[i]);
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status DoDelete(grpc::ServerContextBase* ctx,
                        const v1::DeleteRequest* req,
                        v1::DeleteResponse* resp) {
    std::vector<std::string> ids(req->ids().begin(), req->ids().end());
    auto filter = RequestFilter(req->filter(), req->filter_json());
    if (!filter.ok()) return Error(filter.status());
    if (filter->has_value() || req->all_of_tenant()) {
      if (!ids.empty() || (filter->has_value() && req->all_of_tenant())) {
        return Error(absl::InvalidArgumentError(
            "delete by ids, by a filter or all of a tenant: one of them"));
      }
      if (req->all_of_tenant() && req->tenant().empty()) {
        return Error(absl::InvalidArgumentError("all_of_tenant needs the tenant"));
      }
      if (auto s = RefuseIfSharded(cluster_, "delete by filter", req->collection()); !s.ok()) {
        return Error(s);
      }
      auto n = db_->DeleteWhere(req->collection(), filter->has_value() ? &**filter : nullptr,
                                req->tenant(), CancelOf(ctx));
      if (!n.ok()) return Error(n.status());
      resp->set_deleted(*n);
      return grpc::Status::OK;
    }
    if (ids.empty()) return Error(absl::InvalidArgumentError("no ids (or filter) to delete"));
    if (ids.size() > static_cast<size_t>(limits_.max_documents_per_request)) {
      return Error(TooMany(ids.size(), "ids"));
    }
    if (cluster_ != nullptr && cluster_->IsSharded(req->collection())) {
      if (!req->tenant().empty()) return Error(NotForShardedTenants(req->collection()));
      auto w = cluster_->Delete(req->collection(), ids, DeadlineOf(ctx, limits_));
      if (!w.ok()) return Error(w.status());
      resp->set_deleted(w->ids.size());
      resp->set_consistency_token(cluster::FormatToken(w->token));
      return grpc::Status::OK;
    }
    auto scoped = ScopeIds(*db_, req->collection(), req->tenant(), ids);
    if (!scoped.ok()) return Error(scoped.status());
    auto n = db_->Delete(req->collection(), scoped->stored);
    if (!n.ok()) return Error(n.status());
    resp->set_deleted(*n);
    return grpc::Status::OK;
  }

  grpc::Status DoCount(grpc::ServerContextBase*,
                       const v1::CountRequest* req,
                       v1::CountResponse* resp) {
    if (auto s = RefuseIfSharded(cluster_, "count", req->collection()); !s.ok()) return Error(s);
    auto filter = RequestFilter(req->filter(), req->filter_json());
    if (!filter.ok()) return Error(filter.status());
    auto n = db_->Count(req->collection(), filter->has_value() ? &**filter : nullptr,
                        req->tenant());
    if (!n.ok()) return Error(n.status());
    resp->set_count(*n);
    return grpc::Status::OK;
  }

  grpc::Status DoUpdateMetadata(grpc::ServerContextBase* ctx,
                                const v1::UpdateMetadataRequest* req,
                                v1::UpdateMetadataResponse* resp) {
    if (auto s = RefuseIfSharded(cluster_, "metadata updates", req->collection()); !s.ok()) {
      return Error(s);
    }
    engine::DocumentSelection which;
    which.ids.assign(req->ids().begin(), req->ids().end());
    if (which.ids.size() > static_cast<size_t>(limits_.max_documents_per_request)) {
      return Error(TooMany(which.ids.size(), "ids"));
    }
    auto scoped = ScopeIds(*db_, req->collection(), req->tenant(), which.ids);
    if (!scoped.ok()) return Error(scoped.status());
    which.ids = std::move(scoped->stored);
    which.tenant = req->tenant();
    auto filter = RequestFilter(req->filter(), req->filter_json());
    if (!filter.ok()) return Error(filter.status());
    which.filter = std::move(*filter);
    auto patch = PatchFromProto(*req);
    if (!patch.ok()) return Error(patch.status());
    auto r = db_->UpdateMetadata(req->collection(), which, *patch, CancelOf(ctx));
    if (!r.ok()) return Error(r.status());
    resp->set_matched(r->matched);
    resp->set_updated(r->updated);
    ToVisible(scoped->scope, &r->missing_ids);
    for (const std::string& id : r->missing_ids) resp->add_missing_ids(id);
    return grpc::Status::OK;
  }

  grpc::Status DoList(grpc::ServerContextBase*,
                      const v1::ListDocumentsRequest* req,
                      v1::ListDocumentsResponse* resp) {
    if (req->page_size() < 0 || req->page_size() > 1000) {
      return Error(absl::InvalidArgumentError(
          absl::StrCat("page_size is ", req->page_size(), "; it must be in 0..1000")));
    }
    auto scoped = ScopeIds(*db_, req->collection(), req->tenant());
    if (!scoped.ok()) return Error(scoped.status());
    auto page = db_->List(req->collection(), req->page_token(),
                          req->page_size() == 0 ? 100 : static_cast<size_t>(req->page_size()),
                          req->tenant());
    if (!page.ok()) return Error(page.status());
    for (auto& d : page->documents) {
      ToVisible(scoped->scope, &d);
      ToProto(d, req->include_text(), req->include_metadata(), req->include_vector(),
              resp->add_documents());
    }
    resp->set_next_page_token(page->next_page_token);
    return grpc::Status::OK;
  }

  grpc::Status DoListTenants(grpc::ServerContextBase*,
                             const v1::ListTenantsRequest* req,
                             v1::ListTenantsResponse* resp) {
    auto tenants = db_->Tenants(req->collection());
    if (!tenants.ok()) return Error(tenants.status());
    for (const auto& [tenant, n] : *tenants) {
      v1::TenantCount* t = resp->add_tenants();
      t->set_tenant(tenant);
      t->set_documents(n);
    }
    return grpc::Status::OK;
  }

 private:
  absl::Status TooMany(size_t n, const char* what) const { return TooManyError(n, what, limits_); }

  Database* db_;
  cluster::ClusterNode* cluster_;
  ServiceLimits limits_;
  IngestStreamEnv ingest_;
};

class SearchService final : public v1::Search::CallbackService, public UnaryMethods {
 public:
  SearchService(Database* db, const ServiceLimits& limits, cluster::ClusterNode* cluster,
                PeerChannels* peers, WorkerPool* workers)
      : UnaryMethods(workers, v1::Search::service_full_name()),
        db_(db), limits_(limits), cluster_(cluster), peers_(peers) {
    Add("NearText", this, &SearchService::DoNearText);
    Add("NearVector", this, &SearchService::DoNearVector);
    Add("KeywordStats", this, &SearchService::DoKeywordStats);
    Add("Recommend", this, &SearchService::DoRecommend);
    Add("BatchNearText", this, &SearchService::DoBatchNearText);
  }

  // gRPC's callback methods: each runs its body on the workers (unary_reactor.h).
  grpc::ServerUnaryReactor* NearText(grpc::CallbackServerContext* ctx,
                                     const v1::NearTextRequest* req,
                                     v1::SearchResponse* resp) override {
    return Run(ctx, req, resp, this, &SearchService::DoNearText);
  }
  grpc::ServerUnaryReactor* NearVector(grpc::CallbackServerContext* ctx,
                                       const v1::NearVectorRequest* req,
                                       v1::SearchResponse* resp) override {
    return Run(ctx, req, resp, this, &SearchService::DoNearVector);
  }
  grpc::ServerUnaryReactor* KeywordStats(grpc::CallbackServerContext* ctx,
                                         const v1::KeywordStatsRequest* req,
                                         v1::KeywordCorpus* resp) override {
    return Run(ctx, req, resp, this, &SearchService::DoKeywordStats);
  }
  grpc::ServerUnaryReactor* Recommend(grpc::CallbackServerContext* ctx,
                                      const v1::RecommendRequest* req,
                                      v1::SearchResponse* resp) override {
    return Run(ctx, req, resp, this, &SearchService::DoRecommend);
  }
  grpc::ServerUnaryReactor* BatchNearText(grpc::CallbackServerContext* ctx,
                                          const v1::BatchNearTextRequest* req,
                                          v1::BatchSearchResponse* resp) override {
    return Run(ctx, req, resp, this, &SearchService::DoBatchNearText);
  }

 private:
  // The bodies, one per unary method: gRPC's and the HTTP JSON API's (FindUnaryBody).
  grpc::Status DoNearText(grpc::ServerContextBase* ctx,
                          const v1::NearTextRequest* req,
                          v1::SearchResponse* resp) {
    if (req->has_keyword_corpus() && !req->local_only()) {
      return Error(absl::InvalidArgumentError(
          "keyword_corpus is for a fan-out's parts (local_only), not for a client's search"));
    }
    if (auto s = RefuseIfSharded(ShardedUnsupportedFeature(*req), req->collection()); !s.ok()) {
      return Error(s);
    }
    auto r = Route<v1::NearTextRequest>(ctx, *req, Local(ctx).near_text, FanOutNearText);
    if (!r.ok()) return Error(r.status());
    *resp = std::move(*r);
    return grpc::Status::OK;
  }

  grpc::Status DoNearVector(grpc::ServerContextBase* ctx,
                            const v1::NearVectorRequest* req,
                            v1::SearchResponse* resp) {
    if (auto s = RefuseIfSharded(ShardedUnsupportedFeature(*req), req->collection()); !s.ok()) {
      return Error(s);
    }
    auto r = Route<v1::NearVectorRequest>(ctx, *req, Local(ctx).near_vector, FanOutNearVector);
    if (!r.ok()) return Error(r.status());
    *resp = std::move(*r);
    return grpc::Status::OK;
  }

  grpc::Status DoKeywordStats(grpc::ServerContextBase* ctx,
                              const v1::KeywordStatsRequest* req,
                              v1::KeywordCorpus* resp) {
    auto r = KeywordStatsHere(*ctx, *req);
    if (!r.ok()) return Error(r.status());
    *resp = std::move(*r);
    return grpc::Status::OK;
  }

  // Recommend and batches (search_features.h): unsharded collections only.
  grpc::Status DoRecommend(grpc::ServerContextBase*,
                           const v1::RecommendRequest* req,
                           v1::SearchResponse* resp) {
    if (auto s = RefuseIfSharded("recommend", req->collection()); !s.ok()) return Error(s);
    auto r = RecommendHere(*db_, *req);
    if (!r.ok()) return Error(r.status());
    *resp = std::move(*r);
    return grpc::Status::OK;
  }

  grpc::Status DoBatchNearText(grpc::ServerContextBase* ctx,
                               const v1::BatchNearTextRequest* req,
                               v1::BatchSearchResponse* resp) {
    if (auto s = RefuseIfSharded("batch search", req->collection()); !s.ok()) return Error(s);
    auto r = BatchNearTextHere(*db_, *req, DeadlineOf(ctx, limits_), CancelOf(ctx));
    if (!r.ok()) return Error(r.status());
    *resp = std::move(*r);
    return grpc::Status::OK;
  }

 private:
  using Answer = absl::StatusOr<v1::SearchResponse>;

  absl::Status RefuseIfSharded(const std::string& feature, const std::string& collection) const {
    return api::RefuseIfSharded(cluster_, feature, collection);
  }

  // This node's own answers (a fan-out's parts).
  LocalSearch Local(const grpc::ServerContextBase* ctx) const {
    LocalSearch l;
    l.near_text = [this, ctx](const v1::NearTextRequest& r) -> Answer {
      auto params = SearchParamsFromProto(r);
      if (!params.ok()) return params.status();
      std::optional<std::string> instruction;
      if (r.has_instruction()) instruction = r.instruction();
      auto found = db_->NearText(r.collection(), r.query(), instruction, *params,
                                 DeadlineOf(ctx, limits_), CancelOf(ctx));
      if (!found.ok()) return found.status();
      v1::SearchResponse out;
      SearchResultToProto(*found, &out);
      return out;
    };
    l.near_vector = [this](const v1::NearVectorRequest& r) -> Answer {
      auto params = SearchParamsFromProto(r);
      if (!params.ok()) return params.status();
      std::vector<float> v(r.vector().begin(), r.vector().end());
      auto found = db_->NearVector(r.collection(), v, *params);
      if (!found.ok()) return found.status();
      v1::SearchResponse out;
      SearchResultToProto(*found, &out);
      return out;
    };
    l.keyword_stats = [this, ctx](const v1::KeywordStatsRequest& r) {
      return KeywordStatsHere(*ctx, r);
    };
    return l;
  }

  // The keyword statistics of the query's terms over the shards named (all
  // of the collection's documents here when none are named), after this
  // node's replicas have applied the token.
  absl::StatusOr<v1::KeywordCorpus> KeywordStatsHere(const grpc::ServerContextBase& ctx,
                                                     const v1::KeywordStatsRequest& req) const {
    const std::string& collection = req.collection();
    std::function<bool(std::string_view)> within;
    if (cluster_ != nullptr && cluster_->IsSharded(collection)) {
      cluster::ConsistencyToken token;
      if (!req.consistency_token().empty()) {
        ASSIGN_OR_RETURN(token, cluster::ParseToken(req.consistency_token()));
      }
      ASSIGN_OR_RETURN(cluster::ShardedCollection entry, cluster_->Entry(collection));
      std::set<uint32_t> asked(req.shards().begin(), req.shards().end());
      std::set<uint32_t> held;
      for (uint32_t s = 0; s < entry.shards; ++s) {
        if (cluster_->Holds(collection, s)) held.insert(s);
      }
      for (uint32_t s : asked) {
        if (!held.count(s)) {
          return absl::FailedPreconditionError(absl::StrCat(
              "shard ", s, " of '", collection, "' has no replica on node ", cluster_->node_id()));
        }
      }
      RETURN_IF_ERROR(cluster_->WaitFor(collection, token,
                                        DeadlineOf(&ctx, limits_) - absl::Now(),
                                        /*held_only=*/true));
      // This node's collection holds every shard placed here: count only
      // the asked ones' documents when it holds more.
      if (!asked.empty() && asked != held) {
        const uint32_t shards = entry.shards;
        within = [asked = std::move(asked), shards](std::string_view id) {
          return asked.count(cluster::ShardOf(std::string(id), shards)) > 0;
        };
      }
    } else if (req.shards_size() > 0 || !req.consistency_token().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shards and consistency_token are for sharded collections; '", collection,
          "' is not one"));
    }
    ASSIGN_OR_RETURN(keyword::CorpusStats stats,
                     db_->KeywordStatistics(collection, req.query(), within));
    v1::KeywordCorpus out;
    out.set_documents(stats.documents);
    out.set_total_length(stats.total_length);
    for (const auto& [term, df] : stats.document_frequency) {
      (*out.mutable_document_frequency())[term] = df;
    }
    return out;
  }

  // Where a search is answered. An unsharded collection: here. A sharded
  // one: here when this node holds every shard or the request is a fan-out's
  // part (local_only), after this node's replicas have applied the token;
  // else fanned out (fan_out.h), each node waiting for its own shards.
  template <typename Req, typename FanOutFn>
  Answer Route(const grpc::ServerContextBase* ctx, const Req& req,
               const std::function<Answer(const Req&)>& local, FanOutFn fan_out) const {
    const std::string& collection = req.collection();
    const bool sharded = cluster_ != nullptr && cluster_->IsSharded(collection);
    if (!sharded) {
      if (!req.consistency_token().empty() || req.local_only()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "consistency_token and local_only are for sharded collections; '", collection,
            "' is not one"));
      }
      return local(req);
    }
    cluster::ConsistencyToken token;
    if (!req.consistency_token().empty()) {
      ASSIGN_OR_RETURN(token, cluster::ParseToken(req.consistency_token()));
    }
    const absl::Time deadline = DeadlineOf(ctx, limits_);
    auto here = [&](const Req& r) -> Answer {
      RETURN_IF_ERROR(cluster_->WaitFor(collection, token, deadline - absl::Now(),
                                        /*held_only=*/true));
      return local(r);
    };
    if (req.local_only() || cluster_->HoldsEveryShard(collection)) return here(req);
    LocalSearch parts = Local(ctx);
    if constexpr (std::is_same_v<Req, v1::NearTextRequest>) {
      parts.near_text = here;
    } else {
      parts.near_vector = here;
    }
    return fan_out(*cluster_, *peers_, *ctx, req, deadline, parts);
  }

  Database* db_;
  ServiceLimits limits_;
  cluster::ClusterNode* cluster_;
  PeerChannels* peers_;
};

class EmbeddingService final : public v1::Embedding::CallbackService, public UnaryMethods {
 public:
  EmbeddingService(Database* db, const ServiceLimits& limits, WorkerPool* workers)
      : UnaryMethods(workers, v1::Embedding::service_full_name()), db_(db), limits_(limits) {
    Add("Embed", this, &EmbeddingService::DoEmbed);
  }

  // gRPC's callback methods: each runs its body on the workers (unary_reactor.h).
  grpc::ServerUnaryReactor* Embed(grpc::CallbackServerContext* ctx,
                                  const v1::EmbedRequest* req,
                                  v1::EmbedResponse* resp) override {
    return Run(ctx, req, resp, this, &EmbeddingService::DoEmbed);
  }

 private:
  // The bodies, one per unary method: gRPC's and the HTTP JSON API's (FindUnaryBody).
  grpc::Status DoEmbed(grpc::ServerContextBase* ctx,
                       const v1::EmbedRequest* req,
                       v1::EmbedResponse* resp) {
    if (req->texts_size() > limits_.max_texts_per_request) {
      return Error(absl::InvalidArgumentError(absl::StrCat(
          "request has ", req->texts_size(), " texts; at most ", limits_.max_texts_per_request)));
    }
    encoder::EmbedOptions o;
    o.pooling =
        req->pooling() == v1::POOLING_CLS ? encoder::Pooling::kCls : encoder::Pooling::kMean;
    o.normalize = req->normalize();
    o.overflow = req->overflow() == v1::OVERFLOW_CHUNK ? encoder::Overflow::kChunk
                                                       : encoder::Overflow::kError;
    o.prefix = req->prefix();
    auto e = db_->Embed({req->texts().begin(), req->texts().end()}, o, DeadlineOf(ctx, limits_),
                        CancelOf(ctx));
    if (!e.ok()) return Error(e.status());
    uint64_t tokens = 0;
    for (auto& x : *e) {
      auto* v = resp->add_vectors();
      v->mutable_values()->Add(x.vector.begin(), x.vector.end());
      resp->set_dimension(static_cast<int32_t>(x.vector.size()));
      tokens += static_cast<uint64_t>(x.num_tokens);
    }
    resp->set_tokens(tokens);
    resp->set_model_id(db_->Stats().model_id);
    return grpc::Status::OK;
  }

 private:
  Database* db_;
  ServiceLimits limits_;
};

class AdminService final : public v1::Admin::CallbackService, public UnaryMethods {
 public:
  AdminService(Database* db, const ServiceLimits& limits, const StreamGate* streams,
               cluster::ClusterNode* cluster, WorkerPool* workers)
      : UnaryMethods(workers, v1::Admin::service_full_name()),
        db_(db), limits_(limits), streams_(streams), cluster_(cluster) {
    Add("ClusterStatus", this, &AdminService::DoClusterStatus);
    Add("ClusterRebalance", this, &AdminService::DoClusterRebalance);
    Add("Stats", this, &AdminService::DoStats);
    Add("Snapshot", this, &AdminService::DoSnapshot);
    Add("Reindex", this, &AdminService::DoReindex);
    Add("ReindexStatus", this, &AdminService::DoReindexStatus);
    Add("Compact", this, &AdminService::DoCompact);
    Add("Verify", this, &AdminService::DoVerify);
    Add("Backup", this, &AdminService::DoBackup);
    Add("ClusterBackup", this, &AdminService::DoClusterBackup);
    Add("ClusterRestore", this, &AdminService::DoClusterRestore);
  }

  // gRPC's callback methods: each runs its body on the workers (unary_reactor.h).
  grpc::ServerUnaryReactor* ClusterStatus(grpc::CallbackServerContext* ctx,
                                          const v1::ClusterStatusRequest* req,
                                          v1::ClusterStatusResponse* resp) override {
    return Run(ctx, req, resp, this, &AdminService::DoClusterStatus);
  }
  grpc::ServerUnaryReactor* ClusterRebalance(grpc::CallbackServerContext* ctx,
                                             const v1::ClusterRebalanceRequest* req,
                                             v1::ClusterRebalanceResponse* resp) override {
    return Run(ctx, req, resp, this, &AdminService::DoClusterRebalance);
  }
  grpc::ServerUnaryReactor* Stats(grpc::CallbackServerContext* ctx,
                                  const v1::StatsRequest* req,
                                  v1::StatsResponse* resp) override {
    return Run(ctx, req, resp, this, &AdminService::DoStats);
  }
  grpc::ServerUnaryReactor* Snapshot(grpc::CallbackServerContext* ctx,
                                     const v1::SnapshotRequest* req,
                                     v1::SnapshotResponse* resp) override {
    return Run(ctx, req, resp, this, &AdminService::DoSnapshot);
  }
  grpc::ServerUnaryReactor* Reindex(grpc::CallbackServerContext* ctx,
                                    const v1::ReindexRequest* req,
                                    v1::ReindexResponse* resp) override {
    return Run(ctx, req, resp, this, &AdminService::DoReindex);
  }
  grpc::ServerUnaryReactor* ReindexStatus(grpc::CallbackServerContext* ctx,
                                          const v1::ReindexStatusRequest* req,
                                          v1::ReindexStatusResponse* resp) override {
    return Run(ctx, req, resp, this, &AdminService::DoReindexStatus);
  }
  grpc::ServerUnaryReactor* Compact(grpc::CallbackServerContext* ctx,
                                    const v1::CompactRequest* req,
                                    v1::CompactResponse* resp) override {
    return Run(ctx, req, resp, this, &AdminService::DoCompact);
  }
  grpc::ServerUnaryReactor* Verify(grpc::CallbackServerContext* ctx,
                                   const v1::VerifyRequest* req,
                                   v1::VerifyResponse* resp) override {
    return Run(ctx, req, resp, this, &AdminService::DoVerify);
  }
  grpc::ServerUnaryReactor* Backup(grpc::CallbackServerContext* ctx,
                                   const v1::BackupRequest* req,
                                   v1::BackupResponse* resp) override {
    return Run(ctx, req, resp, this, &AdminService::DoBackup);
  }
  grpc::ServerUnaryReactor* ClusterBackup(grpc::CallbackServerContext* ctx,
                                          const v1::ClusterBackupRequest* req,
                                          v1::ClusterBackupResponse* resp) override {
    return Run(ctx, req, resp, this, &AdminService::DoClusterBackup);
  }
  grpc::ServerUnaryReactor* ClusterRestore(grpc::CallbackServerContext* ctx,
                                           const v1::ClusterRestoreRequest* req,
                                           v1::ClusterRestoreResponse* resp) override {
    return Run(ctx, req, resp, this, &AdminService::DoClusterRestore);
  }

 private:
  // The bodies, one per unary method: gRPC's and the HTTP JSON API's (FindUnaryBody).
  grpc::Status DoClusterStatus(grpc::ServerContextBase*,
                               const v1::ClusterStatusRequest*,
                               v1::ClusterStatusResponse* resp) {
    if (cluster_ == nullptr) return NotClustered();
    auto st = cluster_->Status();
    if (!st.ok()) return Error(st.status());
    resp->set_node_id(cluster_->node_id());
    for (const auto& [id, address] : st->nodes) {
      auto* n = resp->add_nodes();
      n->set_node_id(id);
      n->set_address(address);
    }
    for (const cluster::CollectionStatus& c : st->collections) {
      auto* pc = resp->add_collections();
      pc->set_name(c.collection.spec.name);
      pc->set_shards(c.collection.shards);
      pc->set_replicas(c.collection.replicas);
      for (const cluster::ShardStatus& sh : c.shards) {
        auto* ps = pc->add_shard_status();
        ps->set_shard(sh.shard);
        ps->set_last_sequence(sh.last_sequence);
        for (const cluster::ReplicaStatus& r : sh.replicas) {
          auto* pr = ps->add_replicas();
          pr->set_node_id(r.node_id);
          pr->set_position(r.position);
          pr->set_lag(sh.last_sequence > r.position ? sh.last_sequence - r.position : 0);
          pr->set_live(r.live);
        }
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status DoClusterRebalance(grpc::ServerContextBase* ctx,
                                  const v1::ClusterRebalanceRequest* req,
                                  v1::ClusterRebalanceResponse* resp) {
    if (cluster_ == nullptr) return NotClustered();
    auto moves = cluster_->Rebalance(req->collection(), DeadlineOf(ctx, limits_) - absl::Now());
    if (!moves.ok()) return Error(moves.status());
    for (const cluster::ShardMove& m : *moves) {
      auto* pm = resp->add_moves();
      pm->set_shard(m.shard);
      for (const std::string& n : m.added) pm->add_added(n);
      for (const std::string& n : m.removed) pm->add_removed(n);
    }
    return grpc::Status::OK;
  }

  grpc::Status DoStats(grpc::ServerContextBase* ctx,
                       const v1::StatsRequest*,
                       v1::StatsResponse* resp) {
    DatabaseStats s = db_->Stats();
    resp->set_model_id(s.model_id);
    resp->set_dimension(s.dimension);
    resp->set_collections(s.collections);
    resp->set_documents(s.documents);
    resp->set_snapshot_loads(s.snapshot_loads);
    resp->set_index_rebuilds(s.index_rebuilds);
    resp->set_replayed_changes(s.replayed_changes);
    resp->set_embed_queue_depth(static_cast<uint64_t>(s.embed.queued_texts));
    resp->set_embedded_texts(static_cast<uint64_t>(s.embed.embedded_texts));
    resp->set_embedded_tokens(static_cast<uint64_t>(s.embed.embedded_tokens));
    resp->set_encoder_seconds(s.embed.encoder_seconds);
    resp->set_snapshots_written(s.snapshots_written);
    resp->set_models_loaded(s.models_loaded);
    resp->set_keyword_snapshot_loads(s.keyword_snapshot_loads);
    resp->set_keyword_rebuilds(s.keyword_rebuilds);
    resp->set_device(s.device);
    resp->set_cpu_kernels(s.cpu_kernels);
    resp->set_embed_work_items(static_cast<uint64_t>(s.embed.work_items));
    resp->set_embed_cancelled(static_cast<uint64_t>(s.embed.cancelled));
    resp->set_embed_expired(static_cast<uint64_t>(s.embed.expired));
    resp->set_embed_skipped_sequences(static_cast<uint64_t>(s.embed.skipped_sequences));
    resp->set_embed_rejected(static_cast<uint64_t>(s.embed.rejected));
    resp->set_open_streams(static_cast<uint64_t>(streams_->open()));
    resp->set_streams_refused(static_cast<uint64_t>(streams_->refused()));
    resp->set_streams_idle_cancelled(static_cast<uint64_t>(streams_->idle_cancelled()));
    resp->set_read_only(!s.read_only_reason.empty());
    resp->set_read_only_reason(s.read_only_reason);
    // A server path: for admin keys only (the role that may reindex onto a
    // model written there), or for everyone on a server without keys.
    if (!limits_.models_dir.empty() && CallerMayReindex(*ctx)) {
      std::error_code ec;
      const std::filesystem::path real = std::filesystem::canonical(limits_.models_dir, ec);
      resp->set_models_dir(ec ? limits_.models_dir : real.string());
    }
    return grpc::Status::OK;
  }
  grpc::Status DoSnapshot(grpc::ServerContextBase*,
                          const v1::SnapshotRequest*,
                          v1::SnapshotResponse* resp) {
    auto seq = db_->Snapshot();
    if (!seq.ok()) return Error(seq.status());
    resp->set_covered_seq(*seq);
    resp->set_collections(db_->Stats().collections);
    return grpc::Status::OK;
  }
  grpc::Status DoReindex(grpc::ServerContextBase*,
                         const v1::ReindexRequest* req,
                         v1::ReindexResponse* resp) {
    std::string model_dir;
    if (!req->model_dir().empty()) {
      // The server's own models (its default, the collection's current and
      // previous) are not a client's paths: a rollback may name them.
      auto own = db_->OwnModelDirs(req->collection());
      if (!own.ok()) return Error(own.status());
      auto confined = req->dry_run()
                          ? ConfineFutureModelPath(limits_.models_dir, req->model_dir(), *own)
                          : ConfineModelPath(limits_.models_dir, req->model_dir(), *own);
      if (!confined.ok()) return Error(confined.status());
      model_dir = *std::move(confined);
    }
    const bool sharded = cluster_ != nullptr && cluster_->IsSharded(req->collection());
    if (req->dry_run()) return Error(db_->CheckReindex(req->collection()));
    // A sharded collection is reindexed through its log, for the whole
    // cluster (cluster/cluster_reindex.cc); its ReindexStatus is asked here.
    absl::Status s = sharded ? cluster_->StartReindex(req->collection(), model_dir)
                             : db_->Reindex(req->collection(), model_dir);
    if (!s.ok()) return Error(s);
    resp->set_job_id(req->collection());
    return grpc::Status::OK;
  }
  grpc::Status DoReindexStatus(grpc::ServerContextBase*,
                               const v1::ReindexStatusRequest* req,
                               v1::ReindexStatusResponse* resp) {
    const bool sharded = cluster_ != nullptr && cluster_->IsSharded(req->collection());
    auto p = sharded ? cluster_->ReindexProgressOf(req->collection())
                     : db_->GetReindexProgress(req->collection());
    if (!p.ok()) return Error(p.status());
    switch (p->state) {
      case ReindexProgress::State::kIdle:
        resp->set_state(v1::ReindexStatusResponse::IDLE);
        break;
      case ReindexProgress::State::kRunning:
        resp->set_state(v1::ReindexStatusResponse::RUNNING);
        break;
      case ReindexProgress::State::kDone:
        resp->set_state(v1::ReindexStatusResponse::DONE);
        break;
      case ReindexProgress::State::kFailed:
        resp->set_state(v1::ReindexStatusResponse::FAILED);
        break;
    }
    resp->set_done(p->done);
    resp->set_total(p->total);
    resp->set_model_id(p->model_id);
    resp->set_error(p->error);
    resp->set_committed(p->committed);
    return grpc::Status::OK;
  }
  grpc::Status DoCompact(grpc::ServerContextBase*,
                         const v1::CompactRequest*,
                         v1::CompactResponse*) {
    return Error(db_->Compact());
  }
  grpc::Status DoVerify(grpc::ServerContextBase*,
                        const v1::VerifyRequest* req,
                        v1::VerifyResponse* resp) {
    auto r = db_->Verify(req->collection(), {.full = req->full()});
    if (!r.ok()) return Error(r.status());
    resp->set_stored(r->stored);
    resp->set_indexed(r->indexed);
    resp->set_missing_from_index(r->missing_from_index);
    resp->set_stale_in_index(r->stale_in_index);
    resp->set_model_id(r->model_id);
    resp->set_foreign_model(r->foreign_model);
    resp->set_keyword_indexed(r->keyword_indexed);
    resp->set_keyword_missing(r->keyword_missing);
    resp->set_keyword_stale(r->keyword_stale);
    resp->set_keyword_content_matches(r->keyword_content_matches);
    const engine::VectorVerifyReport& v = r->vectors;
    resp->set_vectors_compared(v.index_compared);
    resp->set_vector_mismatches(v.index_mismatches);
    for (const auto& id : v.index_mismatch_ids) resp->add_vector_mismatch_ids(id);
    resp->set_vectors_unchecked(v.index_unchecked);
    resp->set_vectors_unchecked_reason(v.index_unchecked_reason);
    resp->set_reembedded(v.reembed_checked);
    resp->set_reembed_mismatches(v.reembed_mismatches);
    for (const auto& id : v.reembed_mismatch_ids) resp->add_reembed_mismatch_ids(id);
    resp->set_reembed_min_cosine(v.reembed_min_cosine);
    resp->set_reembed_lowest_cosine(v.reembed_lowest_cosine);
    resp->set_reembed_skipped_reason(v.reembed_skipped_reason);
    return grpc::Status::OK;
  }
  grpc::Status DoBackup(grpc::ServerContextBase*,
                        const v1::BackupRequest* req,
                        v1::BackupResponse* resp) {
    auto dir = ConfineNewPath(limits_.backup_dir, req->dir());
    if (!dir.ok()) return Error(dir.status());
    auto m = db_->Backup(*dir);
    if (!m.ok()) return Error(m.status());
    resp->set_path(*dir);
    resp->set_covered_seq(m->covered_seq);
    resp->set_files(m->files.size());
    uint64_t bytes = 0;
    for (const auto& f : m->files) bytes += f.size;
    resp->set_bytes(bytes);
    resp->set_models(static_cast<uint32_t>(m->models.size()));
    return grpc::Status::OK;
  }
  grpc::Status DoClusterBackup(grpc::ServerContextBase*,
                               const v1::ClusterBackupRequest* req,
                               v1::ClusterBackupResponse* resp) {
    if (cluster_ == nullptr) return NotClustered();
    auto dir = ConfineNewPath(limits_.backup_dir, req->dir());
    if (!dir.ok()) return Error(dir.status());
    auto b = cluster_->BackupCollection(req->collection(), *dir);
    if (!b.ok()) return Error(b.status());
    resp->set_path(*dir);
    resp->set_changes(b->changes());
    resp->set_consistency_token(cluster::FormatToken(b->token()));
    return grpc::Status::OK;
  }
  grpc::Status DoClusterRestore(grpc::ServerContextBase* ctx,
                                const v1::ClusterRestoreRequest* req,
                                v1::ClusterRestoreResponse* resp) {
    if (cluster_ == nullptr) return NotClustered();
    auto dir = ConfineExistingPath(limits_.backup_dir, req->dir());
    if (!dir.ok()) return Error(dir.status());
    auto r = cluster_->RestoreCollection(*dir, req->collection(), req->shards(), req->replicas(),
                                         DeadlineOf(ctx, limits_));
    if (!r.ok()) return Error(r.status());
    resp->set_collection(r->collection.spec.name);
    resp->set_changes(r->changes);
    resp->set_consistency_token(cluster::FormatToken(r->token));
    return grpc::Status::OK;
  }

 private:
  static grpc::Status NotClustered() {
    return Error(absl::FailedPreconditionError(
        "this server is not in a cluster (it was started without --nats)"));
  }

  Database* db_;
  ServiceLimits limits_;
  const StreamGate* streams_;
  cluster::ClusterNode* cluster_;
};

}  // namespace

std::vector<std::unique_ptr<grpc::Service>> MakeServices(engine::Database* db,
                                                         const ServiceLimits& limits,
                                                         StreamGate* streams,
                                                         WorkerPool* stream_workers,
                                                         WorkerPool* unary_workers,
                                                         cluster::ClusterNode* cluster,
                                                         PeerChannels* peers) {
  std::vector<std::unique_ptr<grpc::Service>> out;
  out.push_back(std::make_unique<CollectionsService>(db, cluster, unary_workers));
  out.push_back(std::make_unique<DocumentsService>(db, limits, streams, stream_workers,
                                                   unary_workers, cluster));
  out.push_back(std::make_unique<SearchService>(db, limits, cluster, peers, unary_workers));
  out.push_back(std::make_unique<EmbeddingService>(db, limits, unary_workers));
  out.push_back(std::make_unique<AdminService>(db, limits, streams, cluster, unary_workers));
  return out;
}

UnaryBody FindUnaryBody(const std::vector<std::unique_ptr<grpc::Service>>& services,
                        std::string_view full_method) {
  for (const auto& s : services) {
    if (const auto* methods = dynamic_cast<const UnaryMethods*>(s.get())) {
      if (UnaryBody body = methods->Find(full_method)) return body;
    }
  }
  return nullptr;
}

}  // namespace neodb::api
