#pragma once
// multipart/form-data bodies read as they arrive (RFC 7578, framing per RFC 2046 5.1).
// Transport-free: fed pieces of any size, the body is never held. What it holds is one part's
// header block (at most max_part_header_size bytes) and, between two pieces, at most the
// delimiter's length minus one of lookbehind, kept as a count of the delimiter's own bytes
// (a partial match of the delimiter is a prefix of it), not as a copy of the input.
//
// It accepts and refuses what parse_multipart (web/multipart.hpp, its test oracle) does,
// part for part, with two differences written down in docs/uploads.md: a part header block
// over max_part_header_size is header_too_large (413) here, malformed there; and a file part
// over max_file_size is refused as its bytes pass the limit, before the parser has seen
// whether the body is well formed after it (parse_multipart reads the part to its end first,
// so a body that is also cut short or broken later is malformed there).

#include "web/multipart.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tern::detail {

class multipart_stream {
public:
    /// What `next` found.
    enum class event {
        need_more,  ///< The piece is used up: `feed` the next one, or `finish`.
        part,       ///< A part's headers are complete: `part()`.
        data,       ///< Bytes of the current part's data: `data()`.
        part_end,   ///< The current part's data is complete.
        end,        ///< The body ended after the close delimiter (the epilogue is ignored).
        failed,     ///< Not a valid body, or a limit passed: `status()`, `message()`.
    };

    /// A parser for parts delimited by `boundary` (copied), within `limits`.
    multipart_stream(std::string_view boundary, const multipart_limits& limits);

    /// Gives the next piece of the body; call only when `next` said need_more (or before
    /// the first `next`). The piece must stay valid until `next` says need_more again.
    void feed(std::string_view piece);
    /// The body has ended; call only when `next` said need_more.
    void finish();
    /// The next event. After `end` or `failed`, it says the same again.
    event next();

    /// After `part`: its name, filename (raw), whether it has one, and content type; its
    /// `data` is empty (the data comes as `data` events).
    const multipart_part& part() const noexcept { return part_; }
    /// After `data`: bytes of the part, never empty, valid until the next `feed`.
    std::string_view data() const noexcept { return data_; }
    /// After `failed`: malformed, too_many_parts, header_too_large or file_too_large.
    multipart_status status() const noexcept { return status_; }
    /// After `failed`: what was wrong, for the 400 or 413 body.
    const std::string& message() const noexcept { return message_; }

private:
    enum class state {
        preamble,         // looking for the first delimiter
        after_delimiter,  // just past "--" boundary
        after_dash,       // one '-' after the boundary: a second closes the body
        padding,          // transport padding (spaces, tabs) before the CRLF
        expect_lf,        // CR seen after the delimiter
        headers,          // inside a part's header block
        data,             // inside a part's data
        epilogue,         // after the close delimiter: ignored
        ended,
        failed,
    };

    event fail(multipart_status status, std::string why);
    // Advances the delimiter match over the input from pos_; true when a delimiter ended.
    bool scan() noexcept;
    event after_delimiter_byte(char c);
    event header_bytes();
    event data_step();
    void start_data() noexcept;

    std::string delimiter_;              // CRLF "--" boundary
    std::vector<std::size_t> fallback_;  // KMP table of delimiter_ (as linear_searcher's)
    multipart_limits limits_;
    state state_ = state::preamble;
    std::string_view in_;  // the current piece
    std::size_t pos_ = 0;  // bytes of in_ used
    bool finished_ = false;

    // The delimiter match: its first matched_ bytes are the last bytes seen (some maybe
    // from earlier pieces). Bytes that fall out of a partial match are data again.
    std::size_t matched_ = 0;

    // The data of the current part is released in segments: the matched bytes carried from
    // earlier pieces (delimiter_'s first carry_ bytes), then in_ from seg_begin_. emitted_
    // counts the segment's bytes handed out (or hidden: the CRLF that ended the headers,
    // which also starts a delimiter when the part has no data, RFC 2046 5.1.1).
    std::size_t carry_ = 0;
    std::size_t seg_begin_ = 0;
    std::size_t emitted_ = 0;
    std::size_t hidden_ = 0;
    std::size_t release_to_ = 0;  // segment bytes released by the last scan
    bool scanned_ = false;        // a scan's release is being handed out
    bool found_ = false;          // ... and it ended at a delimiter
    std::size_t data_size_ = 0;   // bytes of the current part so far

    std::string header_block_;  // the current part's header bytes
    std::size_t line_start_ = 0;
    part_headers line_check_;  // duplicates seen so far (its views are not read)
    std::size_t parts_ = 0;

    multipart_part part_;
    std::string_view data_;
    multipart_status status_ = multipart_status::ok;
    std::string message_;
};

}  // namespace tern::detail
