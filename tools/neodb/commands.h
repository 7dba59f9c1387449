#pragma once
// Each file cmd_*.cc registers its subcommands on the root CLI11 app. A
// subcommand's callback returns through Exit(): 0 on success, non-zero with a
// message on stderr otherwise. Add a Register* line to main.cc for a new file.

#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "encoder/train/train_device.h"

namespace neodb::cli {

// Thrown from a subcommand callback to end the program with `code`. CLI11
// drives callbacks, so this is the one exception our code throws: it never
// leaves main().
struct ExitRequest {
  int code;
};

// Prints "neodb: <message>" to stderr and requests exit code 1 (2 for
// INVALID_ARGUMENT-style usage errors) when `status` is not OK.
void ExitIfError(const absl::Status& status);

// Resolves a training command's --device (encoder/train/train_device.h),
// exiting with its error; says on stderr where training runs unless it is
// the CPU by default. `command` names the command in those lines.
encoder::train::TrainingDevice ResolveTrainingDeviceOrExit(const char* command,
                                                          const std::string& device);

// `neodb --version`: version, git commit, build options, BLAS kernel, CPU features.
std::string VersionText();

void RegisterModelCommands(CLI::App& app);     // model init, model info
void RegisterEncoderCommands(CLI::App& app);   // embed, tokenize
void RegisterTrainCommands(CLI::App& app);     // finetune, eval
void RegisterTokenizerCommands(CLI::App& app); // tokenizer train
void RegisterPretrainCommands(CLI::App& app);  // pretrain, fill-mask
void RegisterServerCommands(CLI::App& app);    // serve (NEODB_BUILD_SERVER only)
void RegisterClientCommands(CLI::App& app);    // collections, ingest, search, … (NEODB_BUILD_SERVER only)
void RegisterKeysCommands(CLI::App& app);      // keys add (NEODB_BUILD_SERVER only)
void RegisterRestoreCommands(CLI::App& app);   // restore (NEODB_BUILD_SERVER only)
void RegisterAdaptCommands(CLI::App& app);     // adapt (NEODB_BUILD_ADAPT only)
void RegisterModelsCommands(CLI::App& app);    // models list (NEODB_BUILD_ADAPT only)

}  // namespace neodb::cli
