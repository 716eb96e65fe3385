#include "attnkit/io/pbm.h"

#include <algorithm>
#include <cctype>

#include "attnkit/core/error.h"

namespace attnkit::io {

namespace {

bool is_pnm_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// A cursor over the bytes that skips whitespace and '#' comments the way netpbm does.
struct Reader {
  std::string_view b;
  size_t pos = 0;
  const std::string& name;
  int image = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw DataError("PBM image " + std::to_string(image) + ": " + what, name);
  }
  void skip_space() {
    while (pos < b.size()) {
      if (is_pnm_space(b[pos])) {
        ++pos;
      } else if (b[pos] == '#') {
        while (pos < b.size() && b[pos] != '\n') ++pos;
      } else {
        break;
      }
    }
  }
  int64_t number(const char* what) {
    skip_space();
    if (pos >= b.size() || !std::isdigit(static_cast<unsigned char>(b[pos])))
      fail(std::string("expected the ") + what);
    int64_t v = 0;
    while (pos < b.size() && std::isdigit(static_cast<unsigned char>(b[pos]))) {
      v = v * 10 + (b[pos++] - '0');
      if (v > (int64_t{1} << 30)) fail(std::string(what) + " is too large");
    }
    return v;
  }
};

}  // namespace

bool is_pbm(std::string_view head) {
  return head.size() >= 3 && head[0] == 'P' && (head[1] == '1' || head[1] == '4') &&
         (is_pnm_space(head[2]) || head[2] == '#');
}

std::vector<Bitmap> parse_pbm(std::string_view bytes, const std::string& name) {
  std::vector<Bitmap> images;
  Reader r{bytes, 0, name};
  for (;;) {
    r.skip_space();
    if (r.pos >= bytes.size()) break;
    r.image = static_cast<int>(images.size()) + 1;
    if (!is_pbm(bytes.substr(r.pos)))
      r.fail(images.empty() ? "not a PBM file (expected P1 or P4)"
                            : "unexpected bytes after the previous image");
    const bool raw = bytes[r.pos + 1] == '4';
    r.pos += 2;
    Bitmap im;
    im.width = r.number("width");
    im.height = r.number("height");
    if (im.width == 0 || im.height == 0) r.fail("empty image");
    // The pixels must fit in the bytes left (P4: a bit each, rows padded to bytes; P1: at
    // least a byte each) before anything is allocated: a header cannot make us allocate.
    const int64_t stride = (im.width + 7) / 8;
    // (raw: less the one whitespace byte after the header)
    const int64_t left =
        static_cast<int64_t>(bytes.size() - std::min(bytes.size(), r.pos)) - (raw ? 1 : 0);
    if (left < 0 || (raw ? im.height > left / stride : im.height > left / im.width))
      r.fail("file cut short (" + std::to_string(im.width) + " x " + std::to_string(im.height) +
             " pixels promised, " + std::to_string(std::max<int64_t>(left, 0)) + " bytes left)");
    im.bits.resize(static_cast<size_t>(im.width * im.height));
    if (raw) {
      if (r.pos >= bytes.size() || !is_pnm_space(bytes[r.pos]))
        r.fail("no whitespace after the header");
      ++r.pos;
      for (int64_t y = 0; y < im.height; ++y)
        for (int64_t x = 0; x < im.width; ++x) {
          const auto byte = static_cast<unsigned char>(bytes[r.pos + y * stride + x / 8]);
          im.bits[y * im.width + x] = (byte >> (7 - x % 8)) & 1u;
        }
      r.pos += static_cast<size_t>(stride * im.height);
    } else {
      for (int64_t i = 0; i < im.width * im.height; ++i) {
        r.skip_space();
        if (r.pos >= bytes.size())
          r.fail("file cut short after " + std::to_string(i) + " of " +
                 std::to_string(im.width * im.height) + " pixels");
        const char c = bytes[r.pos++];
        if (c != '0' && c != '1')
          r.fail(std::string("pixel ") + std::to_string(i + 1) + " is '" + c + "', not 0 or 1");
        im.bits[i] = c == '1';
      }
    }
    images.push_back(std::move(im));
  }
  if (images.empty()) throw DataError("empty PBM file", name);
  return images;
}

