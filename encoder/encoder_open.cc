// Encoder::Open: the file-reading half of the facade, kept apart so that
// Encoder::Create links without the checkpoint and tokenizer loaders.
#include "encoder/encoder.h"

namespace neodb::encoder {

absl::StatusOr<std::unique_ptr<Encoder>> Encoder::Open(const std::string& dir,
                                                       const EncoderOptions& options) {
  ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, LoadModel(dir));
  ASSIGN_OR_RETURN(ModelDefaults defaults, LoadModelDefaults(dir));
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, LoadTokenizer(dir));
  return Create(std::move(model), std::move(tokenizer), options, std::move(defaults));
}

}  // namespace neodb::encoder
