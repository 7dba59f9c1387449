#include "api/http/openapi.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/descriptor.h"
#include "nlohmann/json.hpp"

namespace neodb::api {
namespace {

namespace pb = google::protobuf;
using Json = nlohmann::ordered_json;

Json Ref(const pb::Descriptor* d) {
  return {{"$ref", absl::StrCat("#/components/schemas/", d->full_name())}};
}

Json JsonContent(Json schema) { return {{"application/json", {{"schema", std::move(schema)}}}}; }

class SchemaWriter {
 public:
  // Adds `d` and every message it reaches to the schemas.
  void Add(const pb::Descriptor* d) {
    if (!seen_.insert(d->full_name()).second) return;
    Json props = Json::object();
    for (int i = 0; i < d->field_count(); ++i) {
      const pb::FieldDescriptor* f = d->field(i);
      props[f->name()] = Field(f);
    }
    schemas_[d->full_name()] = {{"type", "object"},
                                {"properties", std::move(props)},
                                {"additionalProperties", false}};
  }
  Json Take() { return std::move(schemas_); }

 private:
  Json Field(const pb::FieldDescriptor* f) {
    if (f->is_map()) {
      return {{"type", "object"},
              {"additionalProperties", Single(f->message_type()->map_value())}};
    }
    if (f->is_repeated()) return {{"type", "array"}, {"items", Single(f)}};
    return Single(f);
  }
  Json Single(const pb::FieldDescriptor* f) {
    switch (f->type()) {
      case pb::FieldDescriptor::TYPE_DOUBLE:
      case pb::FieldDescriptor::TYPE_FLOAT:
        return {{"type", "number"}};
      case pb::FieldDescriptor::TYPE_INT32:
      case pb::FieldDescriptor::TYPE_SINT32:
      case pb::FieldDescriptor::TYPE_SFIXED32:
        return {{"type", "integer"}, {"format", "int32"}};
      case pb::FieldDescriptor::TYPE_UINT32:
      case pb::FieldDescriptor::TYPE_FIXED32:
        return {{"type", "integer"}, {"minimum", 0}, {"maximum", 4294967295u}};
      case pb::FieldDescriptor::TYPE_INT64:
      case pb::FieldDescriptor::TYPE_SINT64:
      case pb::FieldDescriptor::TYPE_SFIXED64:
      case pb::FieldDescriptor::TYPE_UINT64:
      case pb::FieldDescriptor::TYPE_FIXED64:
        // proto3 JSON prints 64-bit integers as strings (and reads both).
        return {{"type", "string"}, {"format", "int64"}};
      case pb::FieldDescriptor::TYPE_BOOL:
        return {{"type", "boolean"}};
      case pb::FieldDescriptor::TYPE_STRING:
      case pb::FieldDescriptor::TYPE_BYTES:  // text: see proto_json.h
        return {{"type", "string"}};
      case pb::FieldDescriptor::TYPE_ENUM: {
        Json names = Json::array();
        for (int i = 0; i < f->enum_type()->value_count(); ++i) {
          names.push_back(f->enum_type()->value(i)->name());
        }
        return {{"type", "string"}, {"enum", std::move(names)}};
      }
      case pb::FieldDescriptor::TYPE_MESSAGE:
      case pb::FieldDescriptor::TYPE_GROUP:
        Add(f->message_type());
        return Ref(f->message_type());
    }
    return Json::object();
  }

