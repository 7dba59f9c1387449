#pragma once
// POST /v1/embeddings in OpenAI's request and response shape, which many RAG
// frameworks call directly:
//   {"input": "text" | ["text", ...], "model": "...", "encoding_format": "float" | "base64"}
//   -> {"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [...]}],
//       "model": "...", "usage": {"prompt_tokens": N, "total_tokens": N}}
// It is Embedding.Embed underneath (JsonRpc::Invoke, the gRPC handler, its
// role and limits), so its vectors are Embed's bit for bit: the server's
// default model, mean pooling, normalised, text over the model's length
// refused. `model`: absent, "default" or the default model's id embeds that
// way; a collection's name embeds as that collection embeds its documents
// (its pooling, document prefix and overflow), which needs the collection's
// model to be the server's default (otherwise UNIMPLEMENTED, 501: the engine
// offers no embedding with a collection's own model yet). base64 is the
// little-endian float32 bytes, as OpenAI sends them. Token arrays as input
// and `dimensions` are refused (400).

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "api/http/json_rpc.h"

namespace neodb::api {

HttpReply OpenAiEmbeddings(const JsonRpc& rpc, const std::string& body,
                           std::optional<absl::string_view> authorization);

}  // namespace neodb::api
