#pragma once
// The content codings tern compresses responses with on the fly: gzip (zlib), br (brotli,
// RFC 7932) and zstd (Zstandard, RFC 8878), whole bodies and streamed pieces alike.
// Transport-free: bytes in, bytes out.

#include <tern/config.hpp>
#include <tern/header_field.hpp>

#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace tern::detail {

/// A content coding of a response body (RFC 9110 8.4.1).
enum class coding { identity, gzip, br, zstd };

/// The Content-Encoding token of `c` ("gzip", "br", "zstd"; "" for identity).
std::string_view coding_name(coding c) noexcept;

/// The coding for a response to a request with `request_headers`: among the codings
/// `config` enables, the one its Accept-Encoding weighs highest (q > 0); on a tie zstd,
/// then br, then gzip. identity when none is acceptable.
coding choose_coding(std::span<const header_field> request_headers,
                     const compression_config& config) noexcept;

/// The level `config` sets for `c` (gzip: level, br: brotli_level, zstd: zstd_level).
int coding_level(coding c, const compression_config& config) noexcept;

/// gzip-compresses `in` (RFC 1952 framing via zlib, `level` 1..9) into `out` (replaced).
/// False when zlib fails (out is then unspecified).
bool gzip_compress(std::string_view in, int level, std::string& out);

/// What coding whole bodies keeps from one response to the next on one thread: zstd's
/// context, whose tables are made at its first use rather than for every response. One per
/// event loop (its loop state), never shared between threads.
class whole_body_coders {
public:
    whole_body_coders() noexcept;
    ~whole_body_coders();
    whole_body_coders(const whole_body_coders&) = delete;
    whole_body_coders& operator=(const whole_body_coders&) = delete;

    struct kept;  ///< encoders.cpp's

private:
    friend bool encode_whole(coding, std::string_view, int, std::string&, whole_body_coders*);
    std::unique_ptr<kept> kept_;
};

/// Compresses all of `in` with `c` at `level` into `out` (replaced), reusing what `coders`
/// keeps (null: made for this call and let go). False when the library fails or `c` is
/// identity (out is then unspecified). Throws only std::bad_alloc.
bool encode_whole(coding c, std::string_view in, int level, std::string& out,
                  whole_body_coders* coders = nullptr);

/// One compressing stream: pieces in, each flushed so that what came in so far decodes at
/// once on the other side; `finish` ends the coded stream.
class stream_encoder {
public:
    virtual ~stream_encoder() = default;
    stream_encoder() = default;
    stream_encoder(const stream_encoder&) = delete;
    stream_encoder& operator=(const stream_encoder&) = delete;

    /// Appends the coded `piece` to `out`, flushed (finished when `finish`). False when
    /// the library fails; the stream is then unusable.
    virtual bool encode(std::string_view piece, bool finish, std::string& out) = 0;
};

/// A stream encoder for `c` at `level`, or null when the library cannot start one (out of
/// memory) or `c` is identity.
std::unique_ptr<stream_encoder> make_stream_encoder(coding c, int level);

}  // namespace tern::detail
