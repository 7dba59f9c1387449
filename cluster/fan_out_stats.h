#pragma once
// FanOutStats: how long a node's fan-outs take, kept for the metrics
// (api/metrics/cluster_metrics.h renders them): each call to a node (its id,
// the RPC, the final status) and each whole fanned-out search by mode.
//
// Thread-safe; one mutex-guarded map update per call.

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

namespace neodb::cluster {

struct LatencyHistogram {
  // Upper bounds (seconds) of the buckets; +Inf is implied (the last count).
  static constexpr std::array<double, 14> kBuckets = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  std::array<uint64_t, kBuckets.size() + 1> counts{};
  double sum = 0;
  uint64_t count = 0;

  void Add(double seconds);
};

class FanOutStats {
 public:
  // A call to node `node` ("b") of `rpc` ("NearText", "KeywordStats") that
  // ended with `code` (a gRPC status name) after `seconds`.
  void RecordCall(const std::string& node, const std::string& rpc, const std::string& code,
                  double seconds);
  // A whole fanned-out search in `mode` ("vector", "keyword", "hybrid").
  void RecordSearch(const std::string& mode, double seconds);

  struct Snapshot {
    std::map<std::tuple<std::string, std::string, std::string>, uint64_t> calls;  // node, rpc, code
    std::map<std::pair<std::string, std::string>, LatencyHistogram> call_latency;  // node, rpc
    std::map<std::string, LatencyHistogram> searches;                              // by mode
  };
  Snapshot Get() const;

 private:
  mutable std::mutex mu_;
  Snapshot s_;
};

}  // namespace neodb::cluster
