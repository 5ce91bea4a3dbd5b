#pragma once
// A socket address as QUIC carries it with every datagram (src/quic, docs/http3.md): no
// sockets here, only the bytes of a sockaddr, so the core stays transport-free.

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
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

/// One datagram for the transport to send.
struct datagram {
    address to;
    std::vector<std::uint8_t> bytes;
};

}  // namespace tern::detail::quic
