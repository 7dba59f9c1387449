// neodb serve: the gRPC server. Loads the model once, opens the database,
// serves until SIGTERM/SIGINT, then shuts down gracefully: stop accepting,
// drain running calls (bounded grace), snapshot every index, close the store.
#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "engine/lazy_embedder.h"
#include "engine/memory_budget.h"
#include "api/metrics/cluster_metrics.h"
#include "api/metrics/database_metrics.h"
#include "api/http/http_server.h"
#include "api/http/json_rpc.h"
#include "api/server.h"
#include "cluster/cluster_node.h"
#include "encoder/device.h"
#include "encoder/ops/cpu_kernels.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"
#include "tools/neodb/commands.h"
#include "tools/neodb/idle_trim.h"
#include "tools/neodb/json_log.h"
#ifdef NEODB_HAVE_ENCODER
#include "engine/encoder_embedder.h"
#include "encoder/default_model_dir.h"
#endif

namespace neodb::cli {
namespace {

// The thread that waits for the server's signals (sigwait below).
pthread_t g_signal_thread;

// Threads that libraries start before main() (two here: OpenBLAS's pool)
// do not block the server's signals, so when the waiting thread is not in
// sigwait at that instant (between the listening line and the loop, or
// while a key reload runs) the kernel hands the signal to one of them, and
// the default action ends the process: a SIGTERM became an unclean death, a
// SIGHUP a crash. With this handler installed, any thread that receives one
// passes it on to the waiting thread, where it stays pending (blocked) until
// sigwait takes it. pthread_kill is async-signal-safe.
extern "C" void ForwardToSignalThread(int sig) { pthread_kill(g_signal_thread, sig); }


struct ServeFlags {
  std::string data_dir;
  std::string model_dir;
  std::string listen = "127.0.0.1:50051";
  int threads = 16;
  int max_queued_calls = 1024;
  int max_open_streams = 0;
  int max_streams_per_key = 0;
  double stream_idle_timeout_s = 60;
  // HTTP/2 per-connection limits (api/http2_limits.h); durations in seconds.
  int max_streams_per_connection = 32;
  double min_ping_interval_s = 10;
  int max_ping_strikes = 2;
  bool permit_keepalive_without_calls = false;
  int max_metadata_bytes = 8 << 10;
  double max_connection_idle_s = 0;
  double max_connection_age_s = 0;
  double max_connection_age_grace_s = 60;
  int encoder_threads = 0;
  int fake_dim = 0;
  // Keep the default model's weights from start-up instead of loading them on
  // first use (engine/lazy_embedder.h).
  bool preload_model = false;
  double test_delay_ms = 0;
  double test_commit_delay_ms = 0;
  uint64_t test_selection_pause_at = 0;
  uint64_t test_snapshot_pause_at = 0;
  double snapshot_interval_s = 60;
  int max_queue_texts = 4096;
  int max_batch_tokens = 8192;
  int64_t max_request_tokens = engine::kDefaultMaxRequestTokens;
  double max_wait_ms = 2;
  double max_bulk_pass_ms = 25;
  double grace_s = 10;
  int64_t max_model_mib = 8192;
  int64_t max_collections = 1000;
  std::string key_file;
  std::string models_dir;
  api::SecurityOptions security;
  std::string metrics_listen;
  std::string http_listen;
  std::string nats;     // comma-separated nats:// URLs; empty: no cluster
  std::string node_id;  // this node's id in the cluster
  std::string advertise;  // host:port other nodes dial; empty: the listen address
  std::string backup_dir;
  std::string log_format = "text";
  std::string device = "cpu";
  std::string precision = "f32";  // the default model's, and new collections'
  double idle_trim_s = 10;        // tools/neodb/idle_trim.h; 0 = off
  int64_t rocksdb_cache_mib = 64;
  int64_t rocksdb_memtable_mib = 32;
  int64_t max_memory_mib = 0;
  // Resolved from `device` once, in Serve: every model this server loads runs
  // there.
  encoder::BackendOptions backend;
};

// Test hook (--test-encoder-delay-ms): every encoder call takes at least
// `delay` longer, so tests can catch a reindex or a queue in the act.
class SlowEmbedder : public engine::Embedder {
 public:
  SlowEmbedder(std::unique_ptr<engine::Embedder> inner, absl::Duration delay)
      : inner_(std::move(inner)), delay_(delay) {}
  const std::string& model_id() const override { return inner_->model_id(); }
  int dim() const override { return inner_->dim(); }
  int max_tokens() const override { return inner_->max_tokens(); }
  std::string device() const override { return inner_->device(); }
  encoder::Precision precision() const override { return inner_->precision(); }
  absl::StatusOr<int> CountTokens(std::string_view p, std::string_view t) const override {
    return inner_->CountTokens(p, t);
  }
  absl::StatusOr<std::vector<encoder::Embedding>> Embed(
      const std::vector<std::string>& texts, const encoder::EmbedOptions& options) override {
    absl::SleepFor(delay_);
    return inner_->Embed(texts, options);
  }
  absl::StatusOr<encoder::FramedTexts> Frame(const std::vector<std::string>& texts,
                                             const encoder::EmbedOptions& options) const override {
    return inner_->Frame(texts, options);
  }
  // The batcher's unit of work: the delay applies per encoder pass.
  absl::StatusOr<std::vector<float>> Pool(const std::vector<std::vector<int32_t>>& sequences,
                                          encoder::Pooling pooling) override {
    absl::SleepFor(delay_);
    return inner_->Pool(sequences, pooling);
  }

