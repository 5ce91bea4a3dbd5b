#pragma once
// The asio object through which a loop waits for a socket that tern reads and writes itself
// (the worker's wake channel, HTTP/3's UDP socket): asio only says when it is readable or
// writable (async_wait). On POSIX a descriptor object, which any descriptor fits; on Windows
// an asio socket, since Windows waits on sockets only (asio's select reactor beside IOCP).
// The one place in src/net where the two differ by type.

#include "net/socket_poller.hpp"
#include "platform/socket_api.hpp"

#include <asio/io_context.hpp>

#include <asio/ip/tcp.hpp>

#if !defined(_WIN32)
#include <asio/posix/stream_descriptor.hpp>
#endif

#include <system_error>

namespace tern::detail {

#if defined(_WIN32)
/// Waits for a socket it owns (closes it at close() or destruction).
using waitable = asio::ip::tcp::socket;

/// Gives `s` to `w`, which closes it from then on.
inline void assign_waitable(waitable& w, platform::native_socket s, std::error_code& ec) {
    // The protocol object only tells asio the family for calls tern never makes through it.
    w.assign(asio::ip::tcp::v4(), s, ec);
}

/// The socket `socket` holds, out of asio's hands, for its loop's `poller` to watch
/// (invalid_socket with `ec` when it cannot be). Windows: a duplicate (WSADuplicateSocketW),
/// and `socket` itself goes to `poller` (socket_poller::hold), whose waits go through it: an
/// asio socket there can give its socket back only through a call older Windows and Wine
/// lack, and a socket is bound to one completion port once. So on Windows a socket stays on
/// the loop that accepted it (sockets_move_between_loops).
inline platform::native_socket take_socket(asio::ip::tcp::socket& socket, socket_poller& poller,
                                           std::error_code& ec) {
    const platform::native_socket copy = platform::duplicate_socket(socket.native_handle());
    if (copy == platform::invalid_socket) {
        ec.assign(errno, std::generic_category());
        std::error_code ignored;
        socket.close(ignored);
        return copy;
    }
    ec.clear();
    poller.hold(copy, std::move(socket));
    return copy;
}

/// Whether a socket taken on one loop may be served on another (worker::hand_out).
inline constexpr bool sockets_move_between_loops = false;
#else
using waitable = asio::posix::stream_descriptor;

inline void assign_waitable(waitable& w, platform::native_socket s, std::error_code& ec) {
    w.assign(s, ec);
}

inline platform::native_socket take_socket(asio::ip::tcp::socket& socket, socket_poller& /*poller*/,
                                           std::error_code& ec) {
    return socket.release(ec);
}

inline constexpr bool sockets_move_between_loops = true;
#endif

}  // namespace tern::detail
