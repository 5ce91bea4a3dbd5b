#pragma once
// A socket address as QUIC carries it with every datagram (src/quic, docs/http3.md): no
// sockets here, only the bytes of a sockaddr, so the core stays transport-free.

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tern::detail::quic {

/// An IPv4 or IPv6 address and port, as `recvfrom` fills it.
struct address {
    sockaddr_storage storage{};
    socklen_t length = 0;

    const sockaddr* get() const noexcept { return reinterpret_cast<const sockaddr*>(&storage); }
    sockaddr* get() noexcept { return reinterpret_cast<sockaddr*>(&storage); }
};

/// One datagram of a batch: where it goes and its bytes (valid until the batch changes).
struct datagram {
    const address& to;
    std::span<const std::uint8_t> bytes;
};

/// The datagrams one call into the QUIC core made, for the transport to send: their bytes
/// one after another in one buffer that the batch keeps when it is cleared, so a loop that
/// sends thousands of packets a second allocates nothing for them once it has grown
/// (a vector of bytes per packet was two allocations per request, docs/http3.md).
/// A writer asks for `room(max)`, writes into it, and `commit`s what it wrote.
class datagram_batch {
public:
    /// Space for one datagram of at most `max` bytes after those committed; valid until the
    /// next `room`, `commit` or `clear`. Its bytes are not zeroed.
    std::span<std::uint8_t> room(std::size_t max) {
        if (used_ + max > capacity_) grow(used_ + max);
        return {bytes_.get() + used_, max};
    }
    /// The first `n` bytes of the last `room` are a datagram to `to`.
    void commit(const address& to, std::size_t n) {
        entries_.push_back({to, used_, n});
        used_ += n;
    }
    std::size_t size() const noexcept { return entries_.size(); }
    bool empty() const noexcept { return entries_.empty(); }
    datagram operator[](std::size_t i) const noexcept {
        const auto& e = entries_[i];
        return {e.to, {bytes_.get() + e.offset, e.length}};
    }
    class iterator {
    public:
        iterator(const datagram_batch& batch, std::size_t i) noexcept : batch_(&batch), i_(i) {}
        datagram operator*() const noexcept { return (*batch_)[i_]; }
        iterator& operator++() noexcept {
            ++i_;
            return *this;
        }
        bool operator==(const iterator& other) const noexcept { return i_ == other.i_; }

    private:
        const datagram_batch* batch_;
        std::size_t i_;
    };
    iterator begin() const noexcept { return {*this, 0}; }
    iterator end() const noexcept { return {*this, entries_.size()}; }
    /// Forgets the datagrams and keeps the memory.
    void clear() noexcept {
        entries_.clear();
        used_ = 0;
    }

private:
    struct entry {
        address to;
        std::size_t offset;
        std::size_t length;
    };
    void grow(std::size_t wanted) {
        std::size_t cap = capacity_ == 0 ? 16 * 1024 : capacity_;
        while (cap < wanted) cap *= 2;
        // Not zeroed (the writers fill what they commit); libc++ 14 has no
        // std::make_unique_for_overwrite, so `new` with default initialization.
        std::unique_ptr<std::uint8_t[]> bigger(new std::uint8_t[cap]);
        if (used_ != 0) std::copy_n(bytes_.get(), used_, bigger.get());
        bytes_ = std::move(bigger);
        capacity_ = cap;
    }
    std::unique_ptr<std::uint8_t[]> bytes_;
    std::size_t capacity_ = 0;
    std::size_t used_ = 0;
    std::vector<entry> entries_;
};

}  // namespace tern::detail::quic
