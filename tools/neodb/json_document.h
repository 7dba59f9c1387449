#pragma once
// The JSON forms of documents that the client reads from files: metadata
// objects, vectors, and one line of an `ingest` JSON-lines file. Kept apart
// from client_common.h (gRPC, CLI11) so that tests/fuzz can drive the parsers
// with nothing but the proto messages. Every input here is hostile: malformed
// text is INVALID_ARGUMENT naming where it is, never an exception or a crash.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "neodb/v1/neodb.pb.h"
#include "nlohmann/json.hpp"

namespace neodb::cli {

using json = nlohmann::json;

// A JSON value whose numbers parse as float (strtof on the number's own
// text), so a vector written shortest round-trip reads back bit for bit
// (through double it could round twice).
using JsonF32 = nlohmann::basic_json<std::map, std::vector, std::string, bool, std::int64_t,
                                     std::uint64_t, float>;

// {"key": string | integer | number | bool, ...} into `out`; INVALID_ARGUMENT
// naming the key for any other value type, or an integer outside int64.
absl::Status JsonToMetadata(const json& j, google::protobuf::Map<std::string, v1::Value>* out);

// The floats of a JSON array of numbers; INVALID_ARGUMENT naming `what`
// otherwise (including an empty array).
absl::StatusOr<std::vector<float>> VectorFromJson(const JsonF32& j, const std::string& what);
// A vector given as JSON text: `[0.1, …]` or `{"vector": [0.1, …]}`.
absl::StatusOr<std::vector<float>> ParseVectorJson(std::string_view text, const std::string& what);

// One line of an ingest file: {"id", "text", "metadata", "vector"} with text
// or vector required, id a string or an int64. std::nullopt for a blank line
// (spaces, tabs, a trailing \r). Errors are INVALID_ARGUMENT prefixed with
// `where` ("docs.jsonl:12").
absl::StatusOr<std::optional<v1::Document>> ParseIngestLine(std::string_view line,
                                                            const std::string& where);

}  // namespace neodb::cli
