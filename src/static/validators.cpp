#include "static/validators.hpp"

#include "http/header_values.hpp"
#include "http/http_date_parse.hpp"
#include "http/token.hpp"
#include "platform/files.hpp"

#include <charconv>
#include <cstdint>

namespace tern::detail {

namespace {

std::uint64_t mtime_ns(const platform::file_status& st) noexcept {
    return platform::modified_ns(st);
}

void append_hex(std::string& out, std::uint64_t v) {
    char digits[16];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v, 16);
    out.append(digits, end);
}

/// RFC 9110 8.8.3: etagc = %x21 / %x23-7E / obs-text
bool etagc(char c) noexcept {
    const auto u = static_cast<unsigned char>(c);
    return u == 0x21 || (u >= 0x23 && u != 0x7f);
}

}  // namespace

std::string make_etag(const platform::file_status& st, std::string_view coding) {
    std::string tag;
    tag.reserve(48);
    tag.push_back('"');
    append_hex(tag, static_cast<std::uint64_t>(st.st_size));
    tag.push_back('-');
    append_hex(tag, mtime_ns(st));
    if (!coding.empty()) {
        tag.push_back('-');
        tag.append(coding);
    }
    tag.push_back('"');
    return tag;
}

bool etag_list_matches(std::string_view value, std::string_view etag, bool strong) noexcept {
    if (trim_ows(value) == "*") return true;
    std::size_t i = 0;
    const std::size_t n = value.size();
    for (;;) {
        while (i < n && (value[i] == ' ' || value[i] == '\t' || value[i] == ',')) ++i;
        if (i == n) return false;
        bool weak = false;
        if (value.substr(i, 2) == "W/") {
            weak = true;
            i += 2;
        }
        if (i == n || value[i] != '"') return false;
        const std::size_t open = i++;
        while (i < n && etagc(value[i])) ++i;
        if (i == n || value[i] != '"') return false;
        const std::string_view tag = value.substr(open, i - open + 1);
        ++i;
        if (tag == etag && !(strong && weak)) return true;
    }
}

precondition evaluate_preconditions(std::span<const header_field> headers, std::string_view etag,
                                    std::time_t mtime) noexcept {
    // RFC 9110 13.2.2 step 1 and 2: If-Match, else If-Unmodified-Since.
    bool any_if_match = false;
    bool if_match_ok = false;
    for (const auto& h : headers) {
        if (!iequals(h.name, "If-Match")) continue;
        any_if_match = true;
        if (etag_list_matches(h.value, etag, true)) if_match_ok = true;
    }
    if (any_if_match) {
        if (!if_match_ok) return precondition::failed;
    } else if (const auto ius = single_field(headers, "If-Unmodified-Since")) {
        const auto date = parse_http_date(*ius);
        if (date && mtime > *date) return precondition::failed;
    }

    // Step 3 and 4: If-None-Match, else If-Modified-Since (GET and HEAD only: this layer
    // serves nothing else).
    bool any_if_none_match = false;
    for (const auto& h : headers) {
        if (!iequals(h.name, "If-None-Match")) continue;
        any_if_none_match = true;
        if (etag_list_matches(h.value, etag, false)) return precondition::not_modified;
    }
    if (!any_if_none_match) {
        if (const auto ims = single_field(headers, "If-Modified-Since")) {
            const auto date = parse_http_date(*ims);
            if (date && mtime <= *date) return precondition::not_modified;
        }
    }
    return precondition::proceed;
}

bool if_range_matches(std::string_view value, std::string_view etag, std::time_t mtime) noexcept {
    value = trim_ows(value);
    if (value.starts_with('"') || value.starts_with("W/")) {
        // Exactly one entity tag, compared strongly; a weak one never matches.
        return !value.starts_with("W/") && value == etag;
    }
    const auto date = parse_http_date(value);
    return date && *date == mtime;
}

}  // namespace tern::detail
