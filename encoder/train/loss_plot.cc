#include "encoder/train/loss_plot.h"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/atomic_file.h"

namespace neodb::encoder::train {
namespace {

struct Rgb {
  uint8_t r, g, b;
};

class Canvas {
 public:
  Canvas(int w, int h) : w_(w), h_(h), px_(static_cast<size_t>(w) * h * 3, 255) {}
  void Set(int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= w_ || y >= h_) return;
    uint8_t* p = &px_[(static_cast<size_t>(y) * w_ + x) * 3];
    p[0] = c.r, p[1] = c.g, p[2] = c.b;
  }
  // Bresenham with a 2-pixel pen.
  void Line(int x0, int y0, int x1, int y1, Rgb c, bool thick) {
    const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
    const int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    while (true) {
      Set(x0, y0, c);
      if (thick) Set(x0, y0 + 1, c), Set(x0 + 1, y0, c);
      if (x0 == x1 && y0 == y1) break;
      const int e2 = 2 * err;
      if (e2 >= dy) err += dy, x0 += sx;
      if (e2 <= dx) err += dx, y0 += sy;
    }
  }
  // 3×5 glyphs for digits, '.', '-', 'e', scaled by 2.
  void Text(int x, int y, const std::string& s, Rgb c) {
    static const char* kGlyphs[] = {"111101101101111", "010110010010111", "111001111100111",
                                    "111001111001111", "101101111001001", "111100111001111",
                                    "111100111101111", "111001001001001", "111101111101111",
                                    "111101111001111"};
    for (char ch : s) {
      const char* g = nullptr;
      if (ch >= '0' && ch <= '9') g = kGlyphs[ch - '0'];
      if (ch == '.') g = "000000000000010";
      if (ch == '-') g = "000000111000000";
      if (ch == 'e') g = "000111111100111";
      if (g != nullptr) {
        for (int i = 0; i < 15; ++i) {
          if (g[i] != '1') continue;
          for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 2; ++b) Set(x + (i % 3) * 2 + a, y + (i / 3) * 2 + b, c);
        }
      }
      x += 8;
    }
  }
  const std::vector<uint8_t>& pixels() const { return px_; }

 private:
  int w_, h_;
  std::vector<uint8_t> px_;
};

// libpng's write callback: the encoded bytes go to a string.
void AppendToString(png_structp png, png_bytep data, png_size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), n);
}
void FlushNothing(png_structp) {}

// Encodes the canvas in memory, then writes it atomically through `env`.
absl::Status WritePng(Env* env, const std::string& path, const Canvas& canvas, int w, int h) {
  std::string encoded;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png != nullptr ? png_create_info_struct(png) : nullptr;
  std::vector<png_bytep> rows(static_cast<size_t>(h));
  for (int y = 0; y < h; ++y) {
    rows[y] = const_cast<png_bytep>(canvas.pixels().data() + static_cast<size_t>(y) * w * 3);
  }
  if (png == nullptr || info == nullptr || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return absl::InternalError(absl::StrCat("libpng failed encoding ", path));
  }
  png_set_write_fn(png, &encoded, AppendToString, FlushNothing);
  png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return WriteFileAtomically(env, path, {encoded});
}

std::string Label(double v) { return absl::StrFormat("%.4g", v); }

}  // namespace

absl::Status WriteLossPlotPng(const std::string& path, const std::vector<double>& x,
                              const std::vector<double>& y, int width, int height, Env* env) {
  if (x.size() != y.size()) return absl::InvalidArgumentError("plot: x and y differ in size");
  if (width < 100 || height < 80) return absl::InvalidArgumentError("plot: too small");
  Canvas canvas(width, height);
  const int left = 80, right = width - 20, top = 20, bottom = height - 40;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  bool any = false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) continue;
    if (!any) x0 = x1 = x[i], y0 = y1 = y[i], any = true;
    x0 = std::min(x0, x[i]), x1 = std::max(x1, x[i]);
    y0 = std::min(y0, y[i]), y1 = std::max(y1, y[i]);
  }
  if (x1 == x0) x1 = x0 + 1;
  if (y1 == y0) y1 = y0 + 1;
  auto px = [&](double v) {
    return left + static_cast<int>((v - x0) / (x1 - x0) * (right - left));
  };
  auto py = [&](double v) {
    return bottom - static_cast<int>((v - y0) / (y1 - y0) * (bottom - top));
  };
  const Rgb grid{225, 225, 225}, axis{0, 0, 0}, raw{160, 190, 235}, smooth{20, 60, 160};
  for (int i = 1; i < 5; ++i) {
    const int gy = top + (bottom - top) * i / 5, gx = left + (right - left) * i / 5;
    canvas.Line(left, gy, right, gy, grid, false);
    canvas.Line(gx, top, gx, bottom, grid, false);
  }
  canvas.Line(left, top, left, bottom, axis, false);
  canvas.Line(left, bottom, right, bottom, axis, false);
  canvas.Text(4, top, Label(y1), axis);
  canvas.Text(4, bottom - 10, Label(y0), axis);
  canvas.Text(left, bottom + 10, Label(x0), axis);
  const std::string xl = Label(x1);
  canvas.Text(right - 8 * static_cast<int>(xl.size()), bottom + 10, xl, axis);
  // Raw series, then a centred moving average over ~2% of the points.
  const int64_t n = static_cast<int64_t>(x.size());
  const int64_t half = std::max<int64_t>(1, n / 100);
  int lx = -1, ly = -1, sx = -1, sy = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) continue;
    const int cx = px(x[i]), cy = py(y[i]);
    if (lx >= 0) canvas.Line(lx, ly, cx, cy, raw, false);
    lx = cx, ly = cy;
  }
  for (int64_t i = 0; i < n; ++i) {
    double sum = 0;
    int cnt = 0;
    for (int64_t j = std::max<int64_t>(0, i - half); j <= std::min(n - 1, i + half); ++j) {
      if (std::isfinite(y[j])) sum += y[j], ++cnt;
    }
    if (cnt == 0 || !std::isfinite(x[i])) continue;
    const int cx = px(x[i]), cy = py(sum / cnt);
    if (sx >= 0) canvas.Line(sx, sy, cx, cy, smooth, true);
    sx = cx, sy = cy;
  }
  return WritePng(env, path, canvas, width, height);
}

}  // namespace neodb::encoder::train
