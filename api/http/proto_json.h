#pragma once
// Messages of neodb.v1 as JSON, for the HTTP API: protobuf's own JSON mapping
// (google::protobuf::util, driven by the descriptors, so a field added to the
// .proto is in the JSON API with no code here), with one change: `bytes`
// fields read and write as text. neodb's texts are `bytes` in the proto only
// so that invalid UTF-8 reaches the server's own check (see Document.text);
// they are UTF-8, and a JSON string is text, so base64 there would only make
// curl users encode their documents. On output, invalid UTF-8 is replaced
// with U+FFFD.
//
// Field names: the proto's (`include_vector`); the lowerCamelCase JSON names
// (`includeVector`) are read too. 64-bit integers print as strings, as
// proto3's JSON mapping says; both forms are read. Every field is printed,
// defaults included. Unknown fields are refused.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace neodb::api {

// Parses `json` into `*message` (cleared first). An empty body is `{}`.
// INVALID_ARGUMENT naming the message type and what is wrong: not JSON, an
// unknown field, a value of the wrong type.
absl::Status JsonToMessage(absl::string_view json, google::protobuf::Message* message);

// `message` as JSON text.
std::string MessageToJson(const google::protobuf::Message& message);

}  // namespace neodb::api
