#pragma once
// The mapping between HTTP/2 header fields and tern's request and response (RFC 9113 8.3),
// transport-free: fields in (already HPACK-decoded and checked by nghttp2: lower-case names,
// no connection-specific fields, the pseudo-fields each present once), a `request` out; a
// `response` in, the fields of its HEADERS frame out.

#include "http/message_head.hpp"
#include "http/request.hpp"
#include "http/response.hpp"

#include <nghttp2/nghttp2.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tern::detail {

/// One request's header fields as they are decoded, with the limits counted on arrival:
/// fields past a limit are not kept (the verdict says which limit).
class request_head {
public:
    enum class verdict {
        ok,
        too_many_fields,  ///< 431
        too_large,        ///< 431
        line_too_long,    ///< 414
    };

    /// `limits` are counted as over HTTP/1: a field as "name: value\r\n", `:method` and
    /// `:path` as the request line.
    explicit request_head(const head_limits& limits) noexcept : limits_(limits) {}

    /// A field of the header block.
    void add(std::string_view name, std::string_view value);
    /// A trailer field (after the body): counted against the same limits, on their own
    /// budget, and dropped, as over HTTP/1.
    void add_trailer(std::string_view name, std::string_view value);
    verdict state() const noexcept { return verdict_; }
    /// The status a refused head is answered with (431 or 414), 0 when none.
    int refusal_status() const noexcept;

    /// Fills `req` (cleared first): method, target, path and query from `:path`, the
    /// fields in order with `:authority` as `Host` (first, unless the client sent one),
    /// `cookie` fields joined with "; " into one (RFC 9113 8.2.3); HTTP/2.0. Views point
    /// into `req.storage`, which takes over the head's text: call once, after the block.
    /// False when the head cannot be a request: no :method or :path, or a Host that differs
    /// from :authority.
    bool fill(request& req);

private:
    // A stretch of text_.
    struct piece {
        std::uint32_t at = 0;
        std::uint32_t size = 0;
    };
    struct field {
        piece name, value;
    };
    piece keep(std::string_view text);
    std::string_view view(piece p) const noexcept { return {text_.data() + p.at, p.size}; }

    head_limits limits_;
    verdict verdict_ = verdict::ok;
    std::size_t count_ = 0;
    std::size_t bytes_ = 0;
    // Every kept name and value, one after another as they arrived (one allocation for the
    // whole head, handed to the request as its storage).
    std::string text_;
    piece method_, path_, authority_;
    std::vector<field> fields_;
    std::size_t trailer_count_ = 0;
    std::size_t trailer_bytes_ = 0;
};

/// A response field that HTTP/2 forbids (RFC 9113 8.2.2: connection-specific), which is
/// left out of a response instead of breaking the stream.
bool is_connection_specific(std::string_view name) noexcept;

/// The fields of a response's HEADERS frame, in order: `:status`, `date`, `content-type`
/// and `content-length` as tern's HTTP/1 writer gives them (none for 1xx, 204 and 304; no
/// length for a streamed body), then the user's fields with lower-case names, less the
/// connection-specific ones. Made without an allocation once the object has been used (one
/// per connection, reused for every stream: nghttp2 copies the fields when a response is
/// submitted).
class h2_response_fields {
public:
    /// Makes the fields of `res`. They view `res`, this object and the Date text (valid
    /// until the clock's next second): use them before any of these changes.
    void build(const response& res);
    std::span<const nghttp2_nv> fields() const noexcept { return fields_; }

private:
    void add(std::string_view name, std::string_view value);

    char status_[8] = {};
    char length_[24] = {};
    std::string lower_;  // the user's field names, lower-cased, one after another
    std::vector<nghttp2_nv> fields_;
};

}  // namespace tern::detail
