#include "http/accept_encoding.hpp"

#include "http/header_values.hpp"
#include "http/token.hpp"

namespace tern::detail {

accepted_codings parse_accept_encoding(std::span<const header_field> headers) noexcept {
    int br = -1;  // -1: not named
    int gzip = -1;
    int zstd = -1;
    int any = -1;
    for_each_member(headers, "Accept-Encoding", [&](std::string_view member) {
        const auto [coding, q] = split_weight(member);
        if (iequals(coding, "br")) {
            if (br < 0) br = q;
        } else if (iequals(coding, "gzip") || iequals(coding, "x-gzip")) {
            if (gzip < 0) gzip = q;
        } else if (iequals(coding, "zstd")) {
            if (zstd < 0) zstd = q;
        } else if (coding == "*") {
            if (any < 0) any = q;
        }
    });
    accepted_codings out;
    out.br = br >= 0 ? br : (any > 0 ? any : 0);
    out.gzip = gzip >= 0 ? gzip : (any > 0 ? any : 0);
    out.zstd = zstd >= 0 ? zstd : (any > 0 ? any : 0);
    return out;
}

}  // namespace tern::detail