std::string format_pbm(const Bitmap& im, bool plain) {
  std::string out = std::string(plain ? "P1\n" : "P4\n") + std::to_string(im.width) + " " +
                    std::to_string(im.height) + "\n";
  if (plain) {
    for (int64_t y = 0; y < im.height; ++y) {
      size_t line = 0;
      for (int64_t x = 0; x < im.width; ++x) {
        if (line + 2 > 70) {
          out += '\n';
          line = 0;
        }
        if (line) {
          out += ' ';
          ++line;
        }
        out += im.bits[y * im.width + x] ? '1' : '0';
        ++line;
      }
      out += '\n';
    }
  } else {
    const int64_t stride = (im.width + 7) / 8;
    for (int64_t y = 0; y < im.height; ++y)
      for (int64_t k = 0; k < stride; ++k) {
        unsigned byte = 0;
        for (int64_t bit = 0; bit < 8; ++bit) {
          const int64_t x = k * 8 + bit;
          if (x < im.width && im.bits[y * im.width + x]) byte |= 0x80u >> bit;
        }
        out += static_cast<char>(byte);
      }
  }
  return out;
}

Tensor bitmaps_to_patterns(const std::vector<Bitmap>& images, int64_t tile_w, int64_t tile_h,
                           const std::string& name, int64_t* per_row) {
  if (images.empty()) throw DataError("no images", name);
  const bool whole = tile_w == 0 && tile_h == 0;
  if (whole) {
    tile_w = images[0].width;
    tile_h = images[0].height;
  }
  std::vector<float> values;
  int64_t count = 0;
  for (size_t k = 0; k < images.size(); ++k) {
    const Bitmap& im = images[k];
    const std::string which = "PBM image " + std::to_string(k + 1) + " (" +
                              std::to_string(im.width) + "x" + std::to_string(im.height) + ")";
    if (whole && (im.width != tile_w || im.height != tile_h))
      throw DataError(which + " differs in size from image 1 (" + std::to_string(tile_w) + "x" +
                          std::to_string(tile_h) + "); give --image-size to cut tiles",
                      name);
    if (im.width % tile_w != 0 || im.height % tile_h != 0)
      throw DataError(which + " is not a whole number of " + std::to_string(tile_w) + "x" +
                          std::to_string(tile_h) + " tiles",
                      name);
    const int64_t across = im.width / tile_w, down = im.height / tile_h;
    if (k == 0 && per_row) *per_row = across;
    for (int64_t ty = 0; ty < down; ++ty)
      for (int64_t tx = 0; tx < across; ++tx) {
        for (int64_t y = 0; y < tile_h; ++y)
          for (int64_t x = 0; x < tile_w; ++x)
            values.push_back(im.bits[(ty * tile_h + y) * im.width + tx * tile_w + x] ? 1.0f
                                                                                     : -1.0f);
        ++count;
      }
  }
  return Tensor({count, tile_w * tile_h}, std::move(values));
}

Bitmap patterns_to_bitmap(const Tensor& patterns, int64_t tile_w, int64_t tile_h, int64_t per_row) {
  const Shape bs = as_batch_shape(patterns.shape());
  if (bs[0] != 1 || bs[2] != tile_w * tile_h || tile_w <= 0 || tile_h <= 0)
    throw ShapeError("patterns of shape " + shape_str(patterns.shape()) + " do not fit tiles of " +
                     std::to_string(tile_w) + "x" + std::to_string(tile_h) + " pixels");
  const int64_t count = bs[1];
  per_row = std::max<int64_t>(1, std::min(per_row, std::max<int64_t>(count, 1)));
  const int64_t down = std::max<int64_t>(1, (count + per_row - 1) / per_row);
  Bitmap im;
  im.width = per_row * tile_w;
  im.height = down * tile_h;
  im.bits.assign(static_cast<size_t>(im.width * im.height), 0);
  const float* p = patterns.data();
  for (int64_t k = 0; k < count; ++k) {
    const int64_t tx = k % per_row, ty = k / per_row;
    for (int64_t y = 0; y < tile_h; ++y)
      for (int64_t x = 0; x < tile_w; ++x)
        im.bits[(ty * tile_h + y) * im.width + tx * tile_w + x] =
            p[k * tile_w * tile_h + y * tile_w + x] > 0.0f;
  }
  return im;
}

}  // namespace attnkit::io
