// Similarity distillation (DistillObjective, issue 21): the loss and its
// gradient, the teacher-file parser's errors, and the Trainer with the
// objective on a tiny model — the student's cosine geometry moves to the
// teacher's, and a resume with other distillation settings is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "encoder/train/distill_objective.h"
#include "encoder/train/trainer.h"
#include "tests/encoder/train_test_util.h"

namespace neodb::encoder::train {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(DistillLoss, GradientMatchesFiniteDifferences) {
  const int64_t n = 5, c = 6, k = 4;
  std::vector<double> student = testing::RandomVector(n * c, 3);
  std::vector<double> t = testing::RandomVector(n * k, 4);
  std::vector<float> teacher(t.size());
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t d = 0; d < k; ++d) s += t[i * k + d] * t[i * k + d];
    for (int64_t d = 0; d < k; ++d) teacher[i * k + d] = static_cast<float>(t[i * k + d] / std::sqrt(s));
  }
  std::vector<double> grad(student.size()), scratch(student.size());
  const double loss = SimilarityDistillLoss<double>(student.data(), teacher.data(), n, c, k, grad.data());
  EXPECT_GT(loss, 0.01);
  const std::vector<double> numeric = testing::NumericGradient(
      [&] {
        return SimilarityDistillLoss<double>(student.data(), teacher.data(), n, c, k,
                                             scratch.data());
      },
      student.data(), n * c);
  testing::ExpectGradientsClose("d loss / d student", grad.data(), numeric.data(), n * c, 1e-5);
}

// The direct term of `neodb distill` (issue 45): 1 - cos(student_i, teacher_i).
TEST(DirectDistillLoss, GradientMatchesFiniteDifferences) {
  const int64_t n = 5, c = 6;
  std::vector<double> student = testing::RandomVector(n * c, 13);
  std::vector<double> t = testing::RandomVector(n * c, 14);
  std::vector<float> teacher(t.size());
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t d = 0; d < c; ++d) s += t[i * c + d] * t[i * c + d];
    for (int64_t d = 0; d < c; ++d) {
      teacher[i * c + d] = static_cast<float>(t[i * c + d] / std::sqrt(s));
    }
  }
  std::vector<double> grad(student.size()), scratch(student.size());
  const double loss =
      DirectDistillLoss<double>(student.data(), teacher.data(), n, c, grad.data());
  EXPECT_GT(loss, 0.1);
  const std::vector<double> numeric = testing::NumericGradient(
      [&] {
        return DirectDistillLoss<double>(student.data(), teacher.data(), n, c, scratch.data());
      },
      student.data(), n * c);
  testing::ExpectGradientsClose("d direct / d student", grad.data(), numeric.data(), n * c, 1e-5);
}

TEST(DirectDistillLoss, ValuesAtTheCorners) {
  // Row 0 = 3 × its teacher (cos 1), row 1 = -its teacher (cos -1), row 2
  // orthogonal (cos 0), row 3 zero (counted as cos 0, zero gradient).
  const int64_t n = 4, c = 2;
  const std::vector<float> teacher = {0.6f, 0.8f, 1, 0, 0, 1, 1, 0};
  const std::vector<float> student = {1.8f, 2.4f, -2, 0, 5, 0, 0, 0};
  std::vector<float> grad(student.size());
  EXPECT_NEAR(DirectDistillLoss<float>(student.data(), teacher.data(), n, c, grad.data()),
              (0 + 2 + 1 + 1) / 4.0, 1e-6);
  EXPECT_NEAR(grad[0], 0.0f, 1e-6f);  // at the optimum
  EXPECT_NEAR(grad[1], 0.0f, 1e-6f);
  EXPECT_EQ(grad[6], 0.0f);
  EXPECT_EQ(grad[7], 0.0f);
  // Row 2 (5, 0) against (0, 1): d/dx = -(t - cos u) / (n |x|) = -(0, 1) / 20.
  EXPECT_NEAR(grad[4], 0.0f, 1e-7f);
  EXPECT_NEAR(grad[5], -0.05f, 1e-7f);
}

