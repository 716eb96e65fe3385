#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/io/tensor_io.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_io_test {

using namespace attnkit;
using namespace attnkit::io;

namespace {

// A .npy file by hand: magic, version, header length (u16 for 1.0, u32 otherwise), the
// dict padded to a multiple of 64 with '\n' last, then the data bytes.
std::string make_npy(int major, const std::string& dict, const std::string& data, bool pad = true) {
  const size_t pre = major == 1 ? 10 : 12;
  std::string h = dict;
  if (pad) {
    h.append((64 - (pre + h.size() + 1) % 64) % 64, ' ');
    h += '\n';
  }
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const size_t n = h.size();
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    out += static_cast<char>((n >> (8 * i)) & 0xff);
  return out + h + data;
}

template <typename T>
std::string le_bytes(const std::vector<T>& v) {
  std::string s(v.size() * sizeof(T), '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

template <typename T>
std::string be_bytes(const std::vector<T>& v) {
  std::string s = le_bytes(v);
  for (size_t i = 0; i < v.size(); ++i)
    std::reverse(s.begin() + static_cast<long>(i * sizeof(T)),
                 s.begin() + static_cast<long>((i + 1) * sizeof(T)));
  return s;
}

Tensor iota(Shape shape) {
  Tensor t(std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(i) * 0.5f - 1.25f;
  return t;
}

// The message and line of the DataError that f throws.
template <typename F>
std::pair<std::string, long> data_error(F f) {
  try {
    f();
  } catch (const DataError& e) {
    return {e.what(), e.line()};
  }
  FAIL("no DataError thrown");
  return {};
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("detect_format by content") {
  CHECK(detect_format(std::string_view("\x93NUMPY\x01\x00", 8)) == Format::Npy);
  CHECK(detect_format(std::string_view("PK\x03\x04", 4)) == Format::Npz);
  CHECK(detect_format(std::string_view("PK\x05\x06", 4)) == Format::Npz);
  CHECK(detect_format("1 2 3\n") == Format::Text);
  CHECK(detect_format("") == Format::Text);
  CHECK(detect_format("\x93NUM") == Format::Text);
}

TEST_CASE(".npy round trips of rank 0 to 4, f32 and f64") {
  for (const Shape& shape :
       {Shape{}, Shape{5}, Shape{0}, Shape{2, 3}, Shape{2, 3, 4}, Shape{2, 1, 3, 2}, Shape{0, 3}}) {
    const Tensor t = iota(shape);
    for (bool f64 : {false, true}) {
      const std::string bytes = format_npy(t, f64);
      CHECK(bytes.size() % (f64 ? 8 : 4) == 0);
      // The header ends in '\n' and the data starts at a multiple of 64.
      const size_t hlen =
          static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
      CHECK((10 + hlen) % 64 == 0);
      CHECK(bytes[9 + hlen] == '\n');
      CHECK(bytes.size() == 10 + hlen + static_cast<size_t>(t.size()) * (f64 ? 8 : 4));
      SourceInfo info;
      const Tensor back = parse_npy(bytes, "x.npy", &info);
      CHECK(info.format == Format::Npy);
      CHECK(info.dtype == (f64 ? "<f8" : "<f4"));
      test::check_close(back, t, 0, 0);
    }
  }
  // The exact header NumPy writes.
  const std::string b = format_npy(iota({3}));
  CHECK(b.substr(10).rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 0) == 0);
  CHECK(format_npy(Tensor::scalar(1)).find("'shape': ()") != std::string::npos);
  CHECK(format_npy(iota({2, 3})).find("'shape': (2, 3)") != std::string::npos);
}

TEST_CASE(".npy versions 1.0, 2.0 and 3.0 by hand") {
  const std::vector<float> v{1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -1e-3f};
  for (int major : {1, 2, 3}) {
    const std::string bytes =
        make_npy(major, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", le_bytes(v));
    const Tensor t = parse_npy(bytes, "v.npy");
    CHECK(t.shape() == Shape{2, 3});
    CHECK(t.values() == v);
  }
  // Header variations: keys in any order, double quotes, no trailing comma, spaces, no pad.
  for (const char* dict :
       {"{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}",
        "{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(2,3)}",
        "  { 'descr' : '<f4' , 'fortran_order' : False , 'shape' : ( 2 , 3 , ) , }  "}) {
    CAPTURE(dict);
    CHECK(parse_npy(make_npy(1, dict, le_bytes(v)), "v.npy").values() == v);
    CHECK(parse_npy(make_npy(1, dict, le_bytes(v), false), "v.npy").values() == v);
  }
  const Tensor s = parse_npy(make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                                      le_bytes(std::vector<double>{2.5})),
                             "s.npy");
  CHECK(s.rank() == 0);
  CHECK(s[0] == 2.5f);
  const Tensor r1 =
      parse_npy(make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }",
                         le_bytes(std::vector<double>{1, 2, 3, 4, 5})),
                "r.npy");
  CHECK(r1.shape() == Shape{5});
  CHECK(r1[4] == 5.0f);
}

TEST_CASE(".npy dtypes: byte orders, ints, unsigned, bool, half") {
  auto read = [](const std::string& descr, const std::string& data, int64_t n,
                 SourceInfo* info = nullptr) {
    return parse_npy(make_npy(1,
                              "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" +
                                  std::to_string(n) + ",), }",
                              data),
                     "d.npy", info);
  };
  const std::vector<float> want{1, -2, 3, -4};
  SourceInfo info;
  CHECK(read(">f4", be_bytes(std::vector<float>{1, -2, 3, -4}), 4, &info).values() == want);
  CHECK(info.dtype == ">f4");
  CHECK(read("<f8", le_bytes(std::vector<double>{1, -2, 3, -4}), 4).values() == want);
  CHECK(read(">f8", be_bytes(std::vector<double>{1, -2, 3, -4}), 4).values() == want);
  CHECK(read("|i1", le_bytes(std::vector<int8_t>{1, -2, 3, -4}), 4).values() == want);
  CHECK(read("<i2", le_bytes(std::vector<int16_t>{1, -2, 3, -4}), 4).values() == want);
  CHECK(read(">i2", be_bytes(std::vector<int16_t>{1, -2, 3, -4}), 4).values() == want);
  CHECK(read("<i4", le_bytes(std::vector<int32_t>{1, -2, 3, -4}), 4).values() == want);
  CHECK(read(">i4", be_bytes(std::vector<int32_t>{1, -2, 3, -4}), 4).values() == want);
  CHECK(read("<i8", le_bytes(std::vector<int64_t>{1, -2, 3, -4}), 4).values() == want);
  CHECK(read(">i8", be_bytes(std::vector<int64_t>{1, -2, 3, -4}), 4, &info).values() == want);
  CHECK(info.dtype == ">i8");
  const std::vector<float> uwant{1, 200, 3, 255};
  CHECK(read("|u1", le_bytes(std::vector<uint8_t>{1, 200, 3, 255}), 4).values() == uwant);
  CHECK(read("<u2", le_bytes(std::vector<uint16_t>{1, 200, 3, 255}), 4).values() == uwant);
  CHECK(read(">u2", be_bytes(std::vector<uint16_t>{1, 200, 3, 255}), 4).values() == uwant);
  CHECK(read("<u4", le_bytes(std::vector<uint32_t>{1, 200, 3, 255}), 4).values() == uwant);
  CHECK(read(">u8", be_bytes(std::vector<uint64_t>{1, 200, 3, 255}), 4).values() == uwant);
  CHECK(read("<u8", le_bytes(std::vector<uint64_t>{~0ull}), 1)[0] == 18446744073709551616.0f);
  CHECK(read("<i8", le_bytes(std::vector<int64_t>{std::numeric_limits<int64_t>::min()}), 1)[0] ==
        -9223372036854775808.0f);
  CHECK(read("|b1", std::string("\x01\x00\x01", 3), 3).values() == std::vector<float>{1, 0, 1});
  // float16: 1.0 = 0x3c00, -2.0 = 0xc000, 65504 = 0x7bff, smallest denormal = 0x0001, inf
  const Tensor h =
      read("<f2", le_bytes(std::vector<uint16_t>{0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00}), 5);
  CHECK(h[0] == 1.0f);
  CHECK(h[1] == -2.0f);
  CHECK(h[2] == 65504.0f);
  CHECK(h[3] == std::ldexp(1.0f, -24));
  CHECK(std::isinf(h[4]));
  CHECK(read(">f2", be_bytes(std::vector<uint16_t>{0x3c00}), 1)[0] == 1.0f);
  for (const char* bad : {"<c8", "<f16", "|f1", "<b2", "<U3", "O", "<M8", "<i3", "f4"}) {
    CAPTURE(bad);
    auto [msg, line] = data_error([&] { read(bad, std::string(64, '\0'), 1); });
    CHECK(contains(msg, "unsupported dtype"));
  }
}

TEST_CASE(".npy Fortran order is transposed into C order") {
  // a = [[0, 1, 2], [3, 4, 5]] stored column by column: 0 3 1 4 2 5
  const std::string d = make_npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                                 le_bytes(std::vector<float>{0, 3, 1, 4, 2, 5}));
  SourceInfo info;
  const Tensor t = parse_npy(d, "f.npy", &info);
  CHECK(info.fortran_order);
  CHECK(t.values() == std::vector<float>{0, 1, 2, 3, 4, 5});
  // rank 3: shape (2, 3, 4); element [i, j, k] = 100 i + 10 j + k, Fortran offset i + 2 j + 6 k
  std::vector<double> f(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) f[static_cast<size_t>(i + 2 * j + 6 * k)] = 100 * i + 10 * j + k;
  const Tensor t3 = parse_npy(
      make_npy(1, "{'descr': '>f8', 'fortran_order': True, 'shape': (2, 3, 4), }", be_bytes(f)),
      "f.npy");
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) CHECK(t3.at(i, j, k) == static_cast<float>(100 * i + 10 * j + k));
  // rank 1 and 0: the same either way
  CHECK(parse_npy(make_npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }",
                           le_bytes(std::vector<float>{1, 2, 3})),
                  "f.npy")
            .values() == std::vector<float>{1, 2, 3});
}

