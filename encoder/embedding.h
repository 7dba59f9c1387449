#pragma once
// One text's vector and what the encoder saw of it. Its own header so that
// chunking (which builds these) and the Encoder (which returns them) both
// include it, and neither includes the other.

#include <cstdint>
#include <vector>

namespace neodb::encoder {

struct Embedding {
  std::vector<float> vector;    // size dim()
  std::vector<int32_t> tokens;  // ids of the first chunk, [CLS] … [SEP]
  int num_tokens = 0;           // all tokens of all chunks, specials included
  int num_chunks = 1;
};

}  // namespace neodb::encoder
