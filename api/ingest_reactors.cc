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

// What both reactors share (`Reactor`: gRPC's read or bidi reactor): passing
// the stream gate, the reads, each batch handed to a stream worker that
// upserts it, and the call's end once the client stops sending. A reactor
// says what follows a committed batch (Committed) and what the end sends
// (OnClientDone).
template <typename Reactor>
class IngestStream : public Reactor {
 public:
  // gRPC's callback thread: hand the batch on, never block here.
  void OnReadDone(bool ok) override {
    slot_->Working();
    if (!ok) {
      OnClientDone();
      this->Finish(EndStatus(ctx_));
      return;
    }
    env_->workers->Submit([this] { RunBatch(); });
  }

  void OnDone() override { delete this; }

 protected:
  IngestStream(const IngestStreamEnv* env, grpc::CallbackServerContext* ctx)
      : env_(env), ctx_(ctx) {}

  // Passes the stream gate and starts the first read, or finishes the call
  // refused. The last step of a reactor's constructor.
  void Start() {
    auto admitted = env_->gate->Admit(ctx_, KeyNameOf(ctx_));
    if (!admitted.ok()) {
      this->Finish(ToGrpcStatus(admitted.status()));
      return;
    }
    slot_ = *std::move(admitted);
    ReadNext();
  }

  void ReadNext() {
    slot_->WaitingForClient();
    this->StartRead(&batch_);
  }

  // A worker thread, once batch_ is committed: what the stream does next.
  virtual void Committed() = 0;
  // The client stopped sending (its half-close, or a cancellation); the call
  // finishes right after. Default: nothing.
  virtual void OnClientDone() {}

  const IngestStreamEnv* const env_;
  grpc::CallbackServerContext* const ctx_;
  std::unique_ptr<StreamGate::Slot> slot_;  // null when refused
  StreamProgress progress_;

 private:
  // A worker thread.
  void RunBatch() {
    absl::Status s = progress_.Run(*env_, ctx_, batch_);
    if (!s.ok()) {
      this->Finish(ToGrpcStatus(s));
      return;
    }
    Committed();
  }

  v1::IngestBatch batch_;
};

class BulkIngestReactor final : public IngestStream<grpc::ServerReadReactor<v1::IngestBatch>> {
 public:
  BulkIngestReactor(const IngestStreamEnv* env, grpc::CallbackServerContext* ctx,
                    v1::BulkIngestResponse* resp)
      : IngestStream(env, ctx), resp_(resp) {
    Start();
  }

 private:
  void Committed() override { ReadNext(); }
  void OnClientDone() override { progress_.ToProto(resp_); }

  v1::BulkIngestResponse* const resp_;
};

class IngestReactor final
    : public IngestStream<grpc::ServerBidiReactor<v1::IngestBatch, v1::IngestAck>> {
 public:
  IngestReactor(const IngestStreamEnv* env, grpc::CallbackServerContext* ctx)
      : IngestStream(env, ctx) {
    Start();
  }

  void OnWriteDone(bool ok) override {
    slot_->Working();
    if (!ok) {  // the client went away; its batches so far stay committed
      Finish(EndStatus(ctx_));
      return;
    }
    ReadNext();
  }

 private:
  void Committed() override {
    progress_.ToProto(&ack_);
    slot_->WaitingForClient();  // a client that reads no acks holds the write
    StartWrite(&ack_);
  }

  v1::IngestAck ack_;
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