TEST_CASE(".npy errors name the file and come before any allocation") {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  const std::string data = le_bytes(std::vector<float>(6, 1.0f));
  const std::string good = make_npy(1, dict, data);
  try {
    parse_npy(good.substr(0, good.size() - 1), "cut.npy");
    FAIL("no throw");
  } catch (const DataError& e) {
    CHECK(e.file() == "cut.npy");
    CHECK(contains(e.what(), "truncated"));
  }
  CHECK(contains(data_error([&] { parse_npy(good + "xx", "g.npy"); }).first, "trailing"));
  CHECK(contains(data_error([&] { parse_npy(good.substr(0, 40), "g.npy"); }).first, "truncated"));
  CHECK(contains(data_error([&] { parse_npy(good.substr(0, 8), "g.npy"); }).first, "not an .npy"));
  CHECK(contains(data_error([&] { parse_npy("hello world", "g.npy"); }).first, "not an .npy"));
  // Zero elements: an empty tensor of the right shape (no copy from a null buffer: UBSan
  // flagged memcpy(nullptr, ...) here), in every dtype path.
  for (const char* descr : {"<f4", ">f4", "<f8", "<i4"}) {
    const Tensor e = parse_npy(
        make_npy(
            1, std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (0, 4), }",
            ""),
        "e.npy");
    CHECK(e.shape() == Shape{0, 4});
    CHECK(e.size() == 0);
  }
  // 10^12 elements promised by a tiny file: refused before anything is allocated (4 TB
  // would end in std::bad_alloc, not in a DataError saying the file is truncated).
  auto [msg, line] = data_error([&] {
    parse_npy(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }",
                       data),
              "huge.npy");
  });
  CHECK(contains(msg, "truncated"));
  // A count that overflows, and rank 5.
  data_error([&] {
    parse_npy(
        make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
                 data),
        "o.npy");
  });
  CHECK(contains(
      data_error([&] {
        parse_npy(
            make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 6), }",
                     data),
            "r5.npy");
      }).first,
      "rank"));
  // Malformed headers.
  for (const char* bad :
       {"", "{", "{'descr': '<f4', 'fortran_order': False}", "{'descr': '<f4', 'shape': (2, 3)}",
        "{'fortran_order': False, 'shape': (2, 3)}",
        "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} junk",
        "{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}",
        "{'descr: '<f4', 'fortran_order': False, 'shape': (2, 3)}",
        "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3)}"}) {
    CAPTURE(bad);
    try {
      parse_npy(make_npy(1, bad, data), "bad.npy");
      FAIL("no throw");
    } catch (const DataError& e) {
      CHECK(e.file() == "bad.npy");
    }
  }
  // A header length beyond the file, and an unknown version.
  std::string longhdr = good;
  longhdr[8] = '\xff';
  longhdr[9] = '\x7f';
  CHECK(contains(data_error([&] { parse_npy(longhdr, "g.npy"); }).first, "truncated"));
  std::string v9 = good;
  v9[6] = 9;
  CHECK(contains(data_error([&] { parse_npy(v9, "g.npy"); }).first, "version"));
}

