#pragma once
// The web console's files (api/http/console/), compiled into the binary: a
// build step (embed_console.cmake) turns each into a byte array of a
// generated source, so the server reads no files at run time and an install
// needs no Node. console.h serves them.

#include <cstddef>
#include <optional>
#include <string_view>

namespace neodb::api {

struct ConsoleFile {
  const char* name;  // the file's name in api/http/console/ ("app.js")
  const unsigned char* data;
  size_t size;
};

// Defined by the generated source, sorted by name.
extern const ConsoleFile kConsoleFiles[];
extern const size_t kConsoleFileCount;

// The file called `name`; nullopt when there is none.
std::optional<ConsoleFile> FindConsoleFile(std::string_view name);

// The Content-Type for a console file, by its extension; nullopt for an
// extension the console does not use (such a file is not served).
std::optional<std::string_view> ConsoleContentType(std::string_view name);

}  // namespace neodb::api
