// The portable path of platform/datagrams.hpp: one datagram per system call.
#include "platform/datagrams.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace tern::detail::platform {

native_socket open_datagram_socket(int family) noexcept {
    const int fd = ::socket(family, SOCK_DGRAM, 0);
    if (fd < 0) return -1;
    if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 ||
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
        const int err = errno;
        ::close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

std::size_t receive_datagrams(native_socket fd, std::span<incoming_datagram> slots) noexcept {
    // One recvfrom per datagram, until the slots are full or none is left.
    std::size_t n = 0;
    while (n < slots.size()) {
        auto& slot = slots[n];
        socklen_t length = sizeof(sockaddr_storage);
        const ssize_t got = ::recvfrom(fd, slot.buffer.data(), slot.buffer.size(), 0,
                                       reinterpret_cast<sockaddr*>(slot.from), &length);
        if (got < 0) {
            if (errno == EINTR) continue;
            break;
        }
        slot.size = static_cast<std::size_t>(got);
        slot.from_length = length;
        ++n;
    }
    return n;
}

std::size_t send_datagrams(native_socket fd,
                           std::span<const outgoing_datagram> datagrams) noexcept {
    if (datagrams.empty()) return 0;
    const auto& d = datagrams.front();
    // A datagram the kernel refuses (no room: EAGAIN) is dropped, as QUIC allows.
    ssize_t sent = 0;
    do {
        sent = ::sendto(fd, d.bytes.data(), d.bytes.size(), 0, d.to, d.to_length);
    } while (sent < 0 && errno == EINTR);
    return 1;
}

void segment_datagrams(bool /*on*/) noexcept {}

ssize_t send_datagram(native_socket fd, const outgoing_datagram& d) noexcept {
    return ::sendto(fd, d.bytes.data(), d.bytes.size(), MSG_DONTWAIT, d.to, d.to_length);
}

}  // namespace tern::detail::platform
