#include "attnkit/memory/hopfield/file.h"

#include <cctype>
#include <cmath>

#include "attnkit/core/error.h"
#include "attnkit/io/pbm.h"

namespace attnkit::memory {

namespace {

bool has_pbm_name(const std::string& path) {
  if (path.size() < 4) return false;
  std::string ext = path.substr(path.size() - 4);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".pbm";
}

}  // namespace

ImageLayout parse_layout(const std::string& image_size, int64_t tiles_per_row) {
  ImageLayout l;
  if (!image_size.empty()) {
    const size_t x = image_size.find('x');
    const std::string w = image_size.substr(0, x),
                      h = x == std::string::npos ? "" : image_size.substr(x + 1);
    auto number = [&](const std::string& t) {
      if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos ||
          std::stoll(t) == 0)
        throw UsageError("image size: expected WIDTHxHEIGHT, e.g. 10x12, not '" + image_size + "'");
      return static_cast<int64_t>(std::stoll(t));
    };
    l.tile_w = number(w);
    l.tile_h = number(h);
  }
  if (tiles_per_row < 0) throw UsageError("tiles per row must be 1 or more");
  l.per_row = tiles_per_row;
  return l;
}

Tensor read_patterns(const std::string& path, ImageLayout* layout, bool bipolar) {
  ImageLayout none;
  if (!layout) layout = &none;
  try {
    const auto [file, member] = io::split_member(path);
    const std::string bytes = io::read_all(file);
    Tensor t;
    if (member.empty() && io::is_pbm(bytes)) {
      const auto images = io::parse_pbm(bytes, path);
      int64_t per_row = 0;
      t = io::bitmaps_to_patterns(images, layout->tile_w, layout->tile_h, path, &per_row);
      if (layout->tile_w == 0) {
        layout->tile_w = images[0].width;
        layout->tile_h = images[0].height;
      }
      if (layout->per_row == 0) layout->per_row = per_row;
      layout->from_pbm = true;
    } else {
      t = io::parse_tensor(bytes, file, member);
    }
    if (t.rank() == 1) t.reshape({1, t.dim(0)});
    if (t.rank() != 2)
      throw ShapeError("expected a matrix with one pattern per row, not shape " +
                       shape_str(t.shape()));
    if (bipolar) check_bipolar(t);
    return t;
  } catch (Error& e) {
    e.locate(path);
    throw;
  }
}

void write_patterns(const std::string& path, const Tensor& patterns, const ImageLayout& layout,
                    const io::WriteOptions& opt) {
  if (!has_pbm_name(path)) {
    io::write_tensor(path, patterns, opt);
    return;
  }
  const int64_t n = patterns.rank() >= 1 ? patterns.dim(-1) : 0;
  int64_t w = layout.tile_w, h = layout.tile_h;
  if (w == 0) {
    const auto r = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(n))));
    if (r * r != n || n == 0)
      throw DataError("patterns of " + std::to_string(n) +
                      " values are not square: give an image size WxH for a PBM output");
    w = h = r;
  }
  if (w * h != n)
    throw DataError("image size " + std::to_string(w) + "x" + std::to_string(h) + " holds " +
                    std::to_string(w * h) + " pixels but the patterns have " + std::to_string(n) +
                    " values");
  io::Bitmap im = io::patterns_to_bitmap(patterns, w, h, layout.per_row > 0 ? layout.per_row : 10);
  if (layout.pixel > 1) {  // each pixel as a k x k block
    const int64_t k = layout.pixel;
    io::Bitmap big;
    big.width = im.width * k;
    big.height = im.height * k;
    big.bits.resize(static_cast<size_t>(big.width * big.height));
    for (int64_t y = 0; y < big.height; ++y)
      for (int64_t x = 0; x < big.width; ++x)
        big.bits[static_cast<size_t>(y * big.width + x)] =
            im.bits[static_cast<size_t>((y / k) * im.width + x / k)];
    im = std::move(big);
  }
  io::write_file(path, io::format_pbm(im));
}

Net load_net(const std::string& path) {
  try {
    auto arrays = io::read_npz(path);
    auto w = arrays.find("W");
    if (w == arrays.end())
      throw DataError("no array 'W' (a net is an .npz with W, N x N, and b, N values)");
    Net net;
    net.W = std::move(w->second);
    if (net.W.rank() != 2 || net.W.dim(0) != net.W.dim(1))
      throw ShapeError("W must be square (N x N), not " + shape_str(net.W.shape()));
    auto b = arrays.find("b");
    if (b == arrays.end()) {
      net.b = Tensor({net.W.dim(0)});
    } else {
      net.b = std::move(b->second);
      check_net(net);
      net.b.reshape({net.W.dim(0)});
    }
    for (int64_t k = 0; k < net.W.size(); ++k)
      if (!std::isfinite(net.W[k])) throw DataError("W holds a non-finite value");
    for (int64_t k = 0; k < net.b.size(); ++k)
      if (!std::isfinite(net.b[k])) throw DataError("b holds a non-finite value");
    return net;
  } catch (Error& e) {
    e.locate(path);
    throw;
  }
}

void save_net(const std::string& path, const Net& net) {
  io::write_npz(path, {{"W", &net.W}, {"b", &net.b}});
}

}  // namespace attnkit::memory
