#include "static/accept_encoding.hpp"

#include "static/header_values.hpp"

namespace tern::detail {

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

accepted_codings parse_accept_encoding(std::span<const header_field> headers) noexcept {
    int br = -1;  // -1: not named
    int gzip = -1;
    int any = -1;
    for_each_member(headers, "Accept-Encoding", [&](std::string_view member) {
        const std::size_t semi = member.find(';');
        const std::string_view coding = trim_ows(member.substr(0, semi));
        int q = 1000;
        std::string_view params =
            semi == std::string_view::npos ? std::string_view{} : member.substr(semi + 1);
        while (!params.empty()) {
            const std::size_t next = params.find(';');
            const std::string_view param = trim_ows(params.substr(0, next));
            params = next == std::string_view::npos ? std::string_view{} : params.substr(next + 1);
            const std::size_t eq = param.find('=');
            if (eq != std::string_view::npos && iequals(trim_ows(param.substr(0, eq)), "q")) {
                q = parse_qvalue(trim_ows(param.substr(eq + 1)));
                if (q < 0) q = 0;
            }
        }
        if (iequals(coding, "br")) {
            if (br < 0) br = q;
        } else if (iequals(coding, "gzip") || iequals(coding, "x-gzip")) {
            if (gzip < 0) gzip = q;
        } else if (coding == "*") {
            if (any < 0) any = q;
        }
    });
    accepted_codings out;
    out.br = br >= 0 ? br : (any > 0 ? any : 0);
    out.gzip = gzip >= 0 ? gzip : (any > 0 ? any : 0);
    return out;
}

}  // namespace tern::detail
