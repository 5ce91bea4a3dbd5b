// The Linux path of platform/datagrams.hpp: a batch of datagrams per system call.
#include "platform/datagrams.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <array>

namespace tern::detail::platform {

namespace {

constexpr std::size_t max_batch = 16;

}  // namespace

native_socket open_datagram_socket(int family) noexcept {
    return ::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

std::size_t receive_datagrams(native_socket fd, std::span<incoming_datagram> slots) noexcept {
    std::array<mmsghdr, max_batch> messages{};
    std::array<iovec, max_batch> vectors{};
    const std::size_t n = std::min(slots.size(), max_batch);
    for (std::size_t i = 0; i < n; ++i) {
        vectors[i] = {slots[i].buffer.data(), slots[i].buffer.size()};
        messages[i].msg_hdr.msg_iov = &vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
        messages[i].msg_hdr.msg_name = slots[i].from;
        messages[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
    }
    const int got =
        ::recvmmsg(fd, messages.data(), static_cast<unsigned>(n), MSG_DONTWAIT, nullptr);
    if (got <= 0) return 0;
    const auto count = static_cast<std::size_t>(got);
    for (std::size_t i = 0; i < count; ++i) {
        slots[i].size = messages[i].msg_len;
        slots[i].from_length = messages[i].msg_hdr.msg_namelen;
    }
    return count;
}

std::size_t send_datagrams(native_socket fd,
                           std::span<const outgoing_datagram> datagrams) noexcept {
    std::array<mmsghdr, max_batch> messages{};
    std::array<iovec, max_batch> vectors{};
    const std::size_t n = std::min(max_batch, datagrams.size());
    for (std::size_t i = 0; i < n; ++i) {
        const auto& d = datagrams[i];
        vectors[i] = {const_cast<std::uint8_t*>(d.bytes.data()), d.bytes.size()};
        messages[i].msg_hdr.msg_iov = &vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
        messages[i].msg_hdr.msg_name = const_cast<sockaddr*>(d.to);
        messages[i].msg_hdr.msg_namelen = d.to_length;
    }
    const int sent = ::sendmmsg(fd, messages.data(), static_cast<unsigned>(n), MSG_DONTWAIT);
    // A datagram the kernel refuses (no room: EAGAIN) is dropped, as QUIC allows; the rest
    // of the batch goes on after it.
    return sent > 0 ? static_cast<std::size_t>(sent) : 1;
}

ssize_t send_datagram(native_socket fd, const outgoing_datagram& d) noexcept {
    return ::sendto(fd, d.bytes.data(), d.bytes.size(), MSG_DONTWAIT, d.to, d.to_length);
}

}  // namespace tern::detail::platform
