#include "api/fan_out.h"

#include <algorithm>
#include <future>
#include <optional>
#include <map>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/convert.h"
#include "api/grpc_status.h"
#include "api/metrics/request_metrics.h"
#include "common/status_macros.h"
#include "engine/embed_settings.h"
#include "index/keyword/fusion.h"

namespace neodb::api {
namespace {

// The shards each chosen node answers for.
using Assignment = std::map<std::string, std::vector<uint32_t>>;

// Which node answers for each shard: one whose replica of it serves reads
// (ClusterNode::Serves: caught up once on the current log), this one first,
// then the placement's order; when none does yet (a new log being read), this
// node if it holds the shard, else the first live node of the placement.
absl::StatusOr<Assignment> Assign(cluster::ClusterNode& node, const cluster::ShardedCollection& c,
                                  const std::map<std::string, std::string>& addresses) {
  Assignment chosen;
  auto reachable = [&](const std::string& n) {
    if (n == node.node_id()) return true;
    auto it = addresses.find(n);
    return it != addresses.end() && !it->second.empty();
  };
  for (uint32_t s = 0; s < c.shards; ++s) {
    std::string pick;
    if (node.Serves(node.node_id(), c, s)) pick = node.node_id();
    for (const std::string& n : c.placement[s]) {
      if (!pick.empty()) break;
      if (reachable(n) && node.Serves(n, c, s)) pick = n;
    }
    if (pick.empty() && node.Holds(c.spec.name, s)) pick = node.node_id();
    for (const std::string& n : c.placement[s]) {
      if (!pick.empty()) break;
      if (n != node.node_id() && reachable(n)) pick = n;
    }
    if (pick.empty()) {
      return absl::UnavailableError(absl::StrCat("no live node holds shard ", s, " of '",
                                                 c.spec.name, "' (placed on ",
                                                 absl::StrJoin(c.placement[s], ", "), ")"));
    }
    chosen[pick].push_back(s);
  }
  return chosen;
}

// One fan-out: the collection's entry, who answers for which shards, and
// what every call to another node carries.
class FanOut {
 public:
  static absl::StatusOr<FanOut> Plan(cluster::ClusterNode& node, PeerChannels& peers,
                                     const grpc::ServerContextBase& ctx,
                                     const std::string& collection, absl::Time deadline) {
    FanOut f(node, peers, deadline);
    ASSIGN_OR_RETURN(f.entry_, node.Entry(collection));
    ASSIGN_OR_RETURN(f.addresses_, node.LiveNodeInfo());
    ASSIGN_OR_RETURN(f.assignment_, Assign(node, f.entry_, f.addresses_));
    // The caller's key goes along: the nodes of a cluster share their key file.
    for (const auto& [key, value] : ctx.client_metadata()) {
      if (key == "authorization") f.authorization_ = std::string(value.data(), value.size());
    }
    return f;
  }

  const cluster::ShardedCollection& entry() const { return entry_; }
  const Assignment& assignment() const { return assignment_; }

  // Asks node `n`: this node through `here`, another through `remote` on
  // its Search stub.
  // `rpc` names the call in the metrics (cluster/fan_out_stats.h).
  template <typename Resp, typename Req, typename Here, typename Remote>
  absl::StatusOr<Resp> Ask(const std::string& n, const char* rpc, const Req& req,
                           const Here& here, const Remote& remote) const {
    if (n == node_.node_id()) return here(req);
    const std::string& address = addresses_.at(n);
    auto stub = v1::Search::NewStub(peers_.To(address));
    grpc::ClientContext cc;
    cc.set_deadline(absl::ToChronoTime(deadline_));
    if (!authorization_.empty()) cc.AddMetadata("authorization", authorization_);
    Resp r;
    const absl::Time start = absl::Now();
    grpc::Status st = remote(*stub, &cc, req, &r);
    node_.fan_out_stats().RecordCall(n, rpc, std::string(StatusCodeName(st.error_code())),
                                     absl::ToDoubleSeconds(absl::Now() - start));
    if (!st.ok()) {
      absl::Status s = FromGrpcStatus(st);
      return absl::Status(s.code(), absl::StrCat("node ", n, " (", address, "): ", s.message()));
    }
    return r;
  }

