#pragma once
// The engine's state as Prometheus gauges and counters, read at scrape time:
// documents and index sizes per collection, the embed queue and encoder
// throughput, reindex progress, RocksDB properties, the process's RSS.

#include <string>

#include "engine/database.h"

namespace neodb::api {

// REQUIRES: `db` is open. Never fails: a value that cannot be read is left out.
std::string RenderDatabaseMetrics(const engine::Database& db);

// Resident set size of this process, bytes (from /proc/self/statm); 0 if unknown.
uint64_t ProcessRssBytes();

}  // namespace neodb::api
