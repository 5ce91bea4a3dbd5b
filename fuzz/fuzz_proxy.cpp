// libFuzzer harness for the PROXY protocol header parser (src/http/proxy_header.hpp).
//
// The connection (src/net/transport_proxy.cpp) peeks at what has arrived, consumes all of
// it while the parser says "incomplete", and exactly `size` bytes once it says "done". That
// is only safe if the parser never claims a client byte, so for every input this checks:
//   - done: 0 < size <= input size and <= max_proxy_header; the same header is found in
//     the first `size` bytes alone (the bytes after it do not matter), and every shorter
//     prefix is incomplete (so consuming a whole incomplete read never eats past it);
//   - incomplete: needed >= 1, the input is shorter than max_proxy_header, and the source
//     is empty;
//   - a source, when given, is a canonical address that parses back to itself.
// Broken invariants call __builtin_trap().

#include "http/proxy_header.hpp"

#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using tern::detail::max_proxy_header;
using tern::detail::parse_proxy_header;
using state = tern::detail::proxy_header::state;

void check(bool ok) {
    if (!ok) __builtin_trap();
}

bool canonical_address(const std::string& text) {
    unsigned char raw[16];
    char back[INET6_ADDRSTRLEN];
    for (const int family : {AF_INET, AF_INET6}) {
        if (::inet_pton(family, text.c_str(), raw) == 1) {
            return ::inet_ntop(family, raw, back, sizeof back) != nullptr && text == back;
        }
    }
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto h = parse_proxy_header(input);
    switch (h.result) {
        case state::done: {
            check(h.size > 0 && h.size <= input.size() && h.size <= max_proxy_header);
            const auto alone = parse_proxy_header(input.substr(0, h.size));
            check(alone.result == state::done && alone.size == h.size && alone.source == h.source);
            for (std::size_t n = 0; n < h.size; ++n) {
                check(parse_proxy_header(input.substr(0, n)).result == state::incomplete);
            }
            if (!h.source.empty()) check(canonical_address(h.source));
            break;
        }
        case state::incomplete:
            check(h.needed >= 1);
            check(input.size() < max_proxy_header);
            check(h.source.empty());
            break;
        case state::invalid:
            break;
    }
    return 0;
}
