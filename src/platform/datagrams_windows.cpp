// The Windows path of platform/datagrams.hpp: Winsock, one datagram per call (recvfrom,
// sendto), as on the portable path.
#include "platform/datagrams.hpp"

namespace tern::detail::platform {

native_socket open_datagram_socket(int family) noexcept {
    WSADATA data{};
    if (::WSAStartup(MAKEWORD(2, 2), &data) != 0) return invalid_socket;
    const native_socket s = ::WSASocketW(family, SOCK_DGRAM, 0, nullptr, 0,
                                         WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
    // Winsock counts its starts: the socket holds its own from here.
    ::WSACleanup();
    if (s == invalid_socket) return invalid_socket;
    u_long on = 1;
    if (::ioctlsocket(s, static_cast<long>(FIONBIO), &on) != 0) {
        const int err = ::WSAGetLastError();
        ::closesocket(s);
        ::WSASetLastError(err);
        return invalid_socket;
    }
    return s;
}

std::size_t receive_datagrams(native_socket fd, std::span<incoming_datagram> slots) noexcept {
    std::size_t n = 0;
    while (n < slots.size()) {
        auto& slot = slots[n];
        socket_length length = sizeof(sockaddr_storage);
        const int got = ::recvfrom(fd, reinterpret_cast<char*>(slot.buffer.data()),
                                   static_cast<int>(slot.buffer.size()), 0,
                                   reinterpret_cast<sockaddr*>(slot.from), &length);
        // WSAECONNRESET: an ICMP port unreachable for an earlier send, not this socket's
        // end; the next datagram is read.
        if (got < 0 && ::WSAGetLastError() == WSAECONNRESET) continue;
        if (got < 0) break;
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
    // A datagram Winsock has no room for is dropped, as QUIC allows.
    ::sendto(fd, reinterpret_cast<const char*>(d.bytes.data()), static_cast<int>(d.bytes.size()), 0,
             d.to, d.to_length);
    return 1;
}

ssize_t send_datagram(native_socket fd, const outgoing_datagram& d) noexcept {
    const int sent = ::sendto(fd, reinterpret_cast<const char*>(d.bytes.data()),
                              static_cast<int>(d.bytes.size()), 0, d.to, d.to_length);
    if (sent < 0) errno_from_socket_error();
    return sent;
}

void segment_datagrams(bool /*on*/) noexcept {}

}  // namespace tern::detail::platform