TEST(DistillLoss, IsZeroWhenTheGeometriesAgreeAndScaleFree) {
  // Student = teacher padded with zeros and scaled per row: same cosines.
  const int64_t n = 4, c = 5, k = 3;
  const std::vector<float> teacher = {1, 0, 0, 0.6f, 0.8f, 0, 0, 0, 1, 0, 1, 0};
  std::vector<float> student(static_cast<size_t>(n * c), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t d = 0; d < k; ++d) student[i * c + d] = static_cast<float>(i + 2) * teacher[i * k + d];
  }
  std::vector<float> grad(student.size());
  EXPECT_NEAR(SimilarityDistillLoss<float>(student.data(), teacher.data(), n, c, k, grad.data()),
              0.0, 1e-10);
  for (float g : grad) EXPECT_NEAR(g, 0.0f, 1e-6f);
  // Every student row the same: all cosines 1; teacher's are 0.6, 0, 0, 0, 0.8, 0 (×2 order).
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t d = 0; d < c; ++d) student[i * c + d] = d == 0 ? 1.0f : 0.0f;
  }
  const double expect = 2 * (0.4 * 0.4 + 1 + 1 + 1 + 0.2 * 0.2 + 1) / 12.0;
  EXPECT_NEAR(SimilarityDistillLoss<float>(student.data(), teacher.data(), n, c, k, grad.data()),
              expect, 1e-6);
}

// Whitespace-separated words; id = 1000 + word length.
class WordTokenizer : public Tokenizer {
 public:
  WordTokenizer() {
    special_.cls = 101;
    special_.sep = 102;
  }
  absl::StatusOr<std::vector<int32_t>> Tokenize(std::string_view text) const override {
    std::vector<int32_t> ids;
    std::istringstream in{std::string(text)};
    std::string w;
    while (in >> w) ids.push_back(1000 + static_cast<int32_t>(w.size()));
    return ids;
  }
  const SpecialTokens& special() const override { return special_; }
  int32_t vocab_size() const override { return 2000; }
  std::string IdToToken(int32_t id) const override { return std::to_string(id); }
  std::string_view kind() const override { return "test"; }
  absl::Status SaveTo(const std::string&) const override { return absl::OkStatus(); }

 private:
  SpecialTokens special_;
};

void ExpectError(const std::string& text, const std::string& what, int64_t max_length = 16) {
  WordTokenizer tok;
  auto r = ParseTeacherTexts(text, "t.jsonl", tok, max_length);
  ASSERT_FALSE(r.ok()) << text;
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(what)) << r.status();
}

TEST(TeacherFile, ParsesNormalisesAndFrames) {
  WordTokenizer tok;
  auto r = ParseTeacherTexts(
      "{\"text\": \"a dog\", \"vector\": [3, 4]}\n\n{\"text\": \"cat\", \"vector\": [0, 2]}\n",
      "t.jsonl", tok, 16);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].ids, (std::vector<int32_t>{101, 1001, 1003, 102}));
  EXPECT_NEAR((*r)[0].vector[0], 0.6f, 1e-6f);
  EXPECT_NEAR((*r)[0].vector[1], 0.8f, 1e-6f);
  EXPECT_EQ((*r)[1].line, 3);
}

TEST(TeacherFile, HostileInputNamesTheLine) {
  const std::string g = "{\"text\": \"a b\", \"vector\": [1, 2]}\n";
  ExpectError(g + "{\"text\": \n", "t.jsonl:2: not valid JSON");
  ExpectError(g + "[1]\n", "t.jsonl:2: expected a JSON object");
  ExpectError(g + "{\"vector\": [1, 2]}\n", "t.jsonl:2: \"text\" must be");
  ExpectError(g + "{\"text\": \"\", \"vector\": [1, 2]}\n", "t.jsonl:2: \"text\" must be");
  ExpectError(g + "{\"text\": \"x\"}\n", "t.jsonl:2: \"vector\" must be");
  ExpectError(g + "{\"text\": \"x\", \"vector\": []}\n", "t.jsonl:2: \"vector\" must be");
  ExpectError(g + "{\"text\": \"x\", \"vector\": [1, 2, 3]}\n", "t.jsonl:2: \"vector\" has 3");
  ExpectError(g + "{\"text\": \"x\", \"vector\": [1, \"2\"]}\n", "finite numbers");
  ExpectError(g + "{\"text\": \"x\", \"vector\": [0, 0]}\n", "t.jsonl:2: \"vector\" has zero");
  ExpectError(g + "{\"text\": \"x\", \"vector\": [1e308, 1e308]}\n", "zero (or infinite)");
  ExpectError(g + "{\"text\": \"a b c d e\", \"vector\": [1, 2]}\n", "over the maximum length 6",
              6);
  ExpectError(g, "at least two texts");
  ExpectError("", "at least two texts");
}

