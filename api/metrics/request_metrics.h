#pragma once
// RequestMetrics: per-method call counts by status code and per-method
// latency histograms, in Prometheus' text format, for both ways in: gRPC
// (metrics_interceptor.h) and the HTTP JSON API (http/http_server.h), told
// apart by a `transport` label ("grpc", "http") so that a user sees what the
// JSON convenience costs beside gRPC on the same methods.
//
// Thread-safe. Cheap enough for every call: one mutex-guarded map update.

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace neodb::api {

class RequestMetrics {
 public:
  // Upper bounds (seconds) of the latency buckets; +Inf is implied.
  static constexpr std::array<double, 14> kBuckets = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

  // The `transport` label's values.
  static constexpr absl::string_view kGrpc = "grpc";
  static constexpr absl::string_view kHttp = "http";

  // A call to `method` ("/neodb.v1.Search/NearText"; over HTTP also
  // "/v1/embeddings") that ended with `code` (a grpc::StatusCode's name, e.g.
  // "OK") after `seconds`.
  void Record(absl::string_view method, absl::string_view code, double seconds,
              absl::string_view transport = kGrpc);
  // A call refused before any handler ran (the API-key check): counted, not timed.
  void RecordRefused(absl::string_view method, absl::string_view code,
                     absl::string_view transport = kGrpc);

  // neodb_requests_total{transport,method,code} and
  // neodb_request_duration_seconds{transport,method} (histogram), with HELP
  // and TYPE.
  std::string Render() const;

 private:
  struct Histogram {
    std::array<uint64_t, kBuckets.size() + 1> counts{};  // last: +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  // Keyed by (transport, method, code) and (transport, method).
  using Key = std::pair<std::string, std::string>;
  mutable absl::Mutex mu_;
  std::map<std::pair<Key, std::string>, uint64_t> requests_ ABSL_GUARDED_BY(mu_);
  std::map<Key, Histogram> latency_ ABSL_GUARDED_BY(mu_);
};

// The Prometheus text format's escaping of a label value (\\, \", \n).
std::string EscapeLabel(absl::string_view value);

// A grpc::StatusCode's canonical name ("OK", "NOT_FOUND", ...).
absl::string_view StatusCodeName(int code);

}  // namespace neodb::api