 private:
  std::unique_ptr<engine::Embedder> inner_;
  absl::Duration delay_;
};

absl::StatusOr<std::unique_ptr<engine::Embedder>> OpenModelUnslowed(const ServeFlags& f,
                                                                    const std::string& dir,
                                                                    encoder::Precision precision);

absl::StatusOr<std::unique_ptr<engine::Embedder>> OpenModel(const ServeFlags& f,
                                                            const std::string& dir,
                                                            encoder::Precision precision) {
  ASSIGN_OR_RETURN(std::unique_ptr<engine::Embedder> e, OpenModelUnslowed(f, dir, precision));
  if (f.test_delay_ms > 0) {
    e = std::make_unique<SlowEmbedder>(std::move(e), absl::Milliseconds(f.test_delay_ms));
  }
  return e;
}

absl::StatusOr<std::unique_ptr<engine::Embedder>> OpenModelUnslowed(const ServeFlags& f,
                                                                    const std::string& dir,
                                                                    encoder::Precision precision) {
  if (f.fake_dim > 0) {
    // Test/benchmark stand-in: `dir` names the fake's seed ("fake:7").
    // The seed is in the last component, so a confined path
    // (<models-dir>/fake:7) names the same fake.
    uint64_t seed = 1;
    const std::string base = std::filesystem::path(dir).filename().string();
    if (base.rfind("fake:", 0) == 0) seed = std::stoull(base.substr(5));
    return std::unique_ptr<engine::Embedder>(new engine::FakeEmbedder(f.fake_dim, 512, seed));
  }
#ifdef NEODB_HAVE_ENCODER
  encoder::EncoderOptions eo;
  eo.backend = f.backend;
  eo.backend.precision = precision;
  eo.backend.num_threads =
      f.encoder_threads > 0 ? f.encoder_threads
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return engine::EncoderEmbedder::Open(dir, eo);
#else
  return absl::UnimplementedError("this build has no encoder; use --fake-model DIM");
#endif
}

absl::Status Serve(ServeFlags f) {
  if (f.data_dir.empty()) return absl::InvalidArgumentError("--data-dir is required");
  // Before any thread starts (engine/memory_budget.h says why).
  const bool pinned_mmap_threshold = engine::PinMallocMmapThreshold();
  // The device is checked before anything is loaded: a CUDA request that
  // cannot be met ends the server here, with the reason.
  ASSIGN_OR_RETURN(const encoder::DeviceRequest device, encoder::ParseDevice(f.device));
  RETURN_IF_ERROR(encoder::ResolveDevice(device, &f.backend));
  ASSIGN_OR_RETURN(const encoder::Precision precision, encoder::ParsePrecision(f.precision));
  // No --model: the shipped default model (encoder/default_model_dir.h).
  std::string model_dir = f.model_dir;
#ifdef NEODB_HAVE_ENCODER
  if (f.fake_dim <= 0) {
    ASSIGN_OR_RETURN(model_dir, encoder::ResolveModelDir(f.model_dir));
  }
#endif
  // Block the signals in every thread (gRPC's included); one thread waits.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);  // reloads the key file
  g_signal_thread = pthread_self();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  struct sigaction forward = {};
  forward.sa_handler = ForwardToSignalThread;
  sigfillset(&forward.sa_mask);
  forward.sa_flags = SA_RESTART;
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &forward, nullptr);

