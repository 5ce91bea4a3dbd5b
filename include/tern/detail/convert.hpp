#pragma once
/// @file convert.hpp
/// Text to value conversion for the typed getters of tern::context (query, form and path
/// parameters). Not part of the API users call directly.

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace tern::detail {

/// Whether context's typed getters can produce a T.
template <class T>
inline constexpr bool is_convertible_param = std::is_same_v<T, std::string> ||
                                             std::is_same_v<T, bool> ||
                                             (std::is_arithmetic_v<T> && !std::is_same_v<T, char>);

/// `text` as a T: integers and floating point in full (no sign for unsigned types, no
/// leading '+', no spaces, no trailing bytes), bool as "true"/"false"/"1"/"0", strings as
/// they are. std::nullopt when `text` is not such a value or is out of range.
template <class T>
std::optional<T> convert_param(std::string_view text) {
    static_assert(is_convertible_param<T>,
                  "tern: typed parameters are integers, floating point, bool or std::string");
    if constexpr (std::is_same_v<T, std::string>) {
        return std::string(text);
    } else if constexpr (std::is_same_v<T, bool>) {
        if (text == "true" || text == "1") return true;
        if (text == "false" || text == "0") return false;
        return std::nullopt;
    } else {
        T value{};
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (text.empty() || ec != std::errc{} || ptr != end) return std::nullopt;
        return value;
    }
}

/// What a T is called in the 400 message for a value that does not convert.
template <class T>
constexpr const char* param_type_name() noexcept {
    if constexpr (std::is_same_v<T, bool>) {
        return "true or false";
    } else if constexpr (std::is_floating_point_v<T>) {
        return "a number";
    } else if constexpr (std::is_unsigned_v<T>) {
        return "a non-negative integer in range";
    } else {
        return "an integer in range";
    }
}

}  // namespace tern::detail
