// NumPy .npy format 1.0/2.0/3.0: read (any int/float/bool dtype, either byte order, C or
// Fortran order) into float32; write <f4 or <f8, format 1.0, C order.
#include <cmath>
#include <cstring>
#include <limits>

#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::io {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

// ---- the header: a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
struct Header {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : s_(text), name_(name) {}

  Header parse() {
    Header h;
    bool have_descr = false, have_order = false, have_shape = false;
    skip_ws();
    expect('{');
    for (;;) {
      skip_ws();
      if (peek() == '}') break;
      const std::string key = string_literal();
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (peek() == '[') fail("structured dtypes are not supported");
        h.descr = string_literal();
        have_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
        have_order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        have_shape = true;
      } else {
        fail("unexpected key '" + key + "'");
      }
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() != '}') fail("expected ',' or '}'");
    }
    ++i_;  // '}'
    skip_ws();
    if (i_ != s_.size()) fail("unexpected text after the header dict");
    if (!have_descr) fail("no 'descr' key");
    if (!have_order) fail("no 'fortran_order' key");
    if (!have_shape) fail("no 'shape' key");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw DataError("bad .npy header: " + why, name_);
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string string_literal() {
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string");
    const size_t start = ++i_;
    while (i_ < s_.size() && s_[i_] != q) ++i_;
    if (i_ >= s_.size()) fail("unterminated string");
    return std::string(s_.substr(start, i_++ - start));
  }
  bool boolean() {
    if (s_.substr(i_, 4) == "True") {
      i_ += 4;
      return true;
    }
    if (s_.substr(i_, 5) == "False") {
      i_ += 5;
      return false;
    }
    fail("'fortran_order' is neither True nor False");
  }
  Shape tuple() {
    Shape shape;
    expect('(');
    for (;;) {
      skip_ws();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') fail("bad shape");
      int64_t d = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (d > (std::numeric_limits<int64_t>::max() - 9) / 10) fail("dimension too large");
        d = d * 10 + (s_[i_++] - '0');
      }
      if (peek() == 'L') ++i_;  // Python 2 longs
      shape.push_back(d);
      if (shape.size() > static_cast<size_t>(Tensor::kMaxRank))
        throw DataError("rank above " + std::to_string(Tensor::kMaxRank) + " is not supported",
                        name_);
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() != ')') fail("bad shape");
    }
    ++i_;
    return shape;
  }

  std::string_view s_;
  const std::string& name_;
  size_t i_ = 0;
};

// ---- dtypes
enum class Kind { Float, Int, UInt, Bool };
struct DType {
  Kind kind;
  int size;
  bool big_endian;
};

DType parse_descr(const std::string& d, const std::string& name) {
  auto bad = [&]() -> DType { throw DataError("unsupported dtype '" + d + "'", name); };
  if (d.size() < 3) return bad();
  const char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') return bad();
  DType t{};
  switch (d[1]) {
    case 'f':
      t.kind = Kind::Float;
      break;
    case 'i':
      t.kind = Kind::Int;
      break;
    case 'u':
      t.kind = Kind::UInt;
      break;
    case 'b':
      t.kind = Kind::Bool;
      break;
    default:
      return bad();
  }
  const std::string size = d.substr(2);
  if (size == "1")
    t.size = 1;
  else if (size == "2")
    t.size = 2;
  else if (size == "4")
    t.size = 4;
  else if (size == "8")
    t.size = 8;
  else
    return bad();
  if (t.kind == Kind::Float && t.size == 1) return bad();
  if (t.kind == Kind::Bool && t.size != 1) return bad();
  if (order == '|' && t.size != 1) return bad();
  t.big_endian = order == '>';
  return t;
}

