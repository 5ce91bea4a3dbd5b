#pragma once
// The part of an llhttp adapter that requests and responses share: collecting a message head
// into one storage string as llhttp hands it over in pieces, and counting its limits in raw
// bytes as they arrive. The request parser (http/parser.cpp) and the response parser
// (http/response_parser.cpp) each drive one from their own llhttp callbacks; what the start
// line holds and what the fields mean stays with them.
//
// The functions the callbacks call for every field are defined here, inline: this is the
// server's hot path, and a call per callback would show in its instruction count.

#include "http/header_values.hpp"

#include <tern/header_field.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tern::detail {

/// Which head limit a message broke.
enum class head_limit : unsigned char {
    none,
    line_too_long,             ///< the start line passed max_line_size
    header_too_large,          ///< header (or trailer) bytes passed max_header_size
    too_many_headers,          ///< header (or trailer) fields passed max_header_count
    chunk_extension_too_long,  ///< over max_chunk_extension_bytes of chunk extensions
};

/// The limits a head is held to, counted in raw bytes.
struct head_limits {
    std::size_t max_line_size = 8 * 1024;
    std::size_t max_header_size = 8 * 1024;
    std::size_t max_header_count = 100;
};

// Chunk extensions carry nothing tern uses; a message may carry this many bytes of them in
// all (names and values) before it is refused, so they cannot be used to make tern parse
// without bound while the body count stays small.
inline constexpr std::size_t max_chunk_extension_bytes = 4096;

/// One message's head as it arrives: the start line's parts and the header fields are
/// appended to a storage string the caller owns (so views into it can be handed out with
/// the message), the fields as offsets until the head is complete, since the string may
/// move while it grows. The caller passes that string to each call that reads or appends
/// it, rather than the head keeping a reference: the request parser's callbacks then reach
/// it at a fixed offset from their own state, without loading a pointer first.
class message_head {
public:
    explicit message_head(const head_limits& limits) noexcept : limits_(limits) {}
    message_head(const message_head&) = delete;
    message_head& operator=(const message_head&) = delete;

    /// Before each llhttp_execute: where its bytes start, so a callback's pointer gives an
    /// offset in the head.
    void start_chunk(const char* begin) noexcept { chunk_begin_ = begin; }

    /// Counts `n` bytes of the head that no llhttp_execute of this message will see (the
    /// empty lines a response parser skips before its status line).
    void skipped(std::size_t n) noexcept { head_base_ += n; }

    /// Head bytes consumed by this message's earlier llhttp_execute calls (and skipped).
    std::size_t bytes_before_chunk() const noexcept { return head_base_; }

    /// Head offset just past `at + len`, for limits counted in raw bytes.
    std::size_t pos(const char* at, std::size_t len) const noexcept {
        return head_base_ + static_cast<std::size_t>(at - chunk_begin_) + len;
    }

    /// Header bytes run from the end of the start line to the end of the last field value:
    /// names, values, separators and the line ends between them. The CRLF closing the last
    /// field and the empty line are not counted, so the count is the same whether the head
    /// arrives in one read or byte by byte. `unjudged` is how many bytes at the end of `pos`
    /// may still turn out to be those final line ends (a read that ends mid-head), and
    /// `line_unjudged` how many may be the CR ending the start line, before llhttp says the
    /// line is complete.
    head_limit check(std::size_t pos, std::size_t unjudged = 0,
                     std::size_t line_unjudged = 0) const noexcept {
        if (!line_done_) {
            if (pos > limits_.max_line_size + line_unjudged) return head_limit::line_too_long;
        } else if (pos - line_end_ > limits_.max_header_size + unjudged) {
            return head_limit::header_too_large;
        }
        return head_limit::none;
    }

    /// A piece of the start line that is kept (a request's method and target, a response's
    /// reason phrase): appended to the storage and counted against max_line_size.
    head_limit line_part(std::string& storage, const char* at, std::size_t len) {
        storage.append(at, len);
        return check(pos(at, len));
    }

    /// The start line ends at head offset `end`: header bytes are counted from there.
    head_limit end_line_at(std::size_t end) noexcept {
        line_end_ = end;
        return check(end);
    }
    /// llhttp has finished the start line; from now on the header limits apply.
    void line_complete() noexcept { line_done_ = true; }
    bool line_done() const noexcept { return line_done_; }
    std::size_t line_end() const noexcept { return line_end_; }

    /// A piece of a header field's name. `trailer`: the field follows a chunked body; it is
    /// counted against the header limits and kept apart (`keep_trailers`) or dropped, never
    /// in `storage`, since the views built when the head completed must not move.
    head_limit field_name(std::string& storage, const char* at, std::size_t len, bool trailer) {
        if (trailer) {
            const bool new_field = in_value_ || trailer_count_ == 0;
            in_value_ = false;
            if (trailer_store_ != nullptr) keep_trailer_name(at, len, new_field);
            // ": " and CRLF are not handed to callbacks; count them once per field.
            return count_trailer(len + (new_field ? 4 : 0), new_field);
        }
        if (fields_.empty() || in_value_) {
            if (fields_.size() == limits_.max_header_count) return head_limit::too_many_headers;
            fields_.push_back({storage.size(), 0, 0, 0});
            in_value_ = false;
        }
        storage.append(at, len);
        fields_.back().name_len += len;
        return check(pos(at, len));
    }