TEST(TeacherFile, MissingFileIsNotFound) {
  WordTokenizer tok;
  auto r = ReadTeacherTexts("/nonexistent/teacher.jsonl", tok, 16);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
}

NeoBertConfig Config() {
  NeoBertConfig c;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 48;
  c.vocab_size = 128;
  c.max_length = 32;
  return c;
}

// 48 texts in 4 topics: a text of topic g carries token 20 + 4g + (i % 4)
// and two fillers; the teacher says texts of one topic are alike (cosine
// ≈ 1) and topics are orthogonal — nothing a random encoder knows.
std::vector<TeacherText> TopicTexts() {
  SplitMix64 rng(9);
  std::vector<TeacherText> out;
  for (int i = 0; i < 48; ++i) {
    const int g = i % 4;
    TeacherText t;
    t.line = i + 1;
    t.ids = {101, static_cast<int32_t>(20 + 4 * g + (i / 4) % 4),
             static_cast<int32_t>(80 + rng.Next() % 4), static_cast<int32_t>(80 + rng.Next() % 4),
             102};
    t.vector.assign(4, 0.0f);
    t.vector[g] = 1.0f;
    out.push_back(std::move(t));
  }
  return out;
}

std::unique_ptr<DistillObjective> Objective(int64_t batch) {
  DistillOptions o;
  o.batch_size = batch;
  o.chunk_size = 5;
  o.seed = 3;
  auto d = DistillObjective::Create(TopicTexts(), o);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? std::move(*d) : nullptr;
}

TEST(DistillTraining, StudentGeometryMovesToTheTeachers) {
  TrainerOptions o = testing::ConceptTrainerOptions();
  o.steps = 80;
  o.distill_weight = 5;
  std::unique_ptr<DistillObjective> probe = Objective(48);  // one batch = every text
  ASSERT_NE(probe, nullptr);
  const TrainParams<float> init = RandomParams<float>(Config(), 3, 0.02, 0.0);
  auto t = Trainer::Create(init, testing::ConceptPairs(16, 1, true), o, nullptr, Objective(16));
  ASSERT_TRUE(t.ok()) << t.status();
  const double before = probe->Evaluate((*t)->model(), (*t)->params().values.data(), 0);
  ASSERT_TRUE((*t)->Run().ok());
  const double after = probe->Evaluate((*t)->model(), (*t)->params().values.data(), 0);
  EXPECT_GT(before, 0.05) << "a random encoder should not already match the teacher";
  EXPECT_LT(after, 0.5 * before) << "before " << before;
  EXPECT_GT((*t)->history().back().distill_loss, 0.0);
}

// Teacher texts of TopicTexts with their 4-d vectors padded to `dim`.
std::vector<TeacherText> PaddedTopicTexts(int64_t dim) {
  std::vector<TeacherText> texts = TopicTexts();
  for (TeacherText& t : texts) t.vector.resize(static_cast<size_t>(dim), 0.0f);
  return texts;
}

