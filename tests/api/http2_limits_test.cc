// Http2Limits: the defaults pass Check, and each value that would switch a
// flood defence off or that gRPC cannot take is refused naming its flag.
#include "api/http2_limits.h"

#include <climits>

#include "gtest/gtest.h"

namespace neodb::api {
namespace {

void ExpectRefused(const Http2Limits& l, const std::string& flag) {
  absl::Status s = l.Check();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << flag;
  EXPECT_NE(s.message().find(flag), std::string::npos) << s;
}

TEST(Http2LimitsTest, DefaultsPass) {
  Http2Limits l;
  EXPECT_TRUE(l.Check().ok()) << l.Check();
  EXPECT_EQ(l.max_streams_per_connection, 32);
  EXPECT_EQ(l.max_ping_strikes, 2);
  EXPECT_EQ(l.max_metadata_bytes, 8192);
  EXPECT_FALSE(l.keepalive_permit_without_calls);
}

TEST(Http2LimitsTest, RefusesWhatWouldSwitchADefenceOff) {
  Http2Limits l;
  l.max_streams_per_connection = 0;
  ExpectRefused(l, "--max-streams-per-connection");
  l = Http2Limits();
  l.max_ping_strikes = 0;  // gRPC: no limit
  ExpectRefused(l, "--max-ping-strikes");
  l = Http2Limits();
  l.max_metadata_bytes = 512;
  ExpectRefused(l, "--max-metadata-bytes");
  l.max_metadata_bytes = (1 << 20) + 1;
  ExpectRefused(l, "--max-metadata-bytes");
}

TEST(Http2LimitsTest, RefusesDurationsGrpcCannotTake) {
  Http2Limits l;
  l.min_ping_interval = absl::Seconds(-1);
  ExpectRefused(l, "--min-ping-interval");
  l = Http2Limits();
  l.max_connection_idle = absl::Milliseconds(int64_t{INT_MAX} + 1);
  ExpectRefused(l, "--max-connection-idle");
  l = Http2Limits();
  l.max_connection_age = absl::InfiniteDuration();
  ExpectRefused(l, "--max-connection-age");
  l = Http2Limits();
  l.max_connection_age_grace = absl::Seconds(-5);
  ExpectRefused(l, "--max-connection-age-grace");
  l = Http2Limits();
  l.max_connection_idle = absl::Minutes(30);
  l.max_connection_age = absl::Hours(24);
  EXPECT_TRUE(l.Check().ok());
}

}  // namespace
}  // namespace neodb::api
