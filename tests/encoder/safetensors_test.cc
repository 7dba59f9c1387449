#include "encoder/checkpoint/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <zstd.h>

#include <cstring>
#include <vector>

#include "encoder/checkpoint/safetensors_writer.h"
#include "tests/encoder/checkpoint_test_util.h"

namespace neodb::encoder {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::SafetensorsBytes;
using testing::TempDir;
using testing::WriteBytes;

std::string FloatBytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

// One zstd frame (level 3) that declares its content size, as the zstd tool writes.
std::string Zstd(const std::string& bytes) {
  std::string out(ZSTD_compressBound(bytes.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), 3);
  if (ZSTD_isError(n)) {
    ADD_FAILURE() << ZSTD_getErrorName(n);
    return "";
  }
  out.resize(n);
  return out;
}

class SafetensorsTest : public ::testing::Test {
 protected:
  // Writes `bytes` to a file named *`suffix` and returns Open's error
  // message ("" if OK).
  std::string OpenError(const std::string& bytes, const std::string& suffix = ".safetensors") {
    std::string name = std::to_string(counter_++);
    name.append(suffix);
    const std::string path = dir_.Sub(name);
    WriteBytes(path, bytes);
    absl::StatusOr<SafetensorsFile> f = SafetensorsFile::Open(path);
    if (f.ok()) return "";
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument) << f.status();
    const std::string msg(f.status().message());
    EXPECT_THAT(msg, HasSubstr(path));  // every error names the file
    return msg;
  }

  TempDir dir_;
  int counter_ = 0;
};

TEST_F(SafetensorsTest, ReadsAValidFileAndBorrowsF32) {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"F32","shape":[2,2],"data_offsets":[8,24]},)"
      R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::string padded = header + std::string((8 - header.size() % 8) % 8, ' ');
  const std::string path = dir_.Sub("ok.safetensors");
  WriteBytes(path, SafetensorsBytes(padded, FloatBytes({1, 2, 3, 4, 5, 6})));
  absl::StatusOr<SafetensorsFile> f = SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->tensors().size(), 2u);
  EXPECT_EQ(f->tensors()[0].name, "a");  // sorted by name
  EXPECT_EQ(f->metadata().at("format"), "pt");
  ASSERT_NE(f->Find("b"), nullptr);
  EXPECT_EQ(f->Find("c"), nullptr);

  absl::StatusOr<Tensor> b = f->Load("b");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->shape(), (Shape{2, 2}));
  EXPECT_EQ(b->dtype(), DType::kF32);
  EXPECT_EQ(b->raw_data(), f->data_of(*f->Find("b")));  // no copy
  EXPECT_EQ(b->data<float>()[0], 3.0f);
  EXPECT_EQ(b->data<float>()[3], 6.0f);

  // Writing into a loaded tensor must neither crash nor touch the file.
  b->data<float>()[0] = 42.0f;
  absl::StatusOr<SafetensorsFile> again = SafetensorsFile::Open(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->Load("b")->data<float>()[0], 3.0f);

  // Tensors keep the mapping alive after the file object is gone.
  Tensor a;
  {
    absl::StatusOr<SafetensorsFile> g = SafetensorsFile::Open(path);
    ASSERT_TRUE(g.ok());
    a = *g->Load("a");
  }
  EXPECT_EQ(a.data<float>()[1], 2.0f);

  absl::StatusOr<Tensor> none = f->Load("zzz");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("zzz"));
}

TEST_F(SafetensorsTest, CopiesUnalignedF32) {
  // Header of 9 bytes: data starts at file offset 17, not 4-aligned.
  const std::string header = R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})";
  std::string padded = header + std::string((4 - (8 + header.size()) % 4) % 4 + 1, ' ');
  ASSERT_NE((8 + padded.size()) % 4, 0u);
  const std::string path = dir_.Sub("unaligned.safetensors");
  WriteBytes(path, SafetensorsBytes(padded, FloatBytes({1.5f, -2.5f, 3.25f})));
  absl::StatusOr<SafetensorsFile> f = SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<Tensor> x = f->Load("x");
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_NE(x->raw_data(), f->data_of(*f->Find("x")));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(x->raw_data()) % 4, 0u);
  EXPECT_EQ(x->data<float>()[0], 1.5f);
  EXPECT_EQ(x->data<float>()[1], -2.5f);
  EXPECT_EQ(x->data<float>()[2], 3.25f);
}

