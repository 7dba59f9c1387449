// The Prometheus endpoint of `neodb serve --metrics-listen 127.0.0.1:0`,
// scraped over plain HTTP while clients ingest, and read with a small parser
// of the text exposition format written here: every scrape must parse, every
// sample must belong to a declared family, counters never go down between
// scrapes, histograms are cumulative, and the numbers match what the test did.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <map>
#include <random>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

// One sample: metric name, labels, value.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct Exposition {
  std::map<std::string, std::string> types;  // family -> counter|gauge|histogram|...
  std::vector<Sample> samples;
  // The value of `name` with exactly these labels; NaN when absent.
  double Get(const std::string& name, const std::map<std::string, std::string>& labels = {}) const {
    for (const auto& s : samples) {
      if (s.name == name && s.labels == labels) return s.value;
    }
    return std::nan("");
  }
};

// Parses the text format (version 0.0.4). Returns an error string, empty on success.
std::string Parse(const std::string& text, Exposition* out) {
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    auto err = [&](const std::string& what) { return absl::StrCat("line ", line_no, ": ", what); };
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::vector<std::string> f = absl::StrSplit(line, absl::MaxSplits(' ', 3));
      if (f.size() >= 3 && f[1] == "TYPE") {
        if (f.size() != 4) return err("TYPE needs a name and a type");
        static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary",
                                                     "untyped"};
        if (!kTypes.count(f[3])) return err("unknown type " + f[3]);
        if (out->types.count(f[2])) return err("family declared twice: " + f[2]);
        out->types[f[2]] = f[3];
      }
      continue;
    }
    Sample s;
    size_t i = 0;
    while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) ||
                               line[i] == '_' || line[i] == ':')) {
      ++i;
    }
    s.name = std::string(line.substr(0, i));
    if (s.name.empty() || std::isdigit(static_cast<unsigned char>(s.name[0]))) {
      return err("bad metric name");
    }
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        size_t eq = line.find('=', i);
        if (eq == absl::string_view::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
          return err("bad label");
        }
        std::string key(line.substr(i, eq - i)), value;
        i = eq + 2;
        for (;; ++i) {
          if (i >= line.size()) return err("unterminated label value");
          if (line[i] == '"') break;
          if (line[i] == '\\') {
            if (++i >= line.size()) return err("dangling escape");
            char c = line[i];
            if (c == 'n') {
              value += '\n';
            } else if (c == '\\' || c == '"') {
              value += c;
            } else {
              return err("bad escape");
            }
          } else {
            value += line[i];
          }
        }
        ++i;  // the closing quote
        if (!s.labels.emplace(key, value).second) return err("label twice: " + key);
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) return err("unterminated labels");
      ++i;  // '}'
    }
    if (i >= line.size() || line[i] != ' ') return err("no value");
    absl::string_view v = absl::StripAsciiWhitespace(line.substr(i + 1));
    if (v == "+Inf") {
      s.value = INFINITY;
    } else if (v == "-Inf") {
      s.value = -INFINITY;
    } else if (v == "NaN") {
      s.value = std::nan("");
    } else if (!absl::SimpleAtod(v, &s.value)) {
      return err("bad value '" + std::string(v) + "'");
    }
    // The family: the name itself, or for histograms the name less its suffix.
    std::string family = s.name;
    if (!out->types.count(family)) {
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        absl::string_view n(s.name);
        if (absl::ConsumeSuffix(&n, suffix) && out->types.count(std::string(n)) &&
            out->types[std::string(n)] == "histogram") {
          family = std::string(n);
        }
      }
    }
    if (!out->types.count(family)) return err("sample before its TYPE: " + s.name);
    out->samples.push_back(std::move(s));
  }
  return "";
}

std::string HttpGet(int port, const std::string& path) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  timeval tv{30, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string resp;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    const std::string req = "GET " + path + " HTTP/1.0\r\nHost: x\r\n\r\n";
    (void)!::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
    char buf[4096];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) resp.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return resp;
}

