#include "tests/cluster/nats_server_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace neodb::cluster::testing {
namespace fs = std::filesystem;

std::vector<int> FreePorts(int n) {
  std::vector<int> fds, ports;
  for (int i = 0; i < n; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof(a);
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      ports.push_back(0);
    } else {
      ports.push_back(ntohs(a.sin_port));
    }
    fds.push_back(fd);  // held until all are chosen: n distinct ports
  }
  for (int fd : fds) {
    if (fd >= 0) close(fd);
  }
  return ports;
}

absl::StatusOr<std::unique_ptr<NatsServerProcess>> NatsServerProcess::Start(
    const std::string& dir, int port, std::optional<NatsClusterMember> member) {
  // NEODB_NATS_SERVER names the binary; else the one tools/install_deps.sh
  // builds (a current release), else Debian's (2.9, which loses changes
  // a consumer has seen when a server is killed: README, "Beyond one machine").
  std::string binary;
  const char* chosen = getenv("NEODB_NATS_SERVER");
  for (const char* b : {"/usr/sbin/nats-server", "/usr/bin/nats-server",
                        "/opt/neodb-nats/bin/nats-server"}) {
    if (access(b, X_OK) == 0) binary = b;
  }
  if (chosen != nullptr && *chosen != '\0') binary = chosen;
  if (binary.empty()) {
    return absl::FailedPreconditionError(
        "nats-server is not installed (tools/install_deps.sh installs Debian's nats-server)");
  }
  std::unique_ptr<NatsServerProcess> p(new NatsServerProcess(dir, port));
  p->binary_ = binary;
  p->member_ = std::move(member);
  if (absl::Status s = p->Spawn(); !s.ok()) return s;
  return p;
}

absl::Status NatsServerProcess::Spawn() {
  std::error_code ec;
  fs::create_directories(dir_ + "/ports", ec);
  for (const auto& e : fs::directory_iterator(dir_ + "/ports", ec)) fs::remove(e.path(), ec);
  std::vector<std::string> args = {"nats-server",
                                   "--jetstream",
                                   "--addr",
                                   "127.0.0.1",
                                   "--port",
                                   port_ == 0 ? "-1" : std::to_string(port_),
                                   "--store_dir",
                                   dir_ + "/js",
                                   "--ports_file_dir",
                                   dir_ + "/ports",
                                   "--log",
                                   dir_ + "/nats-server.log"};
  if (member_) {
    std::string routes;
    for (int rp : member_->route_ports) {
      absl::StrAppend(&routes, routes.empty() ? "" : ",", "nats://127.0.0.1:", rp);
    }
    for (const std::string& a :
         {std::string("--server_name"), member_->server_name, std::string("--cluster_name"),
          std::string("neodb-test"), std::string("--cluster"),
          absl::StrCat("nats://127.0.0.1:", member_->cluster_port), std::string("--routes"),
          routes}) {
      args.push_back(a);
    }
  }
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(binary_.c_str(), argv.data());
    _exit(127);
  }
  pid_ = pid;
  // The server writes its ports file once it listens.
  const std::string ports_file = absl::StrCat(dir_, "/ports/nats-server_", pid, ".ports");
  for (int i = 0; i < 600; ++i) {
    int wstatus = 0;
    if (waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::InternalError(
          absl::StrCat("nats-server exited at start; see ", dir_, "/nats-server.log"));
    }
    std::ifstream in(ports_file);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
      if (!j.is_discarded() && j.contains("nats") && !j["nats"].empty()) {
        url_ = j["nats"][0].get<std::string>();
        port_ = std::stoi(url_.substr(url_.rfind(':') + 1));
        return absl::OkStatus();
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  Kill();
  return absl::DeadlineExceededError("nats-server wrote no ports file within 30 s");
}

void NatsServerProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int wstatus = 0;
  waitpid(pid_, &wstatus, 0);
  pid_ = -1;
}

absl::Status NatsServerProcess::Restart() {
  Kill();
  return Spawn();
}

NatsServerProcess::~NatsServerProcess() { Kill(); }

}  // namespace neodb::cluster::testing
