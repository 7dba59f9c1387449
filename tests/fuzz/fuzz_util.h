#pragma once
// Helpers shared by the libFuzzer targets of this folder (README.md).
//
// A target must crash only for a real bug: a sanitizer report, or a broken
// contract checked with FUZZ_CHECK (an OK result that violates what the
// parser's header promises). Rejected input is the normal case.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace neodb::fuzz {

// Aborts (a libFuzzer crash, with the input saved) when `cond` is false.
#define FUZZ_CHECK(cond)                                                              \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                   \
    }                                                                                 \
  } while (0)

inline std::string_view AsView(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// A private directory for file-based loaders, made once per process and
// reused by every input (libFuzzer runs inputs one after another).
const std::string& ScratchDir();

// Writes `bytes` to ScratchDir()/name (replacing it) and returns the path.
std::string WriteScratchFile(const std::string& name, std::string_view bytes);

}  // namespace neodb::fuzz
