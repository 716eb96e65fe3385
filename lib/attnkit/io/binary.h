// Files that are not what a reader expects: pictures in other formats, archives and other
// binary data where text (or a PNG) is expected. Readers name what they found in words,
// never by printing its bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace attnkit::io {

// What a file's first bytes say it is, when it is not text: "a JPEG picture", "a GIF
// picture", "a BMP picture", "a WebP picture", "a TIFF picture", "a PNG picture", "an .npz
// archive", "an .npy array", "gzip data", or "binary data" (a NUL byte, or a tenth or more, at
// least 4, of bytes that are neither UTF-8 nor white space, in the first 4 KiB); "" for text.
std::string binary_kind(std::string_view head);
// JPEG, GIF, BMP, WebP or TIFF: a picture the readers do not decode (convert it to PNG).
bool is_foreign_picture(std::string_view head);

// io::read_all for a reader of text: DataError naming the path for a binary file ("an .npz
// archive (binary data), expected text"; a picture: "a JPEG picture, expected text").
// `hint` is appended to the message (what to give instead).
std::string read_text(const std::string& path, const std::string& hint = "");

// `s` with every byte that is neither printable ASCII, a tab, nor part of valid UTF-8 shown as
// \xNN (what an error message may quote from a file).
std::string printable(std::string_view s);

// The most pixels a picture (PGM, PNG) may have: refused from its header, before its pixels
// are decoded or allocated, naming the size and the limit. Default kDefaultMaxPixels
// (2048 x 2048); tools that read pictures raise it with --max-pixels. A process-wide setting.
constexpr uint64_t kDefaultMaxPixels = uint64_t{1} << 22;
void set_max_pixels(uint64_t n);
uint64_t max_pixels();

}  // namespace attnkit::io