TEST_CASE(".npz archives in memory: round trip, members, errors") {
  const Tensor a = iota({2, 3}), b = iota({4}), c = iota({2, 2, 2, 2});
  const std::string z = format_npz({{"a", &a}, {"b", &b}, {"c", &c}});
  CHECK(detect_format(z) == Format::Npz);
  const auto members = parse_npz(z, "z.npz");
  REQUIRE(members.size() == 3);
  CHECK(members[0].name == "a");
  CHECK(members[2].name == "c");
  test::check_close(members[2].tensor, c, 0, 0);
  CHECK(members[1].info.format == Format::Npz);
  CHECK(members[1].info.member == "b");
  SourceInfo info;
  test::check_close(parse_tensor(z, "z.npz", "b", &info), b, 0, 0);
  CHECK(info.member == "b");
  CHECK(info.dtype == "<f4");
  auto [msg, line] = data_error([&] { parse_tensor(z, "z.npz", "nope", nullptr); });
  CHECK(contains(msg, "no array 'nope'"));
  CHECK(contains(msg, "a, b, c"));
  CHECK(
      contains(data_error([&] { parse_tensor(z, "z.npz", "", nullptr); }).first, "holds 3 arrays"));
  // one array: a bare archive is enough
  const std::string one = format_npz({{"w", &a}}, true);
  test::check_close(parse_tensor(one, "one.npz", "", &info), a, 0, 0);
  CHECK(info.dtype == "<f8");
  // Same input, same bytes.
  CHECK(format_npz({{"a", &a}, {"b", &b}}) == format_npz({{"a", &a}, {"b", &b}}));
  // Members are deflated: a long run of zeros compresses.
  const Tensor zeros({100, 100});
  CHECK(format_npz({{"z", &zeros}}).size() < 2000);
  // Not a zip, a truncated zip, a member syntax on something else.
  CHECK(
      contains(data_error([&] { parse_npz(z.substr(0, z.size() / 2), "cut.npz"); }).first, "npz"));
  CHECK(contains(data_error([&] { parse_tensor("1 2\n", "t.txt", "x", nullptr); }).first,
                 "not an .npz"));
  // An empty archive
  const std::string empty = format_npz({});
  CHECK(parse_npz(empty, "e.npz").empty());
  CHECK(contains(data_error([&] { parse_tensor(empty, "e.npz", "", nullptr); }).first,
                 "holds 0 arrays"));
}