    /// A piece of a header field's value (see `field_name` for `trailer`).
    head_limit field_value(std::string& storage, const char* at, std::size_t len, bool trailer) {
        if (trailer) {
            if (trailer_store_ != nullptr) keep_trailer_value(at, len);
            in_value_ = true;
            return count_trailer(len, false);
        }
        auto& f = fields_.back();
        if (!in_value_) {
            f.value_at = storage.size();
            in_value_ = true;
        }
        storage.append(at, len);
        f.value_len += len;
        return check(pos(at, len));
    }

    /// A field's value is complete (an empty one got no `field_value`). Returns the field's
    /// name, for the caller to note the fields its framing rules look at.
    std::string_view field_complete(const std::string& storage) noexcept {
        in_value_ = true;
        auto& f = fields_.back();
        if (f.value_len == 0) f.value_at = storage.size();
        fields_done_ = fields_.size();
        return {storage.data() + f.name_at, f.name_len};
    }
    /// The same for a trailer field.
    void trailer_complete() noexcept {
        if (trailer_store_ != nullptr && !in_value_) keep_trailer_value(nullptr, 0);
        in_value_ = true;
    }

    /// Trailer fields are appended to `store` (the request's trailer storage, which outlives
    /// this head's message) instead of dropped; `build_trailers` makes their views.
    void keep_trailers(std::string* store) noexcept { trailer_store_ = store; }
    /// Whether the message had trailer fields kept.
    bool has_trailers() const noexcept { return !trailers_.empty(); }
    /// Replaces `out` with views of the trailer fields kept, values without surrounding OWS.
    void build_trailers(std::vector<header_field>& out) const;

    /// A piece of a chunk extension's name or value.
    head_limit chunk_extension(std::size_t len) noexcept {
        extension_bytes_ += len;
        return extension_bytes_ > max_chunk_extension_bytes ? head_limit::chunk_extension_too_long
                                                            : head_limit::none;
    }

    /// An llhttp_execute of `len` bytes ended inside the head: bytes no callback reported
    /// (whitespace runs, line ends) are judged here; up to "\r\n\r\n" of them may be the
    /// head's final line ends, and `line_unjudged` of them the start line's CR (llhttp ends
    /// a response's status line only at its LF).
    head_limit chunk_ended_in_head(std::size_t len, std::size_t line_unjudged = 0) noexcept {
        head_base_ += len;
        return check(head_base_, 4, line_unjudged);
    }

    /// Fields collected so far; those whose value is complete.
    std::size_t field_count() const noexcept { return fields_.size(); }
    std::size_t fields_done() const noexcept { return fields_done_; }

    /// Replaces `out` with views of the first `count` fields, values without surrounding OWS.
    void build_fields(const std::string& storage, std::vector<header_field>& out,
                      std::size_t count) const {
        const char* base = storage.data();
        out.clear();
        for (std::size_t i = 0; i < count; ++i) {
            const auto& f = fields_[i];
            out.push_back(
                {{base + f.name_at, f.name_len}, trim_ows({base + f.value_at, f.value_len})});
        }
    }

    /// Forgets the head (the storage is the caller's to clear) and gets ready for the next.
    void clear() noexcept {
        head_base_ = 0;
        line_end_ = 0;
        line_done_ = false;
        in_value_ = false;
        fields_.clear();
        fields_done_ = 0;
        trailer_bytes_ = trailer_count_ = 0;
        trailers_.clear();
        extension_bytes_ = 0;
    }
    /// Gives back the memory kept for the next head's fields.
    void release() noexcept;

private:
    /// Offsets of one header field in the storage while the head is still growing.
    struct field_span {
        std::size_t name_at = 0, name_len = 0, value_at = 0, value_len = 0;
    };

    head_limit count_trailer(std::size_t len, bool new_field) noexcept;
    void keep_trailer_name(const char* at, std::size_t len, bool new_field);
    void keep_trailer_value(const char* at, std::size_t len);

    head_limits limits_;
    const char* chunk_begin_ = nullptr;  // where the current llhttp_execute started
    std::size_t head_base_ = 0;          // head bytes consumed by earlier llhttp_execute calls
    std::size_t line_end_ = 0;           // head offset where the start line ended
    bool line_done_ = false;
    bool in_value_ = false;
    std::vector<field_span> fields_;
    std::size_t fields_done_ = 0;  // fields whose value is complete (a refusal keeps these)
    // Trailer fields (after a chunked body) are counted against the header limits, on their
    // own byte budget, and kept in *trailer_store_ when there is one (never in the head's
    // storage: the views built at the end of the head must not move).
    std::size_t trailer_bytes_ = 0, trailer_count_ = 0;
    std::string* trailer_store_ = nullptr;
    std::vector<field_span> trailers_;
    std::size_t extension_bytes_ = 0;
};

}  // namespace tern::detail
