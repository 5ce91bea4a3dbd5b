#pragma once
/// @file convert.hpp
/// Text to value conversion for the typed getters of tern::context (query, form and path
/// parameters). Not part of the API users call directly.

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <limits>
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

/// Whether `text` is `word` in any case (ASCII).
inline bool equals_ignoring_case(std::string_view text, std::string_view word) noexcept {
    if (text.size() != word.size()) return false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        const char lower = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
        if (lower != word[i]) return false;
    }
    return true;
}

/// `text` as a floating-point T, read as std::from_chars reads it (the C locale's decimal
/// form: an optional '-', digits with an optional '.', an optional exponent; or inf,
/// infinity, nan and nan(chars) in any case). std::nullopt for anything else, for a value
/// beyond T's range and for one that is not 0 but rounds to 0.
///
/// Not std::from_chars itself: libc++ before LLVM 17 has no floating-point overloads (Apple's
/// clang ships such a libc++). std::strtod is everywhere and rounds correctly, but its decimal
/// point is the current C locale's (a ',' after setlocale(LC_ALL, "de_DE")), so it is given
/// no decimal point: the fraction's digits join the integer's and the exponent moves by their
/// count ("2.25" is read as "225e-2"). One way on every standard library, no #if.
template <class T>
std::optional<T> convert_floating(std::string_view text) {
    const bool negative = !text.empty() && text.front() == '-';
    std::string_view rest = negative ? text.substr(1) : text;
    constexpr T infinity = std::numeric_limits<T>::infinity();
    if (equals_ignoring_case(rest, "inf") || equals_ignoring_case(rest, "infinity")) {
        return negative ? -infinity : infinity;
    }
    if (rest.size() >= 5 && equals_ignoring_case(rest.substr(0, 4), "nan(") && rest.back() == ')') {
        for (const char c : rest.substr(4, rest.size() - 5)) {
            const bool word = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                              (c >= 'A' && c <= 'Z') || c == '_';
            if (!word) return std::nullopt;
        }
        rest = "nan";
    }
    if (equals_ignoring_case(rest, "nan")) {
        constexpr T nan = std::numeric_limits<T>::quiet_NaN();
        return negative ? -nan : nan;
    }

    const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
    std::string number;
    number.reserve(text.size() + 24);
    if (negative) number += '-';
    std::size_t i = 0;
    std::size_t digits = 0;
    long long exponent = 0;
    for (; i < rest.size() && is_digit(rest[i]); ++i, ++digits) number += rest[i];
    if (i < rest.size() && rest[i] == '.') {
        for (++i; i < rest.size() && is_digit(rest[i]); ++i, ++digits, --exponent)
            number += rest[i];
    }
    if (digits == 0) return std::nullopt;
    if (i < rest.size() && (rest[i] == 'e' || rest[i] == 'E')) {
        ++i;
        const bool exponent_negative = i < rest.size() && rest[i] == '-';
        if (i < rest.size() && (rest[i] == '-' || rest[i] == '+')) ++i;
        if (i == rest.size()) return std::nullopt;
        long long written = 0;
        for (; i < rest.size() && is_digit(rest[i]); ++i) {
            // Past 10^15 the value is out of every type's range whatever the digits before.
            if (written < 1'000'000'000'000'000) written = written * 10 + (rest[i] - '0');
        }
        exponent += exponent_negative ? -written : written;
    }
    if (i != rest.size()) return std::nullopt;
    number += 'e';
    number += std::to_string(exponent);

    const int saved_errno = errno;
    errno = 0;
    char* end = nullptr;
    T value{};
    if constexpr (std::is_same_v<T, float>) {
        value = std::strtof(number.c_str(), &end);
    } else if constexpr (std::is_same_v<T, double>) {
        value = std::strtod(number.c_str(), &end);
    } else {
        value = std::strtold(number.c_str(), &end);
    }
    const bool out_of_range =
        errno == ERANGE && (value == T{0} || value == infinity || value == -infinity);
    errno = saved_errno;
    if (end != number.c_str() + number.size() || out_of_range) return std::nullopt;
    return value;
}

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
    } else if constexpr (std::is_floating_point_v<T>) {
        return convert_floating<T>(text);
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
