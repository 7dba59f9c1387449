// External-vector collections: the client's vectors are stored and returned
// bit for bit; wrong dimensions, non-finite values, missing vectors and
// near-text without a query model are refused; a query model's id must be
// what the vectors claim; the source persists across a restart.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "absl/strings/str_cat.h"
#include "engine/database.h"
#include "tests/engine/engine_test_util.h"
#include "engine/fake_embedder.h"
#include "gtest/gtest.h"

namespace neodb::engine {
namespace {

namespace fs = std::filesystem;
using ::absl::StatusCode;

constexpr int kDim = 8;
const absl::Time kFar = absl::InfiniteFuture();

class ExternalVectorsTest : public EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    Open();
  }
  void Open() {
    DatabaseOptions o = BaseOptions();
    // A model directory "<n>" loads the fake model of seed n.
    o.embedder_factory = [](const std::string& d,
                            encoder::Precision) -> absl::StatusOr<std::unique_ptr<Embedder>> {
      return std::unique_ptr<Embedder>(new FakeEmbedder(kDim, 32, std::stoull(d)));
    };
    OpenWith(o, std::make_unique<FakeEmbedder>(kDim, 32, 1));
  }
  absl::StatusOr<CollectionInfo> CreateExternal(const std::string& name, uint32_t dim,
                                                const std::string& vectors_name = "",
                                                const std::string& query_model = "",
                                                const std::string& index = "Flat") {
    db::CollectionSpec spec;
    spec.name = name;
    spec.index_spec = index;
    VectorOptions v;
    v.source = VectorSource::kExternal;
    v.dimension = dim;
    v.name = vectors_name;
    v.query_model = query_model;
    return db_->CreateCollection(spec, v);
  }
  static DocumentInput Doc(const std::string& id, std::vector<float> v,
                           const std::string& text = "") {
    DocumentInput d;
    d.id = id;
    d.text = text;
    d.vector = std::move(v);
    return d;
  }
  // Awkward values on purpose: non-round decimals, a subnormal, negative zero,
  // huge and tiny magnitudes. None survives a lossy path unchanged.
  static std::vector<float> Awkward(int i) {
    std::vector<float> v = {0.1f * static_cast<float>(i + 1),
                            -1.0f / 3.0f,
                            std::numeric_limits<float>::denorm_min(),
                            -0.0f,
                            1.5e18f,
                            1e-30f,
                            static_cast<float>(M_PI) * static_cast<float>(i),
                            -2.5f};
    return v;
  }
  static bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
  }

};

TEST_F(ExternalVectorsTest, VectorsComeBackBitForBit) {
  auto info = CreateExternal("e", kDim, "my-encoder", "", "HNSW16");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->spec.model_id, "external:my-encoder");
  EXPECT_EQ(info->spec.dimension, static_cast<uint32_t>(kDim));
  EXPECT_EQ(info->spec.vector_source, "external");
  std::vector<DocumentInput> docs;
  for (int i = 0; i < 20; ++i) docs.push_back(Doc(absl::StrCat("d", i), Awkward(i)));
  docs[3].text = "has a text too";
  ASSERT_TRUE(db_->Upsert("e", docs, kFar).ok());

  auto got = db_->Get("e", {"d0", "d3", "d19"});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(SameBits((*got)[0]->vector, Awkward(0)));
  EXPECT_TRUE(SameBits((*got)[2]->vector, Awkward(19)));
  EXPECT_EQ((*got)[1]->text, "has a text too");
  EXPECT_EQ((*got)[1]->model_id, "external:my-encoder");

  SearchParams q;
  q.k = 20;
  q.include_vector = true;
  auto r = db_->NearVector("e", Awkward(5), q);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->hits.size(), 20u);
  EXPECT_EQ(r->model_id, "external:my-encoder");
  for (const Hit& h : r->hits) {
    const int i = std::stoi(h.id.substr(1));
    EXPECT_TRUE(SameBits(h.vector, Awkward(i))) << h.id;
  }
  // Without include_vector, no vector.
  q.include_vector = false;
  r = db_->NearVector("e", Awkward(5), q);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->hits[0].vector.empty());

  // A restart (snapshot + store) keeps the source, the name and the bits.
  Open();
  auto again = db_->DescribeCollection("e");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->spec.vector_source, "external");
  EXPECT_EQ(again->spec.model_id, "external:my-encoder");
  auto page = db_->List("e", "", 100);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->documents.size(), 20u);
  for (const auto& d : page->documents) {
    EXPECT_TRUE(SameBits(d.vector, Awkward(std::stoi(d.id.substr(1))))) << d.id;
  }
  auto v = db_->Verify("e");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->stored, 20u);
  EXPECT_EQ(v->indexed, 20u);
  EXPECT_EQ(v->foreign_model, 0u);
  EXPECT_EQ(v->model_id, "external:my-encoder");
}

