#pragma once
// Small blocks of memory for a protocol library on one loop (nghttp2's streams, header
// buffers and queued frames: docs/http2.md): a block freed goes to a free list of its size
// class, and the next one of that class is taken from there instead of from malloc. An
// HTTP/2 request makes and frees about ten such blocks, so a busy loop mostly reuses its own.
// Each class keeps at most `kept_bytes_per_class` of free blocks (the rest go back to free):
// under 1 MiB for a whole loop, whatever its connections. Blocks larger than the largest
// class go straight to malloc. One loop, one thread, no locks.

#include <array>
#include <cstddef>

namespace tern::detail {

class block_pool {
public:
    static constexpr std::size_t class_step = 64;
    static constexpr std::size_t classes = 16;  // blocks of 64, 128, ... 1,024 bytes
    static constexpr std::size_t kept_bytes_per_class = 64 * 1024;

    block_pool() noexcept = default;
    ~block_pool() { trim(); }
    block_pool(const block_pool&) = delete;
    block_pool& operator=(const block_pool&) = delete;

    /// As malloc: aligned for any type; null when memory is short.
    void* allocate(std::size_t size) noexcept;
    /// As free (null is nothing).
    void release(void* p) noexcept;
    /// As realloc: `p`'s bytes kept up to the smaller size; null and `p` untouched when
    /// memory is short; size 0 frees `p` and returns null.
    void* reallocate(void* p, std::size_t size) noexcept;
    /// Gives every kept free block back to malloc.
    void trim() noexcept;
    /// Free blocks kept now, over every class.
    std::size_t kept() const noexcept;

private:
    struct free_block {
        free_block* next;
    };
    std::array<free_block*, classes> free_{};
    std::array<std::size_t, classes> count_{};
};

}  // namespace tern::detail
