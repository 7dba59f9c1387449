#include "api/metrics/request_metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace neodb::api {

std::string EscapeLabel(absl::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

absl::string_view StatusCodeName(int code) {
  static constexpr absl::string_view kNames[] = {"OK",
                                                 "CANCELLED",
                                                 "UNKNOWN",
                                                 "INVALID_ARGUMENT",
                                                 "DEADLINE_EXCEEDED",
                                                 "NOT_FOUND",
                                                 "ALREADY_EXISTS",
                                                 "PERMISSION_DENIED",
                                                 "RESOURCE_EXHAUSTED",
                                                 "FAILED_PRECONDITION",
                                                 "ABORTED",
                                                 "OUT_OF_RANGE",
                                                 "UNIMPLEMENTED",
                                                 "INTERNAL",
                                                 "UNAVAILABLE",
                                                 "DATA_LOSS",
                                                 "UNAUTHENTICATED"};
  if (code < 0 || code >= static_cast<int>(std::size(kNames))) return "UNKNOWN";
  return kNames[code];
}

void RequestMetrics::Record(absl::string_view method, absl::string_view code, double seconds,
                            absl::string_view transport) {
  absl::MutexLock lock(&mu_);
  const Key key{std::string(transport), std::string(method)};
  ++requests_[{key, std::string(code)}];
  Histogram& h = latency_[key];
  size_t b = 0;
  while (b < kBuckets.size() && seconds > kBuckets[b]) ++b;
  ++h.counts[b];
  h.sum += seconds;
  ++h.count;
}

void RequestMetrics::RecordRefused(absl::string_view method, absl::string_view code,
                                   absl::string_view transport) {
  absl::MutexLock lock(&mu_);
  ++requests_[{{std::string(transport), std::string(method)}, std::string(code)}];
}

std::string RequestMetrics::Render() const {
  absl::MutexLock lock(&mu_);
  std::string out =
      "# HELP neodb_requests_total Calls by transport (grpc, http), method and final status "
      "code.\n"
      "# TYPE neodb_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    absl::StrAppend(&out, "neodb_requests_total{transport=\"", key.first.first, "\",method=\"",
                    EscapeLabel(key.first.second), "\",code=\"", key.second, "\"} ", n, "\n");
  }
  absl::StrAppend(&out,
                  "# HELP neodb_request_duration_seconds Time from a call's arrival to its "
                  "status, by transport and method.\n"
                  "# TYPE neodb_request_duration_seconds histogram\n");
  for (const auto& [key, h] : latency_) {
    const std::string m = absl::StrCat("transport=\"", key.first, "\",method=\"",
                                       EscapeLabel(key.second), "\"");
    uint64_t cumulative = 0;
    for (size_t b = 0; b <= kBuckets.size(); ++b) {
      cumulative += h.counts[b];
      const std::string le = b < kBuckets.size() ? absl::StrFormat("%g", kBuckets[b]) : "+Inf";
      absl::StrAppend(&out, "neodb_request_duration_seconds_bucket{", m, ",le=\"", le,
                      "\"} ", cumulative, "\n");
    }
    absl::StrAppend(&out, "neodb_request_duration_seconds_sum{", m, "} ",
                    absl::StrFormat("%.9g", h.sum), "\n");
    absl::StrAppend(&out, "neodb_request_duration_seconds_count{", m, "} ", h.count,
                    "\n");
  }
  return out;
}

}  // namespace neodb::api
