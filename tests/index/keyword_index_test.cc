// KeywordIndex against a brute-force model: postings, lengths and statistics
// equal a recount from the documents after random upserts and removes (and
// after Save/Load); BM25 scores equal a direct evaluation of the formula;
// filters apply before top-k; corrupt and truncated snapshots are refused.
#include "index/keyword/keyword_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "common/atomic_file.h"
#include "common/env_memory.h"

namespace neodb::keyword {
namespace {

struct Field {
  std::string text;
  float weight;
};
using Doc = std::vector<Field>;

// The model: documents as written, and everything recounted from them.
class Model {
 public:
  explicit Model(AnalyzerKind kind) : analyzer_(kind) {}
  std::map<uint64_t, Doc> docs;

  // term -> (id -> weighted tf), and id -> weighted length.
  void Recount(std::map<std::string, std::map<uint64_t, double>>* postings,
               std::map<uint64_t, double>* lengths) const {
    postings->clear();
    lengths->clear();
    for (const auto& [id, doc] : docs) {
      double len = 0;
      for (const Field& f : doc) {
        std::vector<Token> tokens = analyzer_.Analyze(f.text);
        for (const Token& t : tokens) {
          (*postings)[t.term][id] += f.weight;
          if (!t.overlap) len += f.weight;
        }
      }
      (*lengths)[id] = len;
    }
  }

  // BM25 of every matching document, straight from the formula.
  std::map<uint64_t, double> Scores(const std::string& query, double k1, double b) const {
    std::map<std::string, std::map<uint64_t, double>> postings;
    std::map<uint64_t, double> lengths;
    Recount(&postings, &lengths);
    const double n = static_cast<double>(docs.size());
    double total = 0;
    for (const auto& [id, len] : lengths) total += len;
    const double avg = total > 0 ? total / n : 1.0;
    std::map<std::string, int> qtf;
    for (const Token& t : analyzer_.Analyze(query)) qtf[t.term]++;
    std::map<uint64_t, double> scores;
    for (const auto& [term, count] : qtf) {
      auto it = postings.find(term);
      if (it == postings.end()) continue;
      const double df = static_cast<double>(it->second.size());
      const double idf = std::log(1 + (n - df + 0.5) / (df + 0.5));
      for (const auto& [id, tf] : it->second) {
        scores[id] += count * idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths.at(id) / avg));
      }
    }
    return scores;
  }

 private:
  Analyzer analyzer_;
};

absl::Status Apply(KeywordIndex* index, uint64_t id, const Doc& doc) {
  std::vector<FieldText> fields;
  for (const Field& f : doc) fields.push_back({f.text, f.weight});
  return index->Upsert(id, fields);
}

// Random text over a small vocabulary with a few hyphenated compounds and
// stop words, so terms are shared and documents often empty of some.
std::string RandomText(std::mt19937* rng) {
  static const char* kWords[] = {"cell",    "cells",    "protein", "the",     "of",      "gene",
                                 "genes",   "covid-19", "il-6",    "rapid",   "rapidly", "study",
                                 "studies", "bone",     "density", "vitamin", "d",       "and",
                                 "x-ray",   "mice",     "mouse",   "β-cell",  "東京",    "données"};
  std::uniform_int_distribution<int> len(0, 30), word(0, std::size(kWords) - 1);
  std::string s;
  for (int i = len(*rng); i > 0; --i) {
    if (!s.empty()) s += ' ';
    s += kWords[word(*rng)];
  }
  return s;
}

Doc RandomDoc(std::mt19937* rng) {
  std::uniform_int_distribution<int> coin(0, 2);
  Doc doc{{RandomText(rng), 1.0f}};
  if (coin(*rng) == 0) doc.push_back({RandomText(rng), 2.0f});  // a weighted title
  return doc;
}

