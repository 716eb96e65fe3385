// Grey pictures as tensors: PGM (P2, P5; 8 and 16 bits) and PNG (libpng's simplified API)
// read to [height, width] in [0, 1], and written from such a tensor.
#include <png.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <string>

#include "attnkit/core/error.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::io {

namespace {

constexpr uint64_t kMaxPixels = uint64_t{1} << 28;

std::atomic<uint64_t> g_max_pixels{kDefaultMaxPixels};

// The pixel cap (set_max_pixels), from the header: before anything is decoded.
void check_pixels(const char* format, uint64_t w, uint64_t h, const std::string& name) {
  const uint64_t cap = g_max_pixels.load();
  if (w != 0 && h != 0 && (w > cap || h > cap || w * h > cap))
    throw DataError(std::string(format) + ": " + std::to_string(w) + "x" + std::to_string(h) +
                        " pixels, more than the limit of " + std::to_string(cap) +
                        " (--max-pixels raises it)",
                    name);
}

bool space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// A cursor over a PGM header (and P2 samples): white space and '#' comments between numbers.
struct PgmCursor {
  std::string_view b;
  size_t at = 0;
  const std::string& name;
  void skip() {
    while (at < b.size()) {
      if (space(b[at])) {
        ++at;
      } else if (b[at] == '#') {
        while (at < b.size() && b[at] != '\n' && b[at] != '\r') ++at;
      } else {
        break;
      }
    }
  }
  // A decimal number (at most `limit`), after white space and comments.
  uint64_t number(const char* what, uint64_t limit) {
    skip();
    if (at >= b.size()) throw DataError(std::string("PGM: the file ends before the ") + what, name);
    if (b[at] < '0' || b[at] > '9')
      throw DataError(
          std::string("PGM: expected the ") + what + " (a number) at byte " + std::to_string(at),
          name);
    uint64_t v = 0;
    while (at < b.size() && b[at] >= '0' && b[at] <= '9') {
      v = v * 10 + static_cast<uint64_t>(b[at] - '0');
      if (v > limit)
        throw DataError(std::string("PGM: the ") + what + " exceeds " + std::to_string(limit),
                        name);
      ++at;
    }
    return v;
  }
};

void check_picture(const Tensor& t, const char* kind) {
  if (!(t.rank() == 2 || (t.rank() == 3 && t.dim(0) == 1)))
    throw ShapeError(std::string(kind) + ": a picture is a matrix [height, width], not " +
                     shape_str(t.shape()));
  if (t.size() == 0) throw ShapeError(std::string(kind) + ": an empty picture");
  for (int64_t i = 0; i < t.size(); ++i)
    if (!(t[i] >= 0.0f && t[i] <= 1.0f))
      throw DataError(std::string(kind) + ": value " + format_number(t[i]) + " at index " +
                      std::to_string(i) + " is outside [0,1] (scale the tensor first)");
}

}  // namespace

void set_max_pixels(uint64_t n) { g_max_pixels.store(n); }
uint64_t max_pixels() { return g_max_pixels.load(); }

bool is_pgm(std::string_view head) {
  return head.size() >= 3 && head[0] == 'P' && (head[1] == '2' || head[1] == '5') &&
         (space(head[2]) || head[2] == '#');
}

bool is_png(std::string_view head) {
  return head.size() >= 8 && head.substr(0, 8) == std::string_view("\x89PNG\r\n\x1a\n", 8);
}

Tensor parse_pgm(std::string_view bytes, const std::string& name, SourceInfo* info) {
  if (!is_pgm(bytes)) throw DataError("PGM: no P2 or P5 magic", name);
  const bool binary = bytes[1] == '5';
  PgmCursor c{bytes, 2, name};
  const uint64_t w = c.number("width", kMaxPixels), h = c.number("height", kMaxPixels);
  const uint64_t maxval = c.number("maxval", 65535);
  if (w == 0 || h == 0) throw DataError("PGM: a zero width or height", name);
  if (maxval == 0) throw DataError("PGM: maxval 0 (1-65535)", name);
  if (w * h > kMaxPixels)
    throw DataError(
        "PGM: " + std::to_string(w) + "x" + std::to_string(h) + " pixels exceed the limit of 2^28",
        name);
  check_pixels("PGM", w, h, name);
  const uint64_t n = w * h, wide = maxval > 255 ? 2 : 1;
  Tensor t;
  if (binary) {
    // Exactly one white-space byte, then the samples.
    if (c.at >= bytes.size() || !space(bytes[c.at]))
      throw DataError("PGM: no white space after the maxval", name);
    ++c.at;
    const uint64_t left = bytes.size() - c.at;
    if (left < n * wide)
      throw DataError("PGM: " + std::to_string(n) + " samples need " + std::to_string(n * wide) +
                          " bytes, the file holds " + std::to_string(left),
                      name);
    t = Tensor({static_cast<int64_t>(h), static_cast<int64_t>(w)});
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + c.at);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t v = wide == 2 ? (uint64_t{p[2 * i]} << 8 | p[2 * i + 1]) : p[i];
      if (v > maxval)
        throw DataError("PGM: sample " + std::to_string(i) + " is " + std::to_string(v) +
                            ", above maxval " + std::to_string(maxval),
                        name);
      t[static_cast<int64_t>(i)] = static_cast<float>(static_cast<double>(v) / maxval);
    }
    c.at += n * wide;
  } else {
    // A sample takes at least one digit and (but the last) one separator.
    if (bytes.size() - c.at < 2 * n - 1)
      throw DataError("PGM: " + std::to_string(n) + " samples cannot fit in the " +
                          std::to_string(bytes.size() - c.at) + " bytes left",
                      name);
    t = Tensor({static_cast<int64_t>(h), static_cast<int64_t>(w)});
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t v = c.number("sample", maxval);
      t[static_cast<int64_t>(i)] = static_cast<float>(static_cast<double>(v) / maxval);
    }
  }
  c.skip();
  if (c.at != bytes.size())
    throw DataError(
        "PGM: " + std::to_string(bytes.size() - c.at) + " bytes after the image (one image a file)",
        name);
  if (info) *info = SourceInfo{Format::Pgm, wide == 2 ? ">u2" : "|u1", false, "", false};
  return t;
}

