// Synthetic task: dates written in many human formats → ISO 8601 (YYYY-MM-DD).
//
// Each example draws a day uniformly from 1950-01-01 to 2049-12-31 and one of the formats
// below uniformly (lower case, English names; the weekday is the true one):
//   3 march 1998          03 march 1998        march 3, 1998        march 3 1998
//   3 mar 1998            mar 3, 1998          3rd of march 1998    march 3rd, 1998
//   tuesday, march 3 1998 tue 3 mar 1998       tuesday 3 march 1998 3 march 98
//   03/03/98  (US month/day/two-digit year)    3/3/1998 (US month/day/year)
//   03.03.1998 (European day.month.year)       1998/03/03  19980303
// Two-digit years mean 1950–2049 (50–99 → 19xx, 00–49 → 20xx), so every source has one
// reading. The alignments are easy to see: the day, month and year of the source map to
// fixed places of the target.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnkit::data {

struct Date {
  int year = 1970, month = 1, day = 1;
};

bool is_leap_year(int year);
int days_in_month(int year, int month);
bool valid_date(const Date& d);
// Days since 1970-01-01 (negative before), and back (proleptic Gregorian).
int64_t days_from_civil(const Date& d);
Date civil_from_days(int64_t days);
// 0 = monday ... 6 = sunday.
int weekday(const Date& d);
std::string iso_date(const Date& d);  // "1998-03-03"
// Parses "YYYY-MM-DD" strictly (a real date); false otherwise.
bool parse_iso_date(const std::string& text, Date* out);

// The number of formats, and date `d` written in format `f` (0 <= f < count).
int date_format_count();
std::string format_date(const Date& d, int f);

struct DateExample {
  std::string source, target;
};
// `count` seeded examples (the same seed gives the same examples on every machine).
std::vector<DateExample> generate_dates(int64_t count, uint64_t seed);

}  // namespace attnkit::data
