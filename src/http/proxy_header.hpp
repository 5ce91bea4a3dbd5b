#pragma once
// The PROXY protocol header (HAProxy's spec, versions 1 and 2) that a TCP load balancer puts
// before the client's bytes to say whose connection it forwards. Transport-free: the
// connection hands it the bytes it has and consumes only what the header used.

#include <cstddef>
#include <string>
#include <string_view>

namespace tern::detail {

/// What the bytes at the start of a connection say.
struct proxy_header {
    enum class state {
        incomplete,  ///< a valid prefix so far: read more (at most `needed` bytes)
        done,        ///< a complete header of `size` bytes
        invalid,     ///< not a PROXY header, or a malformed one: close the connection
    };
    state result = state::incomplete;
    /// done: the header's length. incomplete: how many more bytes may be consumed without
    /// reading past the header (1 or more).
    std::size_t size = 0;
    std::size_t needed = 0;
    /// done: the client's address as text ("203.0.113.7", "2001:db8::1"); empty when the
    /// header says UNKNOWN (v1) or LOCAL / an unspecified family (v2): keep the peer's.
    std::string source;
};

/// The longest header accepted: v1's 107 bytes, or v2's 16-byte preamble and up to 1,008
/// bytes of addresses and TLVs (more is answered `invalid`).
inline constexpr std::size_t max_proxy_header = 1024;

/// Reads the PROXY header at the start of `bytes` (everything received so far). Never
/// consumes client data: `size` and `needed` stay within the header.
proxy_header parse_proxy_header(std::string_view bytes);

}  // namespace tern::detail
