#pragma once
// The limits every neodb.v1 service applies. Its own header so that the
// request helpers (document_batch, ingest_reactors) take them without
// including the services that use those helpers.

#include <string>

#include "absl/time/time.h"

namespace neodb::api {

struct ServiceLimits {
  // Documents in one Upsert or one BulkIngest message. Default: 1000.
  int max_documents_per_request = 1000;
  // Texts in one Embed request. Default: 256.
  int max_texts_per_request = 256;
  // Used when a client sets no deadline. Default: 5 min.
  absl::Duration default_deadline = absl::Minutes(5);
  // The only directory model paths given over the API may name
  // (ReindexRequest.model_dir; model_paths.h). Empty: such paths are refused.
  // Default: empty.
  std::string models_dir;
  // The only directory Admin.Backup may write into (ConfineNewPath). Empty:
  // backups over the API are refused. Default: empty.
  std::string backup_dir;
};

}  // namespace neodb::api
