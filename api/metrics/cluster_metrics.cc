#include "api/metrics/cluster_metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/metrics/request_metrics.h"

namespace neodb::api {
namespace {

void Family(std::string* out, const char* name, const char* type, const char* help) {
  absl::StrAppend(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

// `labels`: the series' labels without braces ("node=\"b\"").
void Histogram(std::string* out, const std::string& name, const std::string& labels,
               const cluster::LatencyHistogram& h) {
  const auto& bounds = cluster::LatencyHistogram::kBuckets;
  uint64_t cumulative = 0;
  for (size_t b = 0; b <= bounds.size(); ++b) {
    cumulative += h.counts[b];
    const std::string le = b < bounds.size() ? absl::StrFormat("%g", bounds[b]) : "+Inf";
    absl::StrAppend(out, name, "_bucket{", labels, ",le=\"", le, "\"} ", cumulative, "\n");
  }
  absl::StrAppend(out, name, "_sum{", labels, "} ", absl::StrFormat("%.9g", h.sum), "\n");
  absl::StrAppend(out, name, "_count{", labels, "} ", h.count, "\n");
}

}  // namespace

std::string RenderClusterMetrics(cluster::ClusterNode& node) {
  std::string out;
  const std::vector<cluster::LocalReplicaStats> replicas = node.LocalReplicas();
  auto label = [](const cluster::LocalReplicaStats& r) {
    return absl::StrCat("{collection=\"", EscapeLabel(r.collection), "\",shard=\"", r.shard,
                        "\"} ");
  };
  Family(&out, "neodb_replica_position", "gauge",
         "Stream sequence of the last change this node's replica of the shard applied.");
  for (const auto& r : replicas) absl::StrAppend(&out, "neodb_replica_position", label(r), r.position, "\n");
  Family(&out, "neodb_replica_lag", "gauge",
         "Changes in the shard's stream this node's replica has not applied yet.");
  for (const auto& r : replicas) {
    if (!r.stream_last) continue;
    absl::StrAppend(&out, "neodb_replica_lag", label(r),
                    *r.stream_last > r.position ? *r.stream_last - r.position : 0, "\n");
  }
  Family(&out, "neodb_replica_applied_total", "counter",
         "Changes this node's replica applied since it started (rate: its apply rate).");
  for (const auto& r : replicas) absl::StrAppend(&out, "neodb_replica_applied_total", label(r), r.applied, "\n");
  Family(&out, "neodb_replica_resyncs_total", "counter",
         "Times the replica found its stream diverged and read it again from the start.");
  for (const auto& r : replicas) absl::StrAppend(&out, "neodb_replica_resyncs_total", label(r), r.resyncs, "\n");
  Family(&out, "neodb_replica_healthy", "gauge",
         "1 when the replica's last attempt to apply succeeded, else 0 (it retries).");
  for (const auto& r : replicas) absl::StrAppend(&out, "neodb_replica_healthy", label(r), r.healthy ? 1 : 0, "\n");

  const cluster::FanOutStats::Snapshot f = node.fan_out_stats().Get();
  Family(&out, "neodb_fanout_calls_total", "counter",
         "Calls a fan-out made to another node, by node, RPC and final status.");
  for (const auto& [key, n] : f.calls) {
    const auto& [peer, rpc, code] = key;
    absl::StrAppend(&out, "neodb_fanout_calls_total{node=\"", EscapeLabel(peer), "\",rpc=\"", rpc,
                    "\",code=\"", code, "\"} ", n, "\n");
  }
  Family(&out, "neodb_fanout_call_duration_seconds", "histogram",
         "Latency of a fan-out's call to another node, by node and RPC.");
  for (const auto& [key, h] : f.call_latency) {
    Histogram(&out, "neodb_fanout_call_duration_seconds",
              absl::StrCat("node=\"", EscapeLabel(key.first), "\",rpc=\"", key.second, "\""), h);
  }
  Family(&out, "neodb_fanout_search_duration_seconds", "histogram",
         "Latency of a whole fanned-out search (statistics, legs, merge, fusion), by mode.");
  for (const auto& [mode, h] : f.searches) {
    Histogram(&out, "neodb_fanout_search_duration_seconds", absl::StrCat("mode=\"", mode, "\""), h);
  }
  return out;
}

}  // namespace neodb::api
