// No abseil headers in this file: see sentencepiece_adapter.h.
#include "encoder/tokenizer/sentencepiece_adapter.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

namespace neodb::encoder::spm {
namespace {
Result Convert(const sentencepiece::util::Status& s) {
  if (s.ok()) return {};
  return Result{static_cast<int>(s.code()), s.error_message()};
}
}  // namespace

Processor::Processor() : impl_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}
Processor::~Processor() = default;

Result Processor::LoadFromSerializedProto(std::string_view bytes) {
  return Convert(impl_->LoadFromSerializedProto(bytes));
}
Result Processor::Encode(std::string_view text, std::vector<int>* ids) const {
  return Convert(impl_->Encode(text, ids));
}
Result Processor::EncodePieces(std::string_view text, std::vector<std::string>* pieces) const {
  return Convert(impl_->Encode(text, pieces));
}
Result Processor::Decode(const std::vector<int>& ids, std::string* text) const {
  return Convert(impl_->Decode(ids, text));
}
int Processor::PieceToId(std::string_view piece) const { return impl_->PieceToId(piece); }
std::string Processor::IdToPiece(int id) const { return impl_->IdToPiece(id); }
int Processor::GetPieceSize() const { return impl_->GetPieceSize(); }
int Processor::unk_id() const { return impl_->unk_id(); }

Result Train(const std::unordered_map<std::string, std::string>& args) {
  return Convert(sentencepiece::SentencePieceTrainer::Train(args));
}

}  // namespace neodb::encoder::spm
