#pragma once
// The listening sockets a server is given rather than makes (app.listen_fd, app.listen_unix),
// and the signals of its threads: what POSIX systems have and Windows does not. POSIX:
// listeners_posix.cpp (both I/O paths). Windows: listeners_windows.cpp, which refuses what it
// cannot serve with an error that says so, at start (docs/platforms.md). The lowest layer.

#include "platform/socket_api.hpp"

#if !defined(_WIN32)
#include <csignal>
#endif

#include <string>

namespace tern::detail::platform {

/// The address family (AF_INET, AF_INET6, AF_UNIX) of `fd`, a listening stream socket that
/// app.listen_fd was given. Throws std::invalid_argument when it is none; on Windows always
/// (an int names no socket there).
int listening_socket_family(int fd);

/// A listening Unix domain socket at `path` with `permissions` (app.listen_unix). A socket
/// file left by a process that is gone is replaced; anything else at the path is an error,
/// never deleted. Throws std::invalid_argument or std::system_error; on Windows always
/// std::invalid_argument (Unix domain sockets are not served there).
native_socket open_unix_listener(const std::string& path, unsigned permissions);

/// Removes the socket file of a Unix domain listener (unlink); nothing on Windows.
void remove_unix_socket(const std::string& path) noexcept;

/// Blocks SIGPIPE in the calling thread (a send to a reset peer is then an EPIPE error);
/// nothing on Windows, which has no SIGPIPE.
void block_sigpipe() noexcept;

/// The signal that reloads the TLS certificates (SIGHUP); 0 on Windows, which has none.
#if defined(_WIN32)
inline constexpr int reload_signal = 0;
#else
inline constexpr int reload_signal = SIGHUP;
#endif

}  // namespace tern::detail::platform
