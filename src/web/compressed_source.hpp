#pragma once
// Compression of a streamed body (response::source): wraps the source so each piece the
// transport pulls is compressed and flushed (gzip Z_SYNC_FLUSH, brotli FLUSH, zstd
// ZSTD_e_flush), so what was written reaches the client at once, decodable; the end of the
// body ends the coded stream.

#include "http/exchange_port.hpp"
#include "web/encoders.hpp"

#include <atomic>
#include <cstddef>
#include <memory>

namespace tern::detail {

/// The streamed bodies one app may compress at once (compression_config::max_streams): each
/// holds its coder's state for its whole life (about 1.8 MiB for zstd, 260 KiB for gzip,
/// 0.3-1.1 MiB for brotli), and one HTTP/2 connection may run many streams. Thread-safe.
class stream_coder_slots : public std::enable_shared_from_this<stream_coder_slots> {
public:
    explicit stream_coder_slots(std::size_t cap) noexcept : cap_(cap) {}

    /// Takes a slot: false when all are taken (the body is then sent uncompressed).
    bool take() noexcept;
    /// Gives a taken slot back.
    void give() noexcept { taken_.fetch_sub(1, std::memory_order_relaxed); }

private:
    const std::size_t cap_;
    std::atomic<std::size_t> taken_{0};
};

/// `inner` compressed with `c` at `level`, holding one of `slots` (when not null) until it
/// is destroyed. Returns null when every slot is taken, when the library cannot start (out
/// of memory) or `c` is identity: send it uncompressed.
std::shared_ptr<body_source> compressed_source(std::shared_ptr<body_source> inner, coding c,
                                               int level, stream_coder_slots* slots = nullptr);

}  // namespace tern::detail
