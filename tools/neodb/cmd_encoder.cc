// neodb embed | tokenize: run the encoder on one text per line of stdin.
//
// Input is read in binary and split on '\n' only: '\r', NUL, U+2028 and the
// like are part of a text. A final line without '\n' is a text; input that
// ends with '\n' has no empty text after it. Output is one JSON value per
// input line, in input order. Errors name the 1-based line.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "common/float_text.h"
#include "encoder/default_model_dir.h"
#include "encoder/device.h"
#include "encoder/encoder.h"
#include "nlohmann/json.hpp"
#include "tools/neodb/commands.h"

namespace neodb::cli {
namespace {

// Reads stdin in blocks and hands out complete lines.
class LineReader {
 public:
  // Fills `line` with the next text; false at end of input.
  bool Next(std::string* line) {
    while (true) {
      const size_t nl = buffer_.find('\n', pos_);
      if (nl != std::string::npos) {
        line->assign(buffer_, pos_, nl - pos_);
        pos_ = nl + 1;
        return true;
      }
      if (eof_) {
        if (pos_ >= buffer_.size()) return false;
        line->assign(buffer_, pos_, std::string::npos);
        pos_ = buffer_.size();
        return true;
      }
      buffer_.erase(0, pos_);
      pos_ = 0;
      char block[1 << 16];
      const size_t n = std::fread(block, 1, sizeof(block), stdin);
      if (n == 0) eof_ = true;
      buffer_.append(block, n);
    }
  }
  bool failed() const { return std::ferror(stdin) != 0; }

