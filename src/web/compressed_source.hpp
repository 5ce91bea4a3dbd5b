#pragma once
// gzip for a streamed body (response::source): wraps the source so each piece the transport
// pulls is compressed and flushed (Z_SYNC_FLUSH), so what was written reaches the client
// at once, decodable; the end of the body finishes the gzip member.

#include "http/exchange_port.hpp"

#include <memory>

namespace tern::detail {

/// `inner` compressed at `level` (1..9). The zlib state (about 256 KiB) lives as long as
/// the stream. Returns null when zlib cannot start (out of memory): send it uncompressed.
std::shared_ptr<body_source> gzip_source(std::shared_ptr<body_source> inner, int level);

}  // namespace tern::detail
