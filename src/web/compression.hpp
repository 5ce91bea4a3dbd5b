#pragma once
// Compression of response bodies (gzip, br, zstd; web/encoders.hpp). Transport-free: a filled
// response in, the same response compressed (or not) out.

#include "http/response.hpp"
#include "web/compressed_source.hpp"
#include "web/encoders.hpp"

#include <tern/config.hpp>
#include <tern/header_field.hpp>

#include <span>
#include <string>
#include <string_view>

namespace tern::detail {

/// Whether a body of this Content-Type is worth compressing: text/*, application/json and
/// +json, application/javascript, application/xml and +xml, image/svg+xml,
/// application/wasm... but not images, audio, video, fonts in woff/woff2, archives or
/// anything already compressed. Parameters (";charset=...") are ignored; case-insensitive.
bool is_compressible_type(std::string_view content_type) noexcept;

/// Compresses `res.body` in place when all hold: `res` has a string body (no file body) of
/// at least `config.min_size` bytes; its status allows a body and is not 206; its
/// Content-Type is compressible; `res.fields` has no Content-Encoding already; and
/// `request_headers` accept a coding `config` enables (choose_coding: the highest
/// Accept-Encoding weight, zstd > br > gzip on ties; "x-gzip" counts as gzip). Compressed
/// responses get `Content-Encoding` naming the coding, and a strong ETag the
/// handler set becomes weak (RFC 9110 8.8.3: one strong tag cannot name two byte
/// sequences). Every response that passed the size/type/status/Content-Encoding checks gets
/// `Vary: Accept-Encoding` (merged into an existing Vary field), compressed or not, so
/// caches keep the variants apart. The body is left as it was if compression would not
/// make it smaller. Never throws except std::bad_alloc.
/// `head`: the answer to a HEAD, which carries no body: the coding is chosen (and Vary
/// added) as for a GET, but the coder does not run and the answer keeps the identity
/// body's length, without Content-Encoding (RFC 9110 9.3.2 lets a HEAD omit what only
/// generating the content decides). Bodies over `config.max_size` are left alone like
/// those under `min_size`. A streamed body goes to compress_stream with `slots`; a whole
/// one is coded with what `coders` (the loop's) keeps.
void compress_response(response& res, std::span<const header_field> request_headers,
                       const compression_config& config, bool head = false,
                       stream_coder_slots* slots = nullptr, whole_body_coders* coders = nullptr);

/// For a streamed body (`res.source`): when the status, type (not text/event-stream),
/// Content-Encoding and Accept-Encoding checks of compress_response pass (there is no size
/// threshold: the length is unknown), wraps the source in compressed_source with the
/// chosen coding (each piece flushed)
/// and adds Content-Encoding and Vary as compress_response does. When `slots` is given and
/// all are taken, the body is sent uncompressed (with Vary). Never throws except
/// std::bad_alloc.
void compress_stream(response& res, std::span<const header_field> request_headers,
                     const compression_config& config, bool head = false,
                     stream_coder_slots* slots = nullptr);

/// Adds `token` to the Vary field of `res` (creating it, or appending ", token" unless it
/// is already listed case-insensitively or the value is "*").
void add_vary(response& res, std::string_view token);

}  // namespace tern::detail
