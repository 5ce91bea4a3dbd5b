#pragma once
// The system's socket headers and the few names in which the socket API differs between
// POSIX and Windows (Winsock), so that no other folder of src/ includes <sys/socket.h> or
// <winsock2.h> itself (docs/platforms.md). A socket is a descriptor (int) on POSIX and a
// SOCKET (a handle) on Windows: native_socket names it. Everything here is inline and, on
// POSIX, the plain call, so that Linux's hot path is the same instructions as without it.
// The lowest layer: no asio, no other folder of src/.

#if defined(_WIN32)
#include <winsock2.h>
#include <ws2tcpip.h>
#else
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>
#endif

#include <cerrno>
#include <climits>
#include <cstddef>

namespace tern::detail::platform {

#if defined(_WIN32)
/// A socket as the system names it: a Winsock SOCKET on Windows, a descriptor elsewhere.
using native_socket = SOCKET;
/// The native_socket no socket has (INVALID_SOCKET, -1).
inline constexpr native_socket invalid_socket = INVALID_SOCKET;
/// The length of a socket address, as the socket calls take it.
using socket_length = int;
#else
using native_socket = int;
inline constexpr native_socket invalid_socket = -1;
using socket_length = socklen_t;
#endif

/// The flag of a recv(2) that must not wait on a socket that may block (MSG_DONTWAIT;
/// none on Windows, whose sockets here are all non-blocking).
#if defined(_WIN32)
inline constexpr int dont_wait = 0;
/// shutdown(2)'s "no more sends" (SHUT_WR; SD_SEND on Windows).
inline constexpr int shut_write = SD_SEND;
#else
inline constexpr int dont_wait = MSG_DONTWAIT;
inline constexpr int shut_write = SHUT_WR;
#endif

/// The flag of a send(2) after which a reset peer is an EPIPE error, not a SIGPIPE that ends
/// the process: MSG_NOSIGNAL where the system has it; none elsewhere (Windows has no SIGPIPE;
/// libtern's portable path ignores SIGPIPE for the process, platform/sockets.hpp).
#if defined(MSG_NOSIGNAL)
inline constexpr int no_signal = MSG_NOSIGNAL;
#else
inline constexpr int no_signal = 0;
#endif

#if defined(_WIN32)
/// Windows: the POSIX code for the Winsock error `wsa_error` (WSAEWOULDBLOCK: EWOULDBLOCK,
/// WSAECONNRESET: ECONNRESET, ...; EIO for the rest). Inline, as everything here, so that
/// tern::testing, which links no private symbol of libtern, uses these calls too.
inline int errno_for(int wsa_error) noexcept {
    switch (wsa_error) {
        case WSAEWOULDBLOCK:
            return EWOULDBLOCK;
        case WSAEINTR:
            return EINTR;
        case WSAECONNRESET:
            return ECONNRESET;
        case WSAECONNABORTED:
            return ECONNABORTED;
        case WSAECONNREFUSED:
            return ECONNREFUSED;
        case WSAENOTCONN:
            return ENOTCONN;
        case WSAESHUTDOWN:
            return EPIPE;
        case WSAETIMEDOUT:
            return ETIMEDOUT;
        case WSAEINPROGRESS:
            return EINPROGRESS;
        case WSAEMFILE:
            return EMFILE;
        case WSAENOBUFS:
            return ENOBUFS;
        case WSAEMSGSIZE:
            return EMSGSIZE;
        case WSAENOTSOCK:
            return ENOTSOCK;
        case WSAEINVAL:
            return EINVAL;
        default:
            return EIO;
    }
}

/// Windows: sets errno to the POSIX code for WSAGetLastError() (errno_for) and returns it, so
/// that the callers of send_bytes and receive_bytes test errno on every system.
inline int errno_from_socket_error() noexcept {
    errno = errno_for(::WSAGetLastError());
    return errno;
}

/// Windows: WSAStartup once for the process, before the first socket made with the calls of
/// this folder (asio's own sockets start Winsock themselves). Never cleaned up: sockets may
/// outlive any owner. Nothing elsewhere.
inline void start_sockets() noexcept {
    [[maybe_unused]] static const bool started = [] {
        WSADATA data{};
        return ::WSAStartup(MAKEWORD(2, 2), &data) == 0;
    }();
}
#else
inline void start_sockets() noexcept {}
#endif

#if defined(_WIN32)
/// Windows: a second socket for the connection `s` (WSADuplicateSocketW), overlapped and not
/// inherited, which closes apart from `s`: invalid_socket with errno when it cannot be made.
native_socket duplicate_socket(native_socket s) noexcept;
#endif

/// Closes `s` (closesocket on Windows): 0, or -1 with socket_error().
inline int close_socket(native_socket s) noexcept {
#if defined(_WIN32)
    return ::closesocket(s);
#else
    return ::close(s);
#endif
}

/// The error of the last socket call on this thread: errno, or WSAGetLastError() on Windows.
inline int socket_error() noexcept {
#if defined(_WIN32)
    return ::WSAGetLastError();
#else
    return errno;
#endif
}

/// Whether `error` (socket_error()) means the non-blocking call would have waited.
inline bool would_block(int error) noexcept {
#if defined(_WIN32)
    return error == WSAEWOULDBLOCK;
#else
    return error == EAGAIN || error == EWOULDBLOCK;
#endif
}

/// Whether `error` (socket_error()) means the call was interrupted by a signal and may be
/// made again (never on Windows).
inline bool interrupted(int error) noexcept {
#if defined(_WIN32)
    return error == WSAEINTR;
#else
    return error == EINTR;
#endif
}

/// send(2) of up to `n` bytes: the bytes sent, or -1 with errno (on Windows too, from
/// WSAGetLastError). Windows sends at most INT_MAX bytes a call.
inline ssize_t send_bytes(native_socket s, const void* data, std::size_t n, int flags) noexcept {
#if defined(_WIN32)
    const int length = n > INT_MAX ? INT_MAX : static_cast<int>(n);
    const int sent = ::send(s, static_cast<const char*>(data), length, flags);
    if (sent < 0) errno_from_socket_error();
    return sent;
#else
    return ::send(s, data, n, flags);
#endif
}

/// recv(2) of up to `n` bytes: the bytes read (0: the peer's end), or -1 with errno (on
/// Windows too, from WSAGetLastError).
inline ssize_t receive_bytes(native_socket s, void* data, std::size_t n, int flags) noexcept {
#if defined(_WIN32)
    const int length = n > INT_MAX ? INT_MAX : static_cast<int>(n);
    const int got = ::recv(s, static_cast<char*>(data), length, flags);
    if (got < 0) errno_from_socket_error();
    return got;
#else
    return ::recv(s, data, n, flags);
#endif
}

/// connect(2) of the non-blocking `s`: 0, or -1 with errno (EINPROGRESS: under way; on
/// Windows too, from WSAEWOULDBLOCK).
inline int connect_socket(native_socket s, const sockaddr* to, socket_length length) noexcept {
#if defined(_WIN32)
    if (::connect(s, to, length) == 0) return 0;
    if (errno_from_socket_error() == EWOULDBLOCK) errno = EINPROGRESS;
    return -1;
#else
    return ::connect(s, to, length);
#endif
}

/// The error a non-blocking connect of `s` ended with (SO_ERROR): 0, or an errno code.
inline int pending_error(native_socket s) noexcept {
    int err = 0;
    socket_length length = sizeof err;
#if defined(_WIN32)
    if (::getsockopt(s, SOL_SOCKET, SO_ERROR, reinterpret_cast<char*>(&err), &length) != 0) {
        return errno_from_socket_error();
    }
    return err == 0 ? 0 : errno_for(err);
#else
    if (::getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &length) != 0) return errno;
    return err;
#endif
}

