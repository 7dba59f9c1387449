// Golden fixtures, tiny preset: the CPU backend against the numpy reference
// (see golden_util.h and research/reference/make_golden.py).
#include "tests/encoder/golden_util.h"

namespace neodb::encoder::golden {
namespace {

TEST(NeoBertGoldenTest, Tiny) { RunGolden("neobert_tiny.json"); }
TEST(NeoBertGoldenTest, TinySharpAttention) { RunGolden("neobert_tiny_sharp.json"); }

}  // namespace
}  // namespace neodb::encoder::golden
