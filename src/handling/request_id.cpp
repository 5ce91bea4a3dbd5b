#include "handling/request_id.hpp"

#include "platform/system.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <random>

namespace tern::detail {

bool valid_request_id(std::string_view id) noexcept {
    if (id.empty() || id.size() > max_request_id_length) return false;
    return std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == ':' || c == '@' || c == '/' || c == '+' || c == '=' ||
               c == '-';
    });
}

request_id_source::request_id_source() {
    // Unpredictable only so that two loops, servers or restarts do not collide: the ids
    // are names, not secrets.
    if (!platform::system_random(&prefix_, sizeof prefix_)) {
        std::random_device rd;
        prefix_ =
            (static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^
            static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    }
}

void request_id_source::next(std::string& out) {
    out.clear();
    fmt::format_to(std::back_inserter(out), "{:016x}-{:x}", prefix_, ++counter_);
}

}  // namespace tern::detail