TEST_CASE("split_member") {
  using P = std::pair<std::string, std::string>;
  CHECK(split_member("a.npz:w") == P{"a.npz", "w"});
  CHECK(split_member("dir/a.NPZ:enc.w") == P{"dir/a.NPZ", "enc.w"});
  CHECK(split_member("-:w") == P{"-", "w"});
  CHECK(split_member("a.npz") == P{"a.npz", ""});
  CHECK(split_member("a.npy") == P{"a.npy", ""});
  CHECK(split_member("c:/x.txt") == P{"c:/x.txt", ""});
  CHECK(split_member("a.npz:") == P{"a.npz:", ""});
}

TEST_CASE("text: parse shapes, comments, numbers") {
  Tensor t = parse_text("# a comment\n1 2 3\n4\t5   6  # trailing\n\n\n", "m.txt");
  CHECK(t.shape() == Shape{2, 3});
  CHECK(t.values() == std::vector<float>{1, 2, 3, 4, 5, 6});
  t = parse_text("1 2 3", "row.txt");
  CHECK(t.shape() == Shape{1, 3});
  t = parse_text("1.5e3 -2E-2 +7 .5 -0 nan inf -inf NaN Infinity 1e40 -1e40 1e-50\r\n", "n.txt");
  REQUIRE(t.shape() == Shape{1, 13});
  CHECK(t[0] == 1500.0f);
  CHECK(t[1] == -0.02f);
  CHECK(t[2] == 7.0f);
  CHECK(t[3] == 0.5f);
  CHECK(std::signbit(t[4]));
  CHECK(std::isnan(t[5]));
  CHECK(t[6] == std::numeric_limits<float>::infinity());
  CHECK(t[7] == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(t[8]));
  CHECK(std::isinf(t[9]));
  CHECK(t[10] == std::numeric_limits<float>::infinity());
  CHECK(t[11] == -std::numeric_limits<float>::infinity());
  CHECK(t[12] == 0.0f);
  // 3-D: blank lines (one or more, maybe with spaces) between matrices; comment lines are
  // not separators.
  t = parse_text("1 2\n3 4\n\n5 6\n# c\n7 8\n  \n\n9 10\n11 12\n", "b.txt");
  CHECK(t.shape() == Shape{3, 2, 2});
  CHECK(t.at(1, 1, 0) == 7.0f);
  CHECK(t.at(2, 1, 1) == 12.0f);
}

