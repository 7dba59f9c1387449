#include "api/http/proto_json.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace neodb::api {
namespace {

namespace pb = google::protobuf;
using Json = nlohmann::ordered_json;

// Which way the bytes fields are rewritten: text -> base64 before protobuf
// parses, base64 -> text after it printed.
enum class Way { kToBase64, kToText };

void RewriteMessage(Json& j, const pb::Descriptor* d, Way way);

void RewriteValue(Json& v, const pb::FieldDescriptor* f, Way way) {
  if (f->type() == pb::FieldDescriptor::TYPE_BYTES && v.is_string()) {
    std::string& s = v.get_ref<std::string&>();
    if (way == Way::kToBase64) {
      s = absl::Base64Escape(s);
    } else {
      std::string text;
      if (absl::Base64Unescape(s, &text)) s = std::move(text);
    }
  } else if (f->type() == pb::FieldDescriptor::TYPE_MESSAGE) {
    RewriteMessage(v, f->message_type(), way);
  }
}

void RewriteField(Json& v, const pb::FieldDescriptor* f, Way way) {
  if (f->is_map()) {
    if (!v.is_object()) return;
    const pb::FieldDescriptor* value = f->message_type()->map_value();
    for (auto& item : v.items()) RewriteValue(item.value(), value, way);
  } else if (f->is_repeated()) {
    if (!v.is_array()) return;
    for (Json& item : v) RewriteValue(item, f, way);
  } else {
    RewriteValue(v, f, way);
  }
}

// Walks `j` as a `d`; shapes that do not fit are left for protobuf to refuse.
void RewriteMessage(Json& j, const pb::Descriptor* d, Way way) {
  if (!j.is_object() || absl::StartsWith(d->full_name(), "google.protobuf.")) return;
  for (auto& item : j.items()) {
    const pb::FieldDescriptor* f = d->FindFieldByName(item.key());
    if (f == nullptr) f = d->FindFieldByCamelcaseName(item.key());
    if (f != nullptr) RewriteField(item.value(), f, way);
  }
}

absl::Status Refused(const pb::Message& m, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("the request body is not a valid ", m.GetDescriptor()->full_name(),
                   " in JSON: ", why));
}

}  // namespace

absl::Status JsonToMessage(absl::string_view json, pb::Message* message) {
  message->Clear();
  if (absl::StripAsciiWhitespace(json).empty()) json = "{}";
  pb::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  Json j = Json::parse(json.begin(), json.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Not JSON at all: protobuf's parser says where, in its words.
    pb::util::Status s = pb::util::JsonStringToMessage(std::string(json), message, options);
    message->Clear();
    // Its message ends with the text around the fault and a caret: the first line says it.
    std::string why = s.ok() ? "it is not JSON" : std::string(s.message());
    why = why.substr(0, why.find('\n'));
    return Refused(*message, why);
  }
  if (!j.is_object()) return Refused(*message, "expected a JSON object");
  RewriteMessage(j, message->GetDescriptor(), Way::kToBase64);
  const std::string rewritten = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  pb::util::Status s = pb::util::JsonStringToMessage(rewritten, message, options);
  if (!s.ok()) {
    message->Clear();
    return Refused(*message, std::string(s.message()));
  }
  return absl::OkStatus();
}

std::string MessageToJson(const pb::Message& message) {
  pb::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  // Printing a valid message cannot fail (no Any fields in neodb.v1).
  (void)pb::util::MessageToJsonString(message, &out, options);
  Json j = Json::parse(out, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return out;
  RewriteMessage(j, message.GetDescriptor(), Way::kToText);
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace neodb::api
