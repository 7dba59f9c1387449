#pragma once
// The one place that includes libsentencepiece's headers. Debian's
// sentencepiece 0.1.97 declares `namespace absl { using std::string_view; }`
// in its public header, which collides with the real abseil's
// absl::string_view; so this adapter exposes a std-only interface and its .cc
// includes no abseil header. Errors are (code, message) with absl's codes.

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}  // namespace sentencepiece

namespace neodb::encoder::spm {

struct Result {
  int code = 0;  // absl::StatusCode value; 0 = OK.
  std::string message;
  bool ok() const { return code == 0; }
};

// Thread-safety: const methods may be called concurrently after Load.
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
  std::unique_ptr<sentencepiece::SentencePieceProcessor> impl_;
};

// SentencePieceTrainer::Train with keyword arguments.
Result Train(const std::unordered_map<std::string, std::string>& args);

}  // namespace neodb::encoder::spm