TEST_CASE("text errors carry the 1-based line") {
  auto [m1, l1] = data_error([] { parse_text("1 2 3 4\n5 6 7 8\n# x\n1 2 3\n", "r.txt"); });
  CHECK(m1 == "expected 4 columns, found 3");
  CHECK(l1 == 4);
  auto [m2, l2] = data_error([] { parse_text("1 2\n3 abc\n", "n.txt"); });
  CHECK(m2 == "not a number: 'abc'");
  CHECK(l2 == 2);
  auto [m3, l3] = data_error([] { parse_text("1 2\n3 1,5\n", "n.txt"); });
  CHECK(m3 == "not a number: '1,5'");
  auto [m4, l4] = data_error([] { parse_text("# only a comment\n\n  \n", "e.txt"); });
  CHECK(m4 == "no numbers");
  data_error([] { parse_text("", "e.txt"); });
  // ragged matrices of a 3-D tensor: the matrix that differs is named by its first line
  auto [m5, l5] = data_error([] { parse_text("1 2\n3 4\n\n5 6\n\n7 8\n9 10\n", "b.txt"); });
  CHECK(contains(m5, "matrix 2 has 1 row, expected 2"));
  CHECK(l5 == 4);
  auto [m6, l6] = data_error([] { parse_text("1 2\n3 4\n\n5 6\n7 8\n9 10\n", "b.txt"); });
  CHECK(contains(m6, "matrix 2 has 3 rows"));
  CHECK(l6 == 4);
  auto [m7, l7] = data_error([] { parse_text("1 2\n3 4\n\n5 6 0\n", "b.txt"); });
  CHECK(m7 == "expected 2 columns, found 3");
  CHECK(l7 == 4);
  // the error names the file (a parse that throws nothing fails here, not passes)
  bool thrown = false;
  try {
    parse_text("1 x", "f.txt");
  } catch (const DataError& e) {
    thrown = true;
    CHECK(e.file() == "f.txt");
  }
  CHECK_MESSAGE(thrown, "parse_text(\"1 x\") threw no DataError");
}

TEST_CASE("text output: layout, precision, rank rules") {
  CHECK(format_text(Tensor::scalar(2.5f)) == "2.5\n");
  CHECK(format_text(Tensor({3}, std::vector<float>{1, 0.1f, -3})) == "1 0.1 -3\n");
  CHECK(format_text(Tensor({2, 2}, std::vector<float>{1, 2, 3, 4})) == "1 2\n3 4\n");
  CHECK(format_text(Tensor({2, 1, 2}, std::vector<float>{1, 2, 3, 4})) == "1 2\n\n3 4\n");
  CHECK(format_text(Tensor({1, 3}, std::vector<float>{NAN, INFINITY, -INFINITY})) ==
        "nan inf -inf\n");
  CHECK(format_text(Tensor({1, 3}, std::vector<float>{-NAN, 1e20f, 1e-7f})) == "nan 1e+20 1e-07\n");
  CHECK(format_text(Tensor({1, 2}, std::vector<float>{3.14159265f, 2.0f / 3}), 3) ==
        "3.14 0.667\n");
  CHECK_THROWS_AS(format_text(Tensor({1, 1, 1, 1})), ShapeError);
  try {
    format_text(Tensor({1, 1, 1, 1}));
  } catch (const ShapeError& e) {
    CHECK(contains(e.what(), "text holds rank <= 3; write .npy"));
  }
}

