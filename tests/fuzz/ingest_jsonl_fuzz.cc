// Fuzzes the reader of `neodb ingest` files (tools/neodb/json_document.h):
// each line of the input is one ParseIngestLine. Oracle: errors are
// INVALID_ARGUMENT naming the line; an accepted document has text or a
// vector, and its wire form parses back (proto3 string fields must hold
// valid UTF-8, or the message the client sends is refused).
#include <string>

#include "absl/strings/match.h"
#include "tests/fuzz/fuzz_util.h"
#include "tools/neodb/json_document.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input = neodb::fuzz::AsView(data, size);
  int line_no = 0;
  while (!input.empty()) {
    const size_t end = input.find('\n');
    const std::string_view line = input.substr(0, end);
    input = end == std::string_view::npos ? std::string_view() : input.substr(end + 1);
    const std::string where = "f.jsonl:" + std::to_string(++line_no);
    absl::StatusOr<std::optional<neodb::v1::Document>> doc =
        neodb::cli::ParseIngestLine(line, where);
    if (!doc.ok()) {
      FUZZ_CHECK(doc.status().code() == absl::StatusCode::kInvalidArgument);
      FUZZ_CHECK(absl::StartsWith(doc.status().message(), where + ":"));
      continue;
    }
    if (!doc->has_value()) continue;
    const neodb::v1::Document& d = **doc;
    FUZZ_CHECK(!d.text().empty() || d.vector_size() > 0 || line.find("\"text\"") != line.npos);
    std::string wire;
    FUZZ_CHECK(d.SerializeToString(&wire));
    neodb::v1::Document back;
    FUZZ_CHECK(back.ParseFromString(wire));
  }
  return 0;
}