void ExpectEqualsModel(const KeywordIndex& index, const Model& model) {
  std::map<std::string, std::map<uint64_t, double>> postings;
  std::map<uint64_t, double> lengths;
  model.Recount(&postings, &lengths);
  std::vector<std::string> terms;
  uint64_t count = 0;
  for (const auto& [term, list] : postings) {
    terms.push_back(term);
    count += list.size();
  }
  ASSERT_EQ(index.Terms(), terms);
  for (const auto& [term, list] : postings) {
    TermPostings actual = index.Postings(term);
    ASSERT_EQ(actual.size(), list.size()) << term;
    size_t i = 0;
    for (const auto& [id, tf] : list) {
      EXPECT_EQ(actual[i].first, id) << term;
      EXPECT_FLOAT_EQ(actual[i].second, static_cast<float>(tf)) << term;
      ++i;
    }
  }
  std::vector<uint64_t> ids;
  double total = 0;
  for (const auto& [id, len] : lengths) {
    ids.push_back(id);
    total += len;
    EXPECT_FLOAT_EQ(static_cast<float>(index.DocumentLength(id)), static_cast<float>(len));
  }
  EXPECT_EQ(index.Ids(), ids);
  KeywordStats stats = index.Stats();
  EXPECT_EQ(stats.documents, ids.size());
  EXPECT_EQ(stats.terms, terms.size());
  EXPECT_EQ(stats.postings, count);
  if (!ids.empty()) EXPECT_NEAR(stats.average_length, total / ids.size(), 1e-6 * (1 + total));
}

void ExpectScoresMatchModel(const KeywordIndex& index, const Model& model,
                            const std::string& query) {
  std::map<uint64_t, double> expected = model.Scores(query, index.options().k1, index.options().b);
  auto hits = index.Search(query, kMaxSearchK);
  ASSERT_TRUE(hits.ok()) << hits.status();
  ASSERT_EQ(hits->size(), expected.size()) << query;
  for (size_t i = 0; i < hits->size(); ++i) {
    const KeywordHit& h = (*hits)[i];
    ASSERT_TRUE(expected.count(h.id)) << query;
    EXPECT_NEAR(h.score, expected[h.id], 1e-5 * expected[h.id]) << query << " id " << h.id;
    if (i > 0) {  // best first, ties by id
      const KeywordHit& prev = (*hits)[i - 1];
      EXPECT_TRUE(prev.score > h.score || (prev.score == h.score && prev.id < h.id));
    }
  }
}

TEST(KeywordIndexTest, RandomUpsertsAndRemovesEqualARecount) {
  for (AnalyzerKind kind : {AnalyzerKind::kEnglish, AnalyzerKind::kSimple, AnalyzerKind::kNone}) {
    SCOPED_TRACE(std::string(AnalyzerKindName(kind)));
    std::mt19937 rng(42 + static_cast<int>(kind));
    auto index = *KeywordIndex::Create({kind, 1.2, 0.75});
    Model model(kind);
    std::uniform_int_distribution<uint64_t> id(0, 150);
    std::uniform_int_distribution<int> op(0, 9);
    for (int step = 0; step < 1500; ++step) {
      const uint64_t target = id(rng) * 1000003;  // sparse 64-bit ids
      if (op(rng) < 3) {
        EXPECT_EQ(index->Remove(target), model.docs.erase(target) == 1);
      } else {
        Doc doc = RandomDoc(&rng);
        ASSERT_TRUE(Apply(index.get(), target, doc).ok());
        model.docs[target] = doc;
      }
      if (step % 300 == 299) {
        ExpectEqualsModel(*index, model);
        ExpectScoresMatchModel(*index, model, "rapid studies of bone density in mice");
        ExpectScoresMatchModel(*index, model, "covid-19 il-6 β-cell 東京 cell cell");
      }
    }
    ExpectEqualsModel(*index, model);

    // Save/Load: same content, same scores, same digest.
    const std::unique_ptr<Env> mem = NewMemEnv();
    ASSERT_TRUE(index->Save("/roundtrip", 777, mem.get()).ok());
    auto loaded = KeywordIndex::Load("/roundtrip", mem.get());
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->covered_seq, 777u);
    EXPECT_EQ(loaded->index->options().analyzer, kind);
    EXPECT_EQ(loaded->index->options().k1, 1.2);
    EXPECT_EQ(loaded->index->options().b, 0.75);
    ExpectEqualsModel(*loaded->index, model);
    ExpectScoresMatchModel(*loaded->index, model, "gene genes protein x-ray données");
    EXPECT_EQ(loaded->index->Digest(), index->Digest());
    // Operations keep working on a loaded index.
    ASSERT_TRUE(Apply(loaded->index.get(), 5, {{"new protein study", 1.0f}}).ok());
    model.docs[5] = {{"new protein study", 1.0f}};
    ExpectEqualsModel(*loaded->index, model);

    // The digest depends on content only: a fresh build in another order agrees.
    auto rebuilt = *KeywordIndex::Create({kind, 1.2, 0.75});
    for (auto it = model.docs.rbegin(); it != model.docs.rend(); ++it) {
      ASSERT_TRUE(Apply(rebuilt.get(), it->first, it->second).ok());
    }
    EXPECT_EQ(rebuilt->Digest(), loaded->index->Digest());
    ASSERT_TRUE(rebuilt->Remove(5));
    EXPECT_NE(rebuilt->Digest(), loaded->index->Digest());
  }
}

