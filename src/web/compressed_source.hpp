#pragma once
// Compression of a streamed body (response::source): wraps the source so each piece the
// transport pulls is compressed and flushed (gzip Z_SYNC_FLUSH, brotli FLUSH, zstd
// ZSTD_e_flush), so what was written reaches the client at once, decodable; the end of the
// body ends the coded stream.

#include "http/exchange_port.hpp"
#include "web/encoders.hpp"

#include <memory>

namespace tern::detail {

/// `inner` compressed with `c` at `level`. The coder's state (zlib about 256 KiB, brotli
/// and zstd more at high levels) lives as long as the stream. Returns null when the library
/// cannot start (out of memory) or `c` is identity: send it uncompressed.
std::shared_ptr<body_source> compressed_source(std::shared_ptr<body_source> inner, coding c,
                                               int level);

}  // namespace tern::detail
