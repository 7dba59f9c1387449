#pragma once
// One table of calls and what they must answer, run over both transports by
// http_api_test (TheSameCasesAnswerAlikeOverGrpcAndJson): each request is
// written once, in the JSON form of its proto message; gRPC gets the message
// parsed from it, HTTP gets the JSON itself. Both must answer the same code
// and, for an error, the same message; an OK answer the same response.
// The calls run against the fixture's collection "docs" (three documents,
// ids a, b, c) with the admin key, and change nothing, so their order does
// not matter.

#include <vector>

#include "absl/status/status.h"

namespace neodb::api {

struct TransportCase {
  const char* method;   // "Service/Method"
  const char* request;  // the request message as JSON
  absl::StatusCode code;
};

inline const std::vector<TransportCase>& TransportCases() {
  using C = absl::StatusCode;
  static const auto* cases = new std::vector<TransportCase>{
      // Unknown things.
      {"Collections/Describe", R"({"name":"nope"})", C::kNotFound},
      {"Documents/Get", R"({"collection":"nope","ids":["a"]})", C::kNotFound},
      {"Documents/Count", R"({"collection":"nope"})", C::kNotFound},
      {"Admin/ReindexStatus", R"({"collection":"nope"})", C::kNotFound},
      {"Search/Recommend", R"({"collection":"docs","positive_ids":["zz"]})", C::kNotFound},
      // Bad requests, each naming what is wrong.
      {"Collections/Create", R"({"spec":{"name":""}})", C::kInvalidArgument},
      {"Collections/Create", R"({"spec":{"name":"docs"}})", C::kAlreadyExists},
      {"Documents/Delete", R"({"collection":"docs"})", C::kInvalidArgument},
      {"Documents/Delete",
       R"({"collection":"docs","ids":["a"],"filter_json":"{\"field\":\"year\",\"eq\":1}"})",
       C::kInvalidArgument},
      {"Documents/Count", R"({"collection":"docs","filter_json":"{\"field\":"})",
       C::kInvalidArgument},
      {"Documents/Count", R"({"collection":"docs","filter_json":"{\"field\":\"y\",\"zz\":1}"})",
       C::kInvalidArgument},
      {"Documents/UpdateMetadata", R"({"collection":"docs","ids":["a"]})", C::kInvalidArgument},
      {"Documents/UpdateMetadata",
       R"({"collection":"docs","metadata":{"x":{"bool_value":true}}})", C::kInvalidArgument},
      {"Documents/UpdateMetadata",
       R"({"collection":"docs","ids":["a"],"mode":"REPLACE","remove":["year"]})",
       C::kInvalidArgument},
      {"Documents/List", R"({"collection":"docs","page_size":5000})", C::kInvalidArgument},
      {"Search/NearText", R"({"collection":"docs","query":"Y2F0","k":5000})",
       C::kInvalidArgument},
      {"Search/NearText", R"({"collection":"docs","query":"Y2F0","mode":"bogus"})",
       C::kInvalidArgument},
      {"Search/NearText", R"({"collection":"docs","query":"Y2F0","offset":-1})",
       C::kInvalidArgument},
      {"Search/NearVector", R"({"collection":"docs","vector":[1,2]})", C::kInvalidArgument},
      // Reads that succeed: the same answer either way.
      {"Documents/Count", R"({"collection":"docs"})", C::kOk},
      {"Documents/Count", R"({"collection":"docs","filter_json":"{\"field\":\"year\",\"eq\":2024}"})",
       C::kOk},
      {"Documents/Get", R"({"collection":"docs","ids":["b","zz"]})", C::kOk},
      {"Search/NearText",
       R"({"collection":"docs","query":"Y2F0","mode":"keyword","include_text":true})", C::kOk},
  };
  return *cases;
}

}  // namespace neodb::api
