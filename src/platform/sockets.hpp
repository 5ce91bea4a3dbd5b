#pragma once
// The socket calls that differ between the I/O paths (TERN_IO, docs/platforms.md): sends that
// never raise SIGPIPE, and a port shared by several sockets. Linux: MSG_NOSIGNAL and
// SO_REUSEPORT, whose kernel spreads connections over the workers' sockets
// (sockets_linux.cpp). Portable: the process ignores SIGPIPE, and one socket serves a port
// (sockets_portable.cpp). The lowest layer: no asio, no other folder of src/.

#include "platform/socket_api.hpp"

#if !defined(_WIN32)
#include <sys/resource.h>
#endif

#include <climits>

namespace tern::detail::platform {

/// The flags of every send(2) on a connection. Linux: MSG_NOSIGNAL (a reset peer is EPIPE,
/// not SIGPIPE). Portable: none; ignore_sigpipe() has made SIGPIPE harmless for the process.
/// A constant, not a call: the Linux path's sends are the same instructions as without the seam.
#if defined(TERN_IO_PORTABLE)
inline constexpr int send_flags = 0;
#else
inline constexpr int send_flags = MSG_NOSIGNAL;
#endif

/// Makes sends on a reset connection an EPIPE error instead of the signal that kills the
/// process. Linux: nothing (send_flags does it per call). Portable: SIGPIPE is ignored
/// process-wide, once, the first time this is called (a server's start, a client's first
/// connection). Thread-safe.
void ignore_sigpipe() noexcept;

/// A stream socket of `family` (AF_INET, AF_INET6, AF_UNIX), close-on-exec, non-blocking
/// when `non_blocking`: invalid_socket with socket_error() when it cannot be made. Linux: one
/// socket(2) with SOCK_CLOEXEC (and SOCK_NONBLOCK). Portable: socket(2), then fcntl. Windows:
/// socket(), then ioctlsocket(FIONBIO) (a Winsock socket is not inherited by default).
native_socket open_stream_socket(int family, bool non_blocking) noexcept;

/// Whether several sockets may bind one port with the kernel balancing connections (or UDP
/// peers) over them: true on Linux (SO_REUSEPORT); false on the portable path, where one
/// socket serves the port and its loop hands connections to the others.
bool balances_shared_port() noexcept;

/// Lets `fd` share its port with the other workers' sockets (before bind). Linux: sets
/// SO_REUSEPORT. Portable: nothing (never called there with more than one socket).
void share_port(native_socket fd) noexcept;

/// A worker's wake channel, through which other threads wake its loop: `read_end` and
/// `write_end`, both non-blocking and close-on-exec, closed with close_socket. POSIX: a pipe.
/// Windows: a connected pair of loopback TCP sockets (its loops wait on sockets only). False
/// with errno when it cannot be made.
bool open_wake_channel(native_socket& read_end, native_socket& write_end) noexcept;

/// Writes one byte to a wake channel's write end, from any thread; a full channel (EAGAIN)
/// already holds a byte that wakes the loop.
inline void ring_wake(native_socket write_end) noexcept {
    const char byte = 1;
#if defined(_WIN32)
    ::send(write_end, &byte, 1, 0);
#else
    [[maybe_unused]] const auto ignored = ::write(write_end, &byte, 1);
#endif
}

/// Reads every byte waiting in a wake channel's read end.
inline void drain_wake(native_socket read_end) noexcept {
    char bytes[64];
#if defined(_WIN32)
    while (::recv(read_end, bytes, sizeof bytes, 0) > 0) {
    }
#else
    while (::read(read_end, bytes, sizeof bytes) > 0) {
    }
#endif
}

/// How many descriptors this process may have open (RLIMIT_NOFILE's soft limit); INT_MAX
/// when unbounded or beyond an int. Windows: INT_MAX (sockets are handles, not counted so).
inline int descriptor_limit() noexcept {
#if defined(_WIN32)
    return INT_MAX;
#else
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
        limit.rlim_cur > static_cast<rlim_t>(INT_MAX)) {
        return INT_MAX;
    }
    return static_cast<int>(limit.rlim_cur);
#endif
}

/// The lowest descriptor number free now, found by duplicating `open` (an open descriptor)
/// and closing the duplicate: -1 when none is free. Windows: 0 (never short).
inline int lowest_free_descriptor(native_socket open) noexcept {
#if defined(_WIN32)
    (void)open;
    return 0;
#else
    const int probe = ::fcntl(open, F_DUPFD_CLOEXEC, 0);
    if (probe >= 0) ::close(probe);
    return probe;
#endif
}

/// A duplicate of the application's descriptor `fd` for tern to wait on (docs/async.md),
/// close-on-exec, which close_socket closes: invalid_socket with errno when there is none.
/// POSIX: fcntl(F_DUPFD_CLOEXEC). Windows: always ENOTSUP (descriptor waits are refused
/// there: an int names no socket).
native_socket duplicate_descriptor(int fd) noexcept;

/// A socket a launcher passed to this process as descriptor `fd` (systemd's socket
/// activation, tern::listen_fds): marks it close-on-exec and says whether it is open. POSIX:
/// fcntl. Windows: false (a launcher there passes no descriptors: none is taken).
bool keep_passed_socket(int fd) noexcept;

}  // namespace tern::detail::platform
