#include "attnkit/nn/model_file.h"

#include <algorithm>
#include <boost/archive/archive_exception.hpp>
#include <boost/archive/impl/archive_serializer_map.ipp>
#include <boost/archive/impl/basic_text_iarchive.ipp>
#include <boost/archive/impl/text_iarchive_impl.ipp>
#include <boost/archive/text_iarchive.hpp>
#include <boost/archive/text_oarchive.hpp>
#include <boost/serialization/collection_size_type.hpp>
#include <boost/serialization/map.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <boost/serialization/version.hpp>
#include <cmath>
#include <cstring>
#include <new>
#include <sstream>

#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/params.h"

namespace attnkit::nn {

namespace archived {

// The name and shape of one tensor; its values follow the archive as raw float32.
struct TensorRecord {
  std::string name;
  std::vector<int64_t> shape;
  template <class A>
  void serialize(A& ar, const unsigned /*version*/) {
    ar& name& shape;
  }
};

// The metadata of a model file. Numbers are kept as their IEEE-754 bit patterns so that
// every double (NaN, infinities, -0) reads back exactly, whatever the archive's locale or
// precision.
struct Body {
  std::string config_yaml;
  std::map<std::string, std::vector<std::string>> strings;
  std::map<std::string, uint64_t> numbers;
  std::map<std::string, std::string> texts;
  std::vector<TensorRecord> tensors;
  template <class A>
  void serialize(A& ar, const unsigned /*version*/) {
    ar& config_yaml& strings& numbers& texts& tensors;
  }
};

// Boost's text archive, reading the same bytes, but with every collection count and string
// length checked against the characters left in the archive before anything is allocated.
// (Boost's own reader trusts them: `vector::reserve(count)`, `string::resize(size)`, so a
// file with a valid checksum but a count of 10^9 made the reader allocate gigabytes. In a text
// archive every element and every string byte takes at least one character, so a count or a
// length above what is left cannot be right.)
class BoundedTextIArchive : public boost::archive::text_iarchive_impl<BoundedTextIArchive> {
 public:
  explicit BoundedTextIArchive(std::istream& in)
      : boost::archive::text_iarchive_impl<BoundedTextIArchive>(in, 0) {
    init();  // the archive's header, as boost::archive::text_iarchive's constructor does
  }

 protected:
  friend class boost::archive::detail::interface_iarchive<BoundedTextIArchive>;
  friend class boost::archive::basic_text_iarchive<BoundedTextIArchive>;
  friend class boost::archive::load_access;
  using boost::archive::text_iarchive_impl<BoundedTextIArchive>::load;

  void load(boost::serialization::collection_size_type& t) {
    std::size_t count = 0;
    text_iarchive_impl::load(count);
    check(count, "a collection of ", " items");
    t = boost::serialization::collection_size_type(count);
  }
  void load(std::string& s) {
    std::size_t size = 0;
    text_iarchive_impl::load(size);
    check(size, "a string of ", " bytes");
    is.get();  // the space before the bytes
    s.resize(size);
    if (size > 0 && !is.read(&s[0], static_cast<std::streamsize>(size)))
      throw DataError("a string runs past the end");
  }

 private:
  void check(std::size_t n, const char* what, const char* unit) {
    const std::streamsize left = is.rdbuf()->in_avail();
    if (left < 0 || n > static_cast<std::size_t>(left))
      throw DataError(std::string(what) + std::to_string(n) + unit + " where " +
                      std::to_string(std::max<std::streamsize>(left, 0)) + " characters are left");
  }
};

}  // namespace archived

}  // namespace attnkit::nn

// The archive class's Boost templates are instantiated here (Boost's library has them for its
// own text_iarchive only), as Boost's documentation shows for derived archives.
namespace boost::archive {
template class detail::archive_serializer_map<attnkit::nn::archived::BoundedTextIArchive>;
template class basic_text_iarchive<attnkit::nn::archived::BoundedTextIArchive>;
template class text_iarchive_impl<attnkit::nn::archived::BoundedTextIArchive>;
}  // namespace boost::archive

BOOST_CLASS_VERSION(attnkit::nn::archived::TensorRecord, 1)
BOOST_CLASS_VERSION(attnkit::nn::archived::Body, 1)

namespace attnkit::nn {

namespace {

constexpr char kMagic[8] = {'\x89', 'A', 'K', 'M', '\r', '\n', '\x1a', '\n'};
constexpr size_t kHeader = 24;
constexpr uint32_t kMaxKind = 256;

void put_u32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}
void put_u64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}
uint32_t get_u32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}
uint64_t get_u64(const std::string& s, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

uint64_t double_bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}
double bits_double(uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

void append_floats(std::string& out, const Tensor& t) {
  const size_t at = out.size();
  out.resize(at + static_cast<size_t>(t.size()) * 4);
  char* p = &out[at];
  for (int64_t i = 0; i < t.size(); ++i) {
    uint32_t u;
    std::memcpy(&u, t.data() + i, 4);
    for (int k = 0; k < 4; ++k) *p++ = static_cast<char>((u >> (8 * k)) & 0xff);
  }
}

}  // namespace

