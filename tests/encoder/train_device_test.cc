// The --device of the training commands (encoder/train/train_device.h) and
// the host-side pieces of training on CUDA, on any machine: what "cpu",
// "auto" and "cuda" resolve to, that the CPU pass is what TrainModel ran
// before, and the rows-by-id grouping the CUDA embedding backward reads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "encoder/cuda/cuda_backend.h"
#include "encoder/train/embedding_rows.h"
#include "encoder/train/train_device.h"
#include "encoder/train/train_model.h"
#include "tests/encoder/train_test_util.h"

namespace neodb::encoder::train {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TrainDevice, CpuAndAutoTrainOnTheCpu) {
  std::string note = "left over";
  absl::StatusOr<TrainingDevice> cpu = ResolveTrainingDevice("cpu", &note);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_FALSE(cpu->cuda);
  EXPECT_EQ(TrainingDeviceName(*cpu), "cpu");
  absl::StatusOr<TrainingDevice> autod = ResolveTrainingDevice("auto", &note);
  ASSERT_TRUE(autod.ok()) << autod.status();
  EXPECT_FALSE(autod->cuda);
  EXPECT_THAT(note, HasSubstr("training runs on the CPU"));
  EXPECT_THAT(note, HasSubstr("--device cuda"));
}

TEST(TrainDevice, BadNamesAreInvalid) {
  for (const char* bad : {"tpu", "cuda:", "cuda:-1", ""}) {
    absl::StatusOr<TrainingDevice> d = ResolveTrainingDevice(bad, nullptr);
    EXPECT_TRUE(absl::IsInvalidArgument(d.status())) << bad << ": " << d.status();
  }
}

// Without a device (or a CUDA build), --device cuda is an error that names
// what is missing; with one it is that device.
TEST(TrainDevice, CudaIsThatDeviceOrAnErrorNeverTheCpu) {
  const bool gpu = CudaDeviceCount().ok();
  absl::StatusOr<TrainingDevice> d = ResolveTrainingDevice("cuda", nullptr);
  if (gpu) {
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_TRUE(d->cuda);
    EXPECT_EQ(TrainingDeviceName(*d), "cuda:0");
    return;
  }
  EXPECT_TRUE(absl::IsUnavailable(d.status())) << d.status();
  EXPECT_THAT(d.status().message(), HasSubstr("--device cuda:0: no CUDA device to train on"));
  EXPECT_THAT(d.status().message(), HasSubstr("use --device cpu"));
  // Asked directly (a TrainerOptions set by hand), the pass is refused too.
  const ParamLayout layout(testing::TinyConfig());
  absl::StatusOr<std::shared_ptr<const ArchTrainModel<float>>> pass =
      MakeTrainingPass(layout, TrainingDevice{true, 0});
  EXPECT_FALSE(pass.ok());
}

TEST(TrainDevice, TheCpuPassIsTrainModelsOwn) {
  const ParamLayout layout(testing::TinyConfig());
  absl::StatusOr<std::shared_ptr<const ArchTrainModel<float>>> pass =
      MakeTrainingPass(layout, TrainingDevice{});
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(*pass, nullptr);
  const TrainParams<float> p = RandomParams<float>(layout, 3, 0.3, 0.3);
  PackedBatch batch;
  AppendSequence(&batch, {1, 5, 6, 2});
  AppendSequence(&batch, {1, 7, 2});
  const TrainModel<float> plain(layout), given(layout, Pooling::kMean, *pass);
  std::vector<float> a(2 * 16), b(2 * 16);
  plain.Forward(p.values.data(), batch, 0, nullptr, Pooling::kMean, a.data(), nullptr);
  given.Forward(p.values.data(), batch, 0, nullptr, Pooling::kMean, b.data(), nullptr);
  EXPECT_EQ(a, b);
}

TEST(EmbeddingRows, GroupsRowsByIdInOrder) {
  const std::vector<int32_t> ids = {5, 2, 5, 9, 2, 5};
  const EmbeddingRows r = EmbeddingRowsById(ids.data(), 6);
  EXPECT_THAT(r.unique_ids, ElementsAre(2, 5, 9));
  EXPECT_THAT(r.row_begin, ElementsAre(0, 2, 5, 6));
  EXPECT_THAT(r.token_rows, ElementsAre(1, 4, 0, 2, 5, 3));
  const EmbeddingRows empty = EmbeddingRowsById(ids.data(), 0);
  EXPECT_TRUE(empty.unique_ids.empty());
  EXPECT_THAT(empty.row_begin, ElementsAre(0));
  EXPECT_TRUE(empty.token_rows.empty());
}

}  // namespace
}  // namespace neodb::encoder::train
