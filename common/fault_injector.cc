#include "common/fault_injector.h"

namespace neodb {

void FaultInjector::FailNth(uint64_t n, Fault fault) {
  std::lock_guard<std::mutex> lock(mu_);
  ops_ = 0;
  fail_at_ = n;
  fail_with_ = fault;
}

void FaultInjector::SetDiskFull(bool full) {
  std::lock_guard<std::mutex> lock(mu_);
  disk_full_ = full;
}

void FaultInjector::SetPathFilter(std::string filter) {
  std::lock_guard<std::mutex> lock(mu_);
  filter_ = std::move(filter);
}

void FaultInjector::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  ops_ = 0;
  fail_at_ = 0;
  fail_with_ = Fault::kNone;
  disk_full_ = false;
  injected_ = 0;
}

uint64_t FaultInjector::ops() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ops_;
}

bool FaultInjector::disk_full() const {
  std::lock_guard<std::mutex> lock(mu_);
  return disk_full_;
}

std::string FaultInjector::last_injected_path() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_path_;
}

FileOp FaultInjector::last_injected_op() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_op_;
}

uint64_t FaultInjector::injected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return injected_;
}

Fault FaultInjector::Next(FileOp op, const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!filter_.empty() && path.find(filter_) == std::string::npos) return Fault::kNone;
  ++ops_;
  Fault f = Fault::kNone;
  // A full disk refuses what takes space; deleting and syncing still work
  // (that is how space comes back).
  if (disk_full_ && (op == FileOp::kCreate || op == FileOp::kAppend || op == FileOp::kCreateDir)) {
    f = Fault::kNoSpace;
  } else if (fail_at_ != 0 && ops_ == fail_at_) {
    f = fail_with_;
    if (f == Fault::kTornRename && op != FileOp::kRename) f = Fault::kIoError;
  }
  if (f != Fault::kNone) {
    ++injected_;
    last_op_ = op;
    last_path_ = path;
  }
  return f;
}

}  // namespace neodb
