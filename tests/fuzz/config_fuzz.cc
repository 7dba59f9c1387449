// Fuzzes the config.json parsers of both architectures, NeoBertConfig::FromJson
// and BertConfig::FromJson, on the same input. Oracle (config.h,
// bert_weights.h): an accepted config satisfies Validate(), and its own
// ToJson() parses back to the same config.
#include "encoder/checkpoint/bert_weights.h"
#include "encoder/checkpoint/config.h"
#include "tests/fuzz/fuzz_util.h"

using neodb::encoder::BertConfig;
using neodb::encoder::NeoBertConfig;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto text_in = neodb::fuzz::AsView(data, size);
  absl::StatusOr<NeoBertConfig> config = NeoBertConfig::FromJson(text_in);
  if (config.ok()) {
    FUZZ_CHECK(config->Validate().ok());
    FUZZ_CHECK(config->ffn_dim() > 0);
    const std::string text = config->ToJson();
    absl::StatusOr<NeoBertConfig> again = NeoBertConfig::FromJson(text);
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again->ToJson() == text);
  }
  absl::StatusOr<BertConfig> bert = BertConfig::FromJson(text_in);
  if (bert.ok()) {
    FUZZ_CHECK(bert->Validate().ok());
    FUZZ_CHECK(bert->head_dim() > 0);
    const std::string text = bert->ToJson();
    absl::StatusOr<BertConfig> again = BertConfig::FromJson(text);
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again->ToJson() == text);
  }
  return 0;
}
