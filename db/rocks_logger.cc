#include "db/rocks_logger.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "spdlog/spdlog.h"

namespace neodb::db {
namespace {

class SpdlogRocksLogger : public rocksdb::Logger {
 public:
  SpdlogRocksLogger() : rocksdb::Logger(rocksdb::InfoLogLevel::DEBUG_LEVEL) {}

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
  }
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    spdlog::level::level_enum to = spdlog::level::debug;
    if (level >= rocksdb::InfoLogLevel::ERROR_LEVEL && level != rocksdb::InfoLogLevel::HEADER_LEVEL) {
      to = spdlog::level::err;
    } else if (level == rocksdb::InfoLogLevel::WARN_LEVEL) {
      to = spdlog::level::warn;
    }
    if (!spdlog::should_log(to)) return;
    char buf[1024];
    va_list copy;
    va_copy(copy, ap);
    int n = std::vsnprintf(buf, sizeof buf, format, copy);
    va_end(copy);
    std::string line = n < 0 ? std::string(format) : std::string(buf, std::min<size_t>(n, sizeof buf - 1));
    spdlog::log(to, "rocksdb: {}", line);
  }
};

}  // namespace

std::shared_ptr<rocksdb::Logger> NewSpdlogRocksLogger() {
  return std::make_shared<SpdlogRocksLogger>();
}

}  // namespace neodb::db