  std::set<std::string> seen_;
  Json schemas_ = Json::object();
};

Json ErrorSchema() {
  return {{"type", "object"},
          {"properties",
           {{"error",
             {{"type", "object"},
              {"properties",
               {{"code", {{"type", "integer"}}},
                {"status", {{"type", "string"}}},
                {"message", {{"type", "string"}}}}}}}}}};
}

Json EmbeddingsPath() {
  Json input = {{"oneOf",
                 {{{"type", "string"}},
                  {{"type", "array"}, {"items", {{"type", "string"}}}, {"minItems", 1}}}}};
  Json request = {{"type", "object"},
                  {"required", Json::array({"input"})},
                  {"properties",
                   {{"input", input},
                    {"model", {{"type", "string"}}},
                    {"encoding_format", {{"type", "string"}, {"enum", {"float", "base64"}}}},
                    {"user", {{"type", "string"}}}}}};
  Json embedding = {{"oneOf",
                     {{{"type", "array"}, {"items", {{"type", "number"}}}},
                      {{"type", "string"}}}}};
  Json response = {
      {"type", "object"},
      {"properties",
       {{"object", {{"type", "string"}}},
        {"data",
         {{"type", "array"},
          {"items",
           {{"type", "object"},
            {"properties",
             {{"object", {{"type", "string"}}},
              {"index", {{"type", "integer"}}},
              {"embedding", embedding}}}}}}},
        {"model", {{"type", "string"}}},
        {"usage",
         {{"type", "object"},
          {"properties",
           {{"prompt_tokens", {{"type", "integer"}}},
            {"total_tokens", {{"type", "integer"}}}}}}}}}};
  return {{"post",
           {{"operationId", "OpenAI.Embeddings"},
            {"summary", "OpenAI-compatible embeddings (Embedding.Embed underneath)"},
            {"requestBody", {{"required", true}, {"content", JsonContent(request)}}},
            {"responses",
             {{"200", {{"description", "the embeddings"}, {"content", JsonContent(response)}}},
              {"default",
               {{"description", "an error"},
                {"content", JsonContent({{"$ref", "#/components/schemas/Error"}})}}}}}}}};
}

}  // namespace

std::string OpenApiDocument(const JsonRpc& rpc) {
  SchemaWriter schemas;
  Json paths = Json::object();
  const pb::DescriptorPool* pool = pb::DescriptorPool::generated_pool();
  for (const std::string& full : rpc.Methods()) {
    // "/neodb.v1.Search/NearText" -> service neodb.v1.Search, method NearText.
    std::vector<std::string> parts = absl::StrSplit(full.substr(1), '/');
    const pb::ServiceDescriptor* sd = pool->FindServiceByName(parts[0]);
    const pb::MethodDescriptor* md = sd == nullptr ? nullptr : sd->FindMethodByName(parts[1]);
    if (md == nullptr) continue;
    schemas.Add(md->input_type());
    schemas.Add(md->output_type());
    paths[absl::StrCat("/v1/rpc/", sd->name(), "/", md->name())] = {
        {"post",
         {{"operationId", absl::StrCat(sd->name(), ".", md->name())},
          {"tags", Json::array({sd->name()})},
          {"requestBody", {{"required", false}, {"content", JsonContent(Ref(md->input_type()))}}},
          {"responses",
           {{"200", {{"description", "the response message"},
                     {"content", JsonContent(Ref(md->output_type()))}}},
            {"default",
             {{"description", "an error (the gRPC status code's HTTP status)"},
              {"content", JsonContent({{"$ref", "#/components/schemas/Error"}})}}}}}}}};
  }
  paths["/v1/embeddings"] = EmbeddingsPath();
  paths["/healthz"] = {{"get",
                        {{"operationId", "Health"},
                         {"security", Json::array()},
                         {"responses", {{"200", {{"description", "serving"}}}}}}}};
  Json all = schemas.Take();
  all["Error"] = ErrorSchema();
  Json doc = {{"openapi", "3.0.3"},
              {"info",
               {{"title", "neodb"},
                {"version", "v1"},
                {"description",
                 "neodb.v1 over HTTP + JSON: POST /v1/rpc/<Service>/<Method> takes and answers "
                 "the proto messages in JSON. Streaming RPCs are gRPC only."}}},
              {"security", Json::array({Json{{"bearer", Json::array()}}})},
              {"paths", std::move(paths)},
              {"components",
               {{"securitySchemes", {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}}}},
                {"schemas", std::move(all)}}}};
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace neodb::api