Tensor parse_png(std::string_view bytes, const std::string& name, SourceInfo* info) {
  png_image pi;
  std::memset(&pi, 0, sizeof pi);
  pi.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&pi, bytes.data(), bytes.size()))
    throw DataError(std::string("PNG: ") + pi.message, name);
  struct Guard {
    png_image* p;
    ~Guard() { png_image_free(p); }
  } guard{&pi};
  const uint64_t w = pi.width, h = pi.height, n = w * h;
  // Deflate expands a byte to at most 1032; a pixel takes at least a bit.
  if (w == 0 || h == 0 || n > kMaxPixels || n > uint64_t{1032} * 8 * bytes.size())
    throw DataError("PNG: " + std::to_string(w) + "x" + std::to_string(h) +
                        " pixels are more than the file could hold (or than 2^28)",
                    name);
  check_pixels("PNG", w, h, name);
  const bool colour = (pi.format & PNG_FORMAT_FLAG_COLOR) != 0;
  const bool linear = (pi.format & PNG_FORMAT_FLAG_LINEAR) != 0;  // a 16-bit file
  Tensor t({static_cast<int64_t>(h), static_cast<int64_t>(w)});
  if (!colour && linear) {
    pi.format = PNG_FORMAT_LINEAR_Y;
    std::vector<uint16_t> px(n, 0);
    if (!png_image_finish_read(&pi, nullptr, px.data(), 0, nullptr))
      throw DataError(std::string("PNG: ") + pi.message, name);
    for (uint64_t i = 0; i < n; ++i) t[static_cast<int64_t>(i)] = px[i] / 65535.0f;
  } else if (!colour) {
    pi.format = PNG_FORMAT_GRAY;
    std::vector<uint8_t> px(n, 0);
    if (!png_image_finish_read(&pi, nullptr, px.data(), 0, nullptr))
      throw DataError(std::string("PNG: ") + pi.message, name);
    for (uint64_t i = 0; i < n; ++i) t[static_cast<int64_t>(i)] = px[i] / 255.0f;
  } else {
    pi.format = PNG_FORMAT_RGB;
    std::vector<uint8_t> px(3 * n, 0);
    if (!png_image_finish_read(&pi, nullptr, px.data(), 0, nullptr))
      throw DataError(std::string("PNG: ") + pi.message, name);
    for (uint64_t i = 0; i < n; ++i)
      t[static_cast<int64_t>(i)] = static_cast<float>(
          (0.299 * px[3 * i] + 0.587 * px[3 * i + 1] + 0.114 * px[3 * i + 2]) / 255.0);
  }
  if (info)
    *info = SourceInfo{Format::Png, colour ? "rgb" : (linear ? ">u2" : "|u1"), false, "", false};
  return t;
}

std::string format_pgm(const Tensor& t, bool sixteen_bit) {
  check_picture(t, "PGM");
  const int64_t h = t.dim(-2), w = t.dim(-1);
  const int maxval = sixteen_bit ? 65535 : 255;
  std::string out =
      "P5\n" + std::to_string(w) + " " + std::to_string(h) + "\n" + std::to_string(maxval) + "\n";
  for (int64_t i = 0; i < t.size(); ++i) {
    const long v = std::lround(static_cast<double>(t[i]) * maxval);
    if (sixteen_bit) out += static_cast<char>(v >> 8);
    out += static_cast<char>(v & 0xff);
  }
  return out;
}

std::string format_png(const Tensor& t) {
  check_picture(t, "PNG");
  std::vector<uint8_t> px(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i)
    px[static_cast<size_t>(i)] = static_cast<uint8_t>(std::lround(static_cast<double>(t[i]) * 255));
  png_image pi;
  std::memset(&pi, 0, sizeof pi);
  pi.version = PNG_IMAGE_VERSION;
  pi.width = static_cast<png_uint_32>(t.dim(-1));
  pi.height = static_cast<png_uint_32>(t.dim(-2));
  pi.format = PNG_FORMAT_GRAY;
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&pi, nullptr, &size, 0, px.data(), 0, nullptr))
    throw Error(std::string("libpng: ") + pi.message);
  std::string out(size, '\0');
  if (!png_image_write_to_memory(&pi, out.data(), &size, 0, px.data(), 0, nullptr))
    throw Error(std::string("libpng: ") + pi.message);
  out.resize(size);
  return out;
}

}  // namespace attnkit::io