TEST_F(SafetensorsTest, ConvertsF16AndBF16) {
  // 1.0, -2.0, 0.5 in F16 (0x3c00, 0xc000, 0x3800) and BF16 (0x3f80, 0xc000, 0x3f00).
  const uint16_t f16[] = {0x3c00, 0xc000, 0x3800};
  const uint16_t bf16[] = {0x3f80, 0xc000, 0x3f00};
  std::string data(reinterpret_cast<const char*>(f16), 6);
  data += std::string(reinterpret_cast<const char*>(bf16), 6);
  const std::string header = R"({"h":{"dtype":"F16","shape":[3],"data_offsets":[0,6]},)"
                             R"("b":{"dtype":"BF16","shape":[3,1],"data_offsets":[6,12]}})";
  const std::string path = dir_.Sub("half.safetensors");
  WriteBytes(path, SafetensorsBytes(header, data));
  absl::StatusOr<SafetensorsFile> f = SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  for (const char* name : {"h", "b"}) {
    absl::StatusOr<Tensor> t = f->Load(name);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->dtype(), DType::kF32);
    EXPECT_EQ(t->numel(), 3);
    EXPECT_EQ(t->data<float>()[0], 1.0f) << name;
    EXPECT_EQ(t->data<float>()[1], -2.0f) << name;
    EXPECT_EQ(t->data<float>()[2], 0.5f) << name;
  }
  absl::StatusOr<Tensor> raw = f->LoadRaw("b");
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->dtype(), DType::kBF16);
  EXPECT_EQ(raw->shape(), (Shape{3, 1}));
}

TEST_F(SafetensorsTest, WriterRoundTrip) {
  Tensor t = Tensor::Empty({2, 3}, DType::kF32);
  for (int i = 0; i < 6; ++i) t.data<float>()[i] = 0.25f * i - 0.5f;
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    const std::string path = dir_.Sub(std::string(DTypeName(dt)) + ".safetensors");
    ASSERT_TRUE(WriteSafetensors(path, {{"z", t}, {"a", t.Reshape({6})}}, dt, {{"k", "v"}}).ok());
    const std::string bytes = testing::ReadBytes(path);
    uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    EXPECT_EQ(n % 8, 0u);  // header padded to a multiple of 8
    absl::StatusOr<SafetensorsFile> f = SafetensorsFile::Open(path);
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_EQ(f->Find("z")->dtype_name, DTypeName(dt));
    EXPECT_EQ(f->metadata().at("k"), "v");
    absl::StatusOr<Tensor> z = f->Load("z");
    ASSERT_TRUE(z.ok());
    EXPECT_EQ(z->shape(), (Shape{2, 3}));
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(z->data<float>()[i], 0.25f * i - 0.5f);  // exact in all three
  }
  EXPECT_FALSE(
      WriteSafetensors(dir_.Sub("dup.safetensors"), {{"a", t}, {"a", t}}, DType::kF32).ok());
  EXPECT_FALSE(WriteSafetensors(dir_.Sub("i32.safetensors"), {{"a", t}}, DType::kI32).ok());
}

TEST_F(SafetensorsTest, FileShorterThanTheLength) {
  EXPECT_THAT(OpenError(""), HasSubstr("too short"));
  EXPECT_THAT(OpenError("abc"), HasSubstr("too short"));
  EXPECT_THAT(OpenError(std::string(7, '\0')), HasSubstr("too short"));
}

TEST_F(SafetensorsTest, HeaderLongerThanTheFile) {
  const std::string header = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  EXPECT_THAT(OpenError(SafetensorsBytes(header, FloatBytes({1}), header.size() + 100)),
              HasSubstr("larger than the file"));
  EXPECT_THAT(OpenError(SafetensorsBytes("", "", 1)), HasSubstr("larger than the file"));
}

