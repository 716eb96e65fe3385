// .npz archives (a zip of NAME.npy members) through libzip, read from and written to memory
// so that standard input and output work like files.
#include <zip.h>

#include <memory>

#include "attnkit/core/error.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::io {

namespace {

std::string strip_npy(const std::string& member) {
  const std::string ext = ".npy";
  if (member.size() > ext.size() &&
      member.compare(member.size() - ext.size(), ext.size(), ext) == 0)
    return member.substr(0, member.size() - ext.size());
  return member;
}

// A read-only archive over bytes that outlive it.
class ZipReader {
 public:
  ZipReader(std::string_view bytes, const std::string& name) : name_(name) {
    zip_error_t err;
    zip_error_init(&err);
    zip_source_t* src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &err);
    if (src) {
      z_ = zip_open_from_source(src, ZIP_RDONLY, &err);
      if (!z_) zip_source_free(src);
    }
    if (!z_) {
      const std::string why = zip_error_strerror(&err);
      zip_error_fini(&err);
      throw DataError("not a valid .npz archive: " + why, name_);
    }
    zip_error_fini(&err);
    const zip_int64_t n = zip_get_num_entries(z_, 0);
    for (zip_int64_t i = 0; i < n; ++i) {
      const char* m = zip_get_name(z_, static_cast<zip_uint64_t>(i), 0);
      if (!m) continue;
      const std::string member = m;
      if (member.empty() || member.back() == '/') continue;  // folders
      entries_.push_back({strip_npy(member), static_cast<zip_uint64_t>(i)});
    }
  }
  ~ZipReader() {
    if (z_) zip_discard(z_);
  }
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;

  // "a, b, c" (for messages)
  std::string name_list() const {
    std::string s;
    for (const auto& e : entries_) s += (s.empty() ? "" : ", ") + e.name;
    return s.empty() ? "none" : s;
  }

  size_t size() const { return entries_.size(); }

  NpzMember read(size_t k) const {
    const Entry& e = entries_[k];
    const std::string where = name_ + ":" + e.name;
    zip_file_t* f = zip_fopen_index(z_, e.index, 0);
    if (!f) throw DataError("cannot open member '" + e.name + "': " + zip_strerror(z_), name_);
    std::string bytes;
    char buf[1 << 16];
    for (;;) {
      const zip_int64_t got = zip_fread(f, buf, sizeof buf);
      if (got < 0) {
        const std::string why = zip_file_strerror(f);
        zip_fclose(f);
        throw DataError("corrupt member '" + e.name + "': " + why, name_);
      }
      if (got == 0) break;
      bytes.append(buf, static_cast<size_t>(got));
    }
    zip_fclose(f);
    NpzMember m{e.name, Tensor(), SourceInfo{}};
    m.tensor = parse_npy(bytes, where, &m.info);
    m.info.format = Format::Npz;
    m.info.member = e.name;
    return m;
  }

  NpzMember read(const std::string& member) const {
    for (size_t k = 0; k < entries_.size(); ++k)
      if (entries_[k].name == member) return read(k);
    throw DataError("no array '" + member + "' in the archive (it holds: " + name_list() + ")",
                    name_);
  }

 private:
  struct Entry {
    std::string name;
    zip_uint64_t index;
  };
  std::string name_;
  zip_t* z_ = nullptr;
  std::vector<Entry> entries_;
};

}  // namespace

std::vector<NpzMember> parse_npz(std::string_view bytes, const std::string& name) {
  ZipReader z(bytes, name);
  std::vector<NpzMember> out;
  for (size_t k = 0; k < z.size(); ++k) out.push_back(z.read(k));
  return out;
}

