#include "api/http2_limits.h"

#include <climits>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace neodb::api {
namespace {

// gRPC takes durations as int milliseconds.
constexpr int64_t kMaxMillis = INT_MAX;

absl::Status CheckDuration(absl::Duration d, const char* flag) {
  if (d < absl::ZeroDuration() || absl::ToInt64Milliseconds(d) > kMaxMillis) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " is ", absl::FormatDuration(d),
                                                   "; it must be in 0 s..", kMaxMillis / 1000,
                                                   " s"));
  }
  return absl::OkStatus();
}

int Millis(absl::Duration d) { return static_cast<int>(absl::ToInt64Milliseconds(d)); }

}  // namespace

absl::Status Http2Limits::Check() const {
  if (max_streams_per_connection < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-streams-per-connection is ", max_streams_per_connection,
                     "; it must be at least 1"));
  }
  if (max_ping_strikes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max-ping-strikes is ", max_ping_strikes,
        "; it must be at least 1 (gRPC reads 0 as no limit, which lets a ping flood run)"));
  }
  // Below 1 KiB gRPC's own headers and an API key no longer fit; above
  // 1 MiB one call's headers cost more than a large request.
  if (max_metadata_bytes < 1024 || max_metadata_bytes > (1 << 20)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max-metadata-bytes is ", max_metadata_bytes, "; it must be in 1024..1048576"));
  }
  if (auto s = CheckDuration(min_ping_interval, "--min-ping-interval"); !s.ok()) return s;
  if (auto s = CheckDuration(max_connection_idle, "--max-connection-idle"); !s.ok()) return s;
  if (auto s = CheckDuration(max_connection_age, "--max-connection-age"); !s.ok()) return s;
  return CheckDuration(max_connection_age_grace, "--max-connection-age-grace");
}

void Http2Limits::Apply(grpc::ServerBuilder& builder) const {
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, max_streams_per_connection);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             Millis(min_ping_interval));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, max_ping_strikes);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS,
                             keepalive_permit_without_calls ? 1 : 0);
  builder.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE, max_metadata_bytes);
  // gRPC reads INT_MAX as "never"; zero would close every connection at once.
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                             max_connection_idle == absl::ZeroDuration()
                                 ? INT_MAX
                                 : Millis(max_connection_idle));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                             max_connection_age == absl::ZeroDuration()
                                 ? INT_MAX
                                 : Millis(max_connection_age));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                             Millis(max_connection_age_grace));
}

}  // namespace neodb::api
