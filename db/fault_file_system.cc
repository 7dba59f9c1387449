#include "db/fault_file_system.h"

#include <string>

#include "rocksdb/env.h"

namespace neodb::db {
namespace {

rocksdb::IOStatus ToIOStatus(Fault f, const std::string& what, const std::string& path) {
  const std::string msg = what + " " + path + " [injected]";
  if (f == Fault::kNoSpace) return rocksdb::IOStatus::NoSpace(msg);
  return rocksdb::IOStatus::IOError(msg);
}

class FaultWritableFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  FaultWritableFile(std::unique_ptr<rocksdb::FSWritableFile> t, std::string path,
                    FaultInjector* faults)
      : FSWritableFileOwnerWrapper(std::move(t)), path_(std::move(path)), faults_(faults) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* dbg) override {
    Fault f = faults_->Next(FileOp::kAppend, path_);
    if (f != Fault::kNone) return ToIOStatus(f, "append to", path_);
    return target()->Append(data, o, dbg);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           const rocksdb::DataVerificationInfo& v,
                           rocksdb::IODebugContext* dbg) override {
    Fault f = faults_->Next(FileOp::kAppend, path_);
    if (f != Fault::kNone) return ToIOStatus(f, "append to", path_);
    return target()->Append(data, o, v, dbg);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                     const rocksdb::IOOptions& o,
                                     rocksdb::IODebugContext* dbg) override {
    Fault f = faults_->Next(FileOp::kAppend, path_);
    if (f != Fault::kNone) return ToIOStatus(f, "append to", path_);
    return target()->PositionedAppend(data, offset, o, dbg);
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    Fault f = faults_->Next(FileOp::kSync, path_);
    if (f != Fault::kNone) return ToIOStatus(f, "sync", path_);
    return target()->Sync(o, dbg);
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    Fault f = faults_->Next(FileOp::kSync, path_);
    if (f != Fault::kNone) return ToIOStatus(f, "fsync", path_);
    return target()->Fsync(o, dbg);
  }

 private:
  std::string path_;
  FaultInjector* faults_;
};

class FaultFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit FaultFileSystem(FaultInjector* faults)
      : FileSystemWrapper(rocksdb::FileSystem::Default()), faults_(faults) {}
  const char* Name() const override { return "NeodbFaultFileSystem"; }

  rocksdb::IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* dbg) override {
    Fault fault = faults_->Next(FileOp::kCreate, f);
    if (fault != Fault::kNone) return ToIOStatus(fault, "create", f);
    std::unique_ptr<rocksdb::FSWritableFile> file;
    rocksdb::IOStatus s = target()->NewWritableFile(f, o, &file, dbg);
    if (s.ok()) r->reset(new FaultWritableFile(std::move(file), f, faults_));
    return s;
  }
  rocksdb::IOStatus ReopenWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                       std::unique_ptr<rocksdb::FSWritableFile>* r,
                                       rocksdb::IODebugContext* dbg) override {
    std::unique_ptr<rocksdb::FSWritableFile> file;
    rocksdb::IOStatus s = target()->ReopenWritableFile(f, o, &file, dbg);
    if (s.ok()) r->reset(new FaultWritableFile(std::move(file), f, faults_));
    return s;
  }
  rocksdb::IOStatus ReuseWritableFile(const std::string& f, const std::string& old,
                                      const rocksdb::FileOptions& o,
                                      std::unique_ptr<rocksdb::FSWritableFile>* r,
                                      rocksdb::IODebugContext* dbg) override {
    Fault fault = faults_->Next(FileOp::kCreate, f);
    if (fault != Fault::kNone) return ToIOStatus(fault, "create", f);
    std::unique_ptr<rocksdb::FSWritableFile> file;
    rocksdb::IOStatus s = target()->ReuseWritableFile(f, old, o, &file, dbg);
    if (s.ok()) r->reset(new FaultWritableFile(std::move(file), f, faults_));
    return s;
  }
  rocksdb::IOStatus RenameFile(const std::string& src, const std::string& dst,
                               const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    Fault fault = faults_->Next(FileOp::kRename, dst);
    if (fault != Fault::kNone) return ToIOStatus(fault == Fault::kTornRename ? Fault::kIoError : fault,
                                                 "rename into", dst);
    return target()->RenameFile(src, dst, o, dbg);
  }
  rocksdb::IOStatus DeleteFile(const std::string& f, const rocksdb::IOOptions& o,
                               rocksdb::IODebugContext* dbg) override {
    Fault fault = faults_->Next(FileOp::kDelete, f);
    if (fault != Fault::kNone) return ToIOStatus(fault, "delete", f);
    return target()->DeleteFile(f, o, dbg);
  }
  rocksdb::IOStatus CreateDir(const std::string& d, const rocksdb::IOOptions& o,
                              rocksdb::IODebugContext* dbg) override {
    Fault fault = faults_->Next(FileOp::kCreateDir, d);
    if (fault != Fault::kNone) return ToIOStatus(fault, "create directory", d);
    return target()->CreateDir(d, o, dbg);
  }
  // A full disk has no free space (Store checks it before resuming).
  rocksdb::IOStatus GetFreeSpace(const std::string& path, const rocksdb::IOOptions& o,
                                 uint64_t* free, rocksdb::IODebugContext* dbg) override {
    if (faults_->disk_full()) {
      *free = 0;
      return rocksdb::IOStatus::OK();
    }
    return target()->GetFreeSpace(path, o, free, dbg);
  }
  rocksdb::IOStatus CreateDirIfMissing(const std::string& d, const rocksdb::IOOptions& o,
                                       rocksdb::IODebugContext* dbg) override {
    Fault fault = faults_->Next(FileOp::kCreateDir, d);
    if (fault != Fault::kNone) return ToIOStatus(fault, "create directory", d);
    return target()->CreateDirIfMissing(d, o, dbg);
  }

 private:
  FaultInjector* faults_;
};

}  // namespace

std::shared_ptr<rocksdb::FileSystem> NewFaultFileSystem(FaultInjector* faults) {
  return std::make_shared<FaultFileSystem>(faults);
}

}  // namespace neodb::db
