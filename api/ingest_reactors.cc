#include "api/ingest_reactors.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "api/document_batch.h"
#include "api/grpc_status.h"

namespace neodb::api {
namespace {

// The API key the call was authenticated with (auth_processor.h), or empty
// on a server without keys.
std::string KeyNameOf(const grpc::ServerContextBase* ctx) {
  std::shared_ptr<const grpc::AuthContext> auth = ctx->auth_context();
  if (!auth) return "";
  std::vector<grpc::string_ref> names = auth->FindPropertyValues("neodb.key_name");
  if (names.empty()) return "";
  return std::string(names.front().data(), names.front().size());
}

// A stream's status once its client stopped sending: the client's
// half-close (OK) or a cancellation (the client's, a lost connection's or
// the idle timer's).
grpc::Status EndStatus(const grpc::ServerContextBase* ctx) {
  return ctx->IsCancelled() ? grpc::Status::CANCELLED : grpc::Status::OK;
}

// What a stream has committed so far, and the step both reactors run.
class StreamProgress {
 public:
  // Upserts `batch`; a failure names how far the stream got.
  absl::Status Run(const IngestStreamEnv& env, const grpc::ServerContextBase* ctx,
                   const v1::IngestBatch& batch) {
    int64_t tokens = 0;
    auto ids = UpsertBatch({env.db, env.cluster}, env.limits, ctx, batch.collection(),
                           batch.tenant(), batch.documents(), &tokens, &consistency_);
    if (!ids.ok()) {
      // Earlier batches are committed and stay; say how far we got.
      return absl::Status(
          ids.status().code(),
          absl::StrCat(ids.status().message(), " (batch ", batches_ + 1, "; ", documents_,
                       " documents of earlier batches were committed)"));
    }
    documents_ += ids->size();
    batches_ += 1;
    tokens_ += static_cast<uint64_t>(tokens);
    return absl::OkStatus();
  }
  template <typename Totals>  // BulkIngestResponse or IngestAck
  void ToProto(Totals* out) const {
    out->set_documents(documents_);
    out->set_batches(batches_);
    out->set_tokens(tokens_);
    if (!consistency_.empty()) out->set_consistency_token(cluster::FormatToken(consistency_));
  }

 private:
  uint64_t documents_ = 0;
  uint64_t batches_ = 0;
  uint64_t tokens_ = 0;
  cluster::ConsistencyToken consistency_;  // a sharded collection's positions so far
};

class BulkIngestReactor final : public grpc::ServerReadReactor<v1::IngestBatch> {
 public:
  BulkIngestReactor(const IngestStreamEnv* env, grpc::CallbackServerContext* ctx,
                    v1::BulkIngestResponse* resp)
      : env_(env), ctx_(ctx), resp_(resp) {
    auto admitted = env_->gate->Admit(ctx_, KeyNameOf(ctx_));
    if (!admitted.ok()) {
      Finish(ToGrpcStatus(admitted.status()));
      return;
    }
    slot_ = *std::move(admitted);
    ReadNext();
  }

  // gRPC's callback thread: hand the batch on, never block here.
  void OnReadDone(bool ok) override {
    slot_->Working();
    if (!ok) {
      progress_.ToProto(resp_);
      Finish(EndStatus(ctx_));
      return;
    }
    env_->workers->Submit([this] { RunBatch(); });
  }

  void OnDone() override { delete this; }

 private:
  // A worker thread.
  void RunBatch() {
    absl::Status s = progress_.Run(*env_, ctx_, batch_);
    if (!s.ok()) {
      Finish(ToGrpcStatus(s));
      return;
    }
    ReadNext();
  }

  void ReadNext() {
    slot_->WaitingForClient();
    StartRead(&batch_);
  }

  const IngestStreamEnv* const env_;
  grpc::CallbackServerContext* const ctx_;
  v1::BulkIngestResponse* const resp_;
  std::unique_ptr<StreamGate::Slot> slot_;  // null when refused
  v1::IngestBatch batch_;
  StreamProgress progress_;
};

class IngestReactor final : public grpc::ServerBidiReactor<v1::IngestBatch, v1::IngestAck> {
 public:
  IngestReactor(const IngestStreamEnv* env, grpc::CallbackServerContext* ctx)
      : env_(env), ctx_(ctx) {
    auto admitted = env_->gate->Admit(ctx_, KeyNameOf(ctx_));
    if (!admitted.ok()) {
      Finish(ToGrpcStatus(admitted.status()));
      return;
    }
    slot_ = *std::move(admitted);
    ReadNext();
  }

  // gRPC's callback thread: hand the batch on, never block here.
  void OnReadDone(bool ok) override {
    slot_->Working();
    if (!ok) {
      Finish(EndStatus(ctx_));
      return;
    }
    env_->workers->Submit([this] { RunBatch(); });
  }

  void OnWriteDone(bool ok) override {
    slot_->Working();
    if (!ok) {  // the client went away; its batches so far stay committed
      Finish(EndStatus(ctx_));
      return;
    }
    ReadNext();
  }

  void OnDone() override { delete this; }

 private:
  // A worker thread.
  void RunBatch() {
    absl::Status s = progress_.Run(*env_, ctx_, batch_);
    if (!s.ok()) {
      Finish(ToGrpcStatus(s));
      return;
    }
    progress_.ToProto(&ack_);
    slot_->WaitingForClient();  // a client that reads no acks holds the write
    StartWrite(&ack_);
  }

  void ReadNext() {
    slot_->WaitingForClient();
    StartRead(&batch_);
  }

  const IngestStreamEnv* const env_;
  grpc::CallbackServerContext* const ctx_;
  std::unique_ptr<StreamGate::Slot> slot_;  // null when refused
  v1::IngestBatch batch_;
  v1::IngestAck ack_;
  StreamProgress progress_;
};

}  // namespace

grpc::ServerReadReactor<v1::IngestBatch>* NewBulkIngestReactor(const IngestStreamEnv* env,
                                                               grpc::CallbackServerContext* ctx,
                                                               v1::BulkIngestResponse* resp) {
  return new BulkIngestReactor(env, ctx, resp);
}

grpc::ServerBidiReactor<v1::IngestBatch, v1::IngestAck>* NewIngestReactor(
    const IngestStreamEnv* env, grpc::CallbackServerContext* ctx) {
  return new IngestReactor(env, ctx);
}

}  // namespace neodb::api