  // Every chosen node's answer to `req` (local_only set here).
  template <typename Req, typename Remote>
  absl::StatusOr<std::vector<v1::SearchResponse>> AskAll(
      Req req, const char* rpc,
      const std::function<absl::StatusOr<v1::SearchResponse>(const Req&)>& here,
      const Remote& remote) const {
    req.set_local_only(true);
    return EachNode<v1::SearchResponse>([&](const std::string& n, const std::vector<uint32_t>&) {
      return Ask<v1::SearchResponse>(n, rpc, req, here, remote);
    });
  }

  // call(node, its shards) for every chosen node, all at once: the other
  // nodes' on threads of their own, this node's on the caller's, so a
  // fan-out waits for its slowest node rather than for the sum of them.
  // The answers in assignment order; the first error (in that order) if any.
  template <typename Resp, typename Call>
  absl::StatusOr<std::vector<Resp>> EachNode(const Call& call) const {
    std::vector<std::future<absl::StatusOr<Resp>>> pending;
    std::optional<absl::StatusOr<Resp>> mine;
    for (const auto& [n, shards] : assignment_) {
      if (n == node_.node_id()) continue;
      pending.push_back(std::async(std::launch::async, [&call, &n = n, &shards = shards] {
        return call(n, shards);
      }));
    }
    for (const auto& [n, shards] : assignment_) {
      if (n == node_.node_id()) mine = call(n, shards);
    }
    std::vector<Resp> out;
    absl::Status first;
    size_t next = 0;
    for (const auto& [n, shards] : assignment_) {
      absl::StatusOr<Resp> r = n == node_.node_id() ? std::move(*mine) : pending[next++].get();
      if (!r.ok()) {
        first.Update(r.status());
        continue;
      }
      out.push_back(*std::move(r));
    }
    if (!first.ok()) return first;
    return out;
  }

 private:
  FanOut(cluster::ClusterNode& node, PeerChannels& peers, absl::Time deadline)
      : node_(node), peers_(peers), deadline_(deadline) {}

