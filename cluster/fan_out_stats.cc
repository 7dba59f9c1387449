#include "cluster/fan_out_stats.h"

namespace neodb::cluster {

void LatencyHistogram::Add(double seconds) {
  size_t b = 0;
  while (b < kBuckets.size() && seconds > kBuckets[b]) ++b;
  ++counts[b];
  sum += seconds;
  ++count;
}

void FanOutStats::RecordCall(const std::string& node, const std::string& rpc,
                             const std::string& code, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++s_.calls[{node, rpc, code}];
  s_.call_latency[{node, rpc}].Add(seconds);
}

void FanOutStats::RecordSearch(const std::string& mode, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  s_.searches[mode].Add(seconds);
}

FanOutStats::Snapshot FanOutStats::Get() const {
  std::lock_guard<std::mutex> lock(mu_);
  return s_;
}

}  // namespace neodb::cluster