TEST_F(ExternalVectorsTest, BadVectorsAreRefused) {
  ASSERT_TRUE(CreateExternal("e", 4).ok());
  auto code = [&](DocumentInput d) { return db_->Upsert("e", {std::move(d)}, kFar).status(); };
  absl::Status s = code(Doc("a", {1, 2, 3}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("has 3 values"), std::string::npos) << s;
  EXPECT_NE(s.message().find("dimension 4"), std::string::npos) << s;
  s = code(Doc("a", {1, 2, 3, 4, 5}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  s = code(Doc("a", {1, std::nanf(""), 3, 4}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("non-finite"), std::string::npos) << s;
  s = code(Doc("a", {1, 2, std::numeric_limits<float>::infinity(), 4}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  s = code(Doc("a", {0, 0, 0, 0}));  // cosine: no direction
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  s = code(Doc("a", {3e38f, 1, 1, 1}));  // cosine: the norm overflows
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  DocumentInput text_only;
  text_only.id = "a";
  text_only.text = "words only";
  s = code(text_only);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("has no vector"), std::string::npos) << s;
  s = code(Doc("a", {1, 2, 3, 4}, std::string("\xff\xfe", 2)));  // invalid UTF-8 text
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // All or nothing: one bad document in a batch stores none.
  s = db_->Upsert("e", {Doc("ok", {1, 2, 3, 4}), Doc("bad", {1, 2})}, kFar).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  auto info = db_->DescribeCollection("e");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->count, 0u);
  // The query vector is checked too.
  SearchParams q;
  EXPECT_EQ(db_->NearVector("e", {1, 2}, q).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(db_->NearVector("e", {1, 2, 3, std::nanf("")}, q).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(ExternalVectorsTest, NearTextAndReindexAreRefusedWithoutAQueryModel) {
  ASSERT_TRUE(CreateExternal("e", 4).ok());
  ASSERT_TRUE(db_->Upsert("e", {Doc("a", {1, 2, 3, 4}, "hello")}, kFar).ok());
  auto r = db_->NearText("e", "hello", std::nullopt, SearchParams(), kFar);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("near-vector"), std::string::npos) << r.status();
  absl::Status s = db_->Reindex("e", "");
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("cannot re-embed"), std::string::npos) << s;
}

TEST_F(ExternalVectorsTest, CreationOptionsAreChecked) {
  EXPECT_EQ(CreateExternal("e", 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CreateExternal("e", 70000).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CreateExternal("e", 4, "bad name").status().code(), StatusCode::kInvalidArgument);
  // A query model of another dimension, or not the model the vectors claim.
  EXPECT_EQ(CreateExternal("e", 4, "", "default").status().code(), StatusCode::kInvalidArgument);
  auto s = CreateExternal("e", kDim, "someone-else", "default").status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("fake-8-1"), std::string::npos) << s;
  // Model collections take none of the external options.
  db::CollectionSpec spec;
  spec.name = "m";
  VectorOptions v;
  v.dimension = 4;
  EXPECT_EQ(db_->CreateCollection(spec, v).status().code(), StatusCode::kInvalidArgument);
  // And no vectors in their documents.
  ASSERT_TRUE(db_->CreateCollection(spec).ok());
  s = db_->Upsert("m", {Doc("a", std::vector<float>(kDim, 1.0f), "text")}, kFar).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("embeds its texts"), std::string::npos) << s;
}

// An export of a model collection (texts with their vectors and the model id
// that made them) goes back into a collection on the same model without
// embedding again; vectors of another model, or without a model id, are refused.
TEST_F(ExternalVectorsTest, AModelCollectionTakesVectorsOfItsOwnModel) {
  db::CollectionSpec spec;
  spec.name = "src";
  ASSERT_TRUE(db_->CreateCollection(spec).ok());
  std::vector<DocumentInput> docs;
  for (int i = 0; i < 12; ++i) {
    DocumentInput d;
    d.id = absl::StrCat("d", i);
    d.text = absl::StrCat("document number ", i, " about topic ", i % 3);
    docs.push_back(d);
  }
  ASSERT_TRUE(db_->Upsert("src", docs, kFar).ok());
  auto page = db_->List("src", "", 100);
  ASSERT_TRUE(page.ok()) << page.status();
  const std::string model_id = page->documents[0].model_id;
  ASSERT_FALSE(model_id.empty());

  spec.name = "copy";
  ASSERT_TRUE(db_->CreateCollection(spec).ok());
  std::vector<DocumentInput> exported;
  for (const db::Document& d : page->documents) {
    DocumentInput x;
    x.id = d.id;
    x.text = d.text;
    x.vector = d.vector;
    x.vector_model_id = d.model_id;
    exported.push_back(x);
  }
  // One document without a vector in the batch: embedded as usual.
  exported[4].vector.reset();
  exported[4].vector_model_id.clear();
  int64_t tokens = -1;
  ASSERT_TRUE(db_->Upsert("copy", exported, kFar, &tokens).ok());
  int64_t one_doc_tokens = -1;
  ASSERT_TRUE(db_->Upsert("src", {docs[4]}, kFar, &one_doc_tokens).ok());
  EXPECT_EQ(tokens, one_doc_tokens);  // only the document without a vector was embedded
  auto copy = db_->List("copy", "", 100);
  ASSERT_TRUE(copy.ok());
  ASSERT_EQ(copy->documents.size(), page->documents.size());
  for (size_t i = 0; i < copy->documents.size(); ++i) {
    EXPECT_EQ(copy->documents[i].id, page->documents[i].id);
    EXPECT_TRUE(SameBits(copy->documents[i].vector, page->documents[i].vector))
        << copy->documents[i].id;
    EXPECT_EQ(copy->documents[i].model_id, model_id);
  }
  SearchParams q;
  q.k = 5;
  auto a = db_->NearText("src", "topic 2", std::nullopt, q, kFar);
  auto b = db_->NearText("copy", "topic 2", std::nullopt, q, kFar);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->hits.size(), b->hits.size());
  for (size_t i = 0; i < a->hits.size(); ++i) EXPECT_EQ(a->hits[i].id, b->hits[i].id);
  auto v = db_->Verify("copy");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->foreign_model, 0u);
  EXPECT_EQ(v->indexed, 12u);

  // Refused: another model's vectors, a vector without its model id, a wrong
  // dimension; and an external collection refuses a model id it does not hold.
  auto refused = [&](const std::string& c, DocumentInput d, const char* words) {
    absl::Status s = db_->Upsert(c, {std::move(d)}, kFar).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find(words), std::string::npos) << s;
  };
  DocumentInput d = exported[0];
  d.vector_model_id = "nb-0123456789abcdef";
  refused("copy", d, "carries a vector of 'nb-0123456789abcdef'");
  d.vector_model_id.clear();
  refused("copy", d, "embeds its texts");
  d.vector_model_id = model_id;
  d.vector = std::vector<float>(kDim + 1, 0.5f);
  refused("copy", d, "values");
  ASSERT_TRUE(CreateExternal("e", kDim, "mine").ok());
  refused("e", exported[0], "holds vectors of 'external:mine'");
}

TEST_F(ExternalVectorsTest, AQueryModelEmbedsNearTextAgainstItsOwnVectors) {
  // The client computed its vectors with the same model the server has.
  auto info = CreateExternal("e", kDim, "fake-8-1", "default");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->spec.model_id, "fake-8-1");
  const std::vector<std::string> texts = {"red apple", "green pear", "blue sky"};
  encoder::EmbedOptions o;  // the collection's defaults: mean pooling, no prefix
  o.normalize = false;
  auto e = db_->Embed(texts, o, kFar);
  ASSERT_TRUE(e.ok()) << e.status();
  std::vector<DocumentInput> docs;
  for (size_t i = 0; i < texts.size(); ++i) docs.push_back(Doc(texts[i], (*e)[i].vector));
  ASSERT_TRUE(db_->Upsert("e", docs, kFar).ok());
  SearchParams q;
  q.k = 1;
  auto r = db_->NearText("e", "green pear", std::nullopt, q, kFar);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->hits.size(), 1u);
  EXPECT_EQ(r->hits[0].id, "green pear");
  EXPECT_EQ(r->model_id, "fake-8-1");
}