 private:
  std::string buffer_;
  size_t pos_ = 0;
  bool eof_ = false;
};

// "text 0 …" from a one-text call becomes "line N …".
std::string NameLine(const absl::Status& status, int64_t line) {
  std::string msg(status.message());
  const std::string head = "text 0";
  if (msg.rfind(head, 0) == 0)
    msg = msg.substr(head.size());
  else
    msg = ": " + msg;
  return "line " + std::to_string(line) + msg;
}

struct EmbedArgs {
  std::string model;
  std::string pooling;  // empty: the model directory's own (mean when it says none)
  bool normalize = false;
  bool chunk = false;
  int threads = 1;
  int64_t batch_tokens = 16384;
  int64_t batch_lines = 256;
  std::string prefix;
  std::string precision = "f32";
  std::string device = "cpu";
};

absl::Status EmbedBatch(encoder::Encoder& enc, const std::vector<std::string>& texts,
                        const encoder::EmbedOptions& options, int64_t first_line) {
  auto out = enc.Embed(texts, options);
  if (!out.ok()) {
    // Find the offending line by running the texts one at a time.
    for (size_t i = 0; i < texts.size(); ++i) {
      auto one = enc.Embed({texts[i]}, options);
      if (!one.ok()) {
        return absl::Status(one.status().code(), NameLine(one.status(), first_line + i));
      }
    }
    return out.status();
  }
  for (const encoder::Embedding& e : *out) {
    // The floats are written by AppendFloatJsonArray, not by the JSON
    // library: see common/float_text.h for why.
    std::string line = "{\"embedding\":";
    AppendFloatJsonArray(&line, e.vector);
    line += ",\"tokens\":" + nlohmann::json(e.tokens).dump() + "}\n";
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status RunEmbed(const EmbedArgs& a) {
  encoder::EmbedOptions options;
  if (!a.pooling.empty() && a.pooling != "cls" && a.pooling != "mean") {
    return absl::InvalidArgumentError("--pooling must be cls or mean, not " + a.pooling);
  }
  if (a.threads < 1) return absl::InvalidArgumentError("--threads must be at least 1");
  if (a.batch_tokens < 1) return absl::InvalidArgumentError("--batch-tokens must be at least 1");
  if (a.batch_lines < 1) return absl::InvalidArgumentError("--batch-lines must be at least 1");
  options.overflow = a.chunk ? encoder::Overflow::kChunk : encoder::Overflow::kError;
  options.prefix = a.prefix;
  encoder::EncoderOptions eopts;
  eopts.backend.num_threads = a.threads;
  ASSIGN_OR_RETURN(eopts.backend.precision, encoder::ParsePrecision(a.precision));
  ASSIGN_OR_RETURN(const encoder::DeviceRequest device, encoder::ParseDevice(a.device));
  RETURN_IF_ERROR(encoder::ResolveDevice(device, &eopts.backend));
  eopts.max_batch_tokens = a.batch_tokens;
  ASSIGN_OR_RETURN(const std::string model_dir, encoder::ResolveModelDir(a.model));
  ASSIGN_OR_RETURN(std::unique_ptr<encoder::Encoder> enc, encoder::Encoder::Open(model_dir, eopts));
  if (!enc->precision_note().empty()) {
    std::fprintf(stderr, "neodb embed: %s\n", enc->precision_note().c_str());
  }
  // What the model directory asks for (sentence-transformers files), unless
  // the flags say otherwise.
  options.pooling = a.pooling.empty()   ? enc->defaults().pooling
                    : a.pooling == "cls" ? encoder::Pooling::kCls
                                         : encoder::Pooling::kMean;
  options.normalize = a.normalize || enc->defaults().normalize;
  if (device.kind == encoder::DeviceRequest::Kind::kAuto) {
    // The one choice made for the user: say what it was.
    std::fprintf(stderr, "neodb embed: --device auto chose %s\n",
                 encoder::BackendDeviceName(enc->device(), eopts.backend.device_index).c_str());
  }
  LineReader reader;
  std::vector<std::string> texts;
  int64_t first_line = 1;
  std::string line;
  while (reader.Next(&line)) {
    texts.push_back(std::move(line));
    if (static_cast<int64_t>(texts.size()) == a.batch_lines) {
      RETURN_IF_ERROR(EmbedBatch(*enc, texts, options, first_line));
      first_line += static_cast<int64_t>(texts.size());
      texts.clear();
    }
  }
  if (reader.failed()) return absl::DataLossError("error reading stdin");
  if (!texts.empty()) RETURN_IF_ERROR(EmbedBatch(*enc, texts, options, first_line));
  return absl::OkStatus();
}

absl::Status RunTokenize(const std::string& model) {
  ASSIGN_OR_RETURN(const std::string model_dir, encoder::ResolveModelDir(model));
  ASSIGN_OR_RETURN(std::unique_ptr<encoder::Tokenizer> tok, encoder::LoadTokenizer(model_dir));
  LineReader reader;
  std::string line;
  int64_t number = 0;
  while (reader.Next(&line)) {
    ++number;
    auto ids = tok->Tokenize(line);
    if (!ids.ok()) return absl::Status(ids.status().code(), NameLine(ids.status(), number));
    std::vector<int32_t> framed;
    framed.reserve(ids->size() + 2);
    framed.push_back(tok->special().cls);
    framed.insert(framed.end(), ids->begin(), ids->end());
    framed.push_back(tok->special().sep);
    const std::string out = nlohmann::json(framed).dump() + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  if (reader.failed()) return absl::DataLossError("error reading stdin");
  std::fflush(stdout);
  return absl::OkStatus();
}

}  // namespace

void RegisterEncoderCommands(CLI::App& app) {
  auto embed_args = std::make_shared<EmbedArgs>();
  CLI::App* embed =
      app.add_subcommand("embed", "Embed one text per stdin line; print one JSON object per line");
  embed->add_option("--model", embed_args->model,
                    "checkpoint directory (default: the shipped default model)");
  embed->add_option("--pooling", embed_args->pooling, "cls or mean (default: the model directory's own pooling, from its "
                    "sentence-transformers files; mean when it has none)");
  embed->add_flag("--normalize", embed_args->normalize, "L2-normalise the vectors (always on for a model whose modules.json "
                  "ends in Normalize)");
  embed->add_flag("--chunk", embed_args->chunk,
                  "split texts over max_length into windows (default: error)");
  embed->add_option("--threads", embed_args->threads, "compute threads (default 1)");
  embed->add_option("--batch-tokens", embed_args->batch_tokens,
                    "max tokens per forward pass (default 16384)");
  embed->add_option("--batch-lines", embed_args->batch_lines,
                    "lines embedded per call (default 256)");
  embed->add_option("--prefix", embed_args->prefix, "instruction prepended to every text");
  embed->add_option("--precision", embed_args->precision,
                    "matmul precision on the CPU: f32 (default), bf16 or int8; a CPU without "
                    "the instructions runs f32 and says so");
  embed->add_option("--device", embed_args->device,
                    "cpu (default), cuda, cuda:N or auto (a GPU when one is present); asking "
                    "for CUDA where there is none is an error");
  embed->callback([embed_args] { ExitIfError(RunEmbed(*embed_args)); });

  auto model = std::make_shared<std::string>();
  CLI::App* tokenize = app.add_subcommand(
      "tokenize", "Print the token ids ([CLS] … [SEP]) of each stdin line as a JSON array");
  tokenize->add_option("--model", *model,
                       "checkpoint directory (default: the shipped default model)");
  tokenize->callback([model] { ExitIfError(RunTokenize(*model)); });
}

}  // namespace neodb::cli
