#include "web/multipart_stream.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

namespace tern::detail {

namespace {

bool is_padding(char c) noexcept { return c == ' ' || c == '\t'; }

// The bytes of the CRLF before a delimiter that are known before the body starts: the
// first delimiter may start the body without one (RFC 2046 5.1.1), so the parser starts
// as if the body were preceded by CRLF, and none of those two bytes is ever data.
constexpr std::size_t virtual_crlf = 2;

}  // namespace

multipart_stream::multipart_stream(std::string_view boundary, const multipart_limits& limits)
    : delimiter_("\r\n--"), limits_(limits) {
    delimiter_.append(boundary);
    // The Knuth-Morris-Pratt table, as linear_searcher builds it: the match state survives
    // from one piece to the next, and each byte is looked at a bounded number of times.
    fallback_.assign(delimiter_.size(), 0);
    std::size_t k = 0;
    for (std::size_t j = 1; j < delimiter_.size(); ++j) {
        while (k > 0 && delimiter_[j] != delimiter_[k]) k = fallback_[k - 1];
        if (delimiter_[j] == delimiter_[k]) ++k;
        fallback_[j] = k;
    }
    matched_ = virtual_crlf;
    if (boundary.empty()) fail(multipart_status::malformed, "multipart boundary is empty");
}

void multipart_stream::feed(std::string_view piece) {
    in_ = piece;
    pos_ = 0;
    if (state_ == state::data) {
        // A new segment: the bytes still matched are carried from the last piece.
        carry_ = matched_;
        seg_begin_ = 0;
        emitted_ = hidden_;
    }
}

void multipart_stream::finish() { finished_ = true; }

multipart_stream::event multipart_stream::fail(multipart_status status, std::string why) {
    state_ = state::failed;
    status_ = status;
    message_ = std::move(why);
    return event::failed;
}

bool multipart_stream::scan() noexcept {
    const char* const d = in_.data();
    const std::size_t n = in_.size();
    const std::size_t m = delimiter_.size();
    std::size_t i = pos_;
    std::size_t j = matched_;
    while (i < n) {
        if (j == 0) {
            // Nothing matched: the next CR is the next place a delimiter may start.
            const void* hit = std::memchr(d + i, '\r', n - i);
            if (hit == nullptr) {
                i = n;
                break;
            }
            i = static_cast<std::size_t>(static_cast<const char*>(hit) - d);
        }
        if (d[i] == delimiter_[j]) {
            ++i;
            if (++j == m) {
                pos_ = i;
                matched_ = j;
                return true;
            }
        } else if (j == 0) {
            ++i;
        } else {
            j = fallback_[j - 1];
        }
    }
    pos_ = i;
    matched_ = j;
    return false;
}

multipart_stream::event multipart_stream::next() {
    for (;;) {
        switch (state_) {
            case state::failed:
                return event::failed;
            case state::ended:
                return event::end;
            case state::data: {
                // need_more only when the piece is used up.
                const event e = data_step();
                if (e != event::need_more || !finished_) return e;
                return fail(multipart_status::malformed, "multipart body has no closing boundary");
            }
            default:
                break;
        }
        if (pos_ == in_.size()) {
            if (!finished_) return event::need_more;
            switch (state_) {
                case state::preamble:
                    return fail(multipart_status::malformed,
                                "multipart body has no opening boundary");
                case state::after_delimiter:
                case state::padding:
                    return fail(multipart_status::malformed,
                                "multipart body has no closing boundary");
                case state::after_dash:
                case state::expect_lf:
                    return fail(multipart_status::malformed,
                                "multipart boundary is followed by something other than a "
                                "line end");
                case state::headers:
                    return fail(multipart_status::malformed,
                                "multipart body ends inside part headers");
                default:
                    state_ = state::ended;
                    return event::end;
            }
        }
        switch (state_) {
            case state::preamble:
                if (scan()) {
                    matched_ = 0;
                    state_ = state::after_delimiter;
                }
                break;
            case state::headers: {
                const event e = header_bytes();
                if (e != event::need_more) return e;
                break;
            }
            case state::epilogue:
                pos_ = in_.size();
                break;
            default: {
                const event e = after_delimiter_byte(in_[pos_++]);
                if (e != event::need_more) return e;
                break;
            }
        }
    }
}

// One byte after a delimiter: "--" closes the body; otherwise transport padding and CRLF
// start the next part (RFC 2046 5.1.1), as parse_multipart reads them.
multipart_stream::event multipart_stream::after_delimiter_byte(char c) {
    const auto not_a_line_end = [this] {
        return fail(multipart_status::malformed,
                    "multipart boundary is followed by something other than a line end");
    };
    switch (state_) {
        case state::after_delimiter:
            if (c == '-') {
                state_ = state::after_dash;
                return event::need_more;
            }
            [[fallthrough]];
        case state::padding:
            if (is_padding(c)) {
                state_ = state::padding;
            } else if (c == '\r') {
                state_ = state::expect_lf;
            } else {
                return not_a_line_end();
            }
            return event::need_more;
        case state::after_dash:
            if (c != '-') return not_a_line_end();
            state_ = state::epilogue;
            return event::need_more;
        default:  // expect_lf
            if (c != '\n') return not_a_line_end();
            if (parts_ == limits_.max_parts) {
                return fail(
                    multipart_status::too_many_parts,
                    "multipart body has more than " + std::to_string(limits_.max_parts) + " parts");
            }
            ++parts_;
            state_ = state::headers;
            header_block_.clear();
            line_start_ = 0;
            line_check_ = {};
            return event::need_more;
    }
}

// Takes header bytes up to the next line end; checks each line as it completes, as
// read_part_headers does, so that a bad line is malformed whatever follows it.
multipart_stream::event multipart_stream::header_bytes() {
    const std::string_view rest = in_.substr(pos_);
    const std::size_t lf = rest.find('\n');
    const std::size_t take = lf == std::string_view::npos ? rest.size() : lf + 1;
    // parse_multipart looks for the block's end within the first max_part_header_size
    // bytes: a line end beyond them, or none there and more bytes after, is too much.
    if (header_block_.size() + take > limits_.max_part_header_size) {
        return fail(multipart_status::header_too_large,
                    "part headers are larger than " + std::to_string(limits_.max_part_header_size) +
                        " bytes");
    }
    header_block_.append(rest.substr(0, take));
    pos_ += take;
    if (lf == std::string_view::npos) return event::need_more;

    const std::string_view line = std::string_view(header_block_).substr(line_start_);
    line_start_ = header_block_.size();
    if (line.size() < 2 || line[line.size() - 2] != '\r') {
        return fail(multipart_status::malformed, "part header line does not end in CRLF");
    }
    std::string why;
    const std::string_view text = line.substr(0, line.size() - 2);
    if (!text.empty()) {
        // line_check_ only notes which fields were seen; its views are not read (the
        // block may move as it grows). The complete block is read again below.
        if (!read_part_header_line(text, line_check_, why)) {
            return fail(multipart_status::malformed, std::move(why));
        }
        return event::need_more;
    }
    part_headers headers;
    if (!read_part_headers(header_block_, limits_.max_part_header_size, headers, why)) {
        return fail(multipart_status::malformed, std::move(why));
    }
    part_ = multipart_part{};
    if (!describe_part(headers, part_, why)) {
        return fail(multipart_status::malformed, std::move(why));
    }
    start_data();
    return event::part;
}

void multipart_stream::start_data() noexcept {
    // The CRLF that ended the headers may be the start of the next delimiter (a part with
    // no data): it is matched already, and hidden, never data.
    state_ = state::data;
    matched_ = virtual_crlf;
    carry_ = virtual_crlf;
    seg_begin_ = pos_;
    emitted_ = virtual_crlf;
    hidden_ = virtual_crlf;
    scanned_ = false;
    found_ = false;
    data_size_ = 0;
}

// In the data: scans the piece to a delimiter or its end, then hands out what the scan
// released (the carried bytes, then the piece's), one event at a time. need_more when the
// piece is used up with no delimiter.
multipart_stream::event multipart_stream::data_step() {
    if (!scanned_) {
        if (pos_ == in_.size()) return event::need_more;
        found_ = scan();
        const std::size_t seen = carry_ + (pos_ - seg_begin_);
        release_to_ = seen - matched_;
        const std::size_t fresh = release_to_ > emitted_ ? release_to_ - emitted_ : 0;
        // A file part's size never passes the limit unnoticed: data_size_ <= max_file_size.
        if (part_.has_filename && fresh > limits_.max_file_size - data_size_) {
            return fail(multipart_status::file_too_large,
                        "file '" + safe_filename(part_.filename) + "' is larger than " +
                            std::to_string(limits_.max_file_size) + " bytes");
        }
        data_size_ += fresh;
        scanned_ = true;
    }
    if (emitted_ < release_to_) {
        if (emitted_ < carry_) {
            const std::size_t end = std::min(release_to_, carry_);
            data_ = std::string_view(delimiter_).substr(emitted_, end - emitted_);
            emitted_ = end;
            return event::data;
        }
        data_ = in_.substr(seg_begin_ + (emitted_ - carry_), release_to_ - emitted_);
        emitted_ = release_to_;
        return event::data;
    }
    scanned_ = false;
    hidden_ = release_to_ >= hidden_ ? 0 : hidden_ - release_to_;
    if (found_) {
        found_ = false;
        matched_ = 0;
        state_ = state::after_delimiter;
        return event::part_end;
    }
    return event::need_more;  // the piece is used up
}

}  // namespace tern::detail
