// Golden fixture, full-size preset (768 hidden, 28 layers): the CPU backend
// against the numpy reference on 7-, 33-, 128- and 300-token sequences, alone
// and packed together. Labelled `slow` (about 1 GB of weights written, read
// back and run).
#include "tests/encoder/golden_util.h"

namespace neodb::encoder::golden {
namespace {

TEST(NeoBertGoldenFullTest, Full) { RunGolden("neobert_full.json"); }

}  // namespace
}  // namespace neodb::encoder::golden
