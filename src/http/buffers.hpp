#pragma once
// How per-connection buffers are reused: kept from request to request so steady-state
// traffic does not allocate, but never kept large. A buffer that grew for one big request
// (a 10 MiB body, a large response) is freed once that request is done, so an idle
// keep-alive connection holds kilobytes, not the largest thing it ever carried.

#include <cstddef>
#include <string>

namespace tern::detail {

/// Capacity a reused buffer keeps between requests; a larger one is freed.
inline constexpr std::size_t retained_buffer_capacity = 64 * 1024;

/// Empties `buf`, freeing its storage when it exceeds `retained_buffer_capacity`.
inline void clear_buffer(std::string& buf) noexcept {
    if (buf.capacity() > retained_buffer_capacity) {
        std::string().swap(buf);
    } else {
        buf.clear();
    }
}

}  // namespace tern::detail
