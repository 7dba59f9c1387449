#include "api/metrics/database_metrics.h"

#include <unistd.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/metrics/request_metrics.h"

namespace neodb::api {
namespace {

void Family(std::string* out, const char* name, const char* type, const char* help) {
  absl::StrAppend(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

}  // namespace

uint64_t ProcessRssBytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::string RenderDatabaseMetrics(const engine::Database& db) {
  std::string out;
  engine::DatabaseStats s = db.Stats();
  Family(&out, "neodb_collections", "gauge", "Collections.");
  absl::StrAppend(&out, "neodb_collections ", s.collections, "\n");
  auto all = db.ListCollections();
  if (all.ok()) {
    Family(&out, "neodb_documents", "gauge", "Stored documents per collection.");
    for (const auto& c : *all) {
      absl::StrAppend(&out, "neodb_documents{collection=\"", EscapeLabel(c.spec.name), "\"} ",
                      c.count, "\n");
    }
    Family(&out, "neodb_index_vectors", "gauge", "Searchable vectors per collection.");
    for (const auto& c : *all) {
      absl::StrAppend(&out, "neodb_index_vectors{collection=\"", EscapeLabel(c.spec.name), "\"} ",
                      c.index_size, "\n");
    }
    Family(&out, "neodb_reindex_done", "gauge",
           "Documents a running or finished reindex has embedded, per collection.");
    std::string total;
    for (const auto& c : *all) {
      auto p = db.GetReindexProgress(c.spec.name);
      if (!p.ok()) continue;
      const std::string label = absl::StrCat("{collection=\"", EscapeLabel(c.spec.name), "\"} ");
      absl::StrAppend(&out, "neodb_reindex_done", label, p->done, "\n");
      absl::StrAppend(&total, "neodb_reindex_total", label, p->total, "\n");
    }
    Family(&out, "neodb_reindex_total", "gauge", "Documents the reindex has to embed.");
    out += total;
  }
  Family(&out, "neodb_writable", "gauge",
         "1 while the server takes writes; 0 while it refuses them (read-only on a full disk: "
         "Admin.Stats' read_only_reason says why).");
  absl::StrAppend(&out, "neodb_writable ", s.read_only_reason.empty() ? 1 : 0, "\n");
  Family(&out, "neodb_embed_queue_texts", "gauge",
         "Texts waiting for the default model's encoder.");
  absl::StrAppend(&out, "neodb_embed_queue_texts ", s.embed.queued_texts, "\n");
  Family(&out, "neodb_embedded_texts_total", "counter", "Texts the default model embedded.");
  absl::StrAppend(&out, "neodb_embedded_texts_total ", s.embed.embedded_texts, "\n");
  Family(&out, "neodb_embedded_tokens_total", "counter", "Tokens the default model embedded.");
  absl::StrAppend(&out, "neodb_embedded_tokens_total ", s.embed.embedded_tokens, "\n");
  Family(&out, "neodb_encoder_seconds_total", "counter",
         "Seconds the default model's encoder spent computing.");
  absl::StrAppend(&out, "neodb_encoder_seconds_total ",
                  absl::StrFormat("%.9g", s.embed.encoder_seconds), "\n");
  Family(&out, "neodb_encoder_tokens_per_second", "gauge",
         "Tokens per second of encoder compute time since start (tokens / encoder seconds).");
  absl::StrAppend(&out, "neodb_encoder_tokens_per_second ",
                  absl::StrFormat("%.9g", s.embed.encoder_seconds > 0
                                              ? s.embed.embedded_tokens / s.embed.encoder_seconds
                                              : 0.0),
                  "\n");
  Family(&out, "neodb_embed_work_items_total", "counter",
         "Work items (a request's share of one encoder pass) the default model ran.");
  absl::StrAppend(&out, "neodb_embed_work_items_total ", s.embed.work_items, "\n");
  Family(&out, "neodb_embed_passes_total", "counter",
         "Encoder passes the default model ran, by lane (query: searches' texts; bulk: the rest).");
  absl::StrAppend(&out, "neodb_embed_passes_total{lane=\"query\"} ", s.embed.query_batches, "\n",
                  "neodb_embed_passes_total{lane=\"bulk\"} ",
                  s.embed.batches - s.embed.query_batches, "\n");
  Family(&out, "neodb_embed_bulk_pass_tokens", "gauge",
         "Token cap of the default model's next bulk pass (from --max-bulk-pass-ms and the "
         "measured rate).");
  absl::StrAppend(&out, "neodb_embed_bulk_pass_tokens ", s.embed.bulk_pass_tokens, "\n");
  Family(&out, "neodb_embed_dropped_total", "counter",
         "Embed requests dropped before they finished, by reason.");
  absl::StrAppend(&out, "neodb_embed_dropped_total{reason=\"cancelled\"} ", s.embed.cancelled, "\n",
                  "neodb_embed_dropped_total{reason=\"deadline\"} ", s.embed.expired, "\n",
                  "neodb_embed_dropped_total{reason=\"queue_full\"} ", s.embed.rejected, "\n");
  Family(&out, "neodb_embed_skipped_sequences_total", "counter",
         "Sequences (chunks) of cancelled or expired requests never run.");
  absl::StrAppend(&out, "neodb_embed_skipped_sequences_total ", s.embed.skipped_sequences, "\n");
  Family(&out, "neodb_models_loaded", "gauge", "Models in memory.");
  absl::StrAppend(&out, "neodb_models_loaded ", s.models_loaded, "\n");
  Family(&out, "neodb_snapshots_written_total", "counter", "Index snapshots written.");
  absl::StrAppend(&out, "neodb_snapshots_written_total ", s.snapshots_written, "\n");
  Family(&out, "neodb_rocksdb_property", "gauge",
         "RocksDB integer properties, summed over column families.");
  for (const char* p : {"rocksdb.estimate-num-keys", "rocksdb.total-sst-files-size",
                        "rocksdb.cur-size-all-mem-tables", "rocksdb.estimate-live-data-size",
                        "rocksdb.num-running-compactions", "rocksdb.block-cache-usage"}) {
    auto v = db.StoreIntProperty(p);
    if (v.ok()) absl::StrAppend(&out, "neodb_rocksdb_property{name=\"", p, "\"} ", *v, "\n");
  }
  Family(&out, "neodb_process_resident_memory_bytes", "gauge", "Resident set size.");
  absl::StrAppend(&out, "neodb_process_resident_memory_bytes ", ProcessRssBytes(), "\n");
  return out;
}

}  // namespace neodb::api