// GET /metrics, parsed; fails the test if the response or the format is wrong.
Exposition Scrape(int port) {
  std::string r = HttpGet(port, "/metrics");
  Exposition e;
  size_t body = r.find("\r\n\r\n");
  // The server answers an HTTP/1.0 request as HTTP/1.1 (a server sends its own
  // version, RFC 9110 section 2.5) and closes the connection after it.
  EXPECT_TRUE(absl::StartsWith(r, "HTTP/1.1 200 OK\r\n")) << r.substr(0, 200);
  EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  if (body == std::string::npos) return e;
  std::string error = Parse(r.substr(body + 4), &e);
  EXPECT_EQ(error, "") << r;
  return e;
}

void CheckHistograms(const Exposition& e) {
  // (transport, method) -> (le, n)
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<double, double>>> buckets;
  for (const auto& s : e.samples) {
    if (s.name != "neodb_request_duration_seconds_bucket") continue;
    double le = 0;
    const std::string& l = s.labels.at("le");
    ASSERT_TRUE(l == "+Inf" || absl::SimpleAtod(l, &le)) << l;
    buckets[{s.labels.at("transport"), s.labels.at("method")}].push_back(
        {l == "+Inf" ? INFINITY : le, s.value});
  }
  for (auto& [key, b] : buckets) {
    SCOPED_TRACE(key.first + " " + key.second);
    for (size_t i = 1; i < b.size(); ++i) {
      EXPECT_LT(b[i - 1].first, b[i].first);
      EXPECT_LE(b[i - 1].second, b[i].second);
    }
    ASSERT_TRUE(std::isinf(b.back().first));
    EXPECT_EQ(b.back().second,
              e.Get("neodb_request_duration_seconds_count",
                    {{"transport", key.first}, {"method", key.second}}));
  }
}

