#pragma once
/// @file loopback_socket.hpp
/// A plain blocking TCP socket connected to 127.0.0.1, for the wire tests that drive a socket
/// byte by byte themselves (a stalled sender, raw HTTP/2 frames). Made and used through
/// libtern's platform seam (src/platform/socket_api.hpp: POSIX, or Winsock on Windows).

#include "platform/socket_api.hpp"

#include <cstdint>

namespace tern_test {

namespace platform = tern::detail::platform;

/// A blocking TCP socket connected to 127.0.0.1:`port`, or platform::invalid_socket (errno
/// set) when it cannot be made or connected. The caller closes it (platform::close_socket).
inline platform::native_socket connect_loopback(std::uint16_t port) {
    platform::start_sockets();
    const platform::native_socket s = ::socket(AF_INET, SOCK_STREAM, 0);
    if (s == platform::invalid_socket) return s;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(s, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
        platform::close_socket(s);
        return platform::invalid_socket;
    }
    return s;
}

}  // namespace tern_test