  // Logs go to stderr; stdout carries only the listening line.
  if (f.log_format == "json") {
    spdlog::set_default_logger(MakeJsonStderrLogger());
  } else if (f.log_format == "text") {
    spdlog::set_default_logger(spdlog::stderr_color_mt("neodb"));
  } else {
    return absl::InvalidArgumentError("--log-format is text or json");
  }
  spdlog::info(
      "loading model {}{}", f.fake_dim > 0 ? "(fake)" : model_dir,
      f.model_dir.empty() && f.fake_dim <= 0 ? " (the default model; --model picks another)" : "");
  // The default model is checked now and, unless --preload-model, its
  // weights are let go until a call needs them: a server of the user's own
  // vectors or of other models never holds them (engine/lazy_embedder.h).
  std::unique_ptr<engine::Embedder> embedder;
  if (f.preload_model) {
    ASSIGN_OR_RETURN(embedder, OpenModel(f, model_dir, precision));
  } else {
    ASSIGN_OR_RETURN(embedder, engine::LazyEmbedder::Open([f, model_dir, precision] {
                       return OpenModel(f, model_dir, precision);
                     }));
  }
  spdlog::info("model {} (dimension {}, max {} tokens); weights {}", embedder->model_id(),
               embedder->dim(), embedder->max_tokens(),
               f.preload_model ? "held from start-up (--preload-model)"
                               : "loaded on first use (--preload-model holds them from start-up)");
  spdlog::info("precision {} (runs {})", encoder::PrecisionName(precision),
               encoder::PrecisionName(embedder->precision()));
  spdlog::info("device {}{}; CPU kernels: {}", embedder->device(),
               device.kind == encoder::DeviceRequest::Kind::kAuto ? " (chosen by --device auto)"
                                                                  : "",
               encoder::CpuKernelInfo());
  spdlog::info("malloc: {}", pinned_mmap_threshold
                                 ? "glibc, mmap threshold fixed at 128 KiB"
                                 : "left as the environment set it (another allocator, or "
                                   "MALLOC_MMAP_THRESHOLD_ / GLIBC_TUNABLES)");

  engine::DatabaseOptions o;
  o.data_dir = f.data_dir;
  o.snapshot_interval = absl::Seconds(f.snapshot_interval_s);
  o.store_block_cache_bytes = static_cast<size_t>(f.rocksdb_cache_mib) << 20;
  o.store_memtable_bytes = static_cast<size_t>(f.rocksdb_memtable_mib) << 20;
  o.max_memory_bytes = static_cast<uint64_t>(f.max_memory_mib) << 20;
  o.batcher.max_queue_texts = f.max_queue_texts;
  o.batcher.max_batch_tokens = f.max_batch_tokens;
  o.batcher.max_wait = absl::Milliseconds(f.max_wait_ms);
  o.batcher.max_bulk_pass = absl::Milliseconds(f.max_bulk_pass_ms);
  o.max_request_tokens = f.max_request_tokens;
  o.embedder_factory = [f](const std::string& dir, encoder::Precision p) {
    return OpenModel(f, dir, p);
  };
  o.default_precision = precision;
  // Recorded with new collections, which keep their model across restarts
  // (absolute, so that it means the same from any working directory).
  o.default_model_dir = model_dir;
  if (f.fake_dim <= 0 && !model_dir.empty()) {
    o.default_model_dir = std::filesystem::absolute(model_dir).lexically_normal().string();
  }
  o.max_model_bytes = static_cast<size_t>(f.max_model_mib) << 20;
  o.max_collections = static_cast<size_t>(f.max_collections);
  o.test_commit_chunk_delay = absl::Milliseconds(f.test_commit_delay_ms);
  o.test_selection_pause_at = f.test_selection_pause_at;
  o.test_snapshot_pause_at = f.test_snapshot_pause_at;
  o.test_pause = [](const std::string& what) {
    // On stdout, which tests read (logs go to stderr); then wait for the kill.
    std::printf("neodb: test pause before %s\n", what.c_str());
    std::fflush(stdout);
    absl::SleepFor(absl::Minutes(10));
  };
  ASSIGN_OR_RETURN(std::unique_ptr<engine::Database> db,
                   engine::Database::Open(o, std::move(embedder)));