TEST_F(SafetensorsTest, HugeHeaderLength) {
  EXPECT_THAT(OpenError(SafetensorsBytes("{}", "", uint64_t{1} << 40)), HasSubstr("exceeds"));
  EXPECT_THAT(OpenError(SafetensorsBytes("{}", "", ~uint64_t{0})), HasSubstr("exceeds"));
}

TEST_F(SafetensorsTest, TruncatedFile) {
  const std::string header = R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
  std::string bytes = SafetensorsBytes(header, FloatBytes({1, 2, 3, 4}));
  bytes.resize(bytes.size() - 5);
  EXPECT_THAT(OpenError(bytes), AllOf(HasSubstr("\"a\""), HasSubstr("past the data section")));
  // Truncated inside the header.
  EXPECT_THAT(OpenError(SafetensorsBytes(header, "").substr(0, 20)),
              HasSubstr("larger than the file"));
}

TEST_F(SafetensorsTest, BadJson) {
  EXPECT_THAT(OpenError(SafetensorsBytes("{\"a\": ", "")), HasSubstr("not valid JSON"));
  EXPECT_THAT(OpenError(SafetensorsBytes("", "")), HasSubstr("not valid JSON"));
  EXPECT_THAT(OpenError(SafetensorsBytes(std::string("{\0}", 3), "")), HasSubstr("not valid JSON"));
}

TEST_F(SafetensorsTest, NonObjectJson) {
  EXPECT_THAT(OpenError(SafetensorsBytes("[1, 2]", "")), HasSubstr("not a JSON object"));
  EXPECT_THAT(OpenError(SafetensorsBytes("\"x\"    ", "")), HasSubstr("not a JSON object"));
  EXPECT_THAT(OpenError(SafetensorsBytes(R"({"a": 3})", "")),
              AllOf(HasSubstr("\"a\""), HasSubstr("not a JSON object")));
}

TEST_F(SafetensorsTest, DuplicateName) {
  const std::string header = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                             R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  EXPECT_THAT(OpenError(SafetensorsBytes(header, FloatBytes({1, 2}))),
              AllOf(HasSubstr("\"a\""), HasSubstr("more than once")));
}

TEST_F(SafetensorsTest, OverlappingOffsets) {
  const std::string header = R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                             R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})";
  EXPECT_THAT(OpenError(SafetensorsBytes(header, FloatBytes({1, 2, 3, 4, 5, 6}))),
              AllOf(HasSubstr("\"a\""), HasSubstr("\"b\""), HasSubstr("overlap")));
  // The same range twice.
  const std::string same = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                           R"("b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  EXPECT_THAT(OpenError(SafetensorsBytes(same, FloatBytes({1, 2}))), HasSubstr("overlap"));
}

TEST_F(SafetensorsTest, OutOfRangeOffsets) {
  const std::string past = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})";
  EXPECT_THAT(OpenError(SafetensorsBytes(past, FloatBytes({1, 2}))),
              AllOf(HasSubstr("\"a\""), HasSubstr("past the data section")));
  const std::string reversed = R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})";
  EXPECT_THAT(OpenError(SafetensorsBytes(reversed, FloatBytes({1, 2}))), HasSubstr("begin > end"));
  const std::string huge =
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[18446744073709551612,18446744073709551616]}})";
  EXPECT_THAT(OpenError(SafetensorsBytes(huge, FloatBytes({1}))), HasSubstr("data_offsets"));
  const std::string negative = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})";
  EXPECT_THAT(OpenError(SafetensorsBytes(negative, FloatBytes({1}))), HasSubstr("data_offsets"));
  const std::string three = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}})";
  EXPECT_THAT(OpenError(SafetensorsBytes(three, FloatBytes({1, 2}))), HasSubstr("data_offsets"));
  const std::string missing = R"({"a":{"dtype":"F32","shape":[1]}})";
  EXPECT_THAT(OpenError(SafetensorsBytes(missing, FloatBytes({1}))), HasSubstr("data_offsets"));
}