TEST(DistillTraining, DirectTermOnlyWhenTheDimensionsAgree) {
  const TrainParams<float> init = RandomParams<float>(Config(), 3, 0.02, 0.0);
  const TrainModel<float> model(init.layout);
  DistillOptions o;
  o.batch_size = 8;
  o.seed = 3;
  auto structure = DistillObjective::Create(PaddedTopicTexts(32), o);
  o.direct_weight = 0.5;
  auto both = DistillObjective::Create(PaddedTopicTexts(32), o);
  auto other_dim = DistillObjective::Create(TopicTexts(), o);  // 4-d teacher, 32-d student
  ASSERT_TRUE(structure.ok() && both.ok() && other_dim.ok());
  EXPECT_FALSE((*structure)->UsesDirectTerm(32));
  EXPECT_TRUE((*both)->UsesDirectTerm(32));
  EXPECT_FALSE((*other_dim)->UsesDirectTerm(32));
  const double s = (*structure)->Evaluate(model, init.values.data(), 0);
  const double b = (*both)->Evaluate(model, init.values.data(), 0);
  const double d = (*other_dim)->Evaluate(model, init.values.data(), 0);
  EXPECT_GT(b, s + 0.1) << "a random student is far from the teacher's coordinates";
  EXPECT_NEAR(d, s, 1e-9) << "across dimensions: the structure term alone";
  EXPECT_EQ((*both)->Identity()["direct_weight"], 0.5);
  EXPECT_FALSE((*structure)->Identity().contains("direct_weight"));
  o.direct_weight = -1;
  EXPECT_THAT(std::string(DistillObjective::Create(TopicTexts(), o).status().message()),
              HasSubstr("--direct-weight"));
}

TEST(DistillTraining, WithoutPairsTheDistillationLossTrainsAlone) {
  TrainerOptions o = testing::ConceptTrainerOptions();
  o.steps = 60;
  const TrainParams<float> init = RandomParams<float>(Config(), 3, 0.02, 0.0);
  EXPECT_THAT(std::string(Trainer::Create(init, {}, o).status().message()),
              HasSubstr("no training pairs"));
  DistillOptions dopt;
  dopt.batch_size = 48;
  dopt.seed = 3;
  dopt.direct_weight = 1;
  auto probe = DistillObjective::Create(PaddedTopicTexts(32), dopt);
  ASSERT_TRUE(probe.ok());
  dopt.batch_size = 16;
  auto objective = DistillObjective::Create(PaddedTopicTexts(32), dopt);
  ASSERT_TRUE(objective.ok());
  auto t = Trainer::Create(init, {}, o, nullptr, std::move(*objective));
  ASSERT_TRUE(t.ok()) << t.status();
  const double before = (*probe)->Evaluate((*t)->model(), (*t)->params().values.data(), 0);
  ASSERT_TRUE((*t)->Run().ok());
  const double after = (*probe)->Evaluate((*t)->model(), (*t)->params().values.data(), 0);
  EXPECT_LT(after, 0.5 * before) << "before " << before;
  const StepRecord& last = (*t)->history().back();
  EXPECT_EQ(last.loss, last.distill_loss) << "no contrastive part";
  EXPECT_EQ(last.accuracy, 0.0);
}

TEST(DistillTraining, RejectsBadSettingsAndMismatchedResume) {
  DistillOptions o;
  o.batch_size = 1;
  EXPECT_THAT(std::string(DistillObjective::Create(TopicTexts(), o).status().message()),
              HasSubstr("--distill-batch must be at least 2"));
  o.batch_size = 49;
  EXPECT_THAT(std::string(DistillObjective::Create(TopicTexts(), o).status().message()),
              HasSubstr("larger than the 48 teacher texts"));

  TrainerOptions to = testing::ConceptTrainerOptions();
  to.distill_weight = -1;
  const TrainParams<float> init = RandomParams<float>(Config(), 3, 0.02, 0.0);
  EXPECT_THAT(std::string(Trainer::Create(init, testing::ConceptPairs(16, 1, true), to, nullptr,
                                          Objective(16))
                              .status()
                              .message()),
              HasSubstr("--distill-weight must be a positive number"));

  const fs::path dir = fs::temp_directory_path() / ("distill_resume_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  to.distill_weight = 1;
  to.checkpoint_dir = dir.string();
  to.stop_after = 3;
  auto first = Trainer::Create(init, testing::ConceptPairs(16, 1, true), to, nullptr, Objective(16));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE((*first)->Run().ok());
  to.resume = true;
  to.stop_after = 0;
  auto other = Trainer::Create(init, testing::ConceptPairs(16, 1, true), to, nullptr, Objective(8));
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(std::string(other.status().message()), HasSubstr("distill"));
  auto none = Trainer::Create(init, testing::ConceptPairs(16, 1, true), to);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("distill"));
  auto same = Trainer::Create(init, testing::ConceptPairs(16, 1, true), to, nullptr, Objective(16));
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ((*same)->step(), 3);
  EXPECT_EQ((*same)->history().size(), 3u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace neodb::encoder::train
