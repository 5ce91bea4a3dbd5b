#pragma once
// The memory nghttp2 asks for on one HTTP/2 connection (its `nghttp2_mem`), from its loop's
// block pool (src/http/block_pool.hpp): the blocks one stream frees are the next stream's,
// on this connection or another of the loop's. The pool is shared with the connection, so
// it outlives the session whatever ends first. Private to src/h2.

#include "http/block_pool.hpp"

#include <nghttp2/nghttp2.h>

#include <memory>

namespace tern::detail {

class session_memory {
public:
    explicit session_memory(std::shared_ptr<block_pool> pool) noexcept;
    session_memory(const session_memory&) = delete;
    session_memory& operator=(const session_memory&) = delete;

    /// The allocator to hand to nghttp2_session_server_new3; valid while this lives.
    nghttp2_mem* mem() noexcept { return &mem_; }

private:
    std::shared_ptr<block_pool> pool_;
    nghttp2_mem mem_{};
};

}  // namespace tern::detail
