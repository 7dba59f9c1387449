#pragma once
// Checks on user-supplied strings, shared by the database and the services.

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/utf8.h"

namespace neodb::engine {

// Byte offset of the first invalid UTF-8 sequence in `s` (overlong forms,
// surrogates and code points over U+10FFFF are invalid), or npos when valid:
// the one codec's (common/utf8.h).
using ::neodb::utf8::FindInvalidUtf8;

// OK when `text` is non-empty valid UTF-8; INVALID_ARGUMENT otherwise, the
// message starting with `what` (e.g. "document 'a': text").
absl::Status CheckText(std::string_view what, std::string_view text);

// Document ids: 1..512 bytes of valid UTF-8 without control characters.
absl::Status CheckDocumentId(std::string_view id);

// A random 32-hex-digit id for documents upserted without one.
std::string GenerateDocumentId();

}  // namespace neodb::engine
