#pragma once
// The readable forms of the client commands' answers (`neodb search`, `stats`,
// `collections describe` without --json): query terms, a snippet of a text
// around them with the terms marked, an aligned table, aligned key: value
// lines. Pure functions of their arguments (tested in tests/tools); widths
// count UTF-8 code points, not terminal cells (a CJK character counts one).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"

namespace neodb::cli {

// What a matched term is wrapped in: bold on a terminal, brackets in a pipe.
struct Marks {
  std::string open = "[";
  std::string close = "]";
};
Marks MarksFor(bool terminal);
// True when stdout is a terminal that takes bold: not a pipe or file, no
// NO_COLOR in the environment (no-color.org), TERM not "dumb".
bool StdoutIsStyledTerminal();

// The query's words, lowercased (ASCII letters; other bytes kept as they are),
// each once, in order. A word is a run of ASCII letters and digits or of any
// bytes >= 0x80 (so "日本" and "é" are words).
std::vector<std::string> QueryTerms(std::string_view query);

// At most `max_chars` code points of `text` (control characters and runs of
// white space shown as one space), starting at a word boundary shortly before
// the first word equal to a term (ASCII case-insensitive; the server's
// stemming is not applied, so "cats" does not mark "cat"), or at the start when
// none matches, and ending at a word boundary. "…" stands where text was cut
// off. Every matched word inside is wrapped in `marks`. A single word longer
// than the budget is cut at a code point boundary. REQUIRES: max_chars >= 3
// (an ellipsis each side and one character). Never splits a UTF-8
// sequence; invalid UTF-8 passes through byte for byte.
std::string Snippet(std::string_view text, const std::vector<std::string>& terms,
                    size_t max_chars, const Marks& marks);

// Code points in `s` (bytes that are not UTF-8 continuation bytes).
size_t CodePoints(std::string_view s);

// A table: `header` then `rows`, columns separated by two spaces, each padded
// to its widest cell except the last; columns whose `right[i]` is true are
// right-aligned (numbers). Every row has header.size() cells. Ends in "\n".
std::string RenderTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows,
                        const std::vector<bool>& right);

// An object as "key  value" lines, keys aligned; nested objects flattened with
// dots ("keyword.documents"), arrays and strings as JSON would write them less
// the quotes of a plain string. Ends in "\n".
std::string RenderKeyValues(const nlohmann::json& object);

}  // namespace neodb::cli
