#pragma once
// OpenMP's idle-thread policy for the whole process, chosen before OpenMP
// starts. libgomp (oneDNN's threading runtime in Debian) reads
// OMP_WAIT_POLICY once, when it loads, and by default its idle team threads
// spin at barriers before they sleep. In a server whose encoder shares a few
// cores with gRPC threads, other models' teams and other processes, the
// spinning threads take the CPU from the thread doing the work: measured on a
// loaded 2-vCPU host, the server's default model ingested 11 documents/s
// against 157 with passive waiting (bench/README.md, "server_bench"). Passive
// waiting costs a futex wake per parallel region, microseconds against a
// forward pass's milliseconds.
#include <unistd.h>

#include <cstdlib>

namespace neodb {

// Re-executes this program with OMP_WAIT_POLICY=passive unless the variable
// is already set (the user's choice stands, e.g. `active` on a dedicated
// training box). Call first thing in main, before any OpenMP region: the same
// process (same pid) starts over with the variable in its environment. If
// exec fails, the program goes on with the default policy: slower under
// load, still correct.
inline void ReexecWithPassiveOpenMpWait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  execv("/proc/self/exe", argv);
}

}  // namespace neodb
