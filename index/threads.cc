#include "index/threads.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <thread>

namespace neodb::index {
namespace {

std::atomic<int> g_build_threads{0};  // 0 = hardware_concurrency

}  // namespace

void SetIndexBuildThreads(int threads) { g_build_threads = std::max(0, threads); }

int IndexBuildThreads() {
  int n = g_build_threads.load();
  if (n > 0) return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

ScopedOmpThreads::ScopedOmpThreads(int threads) : previous_(omp_get_max_threads()) {
  omp_set_num_threads(std::max(1, threads));
}

ScopedOmpThreads::~ScopedOmpThreads() { omp_set_num_threads(previous_); }

}  // namespace neodb::index
