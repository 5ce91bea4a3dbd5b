#include "http/header_values.hpp"
#include "http/token.hpp"

#include <algorithm>

namespace tern::detail {

std::string_view trim_ows(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::string_view media_type(std::string_view content_type) noexcept {
    return trim_ows(content_type.substr(0, content_type.find(';')));
}

int parse_qvalue(std::string_view s) noexcept {
    if (s.empty() || (s[0] != '0' && s[0] != '1')) return -1;
    int value = (s[0] - '0') * 1000;
    if (s.size() == 1) return value;
    if (s[1] != '.' || s.size() > 5) return -1;
    int scale = 100;
    for (std::size_t i = 2; i < s.size(); ++i, scale /= 10) {
        if (s[i] < '0' || s[i] > '9') return -1;
        value += (s[i] - '0') * scale;
    }
    return value > 1000 ? -1 : value;
}

weighted_member split_weight(std::string_view member) noexcept {
    const std::size_t semi = member.find(';');
    weighted_member out;
    out.value = trim_ows(member.substr(0, semi));
    std::string_view params =
        semi == std::string_view::npos ? std::string_view{} : member.substr(semi + 1);
    while (!params.empty()) {
        const std::size_t next = params.find(';');
        const std::string_view param = trim_ows(params.substr(0, next));
        params = next == std::string_view::npos ? std::string_view{} : params.substr(next + 1);
        const std::size_t eq = param.find('=');
        if (eq != std::string_view::npos && iequals(trim_ows(param.substr(0, eq)), "q")) {
            out.weight = std::max(parse_qvalue(trim_ows(param.substr(eq + 1))), 0);
        }
    }
    return out;
}

bool has_field(std::span<const header_field> headers, std::string_view name) noexcept {
    for (const auto& h : headers) {
        if (iequals(h.name, name)) return true;
    }
    return false;
}

std::optional<std::string_view> single_field(std::span<const header_field> headers,
                                             std::string_view name) noexcept {
    std::optional<std::string_view> found;
    for (const auto& h : headers) {
        if (!iequals(h.name, name)) continue;
        if (found) return std::nullopt;
        found = h.value;
    }
    return found;
}

}  // namespace tern::detail
