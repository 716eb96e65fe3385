// Reading and writing tensors: .npy (NumPy format 1.0/2.0/3.0), .npz (named arrays, through
// libzip) and text matrices; IDX (MNIST's and Fashion-MNIST's format, plain or
// gzip-compressed, through zlib) is read. The format of an input is detected by its content,
// never by its name; the format of an output follows its name (.npy, .npz, otherwise text).
//
// Text format: whitespace-separated numbers, one row per line; `#` starts a comment that
// runs to the end of the line; one or more blank lines separate the matrices of a rank-3
// tensor. A file of one matrix is rank 2 (a single row is [1, cols]). Ragged rows,
// non-numbers and empty input are DataErrors naming the line.
//
// Paths: "-" is standard input / output. "FILE.npz:NAME" names member NAME of an archive;
// a bare "FILE.npz" as input is accepted when the archive holds exactly one array.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attnkit/core/tensor.h"

namespace attnkit::io {

enum class Format { Text, Npy, Npz, Idx, Pgm, Png };

// What an input looked like on disk (tensor-info reports it).
struct SourceInfo {
  Format format = Format::Text;
  std::string dtype;  // "<f4", ">f8", "<i8", "|u1", ... as in the .npy header; "text"
  bool fortran_order = false;
  std::string member;  // the .npz member read, if any
  bool gzip = false;   // IDX: the file was gzip-compressed
};

// Format of a byte buffer by its first bytes: "\x93NUMPY" → Npy, "PK\x03\x04" (or an empty
// zip's "PK\x05\x06") → Npz, two zero bytes (IDX's magic) or gzip's 1f 8b → Idx, "P2" or
// "P5" and white space → Pgm, PNG's 8-byte signature → Png, anything else → Text.
Format detect_format(std::string_view head);

// Reads the whole of `path` ("-": standard input, which can be read once per process: a
// second read is a UsageError). Throws IoError naming the path.
std::string read_all(const std::string& path);

// Reads one tensor from `spec` (a path, "-", or "FILE.npz:NAME"), converting any supported
// dtype to float32. Errors are thrown with the path (and, for text, the line) attached.
Tensor read_tensor(const std::string& spec, SourceInfo* info = nullptr);

// Every array of an .npz archive, by name (the ".npy" suffix of members removed).
std::map<std::string, Tensor> read_npz(const std::string& path);

// Splits "FILE.npz:NAME" into {"FILE.npz", "NAME"}; any other spec gives {spec, ""}.
// ("-:NAME" names a member of an archive on standard input.)
std::pair<std::string, std::string> split_member(const std::string& spec);

// One tensor from bytes already read: the format is detected from the content; `member`
// picks an .npz member ("" = the only one). `name` is used in error messages.
Tensor parse_tensor(std::string_view bytes, const std::string& name, const std::string& member,
                    SourceInfo* info = nullptr);

// One array of an archive, with what it looked like on disk.
struct NpzMember {
  std::string name;  // without the ".npy" suffix
  Tensor tensor;
  SourceInfo info;
};
// Every array of an archive held in `bytes`, in archive order.
std::vector<NpzMember> parse_npz(std::string_view bytes, const std::string& name);
// The archive (deflated members NAME.npy) as bytes.
std::string format_npz(const std::vector<std::pair<std::string, const Tensor*>>& arrays,
                       bool f64 = false);

// Parsers and formatters over bytes; `name` is used in error messages.
Tensor parse_npy(std::string_view bytes, const std::string& name, SourceInfo* info = nullptr);
// IDX: bytes 0-1 zero, byte 2 the element type (08 u8, 09 i8, 0b i16, 0c i32, 0d f32,
// 0e f64), byte 3 the rank, then each dimension as a big-endian u32, then the elements
// big-endian in row-major order; or the same gzip-compressed (one gzip member). Values are
// converted to float32 as they are (u8 images stay 0-255). DataError, before anything large
// is allocated, for an unknown type, a zero dimension, a header cut short, data short of or
// beyond what the header promises, a promise larger than the compressed bytes could hold,
// and damaged gzip data.
Tensor parse_idx(std::string_view bytes, const std::string& name, SourceInfo* info = nullptr);
bool is_idx(std::string_view head);

// Pictures (io/image.cpp). Both give a rank-2 tensor [height, width] of values in [0, 1].
// PGM: P2 (ASCII) or P5 (binary; 16-bit samples big-endian when maxval > 255), maxval
// 1-65535, '#' comments in the header; one image a file (trailing bytes beyond white space are
// an error). A sample is its value / maxval; a sample above maxval is an error.
// PNG (libpng's simplified reader): grey files give their samples / 255 (8-bit or less) or /
// 65535 (16-bit), exactly; colour (RGB, palette) is converted to grey as luma
// Y = 0.299 R + 0.587 G + 0.114 B of the 8-bit samples (as PIL's convert("L"), unrounded),
// / 255 (16-bit colour: reduced to 8-bit sRGB by libpng first); an alpha channel is composed
// over black. DataError, before the pixels are allocated, for a damaged header, a zero or
// larger-than-the-file-could-hold size (PGM: the bytes the samples need; PNG: deflate's 1032:1
// limit) and beyond 2^28 pixels; then for short or damaged data.
Tensor parse_pgm(std::string_view bytes, const std::string& name, SourceInfo* info = nullptr);
Tensor parse_png(std::string_view bytes, const std::string& name, SourceInfo* info = nullptr);
bool is_pgm(std::string_view head);
bool is_png(std::string_view head);
// A grey picture of t: rank 2 (or rank 3 with one matrix), values in [0, 1] (a DataError
// naming the first value outside, NaN included). PGM: P5, maxval 255 (or 65535 with
// sixteen_bit); PNG: 8-bit grey. A value v becomes round(v · maxval).
std::string format_pgm(const Tensor& t, bool sixteen_bit = false);
std::string format_png(const Tensor& t);
std::string format_npy(const Tensor& t, bool f64 = false);
Tensor parse_text(std::string_view text, const std::string& name);
// Text of t (rank 0 to 3; rank 4 is a ShapeError): precision < 0 writes the shortest decimal
// that reads back to the same float; otherwise printf's %.{precision}g.
std::string format_text(const Tensor& t, int precision = -1);
// One number as format_text writes it ("nan", "inf", "-inf" for the non-finite).
std::string format_number(float v, int precision = -1);

struct WriteOptions {
  bool npy_on_stdout = false;  // "-" gets .npy bytes instead of text
  bool f64 = false;            // .npy/.npz as <f8 instead of <f4
  int precision = -1;          // text: see format_text
};

// Writes t to `path`: "-" → standard output; "X.npy" → .npy; "X.npz" or "X.npz:NAME" → an
// archive holding the one array (named NAME, default "arr_0"); "X.pgm" / "X.png" → an 8-bit
// grey picture (format_pgm, format_png); anything else → text.
// Files are written atomically (temporary file in the same folder, then rename), so a failed
// run leaves no output file; a path that is not a regular file (/dev/null, /dev/full, a
// FIFO) is written directly. Throws IoError ("write error") when the write fails.
void write_tensor(const std::string& path, const Tensor& t, const WriteOptions& opt = {});

// Writes an archive of named arrays atomically (deflated members, each NAME.npy).
void write_npz(const std::string& path,
               const std::vector<std::pair<std::string, const Tensor*>>& arrays, bool f64 = false);
void write_npz(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& arrays,
               bool f64 = false);

// A file written all at once or not at all: bytes go to a temporary file beside `path`,
// commit() renames it into place; destruction without commit() removes it. "-" writes to
// standard output; a non-regular file (device, FIFO) is written directly.
// Throws DataError naming `name` and the first row (and matrix, for a batch) that holds a NaN
// or an infinity. The attention tools refuse such input rather than let a NaN query become
// zero weights or an infinity become NaN (the README's conventions).
void require_finite(const Tensor& t, const std::string& name);

class AtomicFile;
// The whole of `bytes` as the file `path`, atomically (AtomicFile: written, then renamed).
void write_file(const std::string& path, std::string_view bytes);

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  void write(std::string_view bytes);  // throws IoError("write error") on failure
  void commit();                       // flush, close, rename; throws IoError on failure
  const std::string& path() const { return path_; }

 private:
  std::string path_, tmp_;
  int fd_ = -1;
  bool direct_ = false, committed_ = false;
};

}  // namespace attnkit::io
