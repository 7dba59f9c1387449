#include "api/http/openai_embeddings.h"

#include <cstring>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "api/http/http_status.h"
#include "neodb/v1/neodb.pb.h"
#include "nlohmann/json.hpp"

namespace neodb::api {
namespace {

using Json = nlohmann::ordered_json;

constexpr char kEmbed[] = "/neodb.v1.Embedding/Embed";

HttpReply Error(const absl::Status& s) { return {HttpStatusFor(s.code()), ErrorJson(s)}; }
absl::Status Bad(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("/v1/embeddings: ", why));
}

// The request's settings for `model` (see the header).
absl::Status SettingsFor(const JsonRpc& rpc, const std::optional<Caller>& caller,
                         const std::string& model, v1::EmbedRequest* req) {
  req->set_pooling(v1::POOLING_MEAN);
  req->set_normalize(true);
  req->set_overflow(v1::OVERFLOW_ERROR);
  if (model.empty() || model == "default") return absl::OkStatus();
  v1::StatsResponse stats;
  if (absl::Status s = rpc.Invoke("/neodb.v1.Admin/Stats", caller, v1::StatsRequest(), &stats);
      !s.ok()) {
    return s;
  }
  if (model == stats.model_id()) return absl::OkStatus();
  v1::DescribeCollectionRequest describe;
  describe.set_name(model);
  v1::DescribeCollectionResponse info;
  absl::Status s = rpc.Invoke("/neodb.v1.Collections/Describe", caller, describe, &info);
  if (absl::IsNotFound(s) || absl::IsInvalidArgument(s)) {
    return absl::NotFoundError(absl::StrCat("model '", model,
                                            "' is neither the server's default model (",
                                            stats.model_id(), ") nor a collection's name"));
  }
  if (!s.ok()) return s;
  if (info.info().model_id() != stats.model_id()) {
    return absl::UnimplementedError(absl::StrCat(
        "collection '", model, "' holds vectors of '", info.info().model_id(),
        "'; /v1/embeddings embeds with the server's default model (", stats.model_id(),
        ") only"));
  }
  const v1::CollectionSpec& spec = info.info().spec();
  if (spec.pooling() != v1::POOLING_UNSPECIFIED) req->set_pooling(spec.pooling());
  if (spec.overflow() != v1::OVERFLOW_UNSPECIFIED) req->set_overflow(spec.overflow());
  req->set_prefix(spec.document_prefix());
  return absl::OkStatus();
}

}  // namespace

HttpReply OpenAiEmbeddings(const JsonRpc& rpc, const std::string& body,
                           std::optional<absl::string_view> authorization) {
  absl::StatusOr<std::optional<Caller>> caller = rpc.Authorize(kEmbed, authorization);
  if (!caller.ok()) return Error(caller.status());
  const Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Error(Bad("the body must be a JSON object"));
  v1::EmbedRequest req;
  auto input = j.find("input");
  if (input == j.end()) return Error(Bad("'input' is required"));
  if (input->is_string()) {
    req.add_texts(input->get<std::string>());
  } else if (input->is_array() && !input->empty()) {
    for (const Json& t : *input) {
      if (!t.is_string()) {
        return Error(Bad("'input' must be a string or an array of strings (token arrays are "
                         "not accepted: send the text)"));
      }
      req.add_texts(t.get<std::string>());
    }
  } else {
    return Error(Bad("'input' must be a string or a non-empty array of strings"));
  }
  std::string model;
  if (auto m = j.find("model"); m != j.end() && !m->is_null()) {
    if (!m->is_string()) return Error(Bad("'model' must be a string"));
    model = m->get<std::string>();
  }
  bool base64 = false;
  if (auto f = j.find("encoding_format"); f != j.end() && !f->is_null()) {
    if (!f->is_string() || (*f != "float" && *f != "base64")) {
      return Error(Bad("'encoding_format' must be \"float\" or \"base64\""));
    }
    base64 = *f == "base64";
  }
  if (auto d = j.find("dimensions"); d != j.end() && !d->is_null()) {
    return Error(Bad("'dimensions' is not supported: the model's dimension is fixed"));
  }
  if (absl::Status s = SettingsFor(rpc, *caller, model, &req); !s.ok()) return Error(s);
  v1::EmbedResponse resp;
  if (absl::Status s = rpc.Invoke(kEmbed, *caller, req, &resp); !s.ok()) return Error(s);

  Json data = Json::array();
  for (int i = 0; i < resp.vectors_size(); ++i) {
    const auto& values = resp.vectors(i).values();
    Json item = {{"object", "embedding"}, {"index", i}};
    if (base64) {
      std::string bytes(static_cast<size_t>(values.size()) * sizeof(float), '\0');
      if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
      item["embedding"] = absl::Base64Escape(bytes);
    } else {
      item["embedding"] = std::vector<float>(values.begin(), values.end());
    }
    data.push_back(std::move(item));
  }
  const Json out = {{"object", "list"},
                    {"data", std::move(data)},
                    {"model", model.empty() || model == "default" ? resp.model_id() : model},
                    {"usage", {{"prompt_tokens", resp.tokens()}, {"total_tokens", resp.tokens()}}}};
  return {200, out.dump(-1, ' ', false, Json::error_handler_t::replace)};
}

}  // namespace neodb::api
