#include "tools/neodb/json_log.h"

#include <string>

#include "nlohmann/json.hpp"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_sinks.h"

namespace neodb::cli {
namespace {

// %* in the pattern: the message as a quoted, escaped JSON string.
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string s = nlohmann::json(std::string(msg.payload.data(), msg.payload.size()))
                              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(s.data(), s.data() + s.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

}  // namespace

std::shared_ptr<spdlog::logger> MakeJsonStderrLogger() {
  auto logger = spdlog::stderr_logger_mt("neodb");
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<JsonMessageFlag>('*').set_pattern(
      R"({"time":"%Y-%m-%dT%H:%M:%S.%f%z","level":"%l","logger":"%n","msg":%*})");
  logger->set_formatter(std::move(formatter));
  return logger;
}

}  // namespace neodb::cli
