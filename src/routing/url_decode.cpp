#include "routing/url_decode.hpp"

#include "http/token.hpp"

namespace tern::detail {

void url_decode(std::string_view in, std::string& out, bool plus_is_space) {
    out.clear();
    out.reserve(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        const char c = in[i];
        if (c == '%' && i + 2 < in.size()) {
            const int hi = hex_value(in[i + 1]);
            const int lo = hex_value(in[i + 2]);
            if (hi >= 0 && lo >= 0) {
                out.push_back(static_cast<char>(hi * 16 + lo));
                i += 2;
                continue;
            }
        }
        out.push_back(plus_is_space && c == '+' ? ' ' : c);
    }
}

std::optional<std::string> find_query_param(std::string_view query, std::string_view name) {
    std::optional<std::string> found;
    std::string key;
    for_each_query_pair(query, [&](std::string_view k, std::string_view v) {
        if (found) return;
        url_decode(k, key, true);
        if (key == name) {
            found.emplace();
            url_decode(v, *found, true);
        }
    });
    return found;
}

}  // namespace tern::detail
