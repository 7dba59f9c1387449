#pragma once
// A real nats-server (Debian's nats-server, installed by tools/install_deps.sh)
// run by a test: JetStream on, its store in a directory of the test's, on a
// port the OS picks (learnt from the server's ports file: no fixed port), and
// killed with SIGKILL when the test wants a crash or ends. Nothing is mocked.
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace neodb::cluster::testing {

// A member of a JetStream cluster: its name, the port its routes listen on
// and every member's route port (its own included: nats-server skips it).
struct NatsClusterMember {
  std::string server_name;
  int cluster_port = 0;
  std::vector<int> route_ports;
};

// Ports the OS has free now, for a cluster whose members must know each
// other's route ports before they start (a port taken meanwhile makes the
// start fail loudly, never a wrong result).
std::vector<int> FreePorts(int n);

class NatsServerProcess {
 public:
  // Starts a server keeping its JetStream store under `dir`/js. `port` 0:
  // one the OS picks. FAILED_PRECONDITION when nats-server is not installed.
  static absl::StatusOr<std::unique_ptr<NatsServerProcess>> Start(
      const std::string& dir, int port = 0, std::optional<NatsClusterMember> member = {});
  ~NatsServerProcess();

  const std::string& url() const { return url_; }
  // The nats-server binary run (see Start for how it is chosen).
  const std::string& binary() const { return binary_; }
  int port() const { return port_; }
  bool running() const { return pid_ > 0; }
  // SIGKILL, then reaps it: a crash, nothing flushed.
  void Kill();
  // Starts it again on the same port with the same store.
  absl::Status Restart();

 private:
  NatsServerProcess(std::string dir, int port) : dir_(std::move(dir)), port_(port) {}
  absl::Status Spawn();

  std::string binary_;
  std::optional<NatsClusterMember> member_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::string url_;
};

}  // namespace neodb::cluster::testing
