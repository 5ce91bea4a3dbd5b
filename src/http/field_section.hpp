#pragma once
// The mapping between the field sections of HTTP/2 and HTTP/3 and tern's request and response
// (RFC 9113 8.3, RFC 9114 4.3: the same pseudo-fields and rules), transport-free: fields in
// (already decoded and checked by nghttp2 or nghttp3: lower-case names, no connection-specific
// fields, the pseudo-fields each present once), a `request` out; a `response` in, the fields
// of its HEADERS frame out, as the library's own name-value type (nghttp2_nv, nghttp3_nv: the
// same members), so that this layer includes neither library.

#include "http/message_head.hpp"
#include "http/request.hpp"
#include "http/response.hpp"

#include "http/date.hpp"
#include "http/status.hpp"
#include "http/token.hpp"

#include <charconv>
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
    /// A trailer field (after the body): counted against the same limits (the field count
    /// with the head's, the bytes on their own budget), as over HTTP/1, and kept.
    void add_trailer(std::string_view name, std::string_view value);
    /// Moves the trailer fields kept into `req.trailers` (their text into
    /// `req.trailer_storage`): once, after the trailers, when the head was filled.
    void fill_trailers(request& req);
    verdict state() const noexcept { return verdict_; }
    /// The status a refused head is answered with (431 or 414), 0 when none.
    int refusal_status() const noexcept;

    /// Fills `req` (cleared first): method, target, path and query from `:path`, the
    /// fields in order with `:authority` as `Host` (first, unless the client sent one),
    /// `cookie` fields joined with "; " into one (RFC 9113 8.2.3, RFC 9114 4.2.1); HTTP/2.0
    /// or, with `major` 3, HTTP/3.0. Views point
    /// into `req.storage`, which takes over the head's text: call once, after the block.
    /// False when the head cannot be a request: no :method or :path, or a Host that differs
    /// from :authority.
    bool fill(request& req, int major = 2);

    // A stretch of text_.
    struct piece {
        std::uint32_t at = 0;
        std::uint32_t size = 0;
    };
    struct field {
        piece name, value;
    };
    /// The head's list of fields, emptied, with its capacity: for the next head of the
    /// connection (stream_exchange's spare buffers). Call after fill().
    std::vector<field> give_fields() noexcept {
        fields_.clear();
        return std::move(fields_);
    }
    /// Takes `text` (the storage of an earlier request) and `fields` (an earlier head's), both
    /// emptied, as this head's buffers: before its first field.
    void take_buffers(std::string&& text, std::vector<field>&& fields) noexcept {
        text_ = std::move(text);
        text_.clear();
        fields_ = std::move(fields);
        fields_.clear();
    }

private:
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
    // The trailer fields' text, one after another, and where each is in it.
    std::string trailer_text_;
    std::vector<field> trailers_;
};

/// A response field that HTTP/2 and HTTP/3 forbid (RFC 9113 8.2.2, RFC 9114 4.2:
/// connection-specific), which is left out of a response instead of breaking the stream.
bool is_connection_specific(std::string_view name) noexcept;

/// The fields of a response's head after `:status`, as HTTP/2 and HTTP/3 send them, in
/// order: `date`, `content-type` and `content-length` as tern's HTTP/1 writer gives them
/// (none for 1xx, 204 and 304; no length for a streamed body), then the user's fields with
/// lower-case names, less the connection-specific ones. One per connection, reused for
/// every stream: made without an allocation once it has been used. HTTP/2's encoder takes
/// them straight from here; HTTP/3 gathers them into nghttp3's array (response_fields).
class head_fields {
public:
    /// Calls `fn(name, value)` for each field of `res`, in order. The views are of `res`,
    /// this object and the Date text: valid until the next call, the Date text until the
    /// clock's next second.
    template <class Fn>
    void each(const response& res, Fn&& fn) {
        const bool bodyless = status_forbids_body(res.status);
        const bool streamed = res.source != nullptr;
        fn(std::string_view("date"), http_date_now());
        if (!bodyless && !res.content_type.empty() &&
            (streamed || !res.body.empty() || res.file.length != 0)) {
            fn(std::string_view("content-type"), std::string_view(res.content_type));
        }
        if (!bodyless && !streamed) {
            const std::uint64_t length = res.file.file ? res.file.length : res.body.size();
            const auto end = std::to_chars(length_, length_ + sizeof length_, length).ptr;
            fn(std::string_view("content-length"),
               std::string_view(length_, static_cast<std::size_t>(end - length_)));
        }
        // The lower-cased names go into lower_ first (it must not grow once viewed).
        std::size_t names = 0;
        for (const auto& [name, value] : res.fields) names += name.size();
        lower_.resize(names);
        char* out = lower_.data();
        for (const auto& [name, value] : res.fields) {
            if (is_connection_specific(name)) continue;
            ascii_lower_copy(out, name.data(), name.size());
            fn(std::string_view(out, name.size()), std::string_view(value));
            out += name.size();
        }
    }

private:
    char length_[24] = {};
    std::string lower_;  // the user's field names, lower-cased, one after another
};

/// The fields of a response's HEADERS frame as an array for nghttp3 (and the tests'
/// nghttp2): `:status`, then head_fields'. `Nv` is nghttp2_nv or nghttp3_nv (`name`,
/// `value`, `namelen`, `valuelen`, `flags`; flags 0: the library copies the text at
/// submission). Made without an allocation once the object has been used (one per
/// connection, reused for every stream).
template <class Nv>
class response_fields {
public:
    /// Makes the fields of `res`. They view `res`, this object and the Date text (valid
    /// until the clock's next second): use them before any of these changes.
    void build(const response& res) {
        fields_.clear();
        const auto status = std::to_chars(status_, status_ + sizeof status_, res.status).ptr;
        add(":status", {status_, static_cast<std::size_t>(status - status_)});
        head_.each(res,
                   [this](std::string_view name, std::string_view value) { add(name, value); });
    }
    std::span<const Nv> fields() const noexcept { return fields_; }

private:
    void add(std::string_view name, std::string_view value) {
        // The libraries take non-const pointers but only read through them.
        fields_.push_back({reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
                           reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())),
                           name.size(), value.size(), 0});
    }

    char status_[8] = {};
    head_fields head_;
    std::vector<Nv> fields_;
};

}  // namespace tern::detail
