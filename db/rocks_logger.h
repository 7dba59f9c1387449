#pragma once
// RocksDB's info log, sent to our log (spdlog on stderr) instead of the LOG
// file RocksDB keeps beside its data.
//
// Why: that LOG file shares the data directory's disk. When the disk fills,
// one of its appends fails; RocksDB's log writer remembers the error, and
// with the assertions that Debian's librocksdb 7.8 is built with (it is not
// compiled with NDEBUG), the NEXT log line aborts the process in
// WritableFileWriter::AssertFalseAndGetStatusForPrevError
// (`sync_without_flush_called_`). The next log line comes at once: the error
// handler logs the failed WAL write. So a full disk killed the server on its
// first failed write, and again on every restart (recovery logs too) until
// space was freed. A log that does not write to the data disk removes that
// path entirely, and the operator keeps RocksDB's warnings in the server log.
//
// Levels: ERROR/FATAL -> error, WARN -> warn, INFO and below -> debug (off by
// default; RocksDB's info lines are many). Thread-safe (spdlog is).

#include <memory>

#include "rocksdb/env.h"

namespace neodb::db {

std::shared_ptr<rocksdb::Logger> NewSpdlogRocksLogger();

}  // namespace neodb::db
