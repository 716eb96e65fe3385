#include "attnkit/io/binary.h"

#include <cstdio>

#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::io {

namespace {

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// The length of the valid UTF-8 sequence at s[i] (0: none; a sequence cut by the end of
// `s` counts as valid when `cut_ok`: the end of a file's head).
size_t utf8_length(std::string_view s, size_t i, bool cut_ok = true) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = 0;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c >= 0xE0 && c <= 0xEF)
    n = 3;
  else if (c >= 0xF0 && c <= 0xF4)
    n = 4;
  else
    return 0;
  for (size_t k = 1; k < n; ++k) {
    if (i + k >= s.size()) return cut_ok ? s.size() - i : 0;
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

std::string_view picture_kind(std::string_view head) {
  if (starts(head, "\xFF\xD8\xFF")) return "a JPEG picture";
  if (starts(head, "GIF87a") || starts(head, "GIF89a")) return "a GIF picture";
  if (head.size() >= 12 && starts(head, "RIFF") && head.substr(8, 4) == "WEBP")
    return "a WebP picture";
  if (starts(head, std::string_view("II*\0", 4)) || starts(head, std::string_view("MM\0*", 4)))
    return "a TIFF picture";
  // "BM", then the file size and two reserved 16-bit zeros
  if (head.size() >= 14 && starts(head, "BM") && head[6] == 0 && head[7] == 0 && head[8] == 0 &&
      head[9] == 0)
    return "a BMP picture";
  return {};
}

}  // namespace

bool is_foreign_picture(std::string_view head) { return !picture_kind(head).empty(); }

std::string binary_kind(std::string_view head) {
  head = head.substr(0, 4096);
  if (const std::string_view p = picture_kind(head); !p.empty()) return std::string(p);
  switch (detect_format(head)) {
    case Format::Png:
      return "a PNG picture";
    case Format::Npz:
      return "an .npz archive";
    case Format::Npy:
      return "an .npy array";
    default:
      break;
  }
  if (starts(head, "\x1f\x8b")) return "gzip data";
  size_t bad = 0;
  for (size_t i = 0; i < head.size();) {
    const auto c = static_cast<unsigned char>(head[i]);
    if (c == 0) return "binary data";
    const size_t n = utf8_length(head, i);
    if (n == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') || c == 0x7F) {
      ++bad;
      ++i;
    } else {
      i += n;
    }
  }
  // A tenth or more of the bytes (and at least 4: binary_kind's "mostly"): binary; a stray
  // byte or two in text stays text, quoted escaped where a reader names it.
  if (bad >= 4 && bad * 10 >= head.size()) return "binary data";
  return "";
}

std::string read_text(const std::string& path, const std::string& hint) {
  std::string text = read_all(path);
  const std::string kind = binary_kind(text);
  if (!kind.empty())
    throw DataError(
        (kind == "binary data" ? kind : kind + (is_foreign_picture(text) ? "" : " (binary data)")) +
            ", expected text" + (hint.empty() ? "" : ": " + hint),
        path);
  return text;
}

std::string printable(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = utf8_length(s, i, false);
    if (n == 0 || (c < 0x20 && c != '\t' && c != '\n') || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace attnkit::io