TEST_F(SafetensorsTest, SizeMismatchWithShape) {
  const std::string header = R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})";
  EXPECT_THAT(OpenError(SafetensorsBytes(header, FloatBytes({1, 2, 3, 4}))),
              AllOf(HasSubstr("\"w\""), HasSubstr("needs 16")));
  const std::string f16 = R"({"w":{"dtype":"F16","shape":[4],"data_offsets":[0,16]}})";
  EXPECT_THAT(OpenError(SafetensorsBytes(f16, FloatBytes({1, 2, 3, 4}))), HasSubstr("needs 8"));
}

TEST_F(SafetensorsTest, ShapeProductOverflow) {
  const std::string header =
      R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,0]}})";
  EXPECT_THAT(OpenError(SafetensorsBytes(header, "")),
              AllOf(HasSubstr("\"w\""), HasSubstr("overflow")));
  // numel fits in 64 bits, bytes do not.
  const std::string bytes_overflow =
      R"({"w":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})";
  EXPECT_THAT(OpenError(SafetensorsBytes(bytes_overflow, "")), HasSubstr("overflow"));
  // A zero dimension makes any product zero, which is fine.
  const std::string zero =
      R"({"w":{"dtype":"F32","shape":[0,9223372036854775807],"data_offsets":[0,0]}})";
  EXPECT_EQ(OpenError(SafetensorsBytes(zero, "")), "");
}

TEST_F(SafetensorsTest, NegativeOrNonIntegerShape) {
  for (const char* shape :
       {"[-1,4]", "[2.5]", "[\"2\"]", "[null]", "[[2]]", "3", "{}", "[18446744073709551615]"}) {
    const std::string header =
        std::string(R"({"w":{"dtype":"F32","data_offsets":[0,0],"shape":)") + shape + "}}";
    EXPECT_THAT(OpenError(SafetensorsBytes(header, "")),
                AllOf(HasSubstr("\"w\""), HasSubstr("shape")))
        << shape;
  }
}

TEST_F(SafetensorsTest, UnknownDtype) {
  const std::string header = R"({"w":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}})";
  EXPECT_THAT(OpenError(SafetensorsBytes(header, FloatBytes({1}))),
              AllOf(HasSubstr("\"w\""), HasSubstr("unknown dtype \"F99\"")));
  const std::string number = R"({"w":{"dtype":4,"shape":[1],"data_offsets":[0,4]}})";
  EXPECT_THAT(OpenError(SafetensorsBytes(number, FloatBytes({1}))), HasSubstr("dtype"));
}

TEST_F(SafetensorsTest, KnownButUnloadableDtype) {
  const std::string header = R"({"ids":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}})";
  const std::string path = dir_.Sub("i64.safetensors");
  WriteBytes(path, SafetensorsBytes(header, std::string(16, '\0')));
  absl::StatusOr<SafetensorsFile> f = SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<Tensor> t = f->Load("ids");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()),
              AllOf(HasSubstr("\"ids\""), HasSubstr("I64"), HasSubstr("only F32, F16 and BF16")));
}

TEST_F(SafetensorsTest, MetadataMustBeStrings) {
  EXPECT_THAT(OpenError(SafetensorsBytes(R"({"__metadata__":{"format":1}})", "")),
              AllOf(HasSubstr("__metadata__"), HasSubstr("format")));
  EXPECT_THAT(OpenError(SafetensorsBytes(R"({"__metadata__":["pt"]})", "")),
              HasSubstr("__metadata__"));
  EXPECT_EQ(OpenError(SafetensorsBytes(R"({"__metadata__":{}})", "")), "");
}

