#include "api/http/console.h"

#include <string>

#include "api/http/console_assets.h"
#include "api/http/http_status.h"
#include "httplib.h"

namespace neodb::api {
namespace {

// Only the server's own files and API: a document text that held markup
// could not load or run anything even if the page showed it unescaped (it
// does not: the scripts set textContent). 'unsafe-inline' for styles is not
// needed: the page has no style attributes.
constexpr char kPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

void Serve(const ConsoleFile& file, std::string_view type, httplib::Response& res) {
  res.set_header("Content-Security-Policy", kPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  // The files change with the binary: a browser asks again rather than keep
  // an old script beside a new server.
  res.set_header("Cache-Control", "no-cache");
  res.set_content(reinterpret_cast<const char*>(file.data), file.size, std::string(type));
}

}  // namespace

std::optional<ConsoleFile> FindConsoleFile(std::string_view name) {
  for (size_t i = 0; i < kConsoleFileCount; ++i) {
    if (name == kConsoleFiles[i].name) return kConsoleFiles[i];
  }
  return std::nullopt;
}

std::optional<std::string_view> ConsoleContentType(std::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view ext = name.substr(dot + 1);
  if (ext == "html") return "text/html; charset=utf-8";
  if (ext == "js") return "text/javascript; charset=utf-8";
  if (ext == "css") return "text/css; charset=utf-8";
  if (ext == "svg") return "image/svg+xml";
  return std::nullopt;
}

void AddConsoleRoutes(httplib::Server& server) {
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    const auto page = FindConsoleFile("index.html");
    if (!page) {  // a build whose console folder lost its page: say so, not 500
      res.status = 404;
      res.set_content(ErrorJson(absl::NotFoundError("this build has no web console")),
                      "application/json");
      return;
    }
    Serve(*page, *ConsoleContentType("index.html"), res);
  });
  server.Get(R"(/console/([A-Za-z0-9_.-]+))", [](const httplib::Request& req,
                                                  httplib::Response& res) {
    const std::string name = req.matches[1];
    const auto file = FindConsoleFile(name);
    const auto type = ConsoleContentType(name);
    if (!file || !type) {
      res.status = 404;
      res.set_content(ErrorJson(absl::NotFoundError("no such console file: " + name)),
                      "application/json");
      return;
    }
    Serve(*file, *type, res);
  });
}

}  // namespace neodb::api
