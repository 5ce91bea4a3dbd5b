#include "web/json_depth.hpp"

namespace tern::detail {

bool json_depth_within(std::string_view text, std::size_t max_depth) noexcept {
    std::size_t depth = 0;
    const char* p = text.data();
    const char* const end = p + text.size();
    while (p != end) {
        switch (*p++) {
            case '[':
            case '{':
                if (++depth > max_depth) return false;
                break;
            case ']':
            case '}':
                if (depth != 0) --depth;  // unbalanced: the parser refuses it anyway
                break;
            case '"':
                // A string (RFC 8259 7) ends at the next '"' not escaped by '\\'; brackets
                // inside it are text. A '\\' always takes the byte after it.
                while (p != end && *p != '"') {
                    if (*p == '\\' && ++p == end) break;
                    ++p;
                }
                if (p != end) ++p;
                break;
            default:
                break;
        }
    }
    return true;
}

}  // namespace tern::detail
