#include "routing/path_pattern.hpp"

#include <stdexcept>
#include <utility>

namespace tern::detail {

namespace {

[[noreturn]] void fail(std::string_view pattern, std::string_view what) {
    std::string message = "invalid route pattern \"";
    message.append(pattern);
    message.append("\": ");
    message.append(what);
    throw std::invalid_argument(message);
}

bool is_name_char(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

// Reserved characters may only appear as whole-segment syntax; allowing them inside literals
// would make `a{b}` silently literal and hide a typo for a parameter.
bool is_reserved(char c) noexcept {
    return c == '{' || c == '}' || c == '<' || c == '>' || c == '*';
}

std::string quoted(std::string_view s) {
    std::string out = "\"";
    out.append(s);
    out.push_back('"');
    return out;
}

// Checks and returns the name inside `{...}` or `<...>`.
std::string_view parameter_name(std::string_view pattern, std::string_view segment) {
    const std::string_view name = segment.substr(1, segment.size() - 2);
    if (name.empty()) {
        fail(pattern, "segment " + quoted(segment) + " has an empty parameter name");
    }
    for (const char c : name) {
        if (!is_name_char(c)) {
            fail(pattern, "parameter name " + quoted(name) +
                              " may only contain letters, digits, '_' and '-'");
        }
    }
    return name;
}

}  // namespace

path_pattern::path_pattern(std::string_view pattern) : text_(pattern) {
    if (pattern.empty() || pattern.front() != '/') {
        fail(pattern, "a pattern must begin with '/'");
    }
    if (pattern == "/") {
        return;  // The root: no segments.
    }
    std::string_view rest = trim_trailing_slash(pattern).substr(1);
    if (rest.empty()) {
        fail(pattern, "empty segment (\"//\")");  // The pattern was "//".
    }

    for (;;) {
        const std::size_t slash = rest.find('/');
        const bool last = slash == std::string_view::npos;
        const std::string_view segment = last ? rest : rest.substr(0, slash);
        if (segment.empty()) {
            fail(pattern, "empty segment (\"//\")");
        }

        pattern_segment parsed;
        if (segment == "*") {
            parsed.kind = last ? segment_kind::tail_wildcard : segment_kind::wildcard;
        } else if (segment.front() == '{' || segment.front() == '<') {
            const bool tail = segment.front() == '<';
            const char close = tail ? '>' : '}';
            if (segment.size() < 2 || segment.back() != close) {
                fail(pattern, "segment " + quoted(segment) + " must end with '" + close +
                                  "'; a parameter is a whole segment");
            }
            if (tail && !last) {
                fail(pattern, "segment " + quoted(segment) +
                                  " matches the rest of the path, so it must be the last segment");
            }
            parsed.kind = tail ? segment_kind::tail_param : segment_kind::param;
            parsed.text = parameter_name(pattern, segment);
            for (const pattern_segment& earlier : segments_) {
                if ((earlier.kind == segment_kind::param ||
                     earlier.kind == segment_kind::tail_param) &&
                    earlier.text == parsed.text) {
                    fail(pattern, "parameter name " + quoted(parsed.text) + " is used twice");
                }
            }
        } else {
            for (const char c : segment) {
                if (is_reserved(c)) {
                    fail(pattern, "segment " + quoted(segment) + " mixes text with '" +
                                      std::string(1, c) +
                                      "'; '{name}', '<name>' and '*' must be whole segments");
                }
            }
            parsed.kind = segment_kind::literal;
            parsed.text = segment;
        }

        if (parsed.kind != segment_kind::literal) {
            all_literal_ = false;
        }
        if (parsed.kind == segment_kind::param || parsed.kind == segment_kind::tail_param) {
            captures_ = true;
        }
        segments_.push_back(std::move(parsed));
        if (last) {
            break;
        }
        rest.remove_prefix(slash + 1);
    }
}

std::string path_pattern::static_path() const {
    if (segments_.empty()) {
        return "/";
    }
    std::string path;
    for (const pattern_segment& segment : segments_) {
        path.push_back('/');
        path.append(segment.text);
    }
    return path;
}

std::string_view trim_trailing_slash(std::string_view path) noexcept {
    if (path.size() > 1 && path.back() == '/') {
        path.remove_suffix(1);
    }
    return path;
}

}  // namespace tern::detail