Tensor parse_tensor(std::string_view bytes, const std::string& name, const std::string& member,
                    SourceInfo* info) {
  const Format f = detect_format(bytes);
  if (!member.empty() && f != Format::Npz)
    throw DataError("not an .npz archive, so it has no member '" + member + "'", name);
  switch (f) {
    case Format::Npy:
      return parse_npy(bytes, name, info);
    case Format::Idx:
      return parse_idx(bytes, name, info);
    case Format::Pgm:
      return parse_pgm(bytes, name, info);
    case Format::Png:
      return parse_png(bytes, name, info);
    case Format::Text: {
      // A picture in another format, or other binary data: say so rather than quote its
      // bytes as a number that is not one.
      const std::string kind = binary_kind(bytes);
      if (is_foreign_picture(bytes))
        throw DataError(kind + ": convert it to PNG (or PGM, .npy or text)", name);
      if (!kind.empty())
        throw DataError(kind + ", not a tensor (.npy, .npz, PNG, PGM, IDX or text)", name);
      if (info) *info = SourceInfo{Format::Text, "text", false, ""};
      return parse_text(bytes, name);
    }
    case Format::Npz:
      break;
  }
  ZipReader z(bytes, name);
  NpzMember m = [&] {
    if (!member.empty()) return z.read(member);
    if (z.size() != 1)
      throw DataError("the archive holds " + std::to_string(z.size()) + " arrays (" +
                          z.name_list() + "): name one as " + name + ":NAME",
                      name);
    return z.read(size_t{0});
  }();
  if (info) *info = m.info;
  return std::move(m.tensor);
}

std::map<std::string, Tensor> read_npz(const std::string& path) {
  const std::string bytes = read_all(path);
  if (detect_format(bytes) != Format::Npz) throw DataError("not an .npz archive", path);
  std::map<std::string, Tensor> out;
  for (auto& m : parse_npz(bytes, path)) out.emplace(m.name, std::move(m.tensor));
  return out;
}

std::string format_npz(const std::vector<std::pair<std::string, const Tensor*>>& arrays, bool f64) {
  auto fail = [](const std::string& why) -> void {
    throw Error("cannot build the .npz archive: " + why);
  };
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t* out = zip_source_buffer_create(nullptr, 0, 0, &err);
  if (!out) fail(zip_error_strerror(&err));
  zip_t* z = zip_open_from_source(out, ZIP_TRUNCATE, &err);
  if (!z) {
    zip_source_free(out);
    fail(zip_error_strerror(&err));
  }
  zip_error_fini(&err);
  zip_source_keep(out);  // it outlives the archive: the bytes are read from it after close
  std::unique_ptr<zip_source_t, decltype(&zip_source_free)> keep(out, zip_source_free);
  std::vector<std::string> members;  // each buffer must live until zip_close()
  members.reserve(arrays.size());
  for (const auto& [name, t] : arrays) {
    members.push_back(format_npy(*t, f64));
    zip_source_t* s = zip_source_buffer(z, members.back().data(), members.back().size(), 0);
    const zip_int64_t idx = s ? zip_file_add(z, (name + ".npy").c_str(), s, ZIP_FL_ENC_UTF_8) : -1;
    if (idx < 0) {
      if (s) zip_source_free(s);
      const std::string why = zip_strerror(z);
      zip_discard(z);
      fail("member '" + name + "': " + why);
    }
    // Same input, same bytes: a fixed time stamp (1980-01-01, the zip epoch) and deflate.
    if (zip_set_file_compression(z, static_cast<zip_uint64_t>(idx), ZIP_CM_DEFLATE, 0) != 0 ||
        zip_file_set_dostime(z, static_cast<zip_uint64_t>(idx), 0, (0 << 9) | (1 << 5) | 1, 0) !=
            0) {
      const std::string why = zip_strerror(z);
      zip_discard(z);
      fail(why);
    }
  }
  if (zip_close(z) != 0) {
    const std::string why = zip_strerror(z);
    zip_discard(z);
    fail(why);
  }
  if (arrays.empty() || zip_source_is_deleted(out)) {
    // libzip writes nothing for an empty archive: the end-of-central-directory record alone.
    std::string empty = "PK\x05\x06";
    empty.append(18, '\0');
    return empty;
  }
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_source_stat(out, &st) != 0 || !(st.valid & ZIP_STAT_SIZE) || zip_source_open(out) != 0)
    fail("cannot read the archive back");
  std::string bytes(static_cast<size_t>(st.size), '\0');
  const zip_int64_t got = zip_source_read(out, bytes.data(), st.size);
  zip_source_close(out);
  if (got < 0 || static_cast<zip_uint64_t>(got) != st.size) fail("short read of the archive");
  return bytes;
}

}  // namespace attnkit::io
