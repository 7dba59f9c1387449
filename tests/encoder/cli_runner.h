#pragma once
// Runs the neodb binary built with the tests (NEODB_CLI_PATH, a compile
// definition of every CLI test) and captures its exit code and output.

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace neodb::testing_util {

struct CliResult {
  int rc = -1;         // exit code; 128 when killed by a signal
  std::string output;  // stdout and stderr together
};

// `args` is appended to the binary's path and run by /bin/sh.
inline CliResult RunNeodb(const std::string& args) {
  const std::string cmd = std::string(NEODB_CLI_PATH) + " " + args + " 2>&1";
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return r;
}

}  // namespace neodb::testing_util
