// --shard K/N: the slices of a tool's items, and text output that concatenates.
#include <cctype>
#include <charconv>
#include <cstring>
#include <system_error>

#include "attnkit/cli/cli.h"

namespace attnkit::cli {

Shard parse_shard(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return UsageError("--shard: bad value '" + text + "' (" + why + ")");
  };
  const size_t slash = text.find('/');
  if (slash == std::string::npos) throw bad("expected K/N, e.g. 2/8");
  auto number = [&](const std::string& part) -> int64_t {
    int64_t v = 0;
    const char* b = part.data();
    const char* e = b + part.size();
    auto r = std::from_chars(b, e, v);
    if (part.empty() || r.ec != std::errc() || r.ptr != e) throw bad("expected K/N, e.g. 2/8");
    return v;
  };
  Shard s;
  s.k = number(text.substr(0, slash));
  s.n = number(text.substr(slash + 1));
  if (s.n < 1) throw bad("N must be at least 1");
  if (s.n > (int64_t{1} << 30)) throw bad("N is too large");
  if (s.k < 1 || s.k > s.n) throw bad("K must be between 1 and N");
  s.given = true;
  return s;
}

void check_shard_text_output(const App& app, const std::string& path) {
  if (!app.shard().given) return;
  const auto lower = [](std::string x) {
    for (char& c : x) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return x;
  };
  const std::string file = lower(io::split_member(path).first);
  auto ends = [&](const char* suf) {
    const size_t n = std::strlen(suf);
    return file.size() >= n && file.compare(file.size() - n, n, suf) == 0;
  };
  if (path == "-" ? app.write_options().npy_on_stdout : (ends(".npy") || ends(".npz")))
    throw UsageError("--shard writes text, whose slices concatenate: not " +
                     std::string(path == "-" ? "--npy" : "'" + path + "'") +
                     " (merge the text slices, then convert with tensor-convert)");
}

Tensor slice_first(const Tensor& t, int64_t begin, int64_t end) {
  if (t.rank() < 1 || begin < 0 || end < begin || end > t.dim(0))
    throw ShapeError("cannot take items " + std::to_string(begin) + ".." + std::to_string(end) +
                     " of a tensor of shape " + shape_str(t.shape()));
  Shape sh = t.shape();
  sh[0] = end - begin;
  const int64_t per = t.dim(0) ? t.size() / t.dim(0) : 0;
  std::vector<float> v(t.data() + begin * per, t.data() + end * per);
  return Tensor(sh, std::move(v));
}

void write_shard_tensor(const App& app, const std::string& path, const Tensor& t, int64_t first) {
  const io::WriteOptions w = app.write_options();
  if (!app.shard().given) {
    io::write_tensor(path, t, w);
    return;
  }
  check_shard_text_output(app, path);
  std::string text;
  try {
    text = io::format_text(t, w.precision);
  } catch (Error& e) {
    e.locate(path == "-" ? "<stdout>" : path);
    throw;
  }
  if (t.rank() == 3 && first > 0 && t.dim(0) > 0) text.insert(0, "\n");
  io::write_file(path, text);
}

}  // namespace attnkit::cli
