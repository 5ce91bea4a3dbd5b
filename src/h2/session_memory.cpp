// nghttp2's memory on one connection: see session_memory.hpp.

#include "h2/session_memory.hpp"

#include <cstring>
#include <utility>

namespace tern::detail {

session_memory::session_memory(std::shared_ptr<block_pool> pool) noexcept : pool_(std::move(pool)) {
    mem_.mem_user_data = pool_.get();
    mem_.malloc = [](std::size_t size, void* user) {
        return static_cast<block_pool*>(user)->allocate(size);
    };
    mem_.free = [](void* p, void* user) { static_cast<block_pool*>(user)->release(p); };
    mem_.calloc = [](std::size_t n, std::size_t size, void* user) -> void* {
        if (size != 0 && n > static_cast<std::size_t>(-1) / size) return nullptr;
        void* p = static_cast<block_pool*>(user)->allocate(n * size);
        if (p != nullptr) std::memset(p, 0, n * size);
        return p;
    };
    mem_.realloc = [](void* p, std::size_t size, void* user) {
        return static_cast<block_pool*>(user)->reallocate(p, size);
    };
}

}  // namespace tern::detail