TEST_CASE("text: shortest output reads back exactly") {
  Rng rng(11);
  Tensor t({50, 40});
  for (int64_t i = 0; i < t.size(); ++i) {
    uint32_t bits;
    do bits = static_cast<uint32_t>(rng.next());
    while (((bits >> 23) & 0xff) == 0xff);  // finite
    float f;
    std::memcpy(&f, &bits, 4);
    t[i] = i % 2 ? f : static_cast<float>(rng.normal());
  }
  const std::string s = format_text(t);
  CHECK(s.find(" \n") == std::string::npos);
  const Tensor back = parse_text(s, "r.txt");
  REQUIRE(back.shape() == t.shape());
  CHECK(std::memcmp(back.data(), t.data(), static_cast<size_t>(t.size()) * 4) == 0);
  // and rank 3, through %.9g as well (9 digits also round-trip)
  Tensor b({3, 4, 5});
  for (int64_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(rng.normal());
  for (int p : {-1, 9}) {
    const Tensor back3 = parse_text(format_text(b, p), "b.txt");
    REQUIRE(back3.shape() == b.shape());
    CHECK(back3.values() == b.values());
  }
}

TEST_CASE("files: every format round trips through write_tensor/read_tensor") {
  test::TempDir dir;
  for (const Shape& shape : {Shape{}, Shape{4}, Shape{2, 3}, Shape{2, 3, 4}, Shape{2, 1, 3, 2}}) {
    const Tensor t = iota(shape);
    CAPTURE(shape_str(shape));
    for (const char* name : {"t.npy", "t.npz", "t.npz:weights", "t.txt"}) {
      if (shape.size() == 4 && std::string(name) == "t.txt") {
        CHECK_THROWS_AS(write_tensor(dir.path + "/" + name, t), ShapeError);
        continue;
      }
      const std::string p = dir.path + "/" + name;
      write_tensor(p, t);
      SourceInfo info;
      const Tensor back = read_tensor(p, &info);
      if (std::string(name) == "t.txt") {
        CHECK(info.format == Format::Text);
        // text is rank 2 or 3: a scalar reads back as [1, 1], a vector as [1, n]
        CHECK(back.values() == t.values());
      } else {
        test::check_close(back, t, 0, 0);
      }
      if (std::string(name) == "t.npz:weights") CHECK(info.member == "weights");
      if (std::string(name) == "t.npz") CHECK(info.member == "arr_0");
    }
  }
  // f64 output
  const Tensor t = iota({2, 2});
  WriteOptions o;
  o.f64 = true;
  write_tensor(dir.path + "/d.npy", t, o);
  SourceInfo info;
  read_tensor(dir.path + "/d.npy", &info);
  CHECK(info.dtype == "<f8");
  // several arrays
  const Tensor u = iota({3});
  write_npz(dir.path + "/m.npz", {{"t", &t}, {"u", &u}});
  const auto all = read_npz(dir.path + "/m.npz");
  CHECK(all.size() == 2);
  test::check_close(all.at("u"), u, 0, 0);
  test::check_close(read_tensor(dir.path + "/m.npz:t"), t, 0, 0);
  // the format is the content's, not the name's
  write_tensor(dir.path + "/looks.txt.npy", t);
  std::rename((dir.path + "/looks.txt.npy").c_str(), (dir.path + "/looks.txt").c_str());
  read_tensor(dir.path + "/looks.txt", &info);
  CHECK(info.format == Format::Npy);
  // the file mode is an ordinary one, not mkstemp's 0600
  struct stat st;
  REQUIRE(stat((dir.path + "/d.npy").c_str(), &st) == 0);
  const mode_t mask = umask(0);
  umask(mask);
  CHECK((st.st_mode & 0777) == (0666 & ~mask));
  // no temporaries left behind
  for (const auto& e : dir.entries()) CHECK(e.find(".tmp.") == std::string::npos);
}

TEST_CASE("read errors name the file") {
  try {
    read_tensor("/nonexistent/x.npy");
    FAIL("no throw");
  } catch (const IoError& e) {
    CHECK(e.file() == "/nonexistent/x.npy");
  }
  test::TempDir dir;
  try {
    read_all(dir.path);
    FAIL("no throw");
  } catch (const IoError& e) {
    CHECK(e.file() == dir.path);
  }
  std::ofstream(dir.path + "/r.txt") << "1 2\n3\n";
  try {
    read_tensor(dir.path + "/r.txt");
    FAIL("no throw");
  } catch (const DataError& e) {
    CHECK(e.file() == dir.path + "/r.txt");
    CHECK(e.line() == 2);
  }
}

TEST_CASE("AtomicFile: all or nothing") {
  test::TempDir dir;
  const std::string p = dir.path + "/out.txt";
  {
    AtomicFile f(p);
    f.write("partial");
    CHECK(dir.entries().size() == 1);  // the temporary
    CHECK(dir.entries()[0].rfind(".out.txt.tmp.", 0) == 0);
  }  // no commit
  CHECK(dir.entries().empty());
  {
    AtomicFile f(p);
    f.write("hello\n");
    f.commit();
  }
  CHECK(read_all(p) == "hello\n");
  CHECK(dir.entries() == std::vector<std::string>{"out.txt"});
  // a failure half-way keeps the old file as it was
  try {
    AtomicFile f(p);
    f.write("new");
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  CHECK(read_all(p) == "hello\n");
  CHECK(dir.entries().size() == 1);
  // a rank-4 text write fails before anything is created
  CHECK_THROWS_AS(write_tensor(dir.path + "/r4.txt", Tensor({1, 1, 1, 1})), ShapeError);
  CHECK(dir.entries().size() == 1);
  // a folder that does not exist
  CHECK_THROWS_AS(AtomicFile(dir.path + "/no/such/x.npy"), IoError);
  // devices are written directly, no temporary beside them
  {
    AtomicFile f("/dev/null");
    f.write("x");
    f.commit();
  }
  try {
    AtomicFile f("/dev/full");
    f.write(std::string(1 << 16, 'x'));
    f.commit();
    FAIL("no throw");
  } catch (const IoError& e) {
    CHECK(contains(e.what(), "write error"));
    CHECK(e.file() == "/dev/full");
  }
  try {
    write_tensor("/dev/full", Tensor({3, 3}));
    FAIL("no throw");
  } catch (const IoError& e) {
    CHECK(contains(e.what(), "write error"));
  }
}

// ---- IDX (MNIST's format), plain and gzip-compressed

namespace {

std::string gzip_bytes(const std::string& raw) {
  z_stream s;
  std::memset(&s, 0, sizeof s);
  REQUIRE(deflateInit2(&s, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&s, raw.size()) + 64, '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  s.avail_in = static_cast<uInt>(raw.size());
  s.next_out = reinterpret_cast<Bytef*>(&out[0]);
  s.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&s, Z_FINISH) == Z_STREAM_END);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

// An IDX header: type code, then the dimensions big-endian.
std::string idx_header(unsigned char type, const std::vector<uint32_t>& dims) {
  std::string h{'\0', '\0', static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int k = 3; k >= 0; --k) h += static_cast<char>((d >> (8 * k)) & 0xff);
  return h;
}

}  // namespace

TEST_CASE("idx: every element type, plain and gzip, equals NumPy's reading (golden files)") {
  for (const char* type : {"u8", "i8", "i16", "i32", "f32", "f64"}) {
    CAPTURE(type);
    const Tensor want = read_tensor(test::testdata(std::string("idx/") + type + ".npy"));
    SourceInfo plain, gz;
    const Tensor a = read_tensor(test::testdata(std::string("idx/") + type + ".idx"), &plain);
    const Tensor b = read_tensor(test::testdata(std::string("idx/") + type + ".idx.gz"), &gz);
    test::check_close(a, want, 0.0, 0.0);
    test::check_close(b, want, 0.0, 0.0);
    CHECK(plain.format == Format::Idx);
    CHECK(!plain.gzip);
    CHECK(gz.format == Format::Idx);
    CHECK(gz.gzip);
    CHECK(plain.dtype == gz.dtype);
  }
  SourceInfo info;
  read_tensor(test::testdata("idx/i16.idx"), &info);
  CHECK(info.dtype == ">i2");
}

TEST_CASE("idx: a damaged header or body is a DataError before anything large is allocated") {
  const std::string body(12, '\x07');
  const std::string good = idx_header(0x08, {3, 4}) + body;
  CHECK(parse_idx(good, "g.idx").shape() == Shape{3, 4});
  CHECK(detect_format(good) == Format::Idx);
  CHECK(detect_format(gzip_bytes(good)) == Format::Idx);
  CHECK(contains(data_error([&] { parse_idx("\x01\x00\x08\x01", "m.idx"); }).first,
                 "not an IDX file"));
  CHECK(contains(data_error([&] { parse_idx(idx_header(0x0A, {2}) + "xx", "t.idx"); }).first,
                 "unknown element type 0x0a"));
  CHECK(contains(data_error([&] { parse_idx(idx_header(0x08, {}), "r.idx"); }).first,
                 "0 dimensions (1 to 4 are read)"));
  CHECK(contains(data_error([&] {
                   parse_idx(idx_header(0x08, {1, 1, 1, 1, 1}), "r5.idx");
                 }).first,
                 "5 dimensions"));
  CHECK(contains(data_error([&] {
                   parse_idx(idx_header(0x08, {3, 0}), "z.idx");
                 }).first,
                 "dimension 2 is 0"));
  CHECK(contains(data_error([&] { parse_idx(good.substr(0, 9), "h.idx"); }).first,
                 "ends inside its header"));
  CHECK(contains(data_error([&] { parse_idx(good.substr(0, good.size() - 1), "s.idx"); }).first,
                 "cut short"));
  CHECK(contains(data_error([&] { parse_idx(good + "x", "l.idx"); }).first, "data after the end"));
  // Dimensions that multiply past 2^40, and a plain file promising 4 GB in 20 bytes.
  CHECK(contains(data_error([&] {
                   parse_idx(idx_header(0x0E, {65535, 65535, 65535, 65535}), "o.idx");
                 }).first,
                 "more than 2^40"));
  CHECK(contains(data_error([&] {
                   parse_idx(idx_header(0x08, {65536, 65536}) + "abcd", "p.idx");
                 }).first,
                 "cut short"));
  // The file is named; no line (a binary file has none).
  try {
    parse_idx(good + "x", "l.idx");
    FAIL("no DataError");
  } catch (const DataError& e) {
    CHECK(e.file() == "l.idx");
    CHECK(e.line() == 0);
  }
}

TEST_CASE("idx: gzip streams are inflated only as far as the header promises") {
  const std::string good = idx_header(0x08, {3, 4}) + std::string(12, '\x05');
  const std::string gz = gzip_bytes(good);
  CHECK(parse_idx(gz, "g.idx.gz").shape() == Shape{3, 4});
  // More data inside the stream than promised; the stream cut short; bytes after it.
  CHECK(contains(data_error([&] { parse_idx(gzip_bytes(good + "x"), "l.gz"); }).first,
                 "data after the 24 bytes"));
  CHECK(
      contains(data_error([&] { parse_idx(gz.substr(0, gz.size() - 12), "c.gz"); }).first, "gzip"));
  CHECK(contains(data_error([&] { parse_idx(gz + "junk", "j.gz"); }).first,
                 "after the end of the gzip stream"));
  // A damaged checksum (the trailer's CRC-32) is found.
  std::string bad = gz;
  bad[bad.size() - 8] = static_cast<char>(bad[bad.size() - 8] ^ 1);
  CHECK(contains(data_error([&] { parse_idx(bad, "crc.gz"); }).first, "damaged gzip"));
  // A header promising 2^36 bytes from a few hundred compressed ones is refused before any
  // allocation: deflate cannot expand more than 1032:1 (a "zip bomb" would have to).
  const std::string bomb =
      gzip_bytes(idx_header(0x08, {65536, 65536, 16}) + std::string(4096, '\0'));
  CHECK(contains(data_error([&] { parse_idx(bomb, "bomb.gz"); }).first, "more than"));
  // Only IDX is read compressed.
  CHECK(contains(data_error([&] { parse_tensor(gzip_bytes("1 2\n3 4\n"), "t.gz", ""); }).first,
                 "not an IDX file inside"));
  CHECK(contains(data_error([&] { parse_tensor("\x1f\x8b", "tiny.gz", ""); }).first, "gzip"));
}

TEST_CASE("idx: Fashion-MNIST as Debian installs it (dataset-fashion-mnist)") {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  if (::access((dir + "train-labels-idx1-ubyte.gz").c_str(), R_OK) != 0) {
    test::skip("no " + dir + " (the Debian package dataset-fashion-mnist; make deps installs it)");
    return;
  }
  // Reference values from Python's gzip and struct (independent of this reader).
  const Tensor labels = read_tensor(dir + "train-labels-idx1-ubyte.gz");
  REQUIRE(labels.shape() == Shape{60000});
  const float first[] = {9, 0, 0, 3, 0, 2, 7, 2, 5, 5};
  for (int i = 0; i < 10; ++i) CHECK(labels[i] == first[i]);
  std::vector<int> count(10, 0);
  for (int64_t i = 0; i < labels.size(); ++i) ++count[static_cast<size_t>(labels[i])];
  for (int c : count) CHECK(c == 6000);
  const Tensor images = read_tensor(dir + "train-images-idx3-ubyte.gz");
  REQUIRE(images.shape() == Shape{60000, 28, 28});
  double first_sum = 0, total = 0;
  for (int64_t i = 0; i < 784; ++i) first_sum += images[i];
  for (int64_t i = 0; i < images.size(); ++i) total += images[i];
  CHECK(first_sum == 76247);
  CHECK(total == 3431114169.0);
  CHECK(images.at(0, 14, 12) == 237);
}

}  // namespace attnkit_unit_io_test
