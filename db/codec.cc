#include "db/codec.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace neodb::db {
namespace {

// Record format versions (first byte of every encoded value).
constexpr uint8_t kDocumentVersion = 1;
// Spec v2 appends model_dir and engine_state; v1 records decode with them
// empty. v3 appends vector_source and the keyword settings; v1 and v2 records
// decode as "model" with the keyword defaults. v4 appends precision; v1..v3
// records decode as "f32" (all vectors were computed in F32 before it). v5
// appends the default fusion and its alpha; v1..v4 decode as adaptive / 0.5.
// v6 appends previous_model_dir; v1..v5 decode with it empty. v7 appends
// multi_tenant (one byte, 0 or 1); v1..v6 decode as single-tenant.
constexpr uint8_t kSpecVersion = 7;
constexpr uint8_t kSpecVersionV6 = 6;
constexpr uint8_t kSpecVersionV5 = 5;
constexpr uint8_t kSpecVersionV4 = 4;
constexpr uint8_t kSpecVersionV3 = 3;
constexpr uint8_t kSpecVersionV2 = 2;
constexpr uint8_t kSpecVersionV1 = 1;
constexpr uint8_t kChangelogVersion = 1;

// A value's tag is its index in db::Value; append only. Tags 4..7 came with
// arrays, objects, datetimes and geo points: records written before them use
// 0..3 only and decode unchanged.
enum ValueTag : uint8_t {
  kTagString = 0,
  kTagInt = 1,
  kTagDouble = 2,
  kTagBool = 3,
  kTagArray = 4,     // varint count, then tag + value per item
  kTagObject = 5,    // varint count, then key + tag + value per field
  kTagDateTime = 6,  // fixed64 micros
  kTagGeo = 7,       // fixed64 lat bits, fixed64 lon bits
};
static_assert(std::variant_size_v<Value> == 8, "a new Value type needs a tag here");

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutFixed64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

void PutString(std::string* out, std::string_view s) {
  PutVarint(out, s.size());
  out->append(s);
}

// Bounds-checked reader: every getter returns false instead of reading past the end.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool Byte(uint8_t* v) {
    if (in_.empty()) return false;
    *v = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return true;
  }
  bool Varint(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift <= 63; shift += 7) {
      uint8_t b;
      if (!Byte(&b)) return false;
      if (shift == 63 && (b & 0x7e) != 0) return false;  // overflows 64 bits
      result |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        *v = result;
        return true;
      }
    }
    return false;
  }
  bool Fixed64(uint64_t* v) {
    if (in_.size() < 8) return false;
    uint64_t r = 0;
    for (int i = 0; i < 8; ++i) r |= static_cast<uint64_t>(static_cast<uint8_t>(in_[i])) << (8 * i);
    in_.remove_prefix(8);
    *v = r;
    return true;
  }
  bool String(std::string* s, uint64_t max_len) {
    uint64_t n;
    if (!Varint(&n) || n > max_len || n > in_.size()) return false;
    s->assign(in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  bool Bytes(void* dst, size_t n) {
    if (n > in_.size()) return false;
    if (n == 0) return true;  // dst may be null (empty vector)
    std::memcpy(dst, in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  bool done() const { return in_.empty(); }
  size_t remaining() const { return in_.size(); }

 private:
  std::string_view in_;
};

absl::Status Corrupt(std::string_view what, std::string_view detail) {
  return absl::DataLossError(
      absl::StrCat("corrupt ", std::string(what), " record: ", std::string(detail)));
}

constexpr uint64_t kMaxStringBytes = 1ull << 31;
// Nesting a decoder accepts: ValidateMetadata's cap plus headroom (arrays
// and the top level); bounds the recursion on corrupt input.
constexpr int kMaxDecodeDepth = kMaxMetadataDepth + 4;

uint64_t DoubleBits(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return bits;
}

double BitsDouble(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

void PutValue(std::string* out, const Value& value) {
  out->push_back(static_cast<char>(value.index()));
  switch (value.index()) {
    case kTagString:
      PutString(out, std::get<std::string>(value));
      break;
    case kTagInt:
      PutFixed64(out, static_cast<uint64_t>(std::get<int64_t>(value)));
      break;
    case kTagDouble:
      PutFixed64(out, DoubleBits(std::get<double>(value)));
      break;
    case kTagBool:
      out->push_back(std::get<bool>(value) ? 1 : 0);
      break;
    case kTagArray: {
      const auto& items = std::get<Array>(value).items;
      PutVarint(out, items.size());
      for (const Value& v : items) PutValue(out, v);
      break;
    }
    case kTagObject: {
      const Metadata& fields = std::get<Object>(value).fields;
      PutVarint(out, fields.size());
      for (const auto& [k, v] : fields) {
        PutString(out, k);
        PutValue(out, v);
      }
      break;
    }
    case kTagDateTime:
      PutFixed64(out, static_cast<uint64_t>(std::get<DateTime>(value).micros));
      break;
    case kTagGeo:
      PutFixed64(out, DoubleBits(std::get<GeoPoint>(value).lat));
      PutFixed64(out, DoubleBits(std::get<GeoPoint>(value).lon));
      break;
  }
}

// Reads the value after its tag byte.
absl::Status ReadValue(Reader* r, uint8_t tag, int depth, Value* value) {
  if (depth > kMaxDecodeDepth) return Corrupt("document", "metadata nested too deeply");
  switch (tag) {
    case kTagString: {
      std::string s;
      if (!r->String(&s, kMaxStringBytes)) return Corrupt("document", "metadata string");
      *value = std::move(s);
      return absl::OkStatus();
    }
    case kTagInt: {
      uint64_t v;
      if (!r->Fixed64(&v)) return Corrupt("document", "metadata int");
      *value = static_cast<int64_t>(v);
      return absl::OkStatus();
    }
    case kTagDouble: {
      uint64_t bits;
      if (!r->Fixed64(&bits)) return Corrupt("document", "metadata double");
      *value = BitsDouble(bits);
      return absl::OkStatus();
    }
    case kTagBool: {
      uint8_t b;
      if (!r->Byte(&b) || b > 1) return Corrupt("document", "metadata bool");
      *value = (b == 1);
      return absl::OkStatus();
    }
    case kTagArray: {
      uint64_t n;
      if (!r->Varint(&n) || n > r->remaining()) return Corrupt("document", "metadata array size");
      Array a;
      a.items.resize(n);
      for (Value& item : a.items) {
        uint8_t t;
        if (!r->Byte(&t)) return Corrupt("document", "metadata array item");
        RETURN_IF_ERROR(ReadValue(r, t, depth + 1, &item));
      }
      *value = std::move(a);
      return absl::OkStatus();
    }
    case kTagObject: {
      uint64_t n;
      if (!r->Varint(&n) || n > r->remaining()) return Corrupt("document", "metadata object size");
      Object o;
      for (uint64_t i = 0; i < n; ++i) {
        std::string k;
        uint8_t t;
        if (!r->String(&k, kMaxStringBytes) || !r->Byte(&t)) {
          return Corrupt("document", "metadata object key");
        }
        Value v;
        RETURN_IF_ERROR(ReadValue(r, t, depth + 1, &v));
        if (!o.fields.emplace(std::move(k), std::move(v)).second) {
          return Corrupt("document", "duplicate metadata object key");
        }
      }
      *value = std::move(o);
      return absl::OkStatus();
    }
    case kTagDateTime: {
      uint64_t v;
      if (!r->Fixed64(&v)) return Corrupt("document", "metadata datetime");
      *value = DateTime{static_cast<int64_t>(v)};
      return absl::OkStatus();
    }
    case kTagGeo: {
      uint64_t lat, lon;
      if (!r->Fixed64(&lat) || !r->Fixed64(&lon)) return Corrupt("document", "metadata geo");
      *value = GeoPoint{BitsDouble(lat), BitsDouble(lon)};
      return absl::OkStatus();
    }
    default:
      return Corrupt("document", absl::StrCat("metadata type tag ", tag));
  }
}

}  // namespace

std::string EncodeDocument(const Document& doc) {
  std::string out;
  out.reserve(32 + doc.id.size() + doc.text.size() + doc.vector.size() * 4);
  out.push_back(static_cast<char>(kDocumentVersion));
  PutVarint(&out, doc.internal_id);
  PutString(&out, doc.id);
  PutString(&out, doc.text);
  PutString(&out, doc.model_id);
  PutVarint(&out, doc.metadata.size());
  for (const auto& [key, value] : doc.metadata) {
    PutString(&out, key);
    PutValue(&out, value);
  }
  PutVarint(&out, doc.vector.size());
  // Little-endian IEEE floats (every supported platform is little-endian).
  out.append(reinterpret_cast<const char*>(doc.vector.data()), doc.vector.size() * sizeof(float));
  return out;
}

absl::StatusOr<Document> DecodeDocument(std::string_view bytes) {
  Reader r(bytes);
  uint8_t version;
  if (!r.Byte(&version)) return Corrupt("document", "empty");
  if (version != kDocumentVersion) {
    return Corrupt("document", absl::StrCat("unknown version ", version));
  }
  Document doc;
  if (!r.Varint(&doc.internal_id)) return Corrupt("document", "internal id");
  if (!r.String(&doc.id, kMaxStringBytes)) return Corrupt("document", "id");
  if (!r.String(&doc.text, kMaxStringBytes)) return Corrupt("document", "text");
  if (!r.String(&doc.model_id, kMaxStringBytes)) return Corrupt("document", "model id");
  uint64_t fields;
  if (!r.Varint(&fields) || fields > r.remaining()) return Corrupt("document", "field count");
  for (uint64_t i = 0; i < fields; ++i) {
    std::string key;
    uint8_t tag;
    if (!r.String(&key, kMaxStringBytes) || !r.Byte(&tag)) {
      return Corrupt("document", "metadata key");
    }
    Value value;
    RETURN_IF_ERROR(ReadValue(&r, tag, 0, &value));
    if (!doc.metadata.emplace(std::move(key), std::move(value)).second) {
      return Corrupt("document", "duplicate metadata key");
    }
  }
  uint64_t dim;
  if (!r.Varint(&dim) || dim > r.remaining() / sizeof(float)) {
    return Corrupt("document", "vector size");
  }
  doc.vector.resize(dim);
  if (!r.Bytes(doc.vector.data(), dim * sizeof(float))) return Corrupt("document", "vector");
  if (!r.done()) return Corrupt("document", "trailing bytes");
  return doc;
}

std::string EncodeCollectionSpec(const CollectionSpec& spec) {
  std::string out;
  out.push_back(static_cast<char>(kSpecVersion));
  PutString(&out, spec.name);
  PutVarint(&out, spec.dimension);
  PutString(&out, spec.index_spec);
  PutString(&out, spec.metric);
  PutString(&out, spec.pooling);
  PutString(&out, spec.query_instruction);
  PutString(&out, spec.document_instruction);
  PutString(&out, spec.overflow);
  PutString(&out, spec.model_id);
  PutFixed64(&out, static_cast<uint64_t>(spec.created_at_micros));
  PutString(&out, spec.model_dir);
  PutString(&out, spec.engine_state);
  PutString(&out, spec.vector_source);
  PutString(&out, spec.analyzer);
  PutFixed64(&out, std::bit_cast<uint64_t>(spec.bm25_k1));
  PutFixed64(&out, std::bit_cast<uint64_t>(spec.bm25_b));
  PutString(&out, spec.title_field);
  PutFixed64(&out, std::bit_cast<uint64_t>(spec.title_weight));
  PutString(&out, spec.precision);
  PutString(&out, spec.fusion);
  PutFixed64(&out, std::bit_cast<uint64_t>(spec.fusion_alpha));
  PutString(&out, spec.previous_model_dir);
  out.push_back(spec.multi_tenant ? 1 : 0);
  return out;
}

absl::StatusOr<CollectionSpec> DecodeCollectionSpec(std::string_view bytes) {
  Reader r(bytes);
  uint8_t version;
  if (!r.Byte(&version) ||
      version < kSpecVersionV1 || version > kSpecVersion) {
    return Corrupt("collection", "version");
  }
  CollectionSpec spec;
  uint64_t dim, created, k1 = 0, b = 0, title_weight = 0, fusion_alpha = 0;
  uint8_t multi_tenant = 0;
  if (!r.String(&spec.name, kMaxStringBytes) || !r.Varint(&dim) || dim > kMaxDimension ||
      !r.String(&spec.index_spec, kMaxStringBytes) || !r.String(&spec.metric, kMaxStringBytes) ||
      !r.String(&spec.pooling, kMaxStringBytes) ||
      !r.String(&spec.query_instruction, kMaxStringBytes) ||
      !r.String(&spec.document_instruction, kMaxStringBytes) ||
      !r.String(&spec.overflow, kMaxStringBytes) || !r.String(&spec.model_id, kMaxStringBytes) ||
      !r.Fixed64(&created) ||
      (version >= kSpecVersionV2 && (!r.String(&spec.model_dir, kMaxStringBytes) ||
                                     !r.String(&spec.engine_state, kMaxStringBytes))) ||
      (version >= kSpecVersionV3 &&
       (!r.String(&spec.vector_source, kMaxStringBytes) ||
        !r.String(&spec.analyzer, kMaxStringBytes) || !r.Fixed64(&k1) || !r.Fixed64(&b) ||
        !r.String(&spec.title_field, kMaxStringBytes) || !r.Fixed64(&title_weight))) ||
      (version >= kSpecVersionV4 && !r.String(&spec.precision, kMaxStringBytes)) ||
      (version >= kSpecVersionV5 &&
       (!r.String(&spec.fusion, kMaxStringBytes) || !r.Fixed64(&fusion_alpha))) ||
      (version >= kSpecVersionV6 && !r.String(&spec.previous_model_dir, kMaxStringBytes)) ||
      (version >= kSpecVersion && (!r.Byte(&multi_tenant) || multi_tenant > 1)) || !r.done()) {
    return Corrupt("collection", "truncated or malformed");
  }
  if (version >= kSpecVersionV3) {
    spec.bm25_k1 = std::bit_cast<double>(k1);
    spec.bm25_b = std::bit_cast<double>(b);
    spec.title_weight = std::bit_cast<double>(title_weight);
  }
  if (version >= kSpecVersionV5) spec.fusion_alpha = std::bit_cast<double>(fusion_alpha);
  spec.multi_tenant = multi_tenant == 1;
  spec.dimension = static_cast<uint32_t>(dim);
  spec.created_at_micros = static_cast<int64_t>(created);
  if (auto s = ValidateCollectionSpec(spec); !s.ok()) {
    return Corrupt("collection", std::string(s.message()));
  }
  return spec;
}

std::string EncodeChangelogRecord(const ChangelogRecord& record) {
  std::string out;
  out.push_back(static_cast<char>(kChangelogVersion));
  PutVarint(&out, record.seq);
  out.push_back(static_cast<char>(record.op));
  PutString(&out, record.collection);
  PutString(&out, record.doc_id);
  PutVarint(&out, record.internal_id);
  PutVarint(&out, record.previous_internal_id);
  return out;
}

absl::StatusOr<ChangelogRecord> DecodeChangelogRecord(std::string_view bytes) {
  Reader r(bytes);
  uint8_t version, op;
  ChangelogRecord rec;
  if (!r.Byte(&version) || version != kChangelogVersion || !r.Varint(&rec.seq) || !r.Byte(&op) ||
      op < 1 || op > 4 || !r.String(&rec.collection, kMaxStringBytes) ||
      !r.String(&rec.doc_id, kMaxStringBytes) || !r.Varint(&rec.internal_id) ||
      !r.Varint(&rec.previous_internal_id) || !r.done()) {
    return Corrupt("changelog", "truncated or malformed");
  }
  rec.op = static_cast<ChangeOp>(op);
  return rec;
}

std::string EncodeBigEndian64(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(v >> (56 - 8 * i));
  return out;
}

absl::StatusOr<uint64_t> DecodeBigEndian64(std::string_view bytes) {
  if (bytes.size() != 8) return Corrupt("counter", "not 8 bytes");
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(bytes[i]);
  return v;
}

}  // namespace neodb::db
