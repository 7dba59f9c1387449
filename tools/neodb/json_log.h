#pragma once
// `neodb serve --log-format json`: one JSON object per log line on stderr,
// {"time","level","logger","msg"}, for log shippers. The message is escaped
// as a JSON string, whatever it contains.

#include <memory>

#include "spdlog/logger.h"

namespace neodb::cli {

// A logger "neodb" on stderr writing JSON lines.
std::shared_ptr<spdlog::logger> MakeJsonStderrLogger();

}  // namespace neodb::cli