/// Turns Nagle's algorithm off on the TCP socket `s` (TCP_NODELAY); errors are ignored.
inline void set_no_delay(native_socket s) noexcept {
    const int on = 1;
#if defined(_WIN32)
    ::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, reinterpret_cast<const char*>(&on), sizeof on);
#else
    ::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
#endif
}

/// Waits until `s` is readable (writable when `write`), at most `ms` milliseconds (-1: no
/// bound): poll(2), WSAPoll on Windows. 1 when it is, 0 when the time ran out, -1 with errno.
inline int wait_socket(native_socket s, bool write, int ms) noexcept {
#if defined(_WIN32)
    WSAPOLLFD p{s, static_cast<short>(write ? POLLOUT : POLLIN), 0};
    const int rc = ::WSAPoll(&p, 1, ms);
    if (rc < 0) errno_from_socket_error();
    return rc;
#else
    pollfd p{s, static_cast<short>(write ? POLLOUT : POLLIN), 0};
    return ::poll(&p, 1, ms);
#endif
}

/// poll(2) of the `n` sockets in `fds` for `ms` milliseconds (-1: no bound); WSAPoll on
/// Windows, whose pollfd holds a SOCKET. The number ready, 0 when the time ran out, or -1 with
/// errno (on Windows too, from WSAGetLastError).
inline int poll_sockets(pollfd* fds, unsigned n, int ms) noexcept {
#if defined(_WIN32)
    const int rc = ::WSAPoll(fds, n, ms);
    if (rc < 0) errno_from_socket_error();
    return rc;
#else
    return ::poll(fds, n, ms);
#endif
}