  api::ServerOptions so;
  so.listen = f.listen;
  so.threads = f.threads;
  so.max_queued_calls = f.max_queued_calls;
  so.streams.max_open = f.max_open_streams;
  so.streams.max_open_per_key = f.max_streams_per_key;
  so.streams.idle_timeout = absl::Seconds(f.stream_idle_timeout_s);
  so.http2.max_streams_per_connection = f.max_streams_per_connection;
  so.http2.min_ping_interval = absl::Seconds(f.min_ping_interval_s);
  so.http2.max_ping_strikes = f.max_ping_strikes;
  so.http2.keepalive_permit_without_calls = f.permit_keepalive_without_calls;
  so.http2.max_metadata_bytes = f.max_metadata_bytes;
  so.http2.max_connection_idle = absl::Seconds(f.max_connection_idle_s);
  so.http2.max_connection_age = absl::Seconds(f.max_connection_age_s);
  so.http2.max_connection_age_grace = absl::Seconds(f.max_connection_age_grace_s);
  so.security = f.security;
  so.limits.models_dir = f.models_dir;
  so.limits.backup_dir = f.backup_dir;
  std::shared_ptr<api::KeyRing> keys;
  if (!f.key_file.empty()) {
    ASSIGN_OR_RETURN(keys, api::KeyRing::Open(f.key_file));
    spdlog::info("{} API keys from {}", keys->size(), f.key_file);
    so.keys = keys;
  }
  // In a cluster: the node joins (heartbeat, the map's collections created
  // here, its replicas started) before the server takes any call, so that no
  // local write reaches a sharded collection (Database::MarkReplicated).
  std::unique_ptr<cluster::NatsClient> nats;
  std::unique_ptr<cluster::ClusterMap> cluster_map;
  std::unique_ptr<cluster::ClusterNode> cluster_node;
  if (!f.nats.empty()) {
    RETURN_IF_ERROR(cluster::CheckNodeId(f.node_id));
    cluster::NatsClientOptions no;
    no.servers = absl::StrSplit(f.nats, ',', absl::SkipEmpty());
    no.name = absl::StrCat("neodb-", f.node_id);
    ASSIGN_OR_RETURN(nats, cluster::NatsClient::Connect(no));
    // A JetStream cluster that has just started elects its leaders first:
    // until then its key-value buckets cannot be made or read. Wait for it.
    const absl::Time join_until = absl::Now() + absl::Seconds(60);
    while (true) {
      absl::StatusOr<std::unique_ptr<cluster::ClusterMap>> m =
          cluster::ClusterMap::Open(*nats, {});
      if (m.ok()) {
        cluster_map = std::move(*m);
        break;
      }
      if (absl::Now() >= join_until) return m.status();
      spdlog::info("cluster: waiting for JetStream: {}", m.status().ToString());
      absl::SleepFor(absl::Milliseconds(500));
    }
    cluster::ClusterNodeOptions co;
    co.node_id = f.node_id;
    cluster_node = std::make_unique<cluster::ClusterNode>(db.get(), nats.get(), cluster_map.get(), co);
    if (absl::Status s = cluster_node->Start(); !s.ok()) {
      // A collection this node cannot hold (another model) is reported; the rest serve.
      spdlog::error("cluster: {}", s.ToString());
    }
    so.cluster = cluster_node.get();
    spdlog::info("cluster: node {} on NATS {}", f.node_id, f.nats);
  } else if (!f.node_id.empty()) {
    return absl::InvalidArgumentError("--node-id needs --nats");
  }
  api::RequestMetrics metrics;
  std::unique_ptr<api::HttpServer> metrics_http, http;
  std::unique_ptr<api::JsonRpc> json_rpc;
  if (!f.metrics_listen.empty() || !f.http_listen.empty()) so.metrics = &metrics;
  ASSIGN_OR_RETURN(std::unique_ptr<api::Server> server, api::Server::Start(db.get(), so));
  engine::Database* d = db.get();
  cluster::ClusterNode* node = cluster_node.get();
  auto render_metrics = [&metrics, d, node] {
    return metrics.Render() + api::RenderDatabaseMetrics(*d) +
           (node != nullptr ? api::RenderClusterMetrics(*node) : std::string());
  };
  if (!f.metrics_listen.empty()) {
    ASSIGN_OR_RETURN(metrics_http,
                     api::HttpServer::Start({.listen = f.metrics_listen, .threads = 2,
                                             .metrics = render_metrics}));
    // Before the listening line, which scripts and tests wait for.
    std::printf("neodb: metrics on http://%s:%d/metrics (metrics port %d)\n",
                f.metrics_listen.substr(0, f.metrics_listen.rfind(':')).c_str(),
                metrics_http->port(), metrics_http->port());
  }
  if (!f.http_listen.empty()) {
    // The JSON API calls the gRPC server's own service objects (json_rpc.h).
    json_rpc = std::make_unique<api::JsonRpc>(server->services(), keys);
    ASSIGN_OR_RETURN(http, api::HttpServer::Start({.listen = f.http_listen,
                                                   .threads = f.threads,
                                                   .max_body_bytes = static_cast<size_t>(
                                                       so.max_message_bytes),
                                                   .metrics = render_metrics,
                                                   .rpc = json_rpc.get(),
                                                   .request_metrics = &metrics,
                                                   .insecure = f.security.insecure,
                                                   .tls_cert_file = f.security.tls_cert,
                                                   .tls_key_file = f.security.tls_key,
                                                   .tls_client_ca_file =
                                                       f.security.tls_client_ca}));
    std::printf("neodb: HTTP on %s://%s:%d (HTTP port %d)\n", http->scheme(),
                f.http_listen.substr(0, f.http_listen.rfind(':')).c_str(), http->port(),
                http->port());
  }
  // The listening line is what scripts and tests wait for.
  std::string where = f.listen.substr(0, f.listen.rfind(':') + 1) + std::to_string(server->port());
  if (cluster_node) {
    // Now that the port is known: what other nodes dial for a fan-out search.
    if (absl::Status s = cluster_node->SetAddress(f.advertise.empty() ? where : f.advertise);
        !s.ok()) {
      spdlog::warn("cluster: {}", s.ToString());
    }
  }
  std::printf("neodb: listening on %s (port %d)\n", where.c_str(), server->port());
  std::fflush(stdout);

