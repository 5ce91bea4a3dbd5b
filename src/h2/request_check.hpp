#pragma once
// What makes an HTTP/2 request malformed (RFC 9113 8.1.1, 8.2 and 8.3), checked field by field
// as the HPACK decoder delivers them and then against the DATA that follows: a malformed
// request is a stream error of type PROTOCOL_ERROR. The rules are those nghttp2 applied for
// tern before tern framed HTTP/2 itself (docs/http2.md): lower-case field names of token
// characters, values without NUL, CR, LF or surrounding white space, no connection-specific
// field, `te` only `trailers`, each of `:method`, `:scheme`, `:path` and `:authority` at most
// once and before every regular field, the known ones only and none in trailers, `:method`,
// `:scheme` and a non-empty `:path` present (`:authority` alone for CONNECT), and a body as
// long as its `content-length`. What a well-formed request then means (Host, the limits) is
// http/field_section's. Transport-free.

#include <cstdint>
#include <string_view>

namespace tern::h2 {

class request_check {
public:
    /// A new header section: the request's head, or (`trailer`) its trailers.
    void begin(bool trailer) noexcept;
    /// One decoded field: false when it makes the request malformed.
    bool field(std::string_view name, std::string_view value) noexcept;
    /// The head is complete; `ended`: END_STREAM came with it. False when malformed.
    bool head_done(bool ended) const noexcept;
    /// `bytes` of body arrived: false once the body passes its content-length.
    bool data(std::uint64_t bytes) noexcept;
    /// The request ended (END_STREAM after the body or the trailers): false when its body
    /// is shorter than its content-length.
    bool ended() const noexcept;

private:
    enum : std::uint8_t { method = 1, scheme = 2, path = 4, authority = 8 };
    std::uint8_t pseudo_ = 0;
    bool regular_seen_ = false;
    bool trailer_ = false;
    bool connect_ = false;
    bool options_ = false;
    bool empty_path_ = false;
    bool asterisk_ = false;
    std::int64_t content_length_ = -1;  // -1: none declared
    std::uint64_t received_ = 0;
};

}  // namespace tern::h2
