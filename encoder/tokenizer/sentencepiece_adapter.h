#pragma once
// The encoder's door to SentencePiece. libsentencepiece itself lives in the
// plugin libneodb_spm.so (spm_plugin/spm_plugin.h says why), which this
// adapter loads on first use with dlmopen into a separate link-map namespace
// and drives through its C API. In ASan builds (NEODB_SPM_STATIC) the plugin
// sources are linked into the encoder instead: an ASan-instrumented plugin
// cannot be dlmopen'ed (the namespace would load a second libasan, which
// aborts), and those builds have no gRPC server, so no libprotobuf to clash.
//
// Plugin lookup: $NEODB_SPM_PLUGIN when set; else <exe dir>/../lib/neodb/
// libneodb_spm.so (the installed layout, e.g. /usr/bin + /usr/lib/neodb);
// else the path baked in at build time (the build tree's libneodb_spm.so)
// when it exists; else libneodb_spm.so next to the running executable (a
// relocated binary).
//
// Errors are (code, message) with absl's codes; a plugin that cannot be
// loaded is kFailedPrecondition "cannot load the SentencePiece plugin
// <path>: <dlerror>".

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

extern "C" {
typedef struct NeodbSpmProcessor NeodbSpmProcessor;
}

namespace neodb::encoder::spm {

struct Result {
  int code = 0;  // absl::StatusCode value; 0 = OK.
  std::string message;
  bool ok() const { return code == 0; }
};

// Thread-safety: const methods may be called concurrently after Load. Loading
// the plugin happens once per process, thread-safely.
class Processor {
 public:
  Processor();
  ~Processor();
  Processor(const Processor&) = delete;
  Processor& operator=(const Processor&) = delete;

  Result LoadFromSerializedProto(std::string_view bytes);
  Result Encode(std::string_view text, std::vector<int>* ids) const;
  Result EncodePieces(std::string_view text, std::vector<std::string>* pieces) const;
  Result Decode(const std::vector<int>& ids, std::string* text) const;
  int PieceToId(std::string_view piece) const;
  std::string IdToPiece(int id) const;
  int GetPieceSize() const;
  int unk_id() const;

 private:
  NeodbSpmProcessor* handle_ = nullptr;  // Owned; null until Load succeeds.
};

// SentencePieceTrainer::Train with keyword arguments. Not reentrant.
Result Train(const std::unordered_map<std::string, std::string>& args);

}  // namespace neodb::encoder::spm
