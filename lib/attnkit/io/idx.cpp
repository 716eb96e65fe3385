// IDX, the format of MNIST and Fashion-MNIST (LeCun's "THE IDX FILE FORMAT"), plain or
// gzip-compressed (zlib), read into float32 tensors. Every size is checked before anything
// is allocated: a plain file must hold exactly the bytes its header promises; a compressed
// one is inflated only as far as its header promises (one byte more is an error), into a
// buffer that grows with what the stream actually gives, and the promise must fit what
// deflate can produce from the compressed bytes at all (1032:1 at most), so neither a lying
// header nor a "zip bomb" can make the reader allocate more than the data it really holds.
#include <zlib.h>

#include <cstring>
#include <limits>

#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::io {

namespace {

// The element types: code, size in bytes, NumPy's dtype string (big-endian, as on disk).
struct IdxType {
  unsigned char code;
  int bytes;
  const char* dtype;
};
constexpr IdxType kIdxTypes[] = {{0x08, 1, "|u1"}, {0x09, 1, "|i1"}, {0x0B, 2, ">i2"},
                                 {0x0C, 4, ">i4"}, {0x0D, 4, ">f4"}, {0x0E, 8, ">f8"}};
// Deflate's largest expansion: 258 bytes from a 2-bit code; 1032:1 in the limit.
constexpr uint64_t kMaxDeflateRatio = 1032;
constexpr int kMaxIdxRank = 4;  // the rank a Tensor holds

const IdxType* idx_type(unsigned char code) {
  for (const IdxType& t : kIdxTypes)
    if (t.code == code) return &t;
  return nullptr;
}

bool is_gzip(std::string_view b) {
  return b.size() >= 2 && static_cast<unsigned char>(b[0]) == 0x1f &&
         static_cast<unsigned char>(b[1]) == 0x8b;
}

uint32_t be32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// The header of `b` (at least 4 bytes): type, shape and the header's length. DataError for
// a header that is not IDX.
struct IdxHeader {
  const IdxType* type = nullptr;
  Shape shape;
  uint64_t header_bytes = 0, data_bytes = 0;
};

IdxHeader parse_header(std::string_view b, const std::string& name) {
  const auto* p = reinterpret_cast<const unsigned char*>(b.data());
  if (b.size() < 4 || p[0] != 0 || p[1] != 0)
    throw DataError("not an IDX file (its first two bytes must be 0)", name);
  IdxHeader h;
  h.type = idx_type(p[2]);
  if (!h.type) {
    const char* hex = "0123456789abcdef";
    throw DataError(std::string("IDX: unknown element type 0x") + hex[p[2] >> 4] + hex[p[2] & 15] +
                        " (known: 08 u8, 09 i8, 0b i16, 0c i32, 0d f32, 0e f64)",
                    name);
  }
  const int rank = p[3];
  if (rank < 1 || rank > kMaxIdxRank)
    throw DataError("IDX: " + std::to_string(rank) + " dimensions (1 to " +
                        std::to_string(kMaxIdxRank) + " are read)",
                    name);
  h.header_bytes = 4 + 4 * static_cast<uint64_t>(rank);
  if (b.size() < h.header_bytes)
    throw DataError("IDX: the file ends inside its header (" + std::to_string(rank) +
                        " dimensions need " + std::to_string(h.header_bytes) + " bytes)",
                    name);
  // The element count, guarded against overflow: 2^40 elements is far beyond any real file
  // and keeps count × 8 well inside 64 bits.
  constexpr uint64_t kMaxCount = uint64_t{1} << 40;
  uint64_t count = 1;
  for (int i = 0; i < rank; ++i) {
    const uint32_t d = be32(p + 4 + 4 * i);
    if (d == 0) throw DataError("IDX: dimension " + std::to_string(i + 1) + " is 0", name);
    if (count > kMaxCount / d)
      throw DataError("IDX: the dimensions multiply to more than 2^40 elements", name);
    count *= d;
    h.shape.push_back(static_cast<int64_t>(d));
  }
  h.data_bytes = count * static_cast<uint64_t>(h.type->bytes);
  return h;
}

// Inflates the gzip stream `z` into at most `limit` bytes; `*more` tells whether the stream
// had more to give. DataError for a damaged stream.
std::string inflate_gzip(std::string_view z, uint64_t limit, bool* more, const std::string& name) {
  z_stream s;
  std::memset(&s, 0, sizeof s);
  if (inflateInit2(&s, 16 + MAX_WBITS) != Z_OK)  // 16: gzip wrapper only
    throw Error("zlib: inflateInit2 failed");
  struct Guard {
    z_stream* s;
    ~Guard() { inflateEnd(s); }
  } guard{&s};
  // The output grows with what the stream gives (never with what a header promises), up to
  // `limit`, plus one byte that tells whether there is more.
  std::string out;
  unsigned char buf[1 << 16];
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(z.data()));
  uint64_t in_left = z.size();
  constexpr uInt kChunk = 1u << 30;
  *more = false;
  for (;;) {
    if (s.avail_in == 0 && in_left) {
      s.avail_in = static_cast<uInt>(std::min<uint64_t>(in_left, kChunk));
      in_left -= s.avail_in;
    }
    s.next_out = buf;
    s.avail_out = static_cast<uInt>(std::min<uint64_t>(sizeof buf, limit - out.size() + 1));
    const int rc = inflate(&s, Z_NO_FLUSH);
    const size_t wrote = static_cast<size_t>(s.next_out - buf);
    if (out.size() + wrote > limit) {
      out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(limit - out.size()));
      *more = true;
      return out;
    }
    out.append(reinterpret_cast<const char*>(buf), wrote);
    if (rc == Z_STREAM_END) {
      if (s.avail_in || in_left)
        throw DataError("bytes after the end of the gzip stream (one IDX file a file)", name);
      return out;
    }
    if (rc == Z_BUF_ERROR && s.avail_in == 0 && in_left == 0)
      throw DataError("the gzip stream is cut short", name);
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      throw DataError(std::string("damaged gzip data (zlib: ") + (s.msg ? s.msg : "error") + ")",
                      name);
  }
}

}  // namespace

