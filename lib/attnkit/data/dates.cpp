#include "attnkit/data/dates.h"

#include <cstdio>

#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"

namespace attnkit::data {

namespace {

const char* const kMonths[12] = {"january",   "february", "march",    "april",
                                 "may",       "june",     "july",     "august",
                                 "september", "october",  "november", "december"};
const char* const kDays[7] = {"monday", "tuesday",  "wednesday", "thursday",
                              "friday", "saturday", "sunday"};

std::string two(int v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02d", v % 100);
  return buf;
}
std::string num(int v) { return std::to_string(v); }
std::string abbr(const char* name) { return std::string(name, 3); }
std::string ordinal(int d) {
  const char* suffix = (d % 10 == 1 && d != 11)   ? "st"
                       : (d % 10 == 2 && d != 12) ? "nd"
                       : (d % 10 == 3 && d != 13) ? "rd"
                                                  : "th";
  return num(d) + suffix;
}

constexpr int kFormats = 17;
const Date kFirst{1950, 1, 1};
const Date kLast{2049, 12, 31};

}  // namespace

bool is_leap_year(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int y, int m) {
  static const int n[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap_year(y) ? 29 : n[m - 1];
}

bool valid_date(const Date& d) {
  return d.month >= 1 && d.month <= 12 && d.day >= 1 && d.day <= days_in_month(d.year, d.month);
}

// Howard Hinnant's days_from_civil / civil_from_days.
int64_t days_from_civil(const Date& d) {
  const int64_t y = d.year - (d.month <= 2);
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (d.month + (d.month > 2 ? -3 : 9)) + 2) / 5 + d.day - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

Date civil_from_days(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  Date d;
  d.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  d.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  d.year = static_cast<int>(yoe + era * 400 + (d.month <= 2));
  return d;
}

int weekday(const Date& d) {
  const int64_t z = days_from_civil(d);  // 1970-01-01 was a thursday (3)
  return static_cast<int>(((z % 7) + 7 + 3) % 7);
}

std::string iso_date(const Date& d) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", d.year, d.month, d.day);
  return buf;
}

bool parse_iso_date(const std::string& t, Date* out) {
  if (t.size() != 10 || t[4] != '-' || t[7] != '-') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (t[i] < '0' || t[i] > '9') return false;
  Date d{std::stoi(t.substr(0, 4)), std::stoi(t.substr(5, 2)), std::stoi(t.substr(8, 2))};
  if (!valid_date(d)) return false;
  *out = d;
  return true;
}

int date_format_count() { return kFormats; }

std::string format_date(const Date& d, int f) {
  if (!valid_date(d)) throw DataError("not a date: " + iso_date(d));
  const std::string month = kMonths[d.month - 1], mon = abbr(kMonths[d.month - 1]);
  const std::string wday = kDays[weekday(d)], wd = abbr(kDays[weekday(d)]);
  const std::string day = num(d.day), year = num(d.year);
  switch (f) {
    case 0:
      return day + " " + month + " " + year;
    case 1:
      return two(d.day) + " " + month + " " + year;
    case 2:
      return month + " " + day + ", " + year;
    case 3:
      return month + " " + day + " " + year;
    case 4:
      return day + " " + mon + " " + year;
    case 5:
      return mon + " " + day + ", " + year;
    case 6:
      return ordinal(d.day) + " of " + month + " " + year;
    case 7:
      return month + " " + ordinal(d.day) + ", " + year;
    case 8:
      return wday + ", " + month + " " + day + " " + year;
    case 9:
      return wd + " " + day + " " + mon + " " + year;
    case 10:
      return wday + " " + day + " " + month + " " + year;
    case 11:
      return day + " " + month + " " + two(d.year);
    case 12:
      return two(d.month) + "/" + two(d.day) + "/" + two(d.year);
    case 13:
      return num(d.month) + "/" + day + "/" + year;
    case 14:
      return two(d.day) + "." + two(d.month) + "." + year;
    case 15:
      return year + "/" + two(d.month) + "/" + two(d.day);
    case 16:
      return year + two(d.month) + two(d.day);
    default:
      throw DataError("date format " + std::to_string(f) + " outside [0, " +
                      std::to_string(kFormats) + ")");
  }
}

std::vector<DateExample> generate_dates(int64_t count, uint64_t seed) {
  if (count < 0) throw DataError("the number of examples must be >= 0");
  const int64_t first = days_from_civil(kFirst);
  const uint64_t span = static_cast<uint64_t>(days_from_civil(kLast) - first + 1);
  Rng rng(seed);
  std::vector<DateExample> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const Date d = civil_from_days(first + static_cast<int64_t>(rng.below(span)));
    const int f = static_cast<int>(rng.below(kFormats));
    out.push_back({format_date(d, f), iso_date(d)});
  }
  return out;
}

}  // namespace attnkit::data
