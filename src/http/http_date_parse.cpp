#include "http/http_date_parse.hpp"

#include "http/date.hpp"
#include "platform/system.hpp"

#include <array>
#include <chrono>

namespace tern::detail {

namespace {

constexpr const auto& short_days = day_abbreviations;
constexpr std::array<std::string_view, 7> long_days = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                                       "Thursday", "Friday", "Saturday"};
constexpr const auto& months = month_abbreviations;

/// A cursor over the field value; every reader fails (returns false) without moving on a
/// mismatch, and the caller gives up at the first failure.
struct cursor {
    std::string_view s;

    bool literal(std::string_view lit) noexcept {
        if (s.substr(0, lit.size()) != lit) return false;
        s.remove_prefix(lit.size());
        return true;
    }
    template <std::size_t N>
    bool name(const std::array<std::string_view, N>& names, int& index) noexcept {
        for (std::size_t i = 0; i < N; ++i) {
            if (literal(names[i])) {
                index = static_cast<int>(i);
                return true;
            }
        }
        return false;
    }
    /// Exactly `digits` decimal digits.
    bool number(int digits, int& value) noexcept {
        if (s.size() < static_cast<std::size_t>(digits)) return false;
        int v = 0;
        for (std::size_t i = 0; i < static_cast<std::size_t>(digits); ++i) {
            if (s[i] < '0' || s[i] > '9') return false;
            v = v * 10 + (s[i] - '0');
        }
        s.remove_prefix(static_cast<std::size_t>(digits));
        value = v;
        return true;
    }
    /// "HH:MM:SS"
    bool time_of_day(int& h, int& m, int& sec) noexcept {
        return number(2, h) && literal(":") && number(2, m) && literal(":") && number(2, sec);
    }
};

bool leap(int y) noexcept { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int y, int m) noexcept {
    static constexpr int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 1 && leap(y) ? 29 : days[m];
}

/// Days since 1970-01-01 of a proleptic Gregorian date (month 1..12).
long long days_from_civil(long long y, unsigned m, unsigned d) noexcept {
    y -= m <= 2;
    const long long era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<long long>(doe) - 719468;
}

std::optional<std::time_t> to_time(int year, int month0, int day, int h, int m, int s) noexcept {
    // Second 60 is a leap second (RFC 5322 3.3); time_t has none, so it reads as :59.
    if (month0 < 0 || day < 1 || day > days_in_month(year, month0) || h > 23 || m > 59 || s > 60) {
        return std::nullopt;
    }
    const long long days =
        days_from_civil(year, static_cast<unsigned>(month0 + 1), static_cast<unsigned>(day));
    const long long t = days * 86400 + static_cast<long long>(h) * 3600 +
                        static_cast<long long>(m) * 60 + (s == 60 ? 59 : s);
    return static_cast<std::time_t>(t);
}

int current_year(std::time_t now) noexcept {
    std::tm tm{};
    platform::utc_time(now, tm);
    return tm.tm_year + 1900;
}

}  // namespace

std::optional<std::time_t> parse_http_date(std::string_view s, std::time_t now) noexcept {
    int wday = 0;
    int day = 0;
    int month = -1;
    int year = 0;
    int h = 0;
    int m = 0;
    int sec = 0;

    // rfc850-date first: its long day names begin with the short ones.
    cursor c{s};
    if (c.name(long_days, wday)) {
        // "Sunday, 06-Nov-94 08:49:37 GMT"
        if (c.literal(", ") && c.number(2, day) && c.literal("-") && c.name(months, month) &&
            c.literal("-") && c.number(2, year) && c.literal(" ") && c.time_of_day(h, m, sec) &&
            c.literal(" GMT") && c.s.empty()) {
            // RFC 9110 5.6.7: a two-digit year that looks more than 50 years ahead is the
            // most recent past year with those digits.
            const int this_year = current_year(now);
            int full = this_year - this_year % 100 + year;
            if (full > this_year + 50) full -= 100;
            return to_time(full, month, day, h, m, sec);
        }
        return std::nullopt;
    }
    c = cursor{s};
    if (!c.name(short_days, wday)) return std::nullopt;
    if (c.literal(", ")) {
        // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
        if (c.number(2, day) && c.literal(" ") && c.name(months, month) && c.literal(" ") &&
            c.number(4, year) && c.literal(" ") && c.time_of_day(h, m, sec) && c.literal(" GMT") &&
            c.s.empty()) {
            return to_time(year, month, day, h, m, sec);
        }
        return std::nullopt;
    }
    // asctime: "Sun Nov  6 08:49:37 1994"; the day is two digits or a space and one digit.
    if (!c.literal(" ") || !c.name(months, month) || !c.literal(" ")) return std::nullopt;
    const bool day_ok = c.literal(" ") ? c.number(1, day) : c.number(2, day);
    if (day_ok && c.literal(" ") && c.time_of_day(h, m, sec) && c.literal(" ") &&
        c.number(4, year) && c.s.empty()) {
        return to_time(year, month, day, h, m, sec);
    }
    return std::nullopt;
}

std::optional<std::time_t> parse_http_date(std::string_view s) noexcept {
    return parse_http_date(s,
                           std::chrono::system_clock::to_time_t(std::chrono::system_clock::now()));
}

}  // namespace tern::detail
