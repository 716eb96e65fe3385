// The synthetic dates task: calendar arithmetic, every format, and the generator.
#include <cctype>
#include <map>
#include <set>

#include "attnkit/core/error.h"
#include "attnkit/data/dates.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_data_dates_test {

using namespace attnkit;
using namespace attnkit::data;

namespace {

const char* const kMonth[12] = {"january",   "february", "march",    "april",
                                "may",       "june",     "july",     "august",
                                "september", "october",  "november", "december"};

// An independent reader of the sources: finds day, month and year from the words and
// numbers of a formatted date, using the documented conventions (slashes are US month/day,
// dots are European day.month, two-digit years 1950–2049, compact YYYYMMDD).
bool read_back(const std::string& s, Date* d) {
  std::vector<std::string> words;
  std::string cur;
  for (char c : s + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur += c;
    } else if (!cur.empty()) {
      words.push_back(cur);
      cur.clear();
    }
  }
  auto year2 = [](int y) { return y >= 50 ? 1900 + y : 2000 + y; };
  const bool slash = s.find('/') != std::string::npos, dot = s.find('.') != std::string::npos;
  if (words.size() == 1 && words[0].size() == 8) {
    *d = {std::stoi(words[0].substr(0, 4)), std::stoi(words[0].substr(4, 2)),
          std::stoi(words[0].substr(6, 2))};
    return true;
  }
  if (slash && words.size() == 3) {
    if (words[0].size() == 4) {
      *d = {std::stoi(words[0]), std::stoi(words[1]), std::stoi(words[2])};
    } else {
      const int y = std::stoi(words[2]);
      *d = {words[2].size() == 2 ? year2(y) : y, std::stoi(words[0]), std::stoi(words[1])};
    }
    return true;
  }
  if (dot && words.size() == 3) {
    *d = {std::stoi(words[2]), std::stoi(words[1]), std::stoi(words[0])};
    return true;
  }
  int month = 0, day = 0, year = 0;
  for (const auto& w : words) {
    for (int m = 0; m < 12; ++m)
      if (w == kMonth[m] || (w.size() == 3 && std::string(kMonth[m]).compare(0, 3, w) == 0))
        month = m + 1;
    if (std::isdigit(static_cast<unsigned char>(w[0]))) {
      const int v = std::stoi(w);
      const bool suffixed = !std::isdigit(static_cast<unsigned char>(w.back()));
      if (w.size() == 4 && !suffixed)
        year = v;
      else if (day == 0 || suffixed)
        day = v;
      else
        year = year2(v);
    }
  }
  *d = {year, month, day};
  return month != 0 && day != 0 && year != 0;
}

}  // namespace

TEST_CASE("dates: civil-day arithmetic and weekdays") {
  CHECK(days_from_civil({1970, 1, 1}) == 0);
  CHECK(days_from_civil({2000, 3, 1}) == 11017);
  CHECK(iso_date(civil_from_days(-1)) == "1969-12-31");
  for (int64_t z = -40000; z < 40000; z += 37) CHECK(days_from_civil(civil_from_days(z)) == z);
  CHECK(weekday({1998, 3, 3}) == 1);   // a tuesday
  CHECK(weekday({2024, 2, 29}) == 3);  // a thursday
  CHECK(weekday({1970, 1, 1}) == 3);
  CHECK(is_leap_year(2000));
  CHECK(!is_leap_year(1900));
  CHECK(days_in_month(2024, 2) == 29);
  Date d;
  CHECK(parse_iso_date("1998-03-03", &d));
  CHECK(d.day == 3);
  CHECK(!parse_iso_date("1998-02-29", &d));
  CHECK(!parse_iso_date("1998-3-03", &d));
  CHECK(!parse_iso_date("1998-13-01", &d));
}

TEST_CASE("dates: the formats of the issue, spelled out") {
  const Date d{1998, 3, 3};
  std::set<std::string> all;
  for (int f = 0; f < date_format_count(); ++f) all.insert(format_date(d, f));
  CHECK(all.size() == static_cast<size_t>(date_format_count()));  // all different
  for (const char* s : {"3 march 1998", "03/03/98", "march 3, 1998", "tuesday, march 3 1998",
                        "3rd of march 1998", "03.03.1998", "tue 3 mar 1998", "19980303"})
    CHECK_MESSAGE(all.count(s) == 1, s);
  CHECK(format_date({2001, 12, 22}, 7) == "december 22nd, 2001");
  CHECK(format_date({2001, 12, 11}, 6) == "11th of december 2001");
  CHECK(format_date({2021, 1, 2}, 12) == "01/02/21");
  CHECK_THROWS_AS(format_date(d, date_format_count()), DataError);
  CHECK_THROWS_AS(format_date({1998, 2, 30}, 0), DataError);
}

TEST_CASE("dates: every generated pair is a valid ISO date matching its source") {
  const auto ex = generate_dates(3000, 5);
  REQUIRE(ex.size() == 3000);
  std::map<std::string, int> shapes;
  for (const auto& e : ex) {
    Date want, got;
    REQUIRE_MESSAGE(parse_iso_date(e.target, &want), e.target);
    CHECK(want.year >= 1950);
    CHECK(want.year <= 2049);
    REQUIRE_MESSAGE(read_back(e.source, &got), e.source);
    CHECK_MESSAGE(iso_date(got) == e.target, e.source << " -> " << e.target);
    // the weekday, when written, is the true one
    static const char* const days[7] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
    for (int w = 0; w < 7; ++w)
      if (e.source.compare(0, 3, days[w]) == 0) CHECK_MESSAGE(weekday(want) == w, e.source);
    std::string shape;
    for (char c : e.source)
      shape += std::isdigit(static_cast<unsigned char>(c))   ? '9'
               : std::isalpha(static_cast<unsigned char>(c)) ? 'a'
                                                             : c;
    ++shapes[shape];
  }
  CHECK(shapes.size() >= 15);
  // seeded: the same seed gives the same examples, another seed others
  const auto again = generate_dates(50, 5), other = generate_dates(50, 6);
  bool same = true, differ = false;
  for (size_t i = 0; i < 50; ++i) {
    same = same && again[i].source == ex[i].source && again[i].target == ex[i].target;
    differ = differ || other[i].source != ex[i].source;
  }
  CHECK(same);
  CHECK(differ);
  CHECK(generate_dates(0, 1).empty());
  CHECK_THROWS_AS(generate_dates(-1, 1), DataError);
}

}  // namespace attnkit_unit_data_dates_test