TEST_F(ExternalVectorsTest, AQueryModelDirectoryIsKeptAcrossARestart) {
  auto info = CreateExternal("e", kDim, "", "2");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->spec.model_id, "fake-8-2");
  EXPECT_EQ(info->spec.model_dir, "2");
  // The client's vectors are model 2's (the fake is deterministic, so a
  // second instance computes the same ones).
  FakeEmbedder two(kDim, 32, 2);
  encoder::EmbedOptions o;
  o.normalize = false;
  auto e = two.Embed({"red apple", "blue sky"}, o);
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE(
      db_->Upsert("e", {Doc("a", (*e)[0].vector, "red apple"), Doc("b", (*e)[1].vector)}, kFar)
          .ok());
  Open();
  SearchParams q;
  q.k = 1;
  auto r = db_->NearText("e", "blue sky", std::nullopt, q, kFar);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->hits.size(), 1u);
  EXPECT_EQ(r->hits[0].id, "b");
  EXPECT_EQ(r->model_id, "fake-8-2");
  // Still external: a document without a vector is refused, reindex too.
  DocumentInput text_only;
  text_only.id = "c";
  text_only.text = "green pear";
  EXPECT_EQ(db_->Upsert("e", {text_only}, kFar).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(db_->Reindex("e", "").code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace neodb::engine
