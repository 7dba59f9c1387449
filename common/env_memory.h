#pragma once
// NewMemEnv(): a whole file system in memory, after LevelDB's
// helpers/memenv. For unit tests that write and read files through an Env
// but have no reason to touch a disk: no temporary directories to clean up,
// no state shared between test processes, nothing left behind by a crash of
// the test. Tests of crashes (kill -9), of backups over real directories and
// of RocksDB stay on real files.
//
// Semantics are POSIX's, with the POSIX Env's error codes and messages
// (ErrnoStatus with the errno the call would have set):
//   - a file is created only in an existing directory (else NOT_FOUND);
//     creating over a directory, deleting a directory as a file or a file as
//     a directory, and removing a non-empty directory fail (UNAVAILABLE);
//   - a file open for writing keeps writing to the same file when it is
//     renamed, and to nothing anyone can read once it is deleted (an
//     unlinked inode); NewWritableFile over an existing file truncates that
//     file in place, as O_TRUNC does;
//   - RenameFile replaces its target atomically; directories may be renamed
//     (onto an absent or empty directory, never into themselves);
//   - "." and "/" exist from the start; paths are compared after lexical
//     normalisation ("a//b/./c" is "a/b/c"); there are no symlinks;
//   - Sync and SyncDir succeed: memory is as durable as it gets here.
// No space limit: wrap it in FaultInjectionEnv for a full disk.
//
// Thread-safe (one lock for the whole tree). Files it hands out must not
// outlive it.

#include <memory>

#include "common/env.h"

namespace neodb {

std::unique_ptr<Env> NewMemEnv();

}  // namespace neodb
