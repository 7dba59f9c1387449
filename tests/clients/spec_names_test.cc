// The client library reads a setting's name as the server does: the same
// names, the same API values (api::ToProto of the server's parse), the same
// words for a typo. A name added on one side only fails here.
#include "clients/cpp/spec_names.h"

#include <string>

#include "api/convert.h"
#include "clients/cpp/grpc_status.h"
#include "encoder/backend.h"
#include "engine/embed_settings.h"
#include "engine/search_params.h"
#include "gtest/gtest.h"
#include "index/metric.h"

namespace neodb::client {
namespace {

// Each known name, and names the server refuses.
const char* const kNames[] = {"cosine", "ip",  "l2",     "mean", "cls",    "error",
                              "chunk",  "vector", "keyword", "hybrid", "f32", "bf16",
                              "int8",   "",      "COSINE", "dot",  "max",  "fp16"};

template <typename Server, typename Client, typename ToProto>
void ExpectSame(const Server& server, const Client& client, ToProto to_proto) {
  for (const char* name : kNames) {
    SCOPED_TRACE(name);
    const auto s = server(name);
    const auto c = client(name);
    ASSERT_EQ(s.ok(), c.ok());
    if (s.ok()) {
      EXPECT_EQ(to_proto(*s), *c);
    } else {
      EXPECT_EQ(s.status(), c.status());
    }
  }
}

TEST(SpecNames, MetricIsTheIndexs) {
  ExpectSame(index::ParseMetric, MetricFromName,
             [](index::Metric m) { return api::ToProto(m); });
}

TEST(SpecNames, PoolingIsTheEngines) {
  ExpectSame(engine::ParsePooling, PoolingFromName,
             [](encoder::Pooling p) { return api::ToProto(p); });
}

TEST(SpecNames, OverflowIsTheEngines) {
  ExpectSame(engine::ParseOverflow, OverflowFromName,
             [](encoder::Overflow o) { return api::ToProto(o); });
}

TEST(SpecNames, SearchModeIsTheEngines) {
  for (const char* name : kNames) {
    SCOPED_TRACE(name);
    EXPECT_EQ(engine::ParseSearchMode(name).status(), CheckSearchMode(name));
  }
}

TEST(SpecNames, PrecisionIsTheEncoders) {
  for (const char* name : kNames) {
    SCOPED_TRACE(name);
    EXPECT_EQ(encoder::ParsePrecision(name).status(), CheckPrecision(name));
  }
}

TEST(GrpcStatus, CodeAndMessageKept) {
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
  const absl::Status s =
      FromGrpcStatus(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "no model"));
  EXPECT_EQ(s, absl::FailedPreconditionError("no model"));
}

}  // namespace
}  // namespace neodb::client
