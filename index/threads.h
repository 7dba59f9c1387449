#pragma once
// OpenMP threading policy for the FAISS-backed indexes.
//
// - Searches run FAISS with ONE thread in the calling thread (the OpenMP
//   thread-count ICV is per calling thread). The service answers many
//   queries concurrently; an OpenMP team per query oversubscribes the CPU and
//   spinning workers starve each other (measured on the shared 2-core dev
//   host: a 1 s IVF-PQ test took 30 s with default OpenMP teams).
// - Builds (HNSW inserts, IVF-PQ training and adds) use IndexBuildThreads()
//   threads. Default: std::thread::hardware_concurrency(). Process-wide,
//   may change at run time (affects subsequent calls).

namespace neodb::index {

void SetIndexBuildThreads(int threads);
int IndexBuildThreads();

// RAII: sets the calling thread's OpenMP thread count for its lifetime.
class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int threads);
  ~ScopedOmpThreads();
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  int previous_;
};

}  // namespace neodb::index