uint32_t crc32(const void* data, size_t size, uint32_t crc) {
  static const auto table = [] {
    std::vector<uint32_t> t(256);
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

// ---- typed access

namespace {
[[noreturn]] void missing(const ModelFile& m, const std::string& what, const std::string& name) {
  throw DataError("model has no " + what + " '" + name + "'" +
                      (m.kind.empty() ? std::string() : " (a " + m.kind + " model)"),
                  m.file);
}
}  // namespace

const Tensor& ModelFile::tensor(const std::string& name) const {
  auto it = tensors.find(name);
  if (it == tensors.end()) missing(*this, "tensor", name);
  return it->second;
}

const std::vector<std::string>& ModelFile::string_list(const std::string& name) const {
  auto it = strings.find(name);
  if (it == strings.end()) missing(*this, "string list", name);
  return it->second;
}

double ModelFile::number(const std::string& name) const {
  auto it = numbers.find(name);
  if (it == numbers.end()) missing(*this, "number", name);
  return it->second;
}

const std::string& ModelFile::text(const std::string& name) const {
  auto it = texts.find(name);
  if (it == texts.end()) missing(*this, "text", name);
  return it->second;
}

int64_t ModelFile::integer(const std::string& name, int64_t lo, int64_t hi) const {
  const double v = number(name);
  if (!(v >= static_cast<double>(lo) && v <= static_cast<double>(hi)) || std::floor(v) != v ||
      std::fabs(v) > 9007199254740992.0)
    throw DataError("model number '" + name + "' is " + std::to_string(v) +
                        ", expected a whole number from " + std::to_string(lo) + " to " +
                        std::to_string(hi),
                    file);
  return static_cast<int64_t>(v);
}

int64_t ModelFile::arch(const std::string& key, int64_t lo, int64_t hi,
                        const std::string& legacy) const {
  const std::string name = "arch/" + key;
  return integer(!numbers.count(name) && !legacy.empty() && numbers.count(legacy) ? legacy : name,
                 lo, hi);
}

// ---- bytes

std::string format_model_file(const ModelFile& m) {
  if (m.kind.empty() || m.kind.size() > kMaxKind)
    throw Error("a model file needs a kind of 1 to " + std::to_string(kMaxKind) + " bytes");
  archived::Body body;
  body.config_yaml = m.config_yaml;
  body.strings = m.strings;
  body.texts = m.texts;
  for (const auto& [k, v] : m.numbers) body.numbers[k] = double_bits(v);
  for (const auto& [name, t] : m.tensors) body.tensors.push_back({name, t.shape().vec()});
  std::ostringstream arch;
  {
    boost::archive::text_oarchive oa(arch);
    oa << body;
  }
  const std::string text = arch.str();

  std::string payload;
  put_u32(payload, static_cast<uint32_t>(m.kind.size()));
  payload += m.kind;
  put_u64(payload, text.size());
  payload += text;
  size_t floats = 0;
  for (const auto& [name, t] : m.tensors) floats += static_cast<size_t>(t.size());
  payload.reserve(payload.size() + 4 * floats);
  for (const auto& [name, t] : m.tensors) append_floats(payload, t);

  std::string out(kMagic, kMagic + 8);
  put_u32(out, kModelFormatVersion);
  put_u32(out, crc32(payload.data(), payload.size()));
  put_u64(out, payload.size());
  out += payload;
  return out;
}

ModelFile parse_model_file(const std::string& bytes, const std::string& name,
                           const std::string& expected_kind) {
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    throw DataError("not an attnkit model file (bad magic)", name);
  if (bytes.size() < kHeader) throw DataError("truncated model file (incomplete header)", name);
  const uint32_t version = get_u32(bytes, 8);
  if (version == 0 || version > kModelFormatVersion)
    throw DataError("unsupported model format version " + std::to_string(version) +
                        " (this attnkit reads versions 1 to " +
                        std::to_string(kModelFormatVersion) + ")",
                    name);
  const uint32_t crc = get_u32(bytes, 12);
  const uint64_t length = get_u64(bytes, 16);
  const uint64_t have = bytes.size() - kHeader;
  if (length > have)
    throw DataError("truncated model file (" + std::to_string(have) + " of " +
                        std::to_string(length) + " payload bytes)",
                    name);
  if (length < have)
    throw DataError("corrupted model file (" + std::to_string(have - length) +
                        " bytes after the end of the model)",
                    name);
  if (crc32(bytes.data() + kHeader, length) != crc)
    throw DataError("corrupted model file (checksum mismatch)", name);

  // The checksum matched, but the content is still checked as if it had not: a file written
  // by a buggy or hostile program must fail cleanly too.
  auto corrupt = [&](const std::string& why) {
    return DataError("corrupted model file (" + why + ")", name);
  };
  size_t at = kHeader;
  auto need = [&](uint64_t n, const char* what) {
    if (n > bytes.size() - at) throw corrupt(std::string(what) + " runs past the end");
  };
  need(4, "kind length");
  const uint32_t kind_len = get_u32(bytes, at);
  at += 4;
  if (kind_len == 0 || kind_len > kMaxKind) throw corrupt("bad kind length");
  need(kind_len, "kind");
  ModelFile m;
  m.file = name;
  m.kind = bytes.substr(at, kind_len);
  at += kind_len;
  if (!expected_kind.empty() && m.kind != expected_kind)
    throw DataError("is " + std::string(std::strchr("aeiou", m.kind[0]) ? "an " : "a ") + m.kind +
                        " model, expected " + expected_kind,
                    name);
  need(8, "metadata length");
  const uint64_t text_len = get_u64(bytes, at);
  at += 8;
  need(text_len, "metadata");
  archived::Body body;
  try {
    std::istringstream arch(bytes.substr(at, text_len));
    archived::BoundedTextIArchive ia(arch);
    ia >> body;
  } catch (const std::exception& e) {
    throw corrupt(std::string("metadata: ") + e.what());
  }
  at += text_len;
  m.config_yaml = std::move(body.config_yaml);
  m.strings = std::move(body.strings);
  m.texts = std::move(body.texts);
  for (const auto& [k, v] : body.numbers) m.numbers[k] = bits_double(v);
  for (const auto& rec : body.tensors) {
    int64_t n;
    try {
      n = shape_numel(rec.shape);
    } catch (const Error& e) {
      throw corrupt("tensor '" + rec.name + "': " + e.what());
    }
    need(static_cast<uint64_t>(n) * 4, "tensor data");
    Tensor t(rec.shape);
    const unsigned char* p = reinterpret_cast<const unsigned char*>(bytes.data() + at);
    for (int64_t i = 0; i < n; ++i, p += 4) {
      const uint32_t u = p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24);
      std::memcpy(t.data() + i, &u, 4);
    }
    at += static_cast<size_t>(n) * 4;
    if (!m.tensors.emplace(rec.name, std::move(t)).second)
      throw corrupt("tensor '" + rec.name + "' appears twice");
  }
  if (at != bytes.size()) throw corrupt("unused bytes after the tensor data");
  return m;
}

void save_model_file(const std::string& path, const ModelFile& m) {
  const std::string bytes = format_model_file(m);
  io::write_file(path, bytes);
}

ModelFile load_model_file(const std::string& path, const std::string& expected_kind) {
  const std::string bytes = io::read_all(path);
  try {
    return parse_model_file(bytes, path, expected_kind);
  } catch (const std::bad_alloc&) {
    throw Error("out of memory while reading the model (" + std::to_string(bytes.size() >> 20) +
                    " MB on disk; its tensors take about as much again)",
                path);
  }
}

// ---- parameters and optimiser state

void put_params(ModelFile& m, const ParamStore& store, const std::string& prefix) {
  for (const ad::Parameter* p : store.params()) m.tensors[prefix + p->name] = p->value.clone();
}

void get_params(const ModelFile& m, ParamStore& store, const std::string& prefix) {
  for (const ad::Parameter* p : store.params()) {
    auto it = m.tensors.find(prefix + p->name);
    if (it == m.tensors.end())
      throw DataError("model has no values for parameter '" + p->name + "'", m.file);
    if (it->second.shape() != p->value.shape())
      throw DataError("parameter '" + p->name + "' has shape " + shape_str(it->second.shape()) +
                          " in the model file but the model needs " + shape_str(p->value.shape()),
                      m.file);
  }
  for (auto it = m.tensors.lower_bound(prefix);
       it != m.tensors.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
    if (!store.contains(it->first.substr(prefix.size())))
      throw DataError("model file has values for '" + it->first.substr(prefix.size()) +
                          "', which is not a parameter of this model",
                      m.file);
  for (ad::Parameter* p : store.params()) p->value = m.tensors.at(prefix + p->name).clone();
}

void put_optimizer(ModelFile& m, const Optimizer& opt, const std::string& prefix) {
  OptimizerState s = opt.state();
  m.numbers[prefix + "steps"] = static_cast<double>(s.steps);
  m.numbers[prefix + "lr"] = s.lr;
  for (auto& [k, t] : s.buffers) m.tensors[prefix + k] = std::move(t);
}

void get_optimizer(const ModelFile& m, Optimizer& opt, const std::string& prefix) {
  OptimizerState s;
  s.steps = m.integer(prefix + "steps", 0, int64_t{1} << 53);
  s.lr = m.number(prefix + "lr");
  for (auto it = m.tensors.lower_bound(prefix);
       it != m.tensors.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
    s.buffers.emplace(it->first.substr(prefix.size()), it->second.clone());
  try {
    opt.load_state(s);
  } catch (Error& e) {
    e.locate(m.file);
    throw;
  }
}

}  // namespace attnkit::nn