TEST(KeywordIndexTest, ConcurrentWritersAndReaders) {
  auto index = *KeywordIndex::Create({});
  std::vector<std::map<uint64_t, Doc>> finals(2);
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937 rng(100 + w);
      for (int step = 0; step < 400; ++step) {
        const uint64_t id = static_cast<uint64_t>(w) * 1000 + rng() % 50;  // disjoint ranges
        if (rng() % 4 == 0) {
          index->Remove(id);
          finals[w].erase(id);
        } else {
          Doc doc = RandomDoc(&rng);
          ASSERT_TRUE(Apply(index.get(), id, doc).ok());
          finals[w][id] = doc;
        }
      }
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&] {
      for (int i = 0; i < 300; ++i) {
        auto hits = index->Search("rapid protein covid-19 mice", 10);
        ASSERT_TRUE(hits.ok());
        ASSERT_LE(hits->size(), 10u);
        (void)index->Stats();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  Model model(AnalyzerKind::kEnglish);
  for (const auto& f : finals) model.docs.insert(f.begin(), f.end());
  ExpectEqualsModel(*index, model);
  ExpectScoresMatchModel(*index, model, "rapid protein covid-19 mice");
}

TEST(KeywordIndexTest, TitleWeightCountsTwiceInTfAndLength) {
  auto index = *KeywordIndex::Create({});
  std::vector<FieldText> fields = {{"bone density", 1.0f}, {"Bone loss", 2.0f}};
  ASSERT_TRUE(index->Upsert(9, fields).ok());
  EXPECT_EQ(index->Postings("bone"), (TermPostings{{9, 3.0f}}));
  EXPECT_EQ(index->Postings("loss"), (TermPostings{{9, 2.0f}}));
  EXPECT_DOUBLE_EQ(index->DocumentLength(9), 2 + 2 * 2);
}

TEST(KeywordIndexTest, FilterAppliesBeforeTopK) {
  auto index = *KeywordIndex::Create({});
  Model model(AnalyzerKind::kEnglish);
  std::mt19937 rng(3);
  for (uint64_t id = 0; id < 400; ++id) {
    Doc doc{{RandomText(&rng) + " protein", 1.0f}};  // every document matches
    ASSERT_TRUE(Apply(index.get(), id, doc).ok());
    model.docs[id] = doc;
  }
  std::map<uint64_t, double> scores = model.Scores("protein bone density", 0.9, 0.4);
  auto allow = [](uint64_t id) { return id % 7 == 3; };  // 57 of 400
  std::vector<std::pair<double, uint64_t>> allowed;
  for (const auto& [id, s] : scores) {
    if (allow(id)) allowed.emplace_back(-s, id);
  }
  std::sort(allowed.begin(), allowed.end());
  for (int k : {1, 10, 56, 57, 58, 500}) {
    auto hits = index->Search("protein bone density", k, allow);
    ASSERT_TRUE(hits.ok());
    ASSERT_EQ(hits->size(), std::min<size_t>(k, allowed.size())) << k;
    for (size_t i = 0; i < hits->size(); ++i) {
      EXPECT_EQ((*hits)[i].id, allowed[i].second) << k << " " << i;
    }
  }
  auto none = index->Search("protein", 10, [](uint64_t) { return false; });
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(KeywordIndexTest, ShardsRankedByTheWholeCorpusScoreAsOneIndex) {
  // Three shards of one corpus: each shard's search with the summed
  // statistics gives every document the score the whole index gives it, and
  // statistics restricted by a filter on the whole index equal a shard's.
  auto whole = *KeywordIndex::Create({});
  std::vector<std::unique_ptr<KeywordIndex>> shards;
  for (int s = 0; s < 3; ++s) shards.push_back(*KeywordIndex::Create({}));
  std::mt19937 rng(11);
  for (uint64_t id = 0; id < 300; ++id) {
    const std::string text = RandomText(&rng) + (id % 5 == 0 ? " protein" : "");
    ASSERT_TRUE(whole->Upsert(id, text).ok());
    ASSERT_TRUE(shards[id % 3]->Upsert(id, text).ok());
  }
  const std::string query = "protein bone density protein";
  CorpusStats sum;
  for (int s = 0; s < 3; ++s) {
    CorpusStats part = shards[s]->TermStatistics(query);
    const CorpusStats filtered =
        whole->TermStatistics(query, [s](uint64_t id) { return id % 3 == static_cast<uint64_t>(s); });
    EXPECT_EQ(part.documents, filtered.documents);
    EXPECT_DOUBLE_EQ(part.total_length, filtered.total_length);
    EXPECT_EQ(part.document_frequency, filtered.document_frequency);
    sum.documents += part.documents;
    sum.total_length += part.total_length;
    for (const auto& [term, df] : part.document_frequency) sum.document_frequency[term] += df;
  }
  const CorpusStats all = whole->TermStatistics(query);
  EXPECT_EQ(sum.documents, all.documents);
  EXPECT_EQ(sum.document_frequency, all.document_frequency);
  EXPECT_EQ(all.document_frequency.size(), 3u);  // "protein" twice in the query, once here
  std::map<uint64_t, float> expected;
  const auto whole_hits = whole->Search(query, 300);
  ASSERT_TRUE(whole_hits.ok());
  for (const KeywordHit& h : *whole_hits) expected[h.id] = h.score;
  auto score_of = [&expected](uint64_t id) {
    auto it = expected.find(id);
    EXPECT_NE(it, expected.end()) << id << " found in a shard, not in the whole index";
    return it == expected.end() ? -1.0f : it->second;
  };
  size_t seen = 0;
  for (int s = 0; s < 3; ++s) {
    const auto with_sum = shards[s]->Search(query, 300, nullptr, &sum);
    ASSERT_TRUE(with_sum.ok());
    for (const KeywordHit& h : *with_sum) {
      EXPECT_FLOAT_EQ(h.score, score_of(h.id)) << h.id;
      ++seen;
    }
    // Without them a shard ranks by its own statistics: other scores.
    bool differs = false;
    const auto own = shards[s]->Search(query, 300);
    ASSERT_TRUE(own.ok());
    for (const KeywordHit& h : *own) {
      differs = differs || std::abs(h.score - score_of(h.id)) > 1e-4f;
    }
    EXPECT_TRUE(differs) << s;
  }
  EXPECT_EQ(seen, expected.size());
  // Hostile statistics (df above N, N of 0) never make a score undefined.
  CorpusStats bad;
  bad.documents = 2;
  bad.total_length = 10;
  bad.document_frequency["protein"] = 1000;
  const auto hostile = shards[0]->Search(query, 10, nullptr, &bad);
  ASSERT_TRUE(hostile.ok());
  for (const KeywordHit& h : *hostile) {
    EXPECT_TRUE(std::isfinite(h.score));
  }
  bad.documents = 0;
  EXPECT_TRUE(shards[0]->Search(query, 10, nullptr, &bad).ok());
}

TEST(KeywordIndexTest, APartsOwnStatisticsScoreItAsAnIndexOfItsOwn) {
  // A tenant's documents inside a larger index: SearchAmong their ids with
  // their statistics (TermStatistics over the ids) gives the scores an index
  // holding them alone gives, and the same hits as Search with a filter.
  auto whole = *KeywordIndex::Create({});
  auto alone = *KeywordIndex::Create({});
  std::mt19937 rng(17);
  std::vector<int64_t> part;
  for (uint64_t id = 0; id < 600; ++id) {
    const std::string text = RandomText(&rng) + (id % 3 == 0 ? " protein" : "");
    ASSERT_TRUE(whole->Upsert(id, text).ok());
    if (id % 11 == 4) {
      ASSERT_TRUE(alone->Upsert(id, text).ok());
      part.push_back(static_cast<int64_t>(id));
    }
  }
  const std::set<int64_t> members(part.begin(), part.end());
  const IdFilter in_part = [&members](uint64_t id) { return members.contains(static_cast<int64_t>(id)); };
  for (const std::string query : {"protein", "protein bone density", "cell"}) {
    const CorpusStats stats = whole->TermStatistics(query, part);
    EXPECT_TRUE(stats.part_of_index);
    EXPECT_EQ(stats.documents, part.size());
    const auto among = whole->SearchAmong(query, 100, part, nullptr, &stats);
    const auto filtered = whole->Search(query, 100, in_part, &stats);
    const auto own = alone->Search(query, 100);
    ASSERT_TRUE(among.ok() && filtered.ok() && own.ok());
    ASSERT_EQ(among->size(), own->size()) << query;
    ASSERT_EQ(filtered->size(), own->size()) << query;
    for (size_t i = 0; i < own->size(); ++i) {
      EXPECT_EQ((*among)[i].id, (*own)[i].id) << query << " " << i;
      EXPECT_NEAR((*among)[i].score, (*own)[i].score, 1e-5 * (*own)[i].score) << query;
      EXPECT_EQ((*filtered)[i].id, (*own)[i].id) << query << " " << i;
      EXPECT_NEAR((*filtered)[i].score, (*own)[i].score, 1e-5 * (*own)[i].score) << query;
    }
  }
}

TEST(KeywordIndexTest, EdgeCases) {
  EXPECT_EQ(KeywordIndex::Create({AnalyzerKind::kEnglish, -1, 0.4}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(KeywordIndex::Create({AnalyzerKind::kEnglish, NAN, 0.4}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(KeywordIndex::Create({AnalyzerKind::kEnglish, 0.9, 1.5}).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto index = *KeywordIndex::Create({});
  // Empty index, empty query, bad k.
  EXPECT_TRUE(index->Search("anything", 5)->empty());
  ASSERT_TRUE(index->Upsert(1, "").ok());            // an empty document is a document
  ASSERT_TRUE(index->Upsert(2, "the of and").ok());  // stop words only: empty too
  EXPECT_EQ(index->Stats().documents, 2u);
  EXPECT_EQ(index->Stats().terms, 0u);
  ASSERT_TRUE(index->Upsert(3, "real words").ok());
  EXPECT_TRUE(index->Search("", 5)->empty());
  EXPECT_TRUE(index->Search("the", 5)->empty());
  EXPECT_EQ(index->Search("real", 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(index->Search("real", kMaxSearchK + 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_EQ(index->Search("real", 5)->size(), 1u);
  std::vector<FieldText> bad = {{"x", 0.0f}};
  EXPECT_EQ(index->Upsert(4, bad).code(), absl::StatusCode::kInvalidArgument);
  bad[0].weight = NAN;
  EXPECT_EQ(index->Upsert(4, bad).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(index->Contains(4));
  EXPECT_FALSE(index->Remove(4));
  // Removing the last holder of a term frees it.
  ASSERT_TRUE(index->Remove(3));
  EXPECT_TRUE(index->Terms().empty());
  EXPECT_TRUE(index->Search("real", 5)->empty());
}

// Snapshots in a memory Env: the bytes are all these tests look at.
class KeywordSnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto index = *KeywordIndex::Create({AnalyzerKind::kEnglish, 0.9, 0.4});
    std::mt19937 rng(11);
    for (uint64_t id = 0; id < 60; ++id) ASSERT_TRUE(Apply(index.get(), id, RandomDoc(&rng)).ok());
    ASSERT_TRUE(index->Save(path_, 5, env_.get()).ok());
    bytes_ = *ReadFileToString(env_.get(), path_);
  }
  void WriteBytes(const std::string& b) {
    ASSERT_TRUE(WriteFileAtomically(env_.get(), path_, {b}).ok());
  }
  absl::StatusOr<KeywordIndex::Loaded> Load(const std::string& path) {
    return KeywordIndex::Load(path, env_.get());
  }
  const std::unique_ptr<Env> env_ = NewMemEnv();
  const std::string path_ = "/keyword.snapshot";
  std::string bytes_;
};

TEST_F(KeywordSnapshotTest, TruncatedFilesAreRefused) {
  ASSERT_GT(bytes_.size(), 100u);
  for (size_t len = 0; len < bytes_.size(); len += std::max<size_t>(1, bytes_.size() / 97)) {
    WriteBytes(bytes_.substr(0, len));
    EXPECT_EQ(Load(path_).status().code(), absl::StatusCode::kDataLoss) << len;
  }
  WriteBytes(bytes_.substr(0, bytes_.size() - 1));
  EXPECT_EQ(Load(path_).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(KeywordSnapshotTest, CorruptFilesAreRefused) {
  for (size_t pos = 0; pos < bytes_.size(); pos += std::max<size_t>(1, bytes_.size() / 211)) {
    std::string corrupt = bytes_;
    corrupt[pos] ^= 0x21;
    WriteBytes(corrupt);
    auto loaded = Load(path_);
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss) << pos;
  }
  WriteBytes(bytes_ + "x");
  EXPECT_EQ(Load(path_).status().code(), absl::StatusCode::kDataLoss);
  WriteBytes(bytes_);
  EXPECT_TRUE(Load(path_).ok());
  EXPECT_EQ(Load(path_ + ".missing").status().code(), absl::StatusCode::kNotFound);
  // Save leaves no temp file behind.
  EXPECT_FALSE(FileExists(env_.get(), path_ + ".tmp"));
}

}  // namespace
}  // namespace neodb::keyword
