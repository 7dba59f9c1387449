// Fuzzes NeoBertConfig::FromJson (config.json of a checkpoint). Oracle
// (config.h): an accepted config satisfies Validate(), and its own ToJson()
// parses back to the same config.
#include "encoder/checkpoint/config.h"
#include "tests/fuzz/fuzz_util.h"

using neodb::encoder::NeoBertConfig;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<NeoBertConfig> config = NeoBertConfig::FromJson(neodb::fuzz::AsView(data, size));
  if (!config.ok()) return 0;
  FUZZ_CHECK(config->Validate().ok());
  FUZZ_CHECK(config->ffn_dim() > 0);
  const std::string text = config->ToJson();
  absl::StatusOr<NeoBertConfig> again = NeoBertConfig::FromJson(text);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->ToJson() == text);
  return 0;
}
