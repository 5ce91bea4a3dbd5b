#pragma once
// The socket calls that differ between the I/O paths (TERN_IO, docs/platforms.md): sends that
// never raise SIGPIPE, and a port shared by several sockets. Linux: MSG_NOSIGNAL and
// SO_REUSEPORT, whose kernel spreads connections over the workers' sockets
// (sockets_linux.cpp). Portable: the process ignores SIGPIPE, and one socket serves a port
// (sockets_portable.cpp). The lowest layer: no asio, no other folder of src/.

#include <sys/socket.h>

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
/// when `non_blocking`: -1 with errno when it cannot be made. Linux: one socket(2) with
/// SOCK_CLOEXEC (and SOCK_NONBLOCK). Portable: socket(2), then fcntl.
int open_stream_socket(int family, bool non_blocking) noexcept;

/// Whether several sockets may bind one port with the kernel balancing connections (or UDP
/// peers) over them: true on Linux (SO_REUSEPORT); false on the portable path, where one
/// socket serves the port and its loop hands connections to the others.
bool balances_shared_port() noexcept;

/// Lets `fd` share its port with the other workers' sockets (before bind). Linux: sets
/// SO_REUSEPORT. Portable: nothing (never called there with more than one socket).
void share_port(int fd) noexcept;

}  // namespace tern::detail::platform
