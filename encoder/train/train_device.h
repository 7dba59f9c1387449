#pragma once
// The --device flag of `neodb finetune` and `neodb pretrain`. Training (the
// backward ops, AdamW, gradient caching) runs on the CPU only for now, so:
//   "cpu"            the CPU;
//   "auto"           the CPU, with `note` saying why no GPU was taken;
//   "cuda", "cuda:N" FAILED_PRECONDITION "training on CUDA is not implemented
//                    yet" (never a silent CPU run in its place);
//   anything else    INVALID_ARGUMENT (encoder::ParseDevice).

#include <string>
#include <string_view>

#include "common/status_macros.h"

namespace neodb::encoder::train {

// OK when training may run (on the CPU); `note` is set for "auto" and left
// empty otherwise. `note` may be null.
absl::Status CheckTrainingDevice(std::string_view device, std::string* note);

}  // namespace neodb::encoder::train