TEST_F(SafetensorsTest, NotARegularFile) {
  absl::StatusOr<SafetensorsFile> f = SafetensorsFile::Open(dir_.path());
  ASSERT_FALSE(f.ok());
  absl::StatusOr<SafetensorsFile> g = SafetensorsFile::Open(dir_.Sub("absent.safetensors"));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SafetensorsTest, ReadsZstdCompressedFile) {
  Tensor t = Tensor::Empty({3, 4}, DType::kF32);
  for (int i = 0; i < 12; ++i) t.data<float>()[i] = i % 3 == 0 ? 0.0f : 0.1f * i - 0.5f;
  for (DType dt : {DType::kF32, DType::kF16}) {
    SCOPED_TRACE(DTypeName(dt));
    const std::string path = dir_.Sub(std::string(DTypeName(dt)) + ".safetensors");
    ASSERT_TRUE(
        WriteSafetensors(path, {{"w", t}, {"b", t.Rows(1, 2)}}, dt, {{"format", "pt"}}).ok());
    WriteBytes(path + ".zst", Zstd(testing::ReadBytes(path)));
    absl::StatusOr<SafetensorsFile> plain = SafetensorsFile::Open(path);
    absl::StatusOr<SafetensorsFile> zst = SafetensorsFile::Open(path + ".zst");
    ASSERT_TRUE(plain.ok()) << plain.status();
    ASSERT_TRUE(zst.ok()) << zst.status();
    EXPECT_EQ(zst->path(), path + ".zst");
    EXPECT_EQ(zst->metadata(), plain->metadata());
    ASSERT_EQ(zst->tensors().size(), plain->tensors().size());
    for (size_t i = 0; i < plain->tensors().size(); ++i) {
      const SafetensorsFile::TensorInfo& a = plain->tensors()[i];
      const SafetensorsFile::TensorInfo& b = zst->tensors()[i];
      EXPECT_EQ(b.name, a.name);
      EXPECT_EQ(b.dtype_name, a.dtype_name);
      EXPECT_EQ(b.shape, a.shape);
      EXPECT_EQ(b.begin, a.begin);
      EXPECT_EQ(b.end, a.end);
      absl::StatusOr<Tensor> x = plain->Load(a.name);
      absl::StatusOr<Tensor> y = zst->Load(b.name);
      ASSERT_TRUE(x.ok() && y.ok());
      ASSERT_EQ(y->nbytes(), x->nbytes());
      EXPECT_EQ(std::memcmp(y->raw_data(), x->raw_data(), x->nbytes()), 0) << a.name;
    }
    // A borrowed tensor keeps the decompressed memory alive after the file is gone.
    Tensor kept;
    {
      absl::StatusOr<SafetensorsFile> g = SafetensorsFile::Open(path + ".zst");
      ASSERT_TRUE(g.ok());
      kept = *g->LoadRaw("w");
      EXPECT_EQ(kept.raw_data(), g->data_of(*g->Find("w")));  // no copy
    }
    absl::StatusOr<Tensor> w = plain->LoadRaw("w");
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(std::memcmp(kept.raw_data(), w->raw_data(), w->nbytes()), 0);
    // Two frames back to back (what zstd writes for concatenated inputs) are
    // one stream: the sizes add up and the bytes join.
    const std::string bytes = testing::ReadBytes(path);
    const size_t half = bytes.size() / 2;
    WriteBytes(path + ".2.zst", Zstd(bytes.substr(0, half)) + Zstd(bytes.substr(half)));
    absl::StatusOr<SafetensorsFile> two = SafetensorsFile::Open(path + ".2.zst");
    ASSERT_TRUE(two.ok()) << two.status();
    absl::StatusOr<Tensor> w2 = two->LoadRaw("w");
    ASSERT_TRUE(w2.ok());
    EXPECT_EQ(std::memcmp(w2->raw_data(), w->raw_data(), w->nbytes()), 0);
  }
}

