#include "testing/cookie_jar.hpp"

#include "testing/response_reader.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <utility>

namespace tern::testing::detail {

namespace {

using sys_clock = std::chrono::system_clock;

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// The path part of a request target ("/a/b?x=1" -> "/a/b").
std::string_view path_of(std::string_view target) noexcept {
    return target.substr(0, target.find_first_of("?#"));
}

// RFC 6265 section 5.1.4: the directory of the request path.
std::string default_path(std::string_view target) {
    const std::string_view path = path_of(target);
    if (path.empty() || path.front() != '/') return "/";
    const auto last = path.rfind('/');
    return last == 0 ? "/" : std::string(path.substr(0, last));
}

// RFC 6265 section 5.1.4: whether `cookie_path` covers `request_path`.
bool path_matches(std::string_view request_path, std::string_view cookie_path) noexcept {
    if (request_path == cookie_path) return true;
    return request_path.starts_with(cookie_path) &&
           (cookie_path.back() == '/' || request_path[cookie_path.size()] == '/');
}

template <class T>
bool number(std::string_view text, T& out) noexcept {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && ec == std::errc{} && end == text.data() + text.size();
}

}  // namespace

std::optional<sys_clock::time_point> parse_imf_fixdate(std::string_view text) {
    // "Sun, 06 Nov 1994 08:49:37 GMT": 29 characters at fixed places.
    static constexpr std::array<std::string_view, 12> months{
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    if (text.size() != 29 || text.substr(3, 2) != ", " || text[7] != ' ' || text[11] != ' ' ||
        text[16] != ' ' || text[19] != ':' || text[22] != ':' || text.substr(25) != " GMT") {
        return std::nullopt;
    }
    unsigned day = 0;
    int year = 0;
    int hour = 0;
    int minute = 0;
    int second = 0;
    const auto month = std::find(months.begin(), months.end(), text.substr(8, 3));
    if (month == months.end() || !number(text.substr(5, 2), day) ||
        !number(text.substr(12, 4), year) || !number(text.substr(17, 2), hour) ||
        !number(text.substr(20, 2), minute) || !number(text.substr(23, 2), second)) {
        return std::nullopt;
    }
    const std::chrono::year_month_day date{
        std::chrono::year{year},
        std::chrono::month{static_cast<unsigned>(month - months.begin() + 1)},
        std::chrono::day{day}};
    if (!date.ok() || hour > 23 || minute > 59 || second > 60) return std::nullopt;
    return std::chrono::sys_days{date} + std::chrono::hours{hour} + std::chrono::minutes{minute} +
           std::chrono::seconds{second};
}

void cookie_jar::store(std::string_view set_cookie, std::string_view request_target) {
    const auto semicolon = set_cookie.find(';');
    const std::string_view pair = set_cookie.substr(0, semicolon);
    const auto equals = pair.find('=');
    if (equals == std::string_view::npos) return;
    entry cookie{std::string(trim(pair.substr(0, equals))),
                 std::string(trim(pair.substr(equals + 1))), default_path(request_target),
                 std::nullopt};
    if (cookie.name.empty()) return;
    std::optional<sys_clock::time_point> expires;
    std::optional<std::int64_t> max_age;
    std::string_view rest =
        semicolon == std::string_view::npos ? std::string_view() : set_cookie.substr(semicolon + 1);
    while (!rest.empty()) {
        const auto end = rest.find(';');
        const std::string_view attribute = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        const auto eq = attribute.find('=');
        const std::string_view key = trim(attribute.substr(0, eq));
        const std::string_view value =
            eq == std::string_view::npos ? std::string_view() : trim(attribute.substr(eq + 1));
        std::int64_t seconds = 0;
        if (iequals(key, "Path") && value.starts_with('/')) {
            cookie.path = std::string(value);
        } else if (iequals(key, "Max-Age") && number(value, seconds)) {
            max_age = seconds;
        } else if (iequals(key, "Expires")) {
            if (const auto when = parse_imf_fixdate(value)) expires = when;
        }
    }
    // Max-Age wins over Expires (section 5.3, step 3).
    if (max_age) {
        cookie.expires = *max_age <= 0 ? sys_clock::time_point::min()
                                       : sys_clock::now() + std::chrono::seconds(*max_age);
    } else {
        cookie.expires = expires;
    }
    const auto same = std::find_if(cookies_.begin(), cookies_.end(), [&](const entry& e) {
        return e.name == cookie.name && e.path == cookie.path;
    });
    if (same != cookies_.end()) {
        *same = std::move(cookie);  // keeps its place: the old creation time (step 11)
    } else {
        cookies_.push_back(std::move(cookie));
    }
    drop_expired();
}

void cookie_jar::put(std::string name, std::string value) {
    const auto same = std::find_if(cookies_.begin(), cookies_.end(),
                                   [&](const entry& e) { return e.name == name && e.path == "/"; });
    if (same != cookies_.end()) {
        same->value = std::move(value);
        same->expires.reset();
    } else {
        cookies_.push_back({std::move(name), std::move(value), "/", std::nullopt});
    }
}

void cookie_jar::drop_expired() {
    const auto now = sys_clock::now();
    std::erase_if(cookies_, [now](const entry& e) { return e.expires && *e.expires <= now; });
}

std::string cookie_jar::header_for(std::string_view request_target) {
    drop_expired();
    const std::string_view path = path_of(request_target);
    std::vector<const entry*> matching;
    for (const entry& e : cookies_) {
        if (path_matches(path, e.path)) matching.push_back(&e);
    }
    // Section 5.4, step 2: longer paths first, then earlier created.
    std::stable_sort(matching.begin(), matching.end(), [](const entry* a, const entry* b) {
        return a->path.size() > b->path.size();
    });
    std::string out;
    for (const entry* e : matching) {
        if (!out.empty()) out += "; ";
        out += e->name;
        out += '=';
        out += e->value;
    }
    return out;
}

std::optional<std::string> cookie_jar::find(std::string_view name) const {
    const auto now = sys_clock::now();
    for (const entry& e : cookies_) {
        if (e.name == name && !(e.expires && *e.expires <= now)) return e.value;
    }
    return std::nullopt;
}

}  // namespace tern::testing::detail
