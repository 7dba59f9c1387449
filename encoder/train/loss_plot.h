#pragma once
// A PNG line plot of a loss curve, drawn by hand with libpng (no plotting
// dependency): axes, a light grid, the raw per-step values and a moving
// average, the y range and x range printed with a built-in digit font.

#include <string>
#include <vector>

#include "common/env.h"
#include "common/status_macros.h"

namespace neodb::encoder::train {

// REQUIRES: x.size() == y.size(). Non-finite values are skipped. Replaces
// `path` atomically, through `env`.
absl::Status WriteLossPlotPng(const std::string& path, const std::vector<double>& x,
                              const std::vector<double>& y, int width = 800, int height = 480,
                              Env* env = Env::Default());

}  // namespace neodb::encoder::train