bool is_idx(std::string_view head) {
  // Text never starts with NUL bytes, so two of them mean IDX (its header then says whether
  // it is a good one).
  return is_gzip(head) || (head.size() >= 2 && head[0] == 0 && head[1] == 0);
}

Tensor parse_idx(std::string_view bytes, const std::string& name, SourceInfo* info) {
  std::string inflated;
  std::string_view b = bytes;
  const bool gz = is_gzip(bytes);
  if (gz) {
    // First the header: 4 bytes, then the dimensions they announce.
    bool more = false;
    std::string head = inflate_gzip(bytes, 4, &more, name);
    if (head.size() < 4) throw DataError("IDX (gzip): the file ends inside its header", name);
    if (head[0] != 0 || head[1] != 0)
      throw DataError("gzip-compressed, but not an IDX file inside (only IDX is read compressed)",
                      name);
    const uint64_t header_bytes =
        4 + 4 * static_cast<uint64_t>(static_cast<unsigned char>(head[3]));
    head = inflate_gzip(bytes, header_bytes, &more, name);
    const IdxHeader h = parse_header(head, name);
    const uint64_t total = h.header_bytes + h.data_bytes;
    if (total > kMaxDeflateRatio * bytes.size() + 1024)
      throw DataError("IDX (gzip): the header promises " + std::to_string(total) +
                          " bytes, more than " + std::to_string(bytes.size()) +
                          " compressed bytes can hold",
                      name);
    inflated = inflate_gzip(bytes, total, &more, name);
    if (more)
      throw DataError(
          "IDX (gzip): data after the " + std::to_string(total) + " bytes the header promises",
          name);
    b = inflated;
  }
  const IdxHeader h = parse_header(b, name);
  const uint64_t have = b.size() - h.header_bytes;
  if (have != h.data_bytes)
    throw DataError(std::string("IDX") + (gz ? " (gzip)" : "") + ": " +
                        (have < h.data_bytes ? "the data is cut short" : "data after the end") +
                        " (the header promises " + std::to_string(h.data_bytes) + " bytes, " +
                        std::to_string(have) + " follow)",
                    name);
  Tensor t(h.shape);
  const auto* p = reinterpret_cast<const unsigned char*>(b.data() + h.header_bytes);
  float* out = t.data();
  const int64_t n = t.size();
  switch (h.type->code) {
    case 0x08:
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(p[i]);
      break;
    case 0x09:
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<int8_t>(p[i]));
      break;
    case 0x0B:
      for (int64_t i = 0; i < n; ++i)
        out[i] = static_cast<float>(static_cast<int16_t>((p[2 * i] << 8) | p[2 * i + 1]));
      break;
    case 0x0C:
      for (int64_t i = 0; i < n; ++i)
        out[i] = static_cast<float>(static_cast<int32_t>(be32(p + 4 * i)));
      break;
    case 0x0D:
      for (int64_t i = 0; i < n; ++i) {
        const uint32_t u = be32(p + 4 * i);
        std::memcpy(&out[i], &u, 4);
      }
      break;
    case 0x0E:
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t u = (uint64_t{be32(p + 8 * i)} << 32) | be32(p + 8 * i + 4);
        double d;
        std::memcpy(&d, &u, 8);
        out[i] = static_cast<float>(d);
      }
      break;
  }
  if (info) {
    *info = SourceInfo{};
    info->format = Format::Idx;
    info->dtype = h.type->dtype;
    info->gzip = gz;
  }
  return t;
}

}  // namespace attnkit::io
