#pragma once
/// @file listen_fds.hpp
/// Listening sockets handed over by systemd socket activation (docs/deploy.md).

#include <tern/export.hpp>

#include <vector>

namespace tern {

/// The listening sockets systemd (or any launcher following its protocol) passed to this
/// process: with `LISTEN_PID` equal to this process's id and `LISTEN_FDS=n`, the file
/// descriptors 3 .. 3+n-1, marked close-on-exec; otherwise none. As `sd_listen_fds(1)`
/// does, it unsets `LISTEN_PID`, `LISTEN_FDS` and `LISTEN_FDNAMES`, so a second call (or
/// a child process) finds none. No libsystemd needed. Serve one with `app::listen_fd`.
/// Throws std::invalid_argument when `LISTEN_FDS` is set for this process but is not a
/// number.
TERN_API std::vector<int> listen_fds();

}  // namespace tern