  IdleTrimOptions trim;
  trim.idle_after = absl::Seconds(f.idle_trim_s);
  IdleTrimmer trimmer(trim);

  int sig = 0;
  while (sigwait(&set, &sig) == 0 && sig == SIGHUP) {
    if (!keys) {
      spdlog::info("SIGHUP: no --key-file to reload");
      continue;
    }
    absl::Status r = keys->Reload();
    if (r.ok()) {
      spdlog::info("SIGHUP: {} API keys from {}", keys->size(), keys->path());
    } else {
      spdlog::error("SIGHUP: key file not reloaded, the previous keys stay: {}",
                    std::string(r.message()));
    }
  }
  spdlog::info("signal {}: shutting down", sig);
  http.reset();  // before the services it calls
  json_rpc.reset();
  server->Shutdown(absl::Seconds(f.grace_s));
  server.reset();
  metrics_http.reset();
  cluster_node.reset();  // stops its replicas before the database closes
  cluster_map.reset();
  nats.reset();
  absl::Status s = db->Close();
  db.reset();
  spdlog::info("shut down cleanly");
  return s;
}

}  // namespace

void RegisterServerCommands(CLI::App& app) {
  auto f = std::make_shared<ServeFlags>();
  CLI::App* cmd = app.add_subcommand("serve", "Run the gRPC server");
  cmd->add_option("--data-dir", f->data_dir, "Database directory (created if missing)")->required();
  cmd->add_option("--model", f->model_dir,
                  "Model checkpoint directory (default: the shipped default model)");
  cmd->add_option("--listen", f->listen, "host:port to listen on")->capture_default_str();
  cmd->add_option("--threads", f->threads, "Worker threads that run the unary calls' work")
      ->capture_default_str();
  cmd->add_option("--max-queued-calls", f->max_queued_calls,
                  "Unary calls that may wait for a worker; more are RESOURCE_EXHAUSTED")
      ->capture_default_str();
  cmd->add_option("--max-open-streams", f->max_open_streams,
                  "Ingest streams (BulkIngest, Ingest) open at once, server-wide; more are "
                  "RESOURCE_EXHAUSTED. An open stream holds no thread; 0 = 64")
      ->capture_default_str();
  cmd->add_option("--max-streams-per-key", f->max_streams_per_key,
                  "Ingest streams open at once under one API key (--key-file); more are "
                  "RESOURCE_EXHAUSTED. 0 = half of --max-open-streams")
      ->capture_default_str();
  cmd->add_option("--stream-idle-timeout", f->stream_idle_timeout_s,
                  "Seconds an ingest stream may wait for its client's next message before "
                  "it is cancelled")
      ->capture_default_str();
  cmd->add_option("--max-streams-per-connection", f->max_streams_per_connection,
                  "HTTP/2 streams one connection may have open at once; a client that opens "
                  "more has its connection closed")
      ->capture_default_str();
  cmd->add_option("--min-ping-interval", f->min_ping_interval_s,
                  "Seconds a client must leave between HTTP/2 pings while the server sends "
                  "nothing (keepalive policy); pings sooner are strikes")
      ->capture_default_str();
  cmd->add_option("--max-ping-strikes", f->max_ping_strikes,
                  "Pings too soon before the connection is closed (GOAWAY too_many_pings); "
                  "at least 1")
      ->capture_default_str();
  cmd->add_flag("--permit-keepalive-without-calls", f->permit_keepalive_without_calls,
                "Let clients ping while they have no call open (else one ping per two hours)");
  cmd->add_option("--max-metadata-bytes", f->max_metadata_bytes,
                  "Largest header list (metadata) of one call, bytes; 1024..1048576")
      ->capture_default_str();
  cmd->add_option("--max-connection-idle", f->max_connection_idle_s,
                  "Seconds a connection may have no call open before the server closes it "
                  "(GOAWAY; clients reconnect); 0 = never")
      ->capture_default_str();
  cmd->add_option("--max-connection-age", f->max_connection_age_s,
                  "Seconds a connection may live before the server sends GOAWAY; 0 = never")
      ->capture_default_str();
  cmd->add_option("--max-connection-age-grace", f->max_connection_age_grace_s,
                  "Seconds the calls of a connection past --max-connection-age get to finish")
      ->capture_default_str();
  cmd->add_option("--encoder-threads", f->encoder_threads,
                  "Encoder compute threads (0 = all cores)");
  cmd->add_option("--device", f->device,
                  "Where models run: cpu, cuda, cuda:N or auto (a GPU when one is present); "
                  "asking for CUDA where there is none is an error")
      ->capture_default_str();
  cmd->add_option("--precision", f->precision,
                  "CPU matmul precision of the default model and of new collections: f32, bf16 "
                  "or int8 (a CPU without the instructions runs f32 and says so); each "
                  "collection keeps the precision it was created with")
      ->capture_default_str();
  cmd->add_option("--snapshot-interval", f->snapshot_interval_s,
                  "Seconds between periodic index snapshots (0 = only on demand and shutdown)")
      ->capture_default_str();
  cmd->add_option("--max-queue-texts", f->max_queue_texts, "Embedding queue bound (texts)")
      ->capture_default_str();
  cmd->add_option("--max-batch-tokens", f->max_batch_tokens, "Tokens per encoder batch")
      ->capture_default_str();
  cmd->add_option("--max-request-tokens", f->max_request_tokens,
                  "Tokens one Upsert/NearText/Embed request may send to the encoder, chunks "
                  "included; more is RESOURCE_EXHAUSTED (0 = no limit)")
      ->capture_default_str();
  cmd->add_option("--max-wait-ms", f->max_wait_ms, "Longest wait for a batch to fill (ms)")
      ->capture_default_str();
  cmd->add_option("--max-bulk-pass-ms", f->max_bulk_pass_ms,
                  "About how long one encoder pass of documents may run, so a query that "
                  "arrives meanwhile waits at most that long (ms; 0 = --max-batch-tokens only)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--grace", f->grace_s, "Seconds running calls get at shutdown")
      ->capture_default_str();
  cmd->add_option("--max-model-mib", f->max_model_mib,
                  "Memory for loaded models (MiB of weights); the least recently used "
                  "beyond it are unloaded")
      ->capture_default_str();
  cmd->add_option("--idle-trim", f->idle_trim_s,
                  "Seconds the server must be idle (under 2% of a core) before it gives the "
                  "heap memory malloc keeps free back to the OS, once per idle period "
                  "(0 = never)")
      ->capture_default_str();
  cmd->add_option("--max-memory-mib", f->max_memory_mib,
                  "Resident memory (MiB, models included) past which upserts and encoder work "
                  "are RESOURCE_EXHAUSTED, after the free heap is given back; reads, deletes, "
                  "keyword and near-vector searches go on (0 = no budget)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30))
      ->capture_default_str();
  cmd->add_option("--rocksdb-cache-mib", f->rocksdb_cache_mib,
                  "RocksDB block cache (MiB), shared by all collections")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--rocksdb-memtable-mib", f->rocksdb_memtable_mib,
                  "RocksDB memtables, all together (MiB): past it the largest is flushed "
                  "early (0 = RocksDB's defaults: 64 MiB per memtable, no total)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--max-collections", f->max_collections,
                  "Collections the server may hold; creating more is RESOURCE_EXHAUSTED")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--key-file", f->key_file,
                  "API keys (`sha256:<hex> <role> <name>` lines; `neodb keys add` writes them); "
                  "every call then needs a key. Reloaded on SIGHUP");
  cmd->add_option("--models-dir", f->models_dir,
                  "The only directory model paths given over the API (reindex --model) may "
                  "name; without it they are refused");
  cmd->add_option("--tls-cert", f->security.tls_cert, "Server certificate (PEM); turns on TLS");
  cmd->add_option("--tls-key", f->security.tls_key, "Server private key (PEM)");
  cmd->add_option("--peer-ca", f->security.tls_peer_ca,
                  "With --nats and TLS: the CA (PEM) the other nodes' certificates are signed "
                  "by; fan-out searches dial them over TLS with this node's certificate "
                  "(default: --tls-client-ca, else the system's roots)");
  cmd->add_option("--tls-client-ca", f->security.tls_client_ca,
                  "CA (PEM) that signs client certificates: mutual TLS");
  cmd->add_flag("--insecure", f->security.insecure,
                "Allow a non-loopback --listen without TLS or without API keys");
  cmd->add_option("--log-format", f->log_format,
                  "text, or json (one JSON object per line on stderr)")
      ->capture_default_str();
  cmd->add_option("--backup-dir", f->backup_dir,
                  "The directory `neodb backup --out NAME` writes backups into; without it "
                  "backups over the API are refused");
  cmd->add_option("--metrics-listen", f->metrics_listen,
                  "host:port (IPv4) for a Prometheus text endpoint at /metrics, e.g. "
                  "127.0.0.1:9464; port 0 picks one (printed). Default: none");
  cmd->add_option("--http", f->http_listen,
                  "host:port for the HTTP API: JSON for every unary RPC at /v1/rpc/<Service>/"
                  "<Method>, OpenAI's /v1/embeddings, /openapi.json, /metrics, /healthz, "
                  "the web console at /; "
                  "HTTPS with --tls-cert/--tls-key; off loopback only with TLS and --key-file "
                  "(or --insecure), as for gRPC; port 0 picks one (printed). "
                  "Default: none");
  cmd->add_option("--nats", f->nats,
                  "Join a cluster: comma-separated nats://host:port URLs of its NATS JetStream "
                  "servers (README, 'Beyond one machine'). Default: none, a server alone");
  cmd->add_option("--node-id", f->node_id,
                  "This node's id in the cluster (letters, digits, '_' and '-'); with --nats");
  cmd->add_option("--advertise", f->advertise,
                  "host:port other nodes reach this one's gRPC at (fan-out searches). "
                  "Default: the --listen address with its port");
  cmd->add_flag("--preload-model", f->preload_model,
                "Hold the default model's weights from start-up. Default: the model is "
                "checked at start-up and its weights loaded on the first call that embeds "
                "text, so a server of your own vectors or of other models does not hold them");
  cmd->add_option("--fake-model", f->fake_dim,
                  "Serve a deterministic fake embedder of this dimension instead of a model "
                  "(tests and service benchmarks only)");
  cmd->add_option("--test-encoder-delay-ms", f->test_delay_ms,
                  "Tests only: every encoder call sleeps this long first");
  cmd->add_option("--test-reindex-commit-delay-ms", f->test_commit_delay_ms,
                  "Tests only: a reindex commit sleeps this long after each chunk it moves");
  cmd->add_option("--test-selection-pause-at", f->test_selection_pause_at,
                  "Tests only: a delete or metadata update by filter prints 'neodb: test pause' "
                  "on stdout before committing its Nth batch and waits there (to be killed)");
  cmd->add_option("--test-snapshot-pause-at", f->test_snapshot_pause_at,
                  "Tests only: the first snapshot after startup prints 'neodb: test pause' on "
                  "stdout before its Nth file write and waits there (to be killed)");
  cmd->callback([f] { ExitIfError(Serve(*f)); });
}

}  // namespace neodb::cli
