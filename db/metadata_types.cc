#include "db/metadata_types.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace neodb::db {
namespace {

constexpr int64_t kMicrosPerSecond = 1000000;

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, int64_t* m, int64_t* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp + (mp < 10 ? 3 : -9);
  *y = yoe + era * 400 + (*m <= 2);
}

int DaysInMonth(int64_t y, int64_t m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

absl::Status Bad(std::string_view text, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "datetime '", std::string(text.substr(0, 64)), "' is not RFC 3339 (e.g. 2024-05-01T00:00:00Z): ",
      std::string(what)));
}

// Reads exactly `n` digits at *pos.
bool Digits(std::string_view s, size_t* pos, int n, int64_t* out) {
  if (*pos + n > s.size()) return false;
  int64_t v = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[*pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool Expect(std::string_view s, size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

}  // namespace

absl::StatusOr<DateTime> ParseDateTime(std::string_view s) {
  size_t p = 0;
  int64_t year, month, day, hour, minute, second;
  if (!Digits(s, &p, 4, &year) || !Expect(s, &p, '-') || !Digits(s, &p, 2, &month) ||
      !Expect(s, &p, '-') || !Digits(s, &p, 2, &day)) {
    return Bad(s, "expected YYYY-MM-DD");
  }
  if (p >= s.size() || (s[p] != 'T' && s[p] != 't' && s[p] != ' ')) {
    return Bad(s, "expected 'T' and a time after the date");
  }
  ++p;
  if (!Digits(s, &p, 2, &hour) || !Expect(s, &p, ':') || !Digits(s, &p, 2, &minute) ||
      !Expect(s, &p, ':') || !Digits(s, &p, 2, &second)) {
    return Bad(s, "expected HH:MM:SS");
  }
  if (year < 1) return Bad(s, "year 0000 is out of range");
  if (month < 1 || month > 12) return Bad(s, "month out of range");
  if (day < 1 || day > DaysInMonth(year, month)) return Bad(s, "day out of range");
  if (hour > 23 || minute > 59) return Bad(s, "time out of range");
  if (second > 59) return Bad(s, "seconds out of range (leap seconds are not supported)");
  int64_t micros = 0;
  if (p < s.size() && s[p] == '.') {
    ++p;
    int digits = 0;
    while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
      if (++digits > 9) return Bad(s, "more than 9 fraction digits");
      if (digits <= 6) micros = micros * 10 + (s[p] - '0');
      ++p;
    }
    if (digits == 0) return Bad(s, "expected digits after '.'");
    for (int i = digits; i < 6; ++i) micros *= 10;
  }
  int64_t offset_minutes = 0;
  if (p < s.size() && (s[p] == 'Z' || s[p] == 'z')) {
    ++p;
  } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
    const int64_t sign = s[p] == '-' ? -1 : 1;
    ++p;
    int64_t oh, om;
    if (!Digits(s, &p, 2, &oh) || !Expect(s, &p, ':') || !Digits(s, &p, 2, &om) || oh > 23 ||
        om > 59) {
      return Bad(s, "expected a UTC offset +HH:MM");
    }
    offset_minutes = sign * (oh * 60 + om);
  } else {
    return Bad(s, "expected 'Z' or a UTC offset +HH:MM");
  }
  if (p != s.size()) return Bad(s, "trailing characters");
  const int64_t seconds = DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 +
                          second - offset_minutes * 60;
  DateTime t{seconds * kMicrosPerSecond + micros};
  if (t.micros < kMinDateTimeMicros || t.micros > kMaxDateTimeMicros) {
    return Bad(s, "outside years 0001..9999 in UTC");
  }
  return t;
}

std::string FormatDateTime(DateTime t) {
  int64_t seconds = t.micros / kMicrosPerSecond;
  int64_t micros = t.micros % kMicrosPerSecond;
  if (micros < 0) {
    micros += kMicrosPerSecond;
    --seconds;
  }
  int64_t days = seconds / 86400;
  int64_t rem = seconds % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  int64_t y, m, d;
  CivilFromDays(days, &y, &m, &d);
  char buf[64];
  if (micros == 0) {
    std::snprintf(buf, sizeof(buf), "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ",
                  static_cast<long long>(y), static_cast<long long>(m), static_cast<long long>(d),
                  static_cast<long long>(rem / 3600), static_cast<long long>(rem / 60 % 60),
                  static_cast<long long>(rem % 60));
  } else {
    std::snprintf(buf, sizeof(buf), "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%06lldZ",
                  static_cast<long long>(y), static_cast<long long>(m), static_cast<long long>(d),
                  static_cast<long long>(rem / 3600), static_cast<long long>(rem / 60 % 60),
                  static_cast<long long>(rem % 60), static_cast<long long>(micros));
  }
  return buf;
}

double GeoDistanceMeters(const GeoPoint& a, const GeoPoint& b) {
  constexpr double kRad = M_PI / 180.0;
  const double dlat = (b.lat - a.lat) * kRad;
  const double dlon = (b.lon - a.lon) * kRad;
  const double s1 = std::sin(dlat / 2), s2 = std::sin(dlon / 2);
  double h = s1 * s1 + std::cos(a.lat * kRad) * std::cos(b.lat * kRad) * s2 * s2;
  h = std::min(1.0, std::max(0.0, h));
  return 2 * kEarthRadiusMeters * std::asin(std::sqrt(h));
}

}  // namespace neodb::db