TEST(MetricsTest, CountersMoveUnderLoadAndTheFormatParses) {
  TestDir dir("metrics");
  const std::string keys = dir.Sub("keys");
  CommandResult kr =
      RunNeodbCapture(absl::StrCat("keys add --role write --key-file ", keys), dir.Sub(""));
  ASSERT_EQ(kr.status, 0) << kr.err;
  const std::string key(absl::StripAsciiWhitespace(kr.out));
  std::vector<std::string> a = {"--data-dir",  dir.Sub("data"), "--metrics-listen",
                                "127.0.0.1:0", "--key-file",    keys};
  for (auto& x : ModelArgs(dir, 1)) a.push_back(x);
  ServerProcess server(a);
  ASSERT_TRUE(server.Start());
  ASSERT_GT(server.metrics_port(), 0);
  EXPECT_NE(HttpGet(server.metrics_port(), "/other").find("404"), std::string::npos);

  // Collections/Create needs admin: this write key is refused, and counted.
  auto coll = v1::Collections::NewStub(server.Channel());
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + key);
    v1::CreateCollectionRequest req;
    req.mutable_spec()->set_name("m");
    v1::CreateCollectionResponse resp;
    ASSERT_EQ(coll->Create(&ctx, req, &resp).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  }
  // An admin key made after start, loaded through SIGHUP, creates it.
  kr = RunNeodbCapture(absl::StrCat("keys add --role admin --key-file ", keys), dir.Sub(""));
  const std::string admin(absl::StripAsciiWhitespace(kr.out));
  server.Notify(SIGHUP);
  for (int i = 0; i < 1500; ++i) {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + admin);
    v1::CreateCollectionRequest req;
    req.mutable_spec()->set_name("m");
    v1::CreateCollectionResponse resp;
    if (coll->Create(&ctx, req, &resp).ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  Exposition before = Scrape(server.metrics_port());
  EXPECT_EQ(before.Get("neodb_documents", {{"collection", "m"}}), 0);
  EXPECT_GE(before.Get("neodb_requests_total",
                       {{"transport", "grpc"},
                        {"method", "/neodb.v1.Collections/Create"},
                        {"code", "PERMISSION_DENIED"}}),
            1);
  EXPECT_GT(before.Get("neodb_process_resident_memory_bytes"), 0);
  EXPECT_GE(before.Get("neodb_rocksdb_property", {{"name", "rocksdb.estimate-num-keys"}}), 0);

  constexpr int kThreads = 3, kCalls = 20, kPerCall = 10;
  std::atomic<int> done{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      auto docs = v1::Documents::NewStub(server.Channel());
      std::mt19937_64 rng(t);
      for (int c = 0; c < kCalls; ++c) {
        grpc::ClientContext ctx;
        ctx.AddMetadata("authorization", "Bearer " + key);
        v1::UpsertRequest req;
        req.set_collection("m");
        for (int d = 0; d < kPerCall; ++d) {
          auto* doc = req.add_documents();
          doc->set_id(absl::StrCat(t, "-", c, "-", d));
          doc->set_text(RandomText(rng));
        }
        v1::UpsertResponse resp;
        EXPECT_TRUE(docs->Upsert(&ctx, req, &resp).ok());
      }
      ++done;
    });
  }
  // Scrape while they write: each scrape parses; counters never go down.
  Exposition last = before;
  int scrapes = 0;
  while (done.load() < kThreads) {
    Exposition now = Scrape(server.metrics_port());
    CheckHistograms(now);
    for (const auto& s : last.samples) {
      if (s.name == "neodb_requests_total" || s.name == "neodb_embedded_tokens_total") {
        EXPECT_GE(now.Get(s.name, s.labels), s.value) << s.name;
      }
    }
    last = std::move(now);
    ++scrapes;
  }
  for (auto& w : writers) w.join();
  Exposition after = Scrape(server.metrics_port());
  CheckHistograms(after);
  EXPECT_GE(scrapes, 1);
  EXPECT_EQ(
      after.Get("neodb_requests_total", {{"transport", "grpc"},
                                         {"method", "/neodb.v1.Documents/Upsert"},
                                         {"code", "OK"}}),
      kThreads * kCalls);
  EXPECT_EQ(
      after.Get("neodb_request_duration_seconds_count",
                {{"transport", "grpc"}, {"method", "/neodb.v1.Documents/Upsert"}}),
      kThreads * kCalls);
  EXPECT_EQ(after.Get("neodb_documents", {{"collection", "m"}}), kThreads * kCalls * kPerCall);
  EXPECT_EQ(after.Get("neodb_index_vectors", {{"collection", "m"}}), kThreads * kCalls * kPerCall);
  EXPECT_GT(after.Get("neodb_embedded_tokens_total"), before.Get("neodb_embedded_tokens_total"));
  EXPECT_GT(after.Get("neodb_embedded_texts_total"), before.Get("neodb_embedded_texts_total"));
  EXPECT_GE(after.Get("neodb_embedded_texts_total"), kThreads * kCalls * kPerCall);
  EXPECT_EQ(after.Get("neodb_embed_queue_texts"), 0);
  EXPECT_GT(after.Get("neodb_encoder_tokens_per_second"), 0);
  EXPECT_EQ(after.Get("neodb_writable"), 1);  // 0 only on a full disk
  EXPECT_EQ(server.Stop(), 0);
}

TEST(MetricsTest, ParserRejectsMalformedText) {
  Exposition e;
  EXPECT_NE(Parse("x 1\n", &e), "");  // no TYPE
  e = {};
  EXPECT_NE(Parse("# TYPE x counter\nx{a=\"1} 1\n", &e), "");
  e = {};
  EXPECT_NE(Parse("# TYPE x counter\nx one\n", &e), "");
  e = {};
  EXPECT_NE(Parse("# TYPE x whatever\n", &e), "");
  e = {};
  EXPECT_EQ(Parse("# TYPE x counter\nx{a=\"q\\\"\\n\",b=\"\"} 2.5\n", &e), "");
  EXPECT_EQ(e.Get("x", {{"a", "q\"\n"}, {"b", ""}}), 2.5);
}

}  // namespace
}  // namespace neodb::testing