  cluster::ClusterNode& node_;
  PeerChannels& peers_;
  absl::Time deadline_;
  cluster::ShardedCollection entry_;
  std::map<std::string, std::string> addresses_;
  Assignment assignment_;
  std::string authorization_;
};

// The answers' hits merged: one per id (the same document on two nodes),
// best first by score, ties by id, at most `k`.
std::vector<v1::Hit> Merge(std::vector<v1::SearchResponse>& answers, int k) {
  std::map<std::string, v1::Hit> by_id;
  for (v1::SearchResponse& a : answers) {
    for (v1::Hit& h : *a.mutable_hits()) by_id.emplace(h.id(), std::move(h));
  }
  std::vector<v1::Hit> hits;
  hits.reserve(by_id.size());
  for (auto& [id, h] : by_id) hits.push_back(std::move(h));
  std::stable_sort(hits.begin(), hits.end(), [](const v1::Hit& a, const v1::Hit& b) {
    return a.score() > b.score();  // by_id gave id order: ties stay by id
  });
  if (hits.size() > static_cast<size_t>(k)) hits.resize(k);
  return hits;
}

v1::SearchResponse Merged(std::vector<v1::SearchResponse> answers, int k) {
  v1::SearchResponse out;
  if (!answers.empty()) {
    out.set_model_id(answers.front().model_id());
    out.set_mode(answers.front().mode());
    out.set_alpha(answers.front().alpha());
  }
  for (v1::Hit& h : Merge(answers, k)) *out.add_hits() = std::move(h);
  return out;
}

const auto kNearText = [](v1::Search::Stub& s, grpc::ClientContext* c,
                          const v1::NearTextRequest& r, v1::SearchResponse* out) {
  return s.NearText(c, r, out);
};

// The whole collection's keyword statistics for `req`'s query: each chosen
// node's over the shards assigned to it, summed.
absl::StatusOr<v1::KeywordCorpus> CollectionCorpus(const FanOut& f,
                                                   const v1::NearTextRequest& req,
                                                   const LocalSearch& local) {
  v1::KeywordCorpus sum;
  ASSIGN_OR_RETURN(
      std::vector<v1::KeywordCorpus> parts,
      f.EachNode<v1::KeywordCorpus>([&](const std::string& n, const std::vector<uint32_t>& shards) {
        v1::KeywordStatsRequest s;
        s.set_collection(req.collection());
        s.set_query(req.query());
        s.set_consistency_token(req.consistency_token());
        for (uint32_t shard : shards) s.add_shards(shard);
        return f.Ask<v1::KeywordCorpus>(
            n, "KeywordStats", s, local.keyword_stats,
            [](v1::Search::Stub& stub, grpc::ClientContext* c, const v1::KeywordStatsRequest& r,
               v1::KeywordCorpus* out) { return stub.KeywordStats(c, r, out); });
      }));
  for (const v1::KeywordCorpus& part : parts) {
    sum.set_documents(sum.documents() + part.documents());
    sum.set_total_length(sum.total_length() + part.total_length());
    for (const auto& [term, df] : part.document_frequency()) {
      (*sum.mutable_document_frequency())[term] += df;
    }
  }
  return sum;
}

// A merged leg as the fusion takes it: ids numbered in document-id order
// (the engine's tie rule), best first, cut at `depth`.
std::vector<keyword::RankedId> Leg(const std::vector<v1::Hit>& hits,
                                   const std::map<std::string, uint64_t>& number) {
  std::vector<keyword::RankedId> leg;
  leg.reserve(hits.size());
  for (const v1::Hit& h : hits) leg.push_back({number.at(h.id()), h.score()});
  return leg;
}

// Hybrid, fused here from the two legs of every node (see fan_out.h).
absl::StatusOr<v1::SearchResponse> FanOutHybrid(const FanOut& f, const v1::NearTextRequest& req,
                                                const v1::KeywordCorpus& corpus, int k,
                                                const LocalSearch& local) {
  keyword::FusionOptions fusion;
  if (!req.fusion().empty() || req.has_alpha()) {
    ASSIGN_OR_RETURN(fusion, FusionFromProto(req.fusion(), req.has_alpha(), req.alpha()));
  } else {
    ASSIGN_OR_RETURN(engine::CollectionSettings settings, engine::ParseSettings(f.entry().spec));
    fusion = settings.fusion;
  }
  const int depth = std::max(k, keyword::kHybridLegDepth);
  v1::NearTextRequest leg = req;
  leg.set_k(depth);
  leg.clear_fusion();
  leg.clear_alpha();
  leg.set_explain(false);
  leg.set_mode("keyword");
  v1::NearTextRequest vector_leg = leg;
  vector_leg.set_mode("vector");
  *leg.mutable_keyword_corpus() = corpus;
  // The two legs at once: the vector leg's embedding overlaps the keyword leg.
  auto vector_answers = std::async(std::launch::async, [&] {
    return f.AskAll(vector_leg, "NearText", local.near_text, kNearText);
  });
  absl::StatusOr<std::vector<v1::SearchResponse>> keyword_answers =
      f.AskAll(leg, "NearText", local.near_text, kNearText);
  absl::StatusOr<std::vector<v1::SearchResponse>> vector_answers_now = vector_answers.get();
  ASSIGN_OR_RETURN(std::vector<v1::SearchResponse> ka, std::move(keyword_answers));
  ASSIGN_OR_RETURN(std::vector<v1::SearchResponse> va, std::move(vector_answers_now));
  v1::SearchResponse out;
  out.set_mode("hybrid");
  if (!va.empty()) out.set_model_id(va.front().model_id());
  const std::vector<v1::Hit> keyword_hits = Merge(ka, depth);
  const std::vector<v1::Hit> vector_hits = Merge(va, depth);
  std::map<std::string, uint64_t> number;
  for (const auto* hits : {&keyword_hits, &vector_hits}) {
    for (const v1::Hit& h : *hits) number.emplace(h.id(), 0);
  }
  std::vector<const v1::Hit*> by_number(number.size(), nullptr);
  uint64_t next = 0;
  for (auto& [id, n] : number) n = next++;
  for (const auto* hits : {&keyword_hits, &vector_hits}) {
    for (const v1::Hit& h : *hits) by_number[number.at(h.id())] = &h;  // vector's when both
  }
  ASSIGN_OR_RETURN(keyword::FusionResult fused,
                   keyword::Fuse(Leg(keyword_hits, number), Leg(vector_hits, number), k, fusion));
  out.set_alpha(fused.alpha);
  for (const keyword::FusedHit& h : fused.hits) {
    v1::Hit* hit = out.add_hits();
    *hit = *by_number[h.id];
    hit->set_score(static_cast<float>(h.score));
    hit->clear_explain();
    if (req.explain()) {
      v1::HitExplain* e = hit->mutable_explain();
      e->set_keyword_rank(h.keyword.rank);
      e->set_keyword_score(h.keyword.score);
      e->set_vector_rank(h.vector.rank);
      e->set_vector_score(h.vector.score);
      e->set_fused_score(h.score);
    }
  }
  return out;
}

absl::StatusOr<v1::SearchResponse> NearTextOf(cluster::ClusterNode& node, PeerChannels& peers,
                                              const grpc::ServerContextBase& ctx,
                                              v1::NearTextRequest req, absl::Time deadline,
                                              const LocalSearch& local, const std::string& mode) {
  ASSIGN_OR_RETURN(FanOut f, FanOut::Plan(node, peers, ctx, req.collection(), deadline));
  const int k = req.k() <= 0 ? 10 : req.k();
  if (mode == "vector") {
    ASSIGN_OR_RETURN(std::vector<v1::SearchResponse> answers,
                     f.AskAll(req, "NearText", local.near_text, kNearText));
    return Merged(std::move(answers), k);
  }
  if (mode != "keyword" && mode != "hybrid") {
    return absl::InvalidArgumentError(
        absl::StrCat("mode '", mode, "' is unknown (use vector, keyword or hybrid)"));
  }
  ASSIGN_OR_RETURN(v1::KeywordCorpus corpus, CollectionCorpus(f, req, local));
  if (mode == "hybrid") return FanOutHybrid(f, req, corpus, k, local);
  *req.mutable_keyword_corpus() = std::move(corpus);
  ASSIGN_OR_RETURN(std::vector<v1::SearchResponse> answers,
                   f.AskAll(req, "NearText", local.near_text, kNearText));
  return Merged(std::move(answers), k);
}

}  // namespace

absl::StatusOr<v1::SearchResponse> FanOutNearText(cluster::ClusterNode& node, PeerChannels& peers,
                                                  const grpc::ServerContextBase& ctx,
                                                  v1::NearTextRequest req, absl::Time deadline,
                                                  const LocalSearch& local) {
  const std::string mode = req.mode().empty() ? "hybrid" : req.mode();
  const absl::Time start = absl::Now();
  absl::StatusOr<v1::SearchResponse> r = NearTextOf(node, peers, ctx, std::move(req), deadline, local, mode);
  if (r.ok()) node.fan_out_stats().RecordSearch(mode, absl::ToDoubleSeconds(absl::Now() - start));
  return r;
}

absl::StatusOr<v1::SearchResponse> FanOutNearVector(cluster::ClusterNode& node,
                                                    PeerChannels& peers,
                                                    const grpc::ServerContextBase& ctx,
                                                    v1::NearVectorRequest req, absl::Time deadline,
                                                    const LocalSearch& local) {
  const absl::Time start = absl::Now();
  ASSIGN_OR_RETURN(FanOut f, FanOut::Plan(node, peers, ctx, req.collection(), deadline));
  const int k = req.k() <= 0 ? 10 : req.k();
  ASSIGN_OR_RETURN(
      std::vector<v1::SearchResponse> answers,
      f.AskAll(req, "NearVector", local.near_vector,
               [](v1::Search::Stub& s, grpc::ClientContext* c, const v1::NearVectorRequest& r,
                  v1::SearchResponse* out) { return s.NearVector(c, r, out); }));
  node.fan_out_stats().RecordSearch("vector", absl::ToDoubleSeconds(absl::Now() - start));
  return Merged(std::move(answers), k);
}

}  // namespace neodb::api
