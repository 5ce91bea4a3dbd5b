// nghttp2's memory (src/h2/session_memory.hpp over src/http/block_pool.hpp) without a
// connection: what nghttp2 may ask of an allocator (malloc, calloc, realloc, free, through its
// nghttp2_mem), and the reuse and the bound of the loop's free lists.

#include "h2/session_memory.hpp"
#include "http/block_pool.hpp"

#include <nghttp2/nghttp2.h>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace unit_test_h2_session_memory {

using tern::detail::block_pool;
using tern::detail::session_memory;

bool aligned(const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) % alignof(std::max_align_t) == 0;
}

TEST_CASE("h2 session memory: blocks of every size are aligned, usable and given back", "[h2]") {
    auto pool = std::make_shared<block_pool>();
    session_memory memory(pool);
    nghttp2_mem* mem = memory.mem();
    std::vector<void*> blocks;
    for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{64},
                             std::size_t{65}, std::size_t{1000}, std::size_t{1024},
                             std::size_t{1025}, std::size_t{16384}, std::size_t{70000}}) {
        void* p = mem->malloc(size, mem->mem_user_data);
        REQUIRE(p != nullptr);
        CHECK(aligned(p));
        std::memset(p, 0x5a, size);
        blocks.push_back(p);
    }
    for (void* p : blocks) mem->free(p, mem->mem_user_data);
    mem->free(nullptr, mem->mem_user_data);  // as free(NULL)
    // The small ones are kept (seven of the ten: 0 to 1,024 bytes), the large ones not.
    CHECK(pool->kept() == 7);
}

TEST_CASE("h2 session memory: a freed block is the next one of its class", "[h2]") {
    block_pool pool;
    void* a = pool.allocate(100);
    pool.release(a);
    CHECK(pool.allocate(120) == a);  // the same class (65..128 bytes)
    void* b = pool.allocate(100);
    CHECK(b != a);
    pool.release(a);
    pool.release(b);
    CHECK(pool.kept() == 2);
}

TEST_CASE("h2 session memory: calloc zeroes and refuses an overflowing count", "[h2]") {
    auto pool = std::make_shared<block_pool>();
    session_memory memory(pool);
    nghttp2_mem* mem = memory.mem();
    // A reused block held other bytes: calloc's are zero all the same.
    void* dirty = pool->allocate(200);
    std::memset(dirty, 0xff, 200);
    pool->release(dirty);
    auto* p = static_cast<unsigned char*>(mem->calloc(10, 20, mem->mem_user_data));
    REQUIRE(p != nullptr);
    for (int i = 0; i < 200; ++i) CHECK(p[i] == 0);
    mem->free(p, mem->mem_user_data);
    CHECK(mem->calloc(static_cast<std::size_t>(-1) / 2, 4, mem->mem_user_data) == nullptr);
}

TEST_CASE("h2 session memory: realloc keeps the bytes across classes and into large blocks",
          "[h2]") {
    session_memory memory(std::make_shared<block_pool>());
    nghttp2_mem* mem = memory.mem();
    void* p = mem->realloc(nullptr, 10, mem->mem_user_data);  // as malloc
    REQUIRE(p != nullptr);
    std::memcpy(p, "0123456789", 10);
    CHECK(mem->realloc(p, 40, mem->mem_user_data) == p);  // still fits its 64-byte class
    std::string expected = "0123456789";
    for (std::size_t size :
         {std::size_t{500}, std::size_t{5000}, std::size_t{50000}, std::size_t{20}}) {
        p = mem->realloc(p, size, mem->mem_user_data);
        REQUIRE(p != nullptr);
        CHECK(std::string(static_cast<char*>(p), 10) == expected);
        std::memset(static_cast<char*>(p) + 10, 'x', size - 10);
    }
    CHECK(mem->realloc(p, 0, mem->mem_user_data) == nullptr);  // as free
}

TEST_CASE("h2 session memory: each class keeps at most kept_bytes_per_class of free blocks",
          "[h2]") {
    block_pool pool;
    // 320-byte blocks (the class of 257..320): 204 of them fit in 64 KiB.
    const std::size_t fit = block_pool::kept_bytes_per_class / 320;
    std::vector<void*> blocks;
    for (std::size_t i = 0; i < 3 * fit; ++i) blocks.push_back(pool.allocate(300));
    for (void* p : blocks) pool.release(p);
    CHECK(pool.kept() == fit);
}

TEST_CASE("h2 session memory: an nghttp2 session lives and dies on it", "[h2]") {
    auto pool = std::make_shared<block_pool>();
    session_memory memory(pool);
    nghttp2_session_callbacks* callbacks = nullptr;
    REQUIRE(nghttp2_session_callbacks_new(&callbacks) == 0);
    nghttp2_session* session = nullptr;
    REQUIRE(nghttp2_session_server_new3(&session, callbacks, nullptr, nullptr, memory.mem()) == 0);
    // A client's preface and SETTINGS, then a GET's HEADERS: nghttp2 makes a stream.
    const std::string preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    const unsigned char settings[] = {0, 0, 0, 4, 0, 0, 0, 0, 0};
    CHECK(nghttp2_session_mem_recv(session, reinterpret_cast<const std::uint8_t*>(preface.data()),
                                   preface.size()) == static_cast<long>(preface.size()));
    CHECK(nghttp2_session_mem_recv(session, settings, sizeof settings) ==
          static_cast<long>(sizeof settings));
    const unsigned char headers[] = {0, 0, 3, 1, 5, 0, 0, 0, 1, 0x82, 0x84, 0x86};  // GET / http
    CHECK(nghttp2_session_mem_recv(session, headers, sizeof headers) ==
          static_cast<long>(sizeof headers));
    CHECK(nghttp2_session_find_stream(session, 1) != nullptr);
    nghttp2_session_del(session);
    nghttp2_session_callbacks_del(callbacks);
    CHECK(pool->kept() > 0);  // its blocks came back to the lists
}

TEST_CASE("h2 session memory: trim gives every kept block back", "[h2]") {
    block_pool pool;
    std::vector<void*> blocks;
    for (std::size_t size = 16; size <= 1024; size += 16) blocks.push_back(pool.allocate(size));
    for (void* p : blocks) pool.release(p);
    CHECK(pool.kept() == blocks.size());
    pool.trim();
    CHECK(pool.kept() == 0);
    // And it serves on.
    void* p = pool.allocate(100);
    CHECK(p != nullptr);
    pool.release(p);
    CHECK(pool.kept() == 1);
}

}  // namespace unit_test_h2_session_memory