uint64_t load_uint(const unsigned char* p, int size, bool big) {
  uint64_t v = 0;
  if (big)
    for (int i = 0; i < size; ++i) v = (v << 8) | p[i];
  else
    for (int i = size - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

float half_to_float(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31)
    v = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    v = std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  return sign ? -v : v;
}

template <typename Convert>
void convert_all(const unsigned char* src, int size, bool big, float* out, int64_t n, Convert f) {
  for (int64_t i = 0; i < n; ++i) out[i] = f(load_uint(src + i * size, size, big));
}

void convert(const unsigned char* src, const DType& t, float* out, int64_t n) {
  if (n == 0) return;  // an empty array: out may be null (memcpy's arguments must not be)
  const int sz = t.size;
  const bool big = t.big_endian;
  switch (t.kind) {
    case Kind::Float:
      if (sz == 4 && !big) {
        std::memcpy(out, src, static_cast<size_t>(n) * 4);  // the common case (host is LE)
      } else if (sz == 4) {
        convert_all(src, 4, big, out, n, [](uint64_t u) {
          float f;
          const uint32_t w = static_cast<uint32_t>(u);
          std::memcpy(&f, &w, 4);
          return f;
        });
      } else if (sz == 8) {
        convert_all(src, 8, big, out, n, [](uint64_t u) {
          double d;
          std::memcpy(&d, &u, 8);
          return static_cast<float>(d);
        });
      } else {
        convert_all(src, 2, big, out, n,
                    [](uint64_t u) { return half_to_float(static_cast<uint16_t>(u)); });
      }
      break;
    case Kind::Int:
      convert_all(src, sz, big, out, n, [sz](uint64_t u) {
        const int shift = 64 - 8 * sz;
        const int64_t v = static_cast<int64_t>(u << shift) >> shift;  // sign-extend
        return static_cast<float>(v);
      });
      break;
    case Kind::UInt:
      convert_all(src, sz, big, out, n, [](uint64_t u) { return static_cast<float>(u); });
      break;
    case Kind::Bool:
      convert_all(src, 1, false, out, n, [](uint64_t u) { return u ? 1.0f : 0.0f; });
      break;
  }
}

// Values stored in Fortran (column-major) order, rearranged into C order.
std::vector<float> fortran_to_c(const std::vector<float>& f, const Shape& shape) {
  const size_t r = shape.size();
  std::vector<float> c(f.size());
  if (f.empty()) return c;
  std::vector<int64_t> stride(r, 1), idx(r, 0);  // column-major strides
  for (size_t i = 1; i < r; ++i) stride[i] = stride[i - 1] * shape[i - 1];
  for (size_t k = 0; k < c.size(); ++k) {
    int64_t off = 0;
    for (size_t i = 0; i < r; ++i) off += idx[i] * stride[i];
    c[k] = f[static_cast<size_t>(off)];
    for (size_t i = r; i-- > 0;) {  // next C-order index
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
  return c;
}

void put_le(std::string& out, uint64_t v, int size) {
  for (int i = 0; i < size; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

Tensor parse_npy(std::string_view bytes, const std::string& name, SourceInfo* info) {
  if (bytes.size() < 10 || bytes.substr(0, kMagicLen) != std::string_view(kMagic, kMagicLen))
    throw DataError("not an .npy file (no \\x93NUMPY magic)", name);
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  const int major = u[6];
  size_t header_len, header_start;
  if (major == 1) {
    header_len = load_uint(u + 8, 2, false);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw DataError("truncated .npy header", name);
    header_len = load_uint(u + 8, 4, false);
    header_start = 12;
  } else {
    throw DataError(
        "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(u[7]),
        name);
  }
  if (header_len > bytes.size() - header_start)
    throw DataError("truncated .npy header (it promises " + std::to_string(header_len) + " bytes)",
                    name);
  const Header h = HeaderParser(bytes.substr(header_start, header_len), name).parse();
  const DType t = parse_descr(h.descr, name);
  int64_t n;
  try {
    n = shape_numel(h.shape);
  } catch (Error& e) {
    e.locate(name);
    throw;
  }
  const size_t data_start = header_start + header_len;
  const size_t have = bytes.size() - data_start;
  if (static_cast<uint64_t>(n) > std::numeric_limits<uint64_t>::max() / 8 ||
      static_cast<uint64_t>(n) * static_cast<uint64_t>(t.size) > have)
    throw DataError("truncated .npy data: shape " + shape_str(h.shape) + " of " + h.descr +
                        " needs " + std::to_string(static_cast<uint64_t>(n) * t.size) +
                        " bytes, the file holds " + std::to_string(have),
                    name);
  const size_t need = static_cast<size_t>(n) * static_cast<size_t>(t.size);
  if (need != have)
    throw DataError(std::to_string(have - need) + " bytes of trailing garbage after the .npy data",
                    name);
  std::vector<float> values(static_cast<size_t>(n));
  convert(u + data_start, t, values.data(), n);
  if (h.fortran_order && h.shape.size() > 1) values = fortran_to_c(values, h.shape);
  if (info) {
    info->format = Format::Npy;
    info->dtype = h.descr;
    info->fortran_order = h.fortran_order;
  }
  return Tensor(h.shape, std::move(values));
}

std::string format_npy(const Tensor& t, bool f64) {
  std::string dict =
      std::string("{'descr': '") + (f64 ? "<f8" : "<f4") + "', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < t.rank(); ++i) {
    dict += std::to_string(t.shape()[static_cast<size_t>(i)]);
    if (i + 1 < t.rank() || t.rank() == 1) dict += ",";
    if (i + 1 < t.rank()) dict += " ";
  }
  dict += "), }";
  // Pad with spaces so that the data starts at a multiple of 64 bytes; '\n' ends the header.
  const size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicLen);
  out += '\x01';
  out += '\x00';
  put_le(out, dict.size(), 2);
  out += dict;
  const size_t n = static_cast<size_t>(t.size());
  out.reserve(out.size() + n * (f64 ? 8 : 4));
  for (size_t i = 0; i < n; ++i) {
    if (f64) {
      const double d = t.data()[i];
      uint64_t w;
      std::memcpy(&w, &d, 8);
      put_le(out, w, 8);
    } else {
      uint32_t w;
      std::memcpy(&w, t.data() + i, 4);
      put_le(out, w, 4);
    }
  }
  return out;
}

}  // namespace attnkit::io