TEST_F(SafetensorsTest, RejectsBadZstdStreams) {
  Tensor t = Tensor::Zeros({64, 64}, DType::kF32);
  const std::string path = dir_.Sub("src.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, {{"a", t}}, DType::kF32).ok());
  const std::string bytes = testing::ReadBytes(path);

  EXPECT_THAT(OpenError("not a zstd stream at all", ".safetensors.zst"),
              HasSubstr("is not a zstd stream"));
  EXPECT_THAT(OpenError("", ".safetensors.zst"), HasSubstr("is not a zstd stream"));
  const std::string whole = Zstd(bytes);
  EXPECT_THAT(OpenError(whole.substr(0, whole.size() / 2), ".safetensors.zst"),
              HasSubstr("truncated"));

  // Streaming without a pledged size: the frame does not declare its size.
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  std::string unsized(ZSTD_compressBound(bytes.size()) + 64, '\0');
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  ZSTD_outBuffer out{unsized.data(), unsized.size(), 0};
  // e_continue first: a lone e_end call would record the input's size.
  ASSERT_FALSE(ZSTD_isError(ZSTD_compressStream2(cctx, &out, &in, ZSTD_e_continue)));
  ASSERT_EQ(ZSTD_compressStream2(cctx, &out, &in, ZSTD_e_end), 0u);
  ZSTD_freeCCtx(cctx);
  unsized.resize(out.pos);
  ASSERT_EQ(ZSTD_getFrameContentSize(unsized.data(), unsized.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  EXPECT_THAT(OpenError(unsized, ".safetensors.zst"),
              HasSubstr("without its decompressed size"));

  // A frame header declaring 17 GiB (single segment, 8-byte content size)
  // followed by one empty last raw block: refused before any allocation.
  std::string huge = "\x28\xb5\x2f\xfd\xe0";
  const uint64_t declared = 17ull << 30;
  huge.append(reinterpret_cast<const char*>(&declared), 8);
  huge.append("\x01\x00\x00", 3);
  ASSERT_EQ(ZSTD_getFrameContentSize(huge.data(), huge.size()), declared);
  EXPECT_THAT(OpenError(huge, ".safetensors.zst"), HasSubstr("over the limit"));

  // Valid zstd holding something that is not a safetensors file: the same
  // error as the uncompressed bytes give.
  const std::string plain_error = OpenError("abc");
  const std::string zst_error = OpenError(Zstd("abc"), ".safetensors.zst");
  ASSERT_THAT(plain_error, HasSubstr("too short"));
  EXPECT_EQ(zst_error.substr(zst_error.find(": ")), plain_error.substr(plain_error.find(": ")));
}

// Corrupts a valid file byte by byte (deterministically) and opens and loads
// every variant: the reader must fail cleanly or succeed, never crash or read
// out of bounds (run under ASan to make the latter visible).
TEST_F(SafetensorsTest, SurvivesCorruptedBytes) {
  Tensor t = Tensor::Empty({3, 5}, DType::kF32);
  for (int i = 0; i < 15; ++i) t.data<float>()[i] = static_cast<float>(i);
  const std::string path = dir_.Sub("good.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, {{"a", t}, {"bb", t.Rows(0, 1)}, {"c", t.Rows(1, 3)}},
                               DType::kF32, {{"format", "pt"}})
                  .ok());
  const std::string good = testing::ReadBytes(path);
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  const char kAlphabet[] = "0123456789[]{}\",:- .eFABI\x00\xff";
  int opened = 0;
  for (int iter = 0; iter < 1000; ++iter) {
    std::string bytes = good;
    const int edits = 1 + static_cast<int>(next() % 3);
    for (int e = 0; e < edits; ++e) {
      // Mostly the length and the header, where the structure lives.
      const size_t limit = std::min<size_t>(bytes.size(), 8 + 200);
      bytes[next() % limit] = kAlphabet[next() % (sizeof(kAlphabet) - 1)];
    }
    if (next() % 10 == 0) bytes.resize(next() % bytes.size());
    const std::string p = dir_.Sub("fuzz.safetensors");
    WriteBytes(p, bytes);
    absl::StatusOr<SafetensorsFile> f = SafetensorsFile::Open(p);
    if (!f.ok()) continue;
    ++opened;
    for (const auto& info : f->tensors()) {
      absl::StatusOr<Tensor> x = f->Load(info.name);
      if (!x.ok()) continue;
      double sum = 0;
      for (int64_t i = 0; i < x->numel(); ++i) sum += x->data<float>()[i];
      (void)sum;
    }
  }
  EXPECT_GT(opened, 0);  // some edits (in the data or padding) keep the file valid
}

}  // namespace
}  // namespace neodb::encoder
