#include "tools/neodb/text_table.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <unordered_set>

#include <unistd.h>

namespace neodb::cli {
namespace {

constexpr std::string_view kEllipsis = "…";

bool IsWordByte(unsigned char c) { return c >= 0x80 || std::isalnum(c); }
bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Control characters and runs of white space as one space, ends trimmed: a
// snippet stays on its table row whatever the text holds.
std::string OneLine(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool space = false;
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f || c == ' ') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out.push_back(' ');
    space = false;
    out.push_back(static_cast<char>(c));
  }
  return out;
}

// One run of word bytes or of other bytes.
struct Token {
  size_t begin, end;
  bool word;
  size_t chars;
};

std::vector<Token> Tokenize(std::string_view s) {
  std::vector<Token> out;
  for (size_t i = 0; i < s.size();) {
    const bool word = IsWordByte(static_cast<unsigned char>(s[i]));
    size_t j = i;
    while (j < s.size() && IsWordByte(static_cast<unsigned char>(s[j])) == word) ++j;
    out.push_back({i, j, word, CodePoints(s.substr(i, j - i))});
    i = j;
  }
  return out;
}

// The first `n` code points of `s`.
std::string_view Prefix(std::string_view s, size_t n) {
  size_t i = 0;
  for (size_t seen = 0; i < s.size(); ++i) {
    if (!IsContinuation(static_cast<unsigned char>(s[i])) && seen++ == n) break;
  }
  return s.substr(0, i);
}

}  // namespace

Marks MarksFor(bool terminal) {
  if (terminal) return {"\x1b[1m", "\x1b[0m"};
  return {};
}

bool StdoutIsStyledTerminal() {
  const char* term = std::getenv("TERM");
  return ::isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr &&
         !(term != nullptr && std::string_view(term) == "dumb");
}

size_t CodePoints(std::string_view s) {
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return !IsContinuation(static_cast<unsigned char>(c)); }));
}

std::vector<std::string> QueryTerms(std::string_view query) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  for (const Token& t : Tokenize(query)) {
    if (!t.word) continue;
    std::string w = Lower(query.substr(t.begin, t.end - t.begin));
    if (seen.insert(w).second) out.push_back(std::move(w));
  }
  return out;
}

std::string Snippet(std::string_view raw, const std::vector<std::string>& terms,
                    size_t max_chars, const Marks& marks) {
  const std::string text = OneLine(raw);
  const std::vector<Token> tokens = Tokenize(text);
  if (tokens.empty() || max_chars == 0) return "";
  const std::unordered_set<std::string> wanted(terms.begin(), terms.end());
  auto piece = [&](const Token& t) {
    return std::string_view(text).substr(t.begin, t.end - t.begin);
  };
  auto matches = [&](const Token& t) { return t.word && wanted.count(Lower(piece(t))) > 0; };
  // Anchor: the first matching word, else the first token.
  size_t anchor = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (matches(tokens[i])) {
      anchor = i;
      break;
    }
  }
  const size_t ellipsis = CodePoints(kEllipsis);
  // Room for the words: the budget less an ellipsis at each end (reserved
  // whether or not it is needed, so the result never exceeds max_chars).
  const size_t room = max_chars > 2 * ellipsis ? max_chars - 2 * ellipsis : 1;
  size_t first = anchor, last = anchor + 1, used = tokens[anchor].chars, before = 0;
  // A little context before the match (a third of the room), whole tokens.
  while (first > 0 && before + tokens[first - 1].chars <= room / 3 &&
         used + tokens[first - 1].chars <= room) {
    before += tokens[--first].chars;
    used += tokens[first].chars;
  }
  while (last < tokens.size() && used + tokens[last].chars <= room) used += tokens[last++].chars;
  // Near the end of the text: what is left of the room goes before it.
  while (first > 0 && used + tokens[first - 1].chars <= room) used += tokens[--first].chars;
  // Where text is cut off, start and end on words, not on punctuation or spaces.
  if (first > 0) {
    while (first < anchor && !tokens[first].word) ++first;
  }
  if (last < tokens.size()) {
    while (last > anchor + 1 && !tokens[last - 1].word) --last;
  }

  std::string out;
  const bool cut_before = first > 0, cut_after = last < tokens.size();
  if (cut_before) out += kEllipsis;
  if (tokens[anchor].chars > room) {  // one word longer than the whole budget
    const bool mark = matches(tokens[anchor]);
    if (mark) out += marks.open;
    out += Prefix(piece(tokens[anchor]), room);
    if (mark) out += marks.close;
    out += kEllipsis;
    return out;
  }
  for (size_t i = first; i < last; ++i) {
    const std::string_view s = piece(tokens[i]);
    if (matches(tokens[i])) {
      out += marks.open;
      out += s;
      out += marks.close;
    } else {
      out += s;
    }
  }
  if (cut_after) out += kEllipsis;
  return out;
}

std::string RenderTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows,
                        const std::vector<bool>& right) {
  std::vector<size_t> width(header.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], CodePoints(row[i]));
  };
  measure(header);
  for (const auto& r : rows) measure(r);
  std::string out;
  auto line = [&](const std::vector<std::string>& row) {
    std::string l;
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      const size_t pad = width[i] - CodePoints(row[i]);
      const bool last = i + 1 == width.size();
      if (i > 0) l += "  ";
      if (i < right.size() && right[i]) l.append(pad, ' ');
      l += row[i];
      if (!last && !(i < right.size() && right[i])) l.append(pad, ' ');
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l;
    out += '\n';
  };
  line(header);
  for (const auto& r : rows) line(r);
  return out;
}

std::string RenderKeyValues(const nlohmann::json& object) {
  std::vector<std::pair<std::string, std::string>> lines;
  std::function<void(const std::string&, const nlohmann::json&)> walk =
      [&](const std::string& prefix, const nlohmann::json& j) {
        if (j.is_object() && !j.empty()) {
          for (const auto& [k, v] : j.items()) walk(prefix.empty() ? k : prefix + "." + k, v);
          return;
        }
        std::string value = j.is_string() ? j.get<std::string>()
                                          : j.dump(-1, ' ', false,
                                                   nlohmann::json::error_handler_t::replace);
        if (j.is_string() && value.empty()) value = "\"\"";
        lines.emplace_back(prefix, OneLine(value));
      };
  walk("", object);
  size_t width = 0;
  for (const auto& [k, v] : lines) width = std::max(width, CodePoints(k));
  std::string out;
  for (const auto& [k, v] : lines) {
    out += k;
    out.append(width - CodePoints(k) + 2, ' ');
    out += v;
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  return out;
}

}  // namespace neodb::cli