/// Makes `s` non-blocking (fcntl O_NONBLOCK; ioctlsocket FIONBIO on Windows), or blocking
/// again when `on` is false: false with errno when it could not.
inline bool set_non_blocking(native_socket s, bool on = true) noexcept {
#if defined(_WIN32)
    u_long value = on ? 1 : 0;
    if (::ioctlsocket(s, static_cast<long>(FIONBIO), &value) == 0) return true;
    errno_from_socket_error();
    return false;
#else
    const int flags = ::fcntl(s, F_GETFL);
    if (flags < 0) return false;
    return ::fcntl(s, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK) == 0;
#endif
}

/// A non-blocking TCP socket of `family` that no child process inherits, for a client outside
/// libtern (tern::testing's): invalid_socket with errno when it cannot be made. Where socket(2)
/// takes SOCK_CLOEXEC and SOCK_NONBLOCK (Linux), one call; elsewhere socket(2), FD_CLOEXEC and
/// O_NONBLOCK; on Windows WSASocketW without inheritance, then FIONBIO (Winsock started first).
inline native_socket open_client_socket(int family) noexcept {
#if defined(SOCK_CLOEXEC) && defined(SOCK_NONBLOCK)
    return ::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
#else
#if defined(_WIN32)
    start_sockets();
    const native_socket s =
        ::WSASocketW(family, SOCK_STREAM, 0, nullptr, 0, WSA_FLAG_NO_HANDLE_INHERIT);
    if (s == invalid_socket) {
        errno_from_socket_error();
        return invalid_socket;
    }
#else
    const native_socket s = ::socket(family, SOCK_STREAM, 0);
    if (s == invalid_socket) return invalid_socket;
    ::fcntl(s, F_SETFD, FD_CLOEXEC);
#endif
    if (!set_non_blocking(s)) {
        const int err = errno;
        close_socket(s);
        errno = err;
        return invalid_socket;
    }
    return s;
#endif
}

/// Move-only owner of a socket; closes it (close_socket) on destruction. file_handle's twin
/// for sockets, which are no file descriptors on Windows.
class socket_handle {
public:
    socket_handle() = default;
    explicit socket_handle(native_socket s) noexcept : s_(s) {}
    ~socket_handle() { reset(); }
    socket_handle(socket_handle&& other) noexcept : s_(other.release()) {}
    socket_handle& operator=(socket_handle&& other) noexcept {
        if (this != &other) {
            reset();
            s_ = other.release();
        }
        return *this;
    }
    socket_handle(const socket_handle&) = delete;
    socket_handle& operator=(const socket_handle&) = delete;

    /// The socket, or invalid_socket.
    native_socket get() const noexcept { return s_; }
    /// Whether a socket is held.
    explicit operator bool() const noexcept { return s_ != invalid_socket; }
    /// Gives up ownership without closing; returns the socket.
    native_socket release() noexcept {
        const native_socket s = s_;
        s_ = invalid_socket;
        return s;
    }
    /// Closes the socket now (if any).
    void reset() noexcept {
        if (s_ != invalid_socket) close_socket(s_);
        s_ = invalid_socket;
    }

private:
    native_socket s_ = invalid_socket;
};

}  // namespace tern::detail::platform
