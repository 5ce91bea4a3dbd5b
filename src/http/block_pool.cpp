// Small blocks for a protocol library on one loop: see block_pool.hpp.

#include "http/block_pool.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace tern::detail {

namespace {

// Each block starts with a header of this size holding its class (or `large`) and its size;
// the caller's bytes follow, aligned as malloc's are.
constexpr std::size_t header = alignof(std::max_align_t) < 16 ? 16 : alignof(std::max_align_t);
constexpr std::uint32_t large = 0xffffffff;

struct block_header {
    std::uint32_t size_class;
    std::uint32_t unused;
    std::size_t size;  // a large block's size; a small one's, its class's
};
static_assert(sizeof(block_header) <= header);

block_header* header_of(void* p) noexcept {
    return reinterpret_cast<block_header*>(static_cast<char*>(p) - header);
}

constexpr std::size_t class_size(std::size_t c) noexcept {
    return (c + 1) * block_pool::class_step;
}

constexpr std::size_t class_of(std::size_t size) noexcept {
    return size == 0 ? 0 : (size - 1) / block_pool::class_step;
}

constexpr std::size_t largest = static_cast<std::size_t>(-1) - header;

}  // namespace

void* block_pool::allocate(std::size_t size) noexcept {
    const std::size_t c = class_of(size);
    if (c < classes) {
        if (auto* block = free_[c]) {
            free_[c] = block->next;
            --count_[c];
            return block;
        }
        auto* raw = static_cast<char*>(std::malloc(header + class_size(c)));
        if (raw == nullptr) return nullptr;
        *reinterpret_cast<block_header*>(raw) = {static_cast<std::uint32_t>(c), 0, class_size(c)};
        return raw + header;
    }
    if (size > largest) return nullptr;
    auto* raw = static_cast<char*>(std::malloc(header + size));
    if (raw == nullptr) return nullptr;
    *reinterpret_cast<block_header*>(raw) = {large, 0, size};
    return raw + header;
}

void block_pool::release(void* p) noexcept {
    if (p == nullptr) return;
    const auto c = header_of(p)->size_class;
    if (c != large && (count_[c] + 1) * class_size(c) <= kept_bytes_per_class) {
        auto* block = static_cast<free_block*>(p);
        block->next = free_[c];
        free_[c] = block;
        ++count_[c];
        return;
    }
    std::free(header_of(p));
}

void* block_pool::reallocate(void* p, std::size_t size) noexcept {
    if (p == nullptr) return allocate(size);
    if (size == 0) {
        release(p);
        return nullptr;
    }
    const std::size_t had = header_of(p)->size;
    const bool was_large = header_of(p)->size_class == large;
    if (!was_large && size <= had) return p;  // fits its class
    if (was_large && class_of(size) >= classes) {
        // Large to large (a frame buffer growing): realloc's own.
        if (size > largest) return nullptr;
        auto* raw = static_cast<char*>(std::realloc(header_of(p), header + size));
        if (raw == nullptr) return nullptr;
        reinterpret_cast<block_header*>(raw)->size = size;
        return raw + header;
    }
    void* moved = allocate(size);
    if (moved == nullptr) return nullptr;
    std::memcpy(moved, p, std::min(had, size));
    release(p);
    return moved;
}

void block_pool::trim() noexcept {
    for (std::size_t c = 0; c < classes; ++c) {
        while (auto* block = free_[c]) {
            free_[c] = block->next;
            std::free(reinterpret_cast<char*>(block) - header);
        }
        count_[c] = 0;
    }
}

std::size_t block_pool::kept() const noexcept {
    std::size_t n = 0;
    for (const auto c : count_) n += c;
    return n;
}

}  // namespace tern::detail
