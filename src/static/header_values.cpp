#include "static/header_values.hpp"

namespace tern::detail {

std::string_view trim_ows(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::string_view media_type(std::string_view content_type) noexcept {
    return trim_ows(content_type.substr(0, content_type.find(';')));
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
