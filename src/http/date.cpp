#include "http/date.hpp"

#include "platform/system.hpp"

#include <chrono>
#include <cstring>

namespace tern::detail {

namespace {

void put2(char* p, int v) noexcept {
    p[0] = static_cast<char>('0' + v / 10);
    p[1] = static_cast<char>('0' + v % 10);
}

}  // namespace

void format_http_date(std::time_t t, char (&out)[29]) noexcept {
    // The same time is asked for again and again (a file's Last-Modified on every request
    // for it); gmtime_r is the costly part, so the last result is kept per thread.
    thread_local bool have_last = false;
    thread_local std::time_t last_time = 0;
    thread_local char last[29];
    if (have_last && t == last_time) {
        std::memcpy(out, last, sizeof last);
        return;
    }
    std::tm tm{};
    platform::utc_time(t, tm);
    char* p = out;
    for (std::size_t i = 0; i < 3; ++i)
        *p++ = day_abbreviations[static_cast<std::size_t>(tm.tm_wday)][i];
    *p++ = ',';
    *p++ = ' ';
    put2(p, tm.tm_mday);
    p += 2;
    *p++ = ' ';
    for (std::size_t i = 0; i < 3; ++i)
        *p++ = month_abbreviations[static_cast<std::size_t>(tm.tm_mon)][i];
    *p++ = ' ';
    const int year = tm.tm_year + 1900;
    put2(p, year / 100);
    put2(p + 2, year % 100);
    p += 4;
    *p++ = ' ';
    put2(p, tm.tm_hour);
    p[2] = ':';
    put2(p + 3, tm.tm_min);
    p[5] = ':';
    put2(p + 6, tm.tm_sec);
    p += 8;
    *p++ = ' ';
    *p++ = 'G';
    *p++ = 'M';
    *p++ = 'T';
    std::memcpy(last, out, sizeof last);
    last_time = t;
    have_last = true;
}

std::string_view http_date_now() noexcept {
    thread_local std::time_t cached_second = -1;
    thread_local char cached[29];
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    if (now != cached_second) {
        format_http_date(now, cached);
        cached_second = now;
    }
    return {cached, sizeof cached};
}

}  // namespace tern::detail
