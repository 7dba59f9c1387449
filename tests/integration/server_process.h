#pragma once
// Runs `neodb serve` as a child process on 127.0.0.1 with a free port (port 0;
// the server prints the one it got) for integration tests. Every wait is
// bounded.

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "grpcpp/grpcpp.h"

namespace neodb::testing {

inline std::string NeodbBinary() {
  const char* b = std::getenv("NEODB_BINARY_DIR");
  return std::string(b ? b : "build") + "/tools/neodb/neodb";
}

struct CommandResult {
  int status = -1;  // exit status; 128 + signal when killed by one
  std::string out, err;
};

// Runs `neodb <args>` to completion with stdin from /dev/null, capturing
// stdout and stderr (through files in `scratch_dir`); from directory `cwd`
// when one is given (the test's own otherwise).
inline CommandResult RunNeodbCapture(const std::string& args, const std::string& scratch_dir,
                                     const std::string& cwd = "") {
  const std::string out = scratch_dir + "/cmd.out", err = scratch_dir + "/cmd.err";
  std::string cmd = NeodbBinary() + " " + args + " </dev/null >" + out + " 2>" + err;
  if (!cwd.empty()) {
    cmd = "cd '" + cwd + "' && " + std::filesystem::absolute(NeodbBinary()).string() + " " + args +
          " </dev/null >" + out + " 2>" + err;
  }
  int rc = std::system(cmd.c_str());
  CommandResult r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + (WIFSIGNALED(rc) ? WTERMSIG(rc) : 0);
  auto slurp = [](const std::string& path) {
    std::string s;
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
      char buf[4096];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
      std::fclose(f);
    }
    return s;
  };
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// Runs a neodb command line to completion; returns its exit status.
inline int RunNeodb(const std::string& args) {
  std::string cmd = NeodbBinary() + " " + args + " >/dev/null 2>&1";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

class ServerProcess {
 public:
  // `args`: everything after `neodb serve` except --listen, which is `listen`.
  explicit ServerProcess(std::vector<std::string> args, std::string listen = "127.0.0.1:0")
      : args_(std::move(args)), listen_(std::move(listen)) {}
  ~ServerProcess() { Kill(); }

  // Starts the server and waits (at most `timeout`) for its listening line.
  bool Start(std::chrono::seconds timeout = std::chrono::seconds(60)) {
    int out[2];
    if (pipe(out) != 0) return false;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      std::vector<std::string> argv_s = {NeodbBinary(), "serve", "--listen", listen_};
      argv_s.insert(argv_s.end(), args_.begin(), args_.end());
      std::vector<char*> argv;
      for (auto& a : argv_s) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    FILE* f = fdopen(out[0], "r");
    // Read the listening line on a helper thread so the wait is bounded.
    int port = 0;
    std::thread reader([&] {
      char line[512];
      while (fgets(line, sizeof line, f)) {
        int p = 0;
        if (const char* m = strstr(line, "(metrics port ")) {
          if (sscanf(m, "(metrics port %d)", &p) == 1) metrics_port_ = p;
          continue;
        }
        const char* at = strstr(line, "(port ");
        if (at && sscanf(at, "(port %d)", &p) == 1) {
          port = p;
          break;
        }
      }
    });
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (port == 0 && std::chrono::steady_clock::now() < until && Alive()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (port == 0) {
      Kill();
      reader.join();
      fclose(f);
      return false;
    }
    reader.join();
    // Keep draining stdout so the server never blocks on a full pipe; keep
    // its lines for WaitForOutput.
    output_ = std::make_shared<Output>();
    drain_ = std::thread([f, out = output_] {
      char buf[1024];
      while (fgets(buf, sizeof buf, f)) {
        std::lock_guard<std::mutex> l(out->mu);
        out->lines.emplace_back(buf);
        out->cv.notify_all();
      }
      fclose(f);
      std::lock_guard<std::mutex> l(out->mu);
      out->closed = true;
      out->cv.notify_all();
    });
    port_ = port;
    return true;
  }

  bool Alive() {
    if (pid_ <= 0) return false;
    int status;
    return waitpid(pid_, &status, WNOHANG) == 0;
  }

  // Sends `sig` (SIGHUP: reload the key file) and returns at once.
  void Notify(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // SIGKILL: the crash.
  void Kill() { Signal(SIGKILL); }
  // SIGTERM and wait for a clean exit; returns the exit status (-1 if killed).
  int Stop(std::chrono::seconds timeout = std::chrono::seconds(60)) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, SIGTERM);
    const auto until = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (std::chrono::steady_clock::now() < until) {
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        if (drain_.joinable()) drain_.join();
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    Kill();
    return -1;
  }

  // Waits until the server has printed (on stdout, after its listening
  // line) a line containing `needle`: false when it exits or `timeout`
  // passes first. Synchronises a test with a server-side event (a test
  // pause) instead of with a guess at timing.
  bool WaitForOutput(const std::string& needle,
                     std::chrono::seconds timeout = std::chrono::seconds(60)) {
    if (!output_) return false;
    std::unique_lock<std::mutex> l(output_->mu);
    bool found = false;
    output_->cv.wait_for(l, timeout, [&] {
      for (const auto& line : output_->lines) {
        if (line.find(needle) != std::string::npos) found = true;
      }
      return found || output_->closed;
    });
    return found;
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  // The port of --metrics-listen, as the server printed it (0 without one).
  int metrics_port() const { return metrics_port_; }
  pid_t pid() const { return pid_; }
  std::shared_ptr<grpc::Channel> Channel() const {
    grpc::ChannelArguments args;
    args.SetMaxSendMessageSize(128 << 20);
    return grpc::CreateCustomChannel(address(), grpc::InsecureChannelCredentials(), args);
  }

 private:
  void Signal(int sig) {
    if (pid_ <= 0) return;
    ::kill(pid_, sig);
    int status;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    if (drain_.joinable()) drain_.join();
  }

  std::vector<std::string> args_;
  std::string listen_;
  pid_t pid_ = -1;
  int port_ = 0;
  int metrics_port_ = 0;
  std::thread drain_;
  struct Output {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::string> lines;
    bool closed = false;
  };
  std::shared_ptr<Output> output_;
};

}  // namespace neodb::testing
