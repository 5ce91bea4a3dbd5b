// The POSIX path of platform/listeners.hpp (TERN_IO=linux and TERN_IO=portable off
// Windows): listening sockets handed over or made at a path, and SIGPIPE in tern's threads.
#include "platform/listeners.hpp"

#include "platform/sockets.hpp"

#include <pthread.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <stdexcept>
#include <string>
#include <system_error>

namespace tern::detail::platform {

namespace {

[[noreturn]] void throw_errno(int err, const std::string& what) {
    throw std::system_error(err, std::generic_category(), "tern: " + what);
}

}  // namespace

// What app::start_fd accepts: a listening stream socket, TCP (IPv4 or IPv6) or Unix. Its
// address family.
int listening_socket_family(int fd) {
    int listening = 0;
    int type = 0;
    socklen_t len = sizeof listening;
    const bool is_listening =
        ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening != 0;
    len = sizeof type;
    const bool is_stream =
        ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM;
    sockaddr_storage addr{};
    len = sizeof addr;
    const bool is_ip_or_unix =
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0 &&
        (addr.ss_family == AF_INET || addr.ss_family == AF_INET6 || addr.ss_family == AF_UNIX);
    if (!is_listening || !is_stream || !is_ip_or_unix) {
        throw std::invalid_argument("tern: listen_fd(" + std::to_string(fd) +
                                    "): not a listening TCP or Unix stream socket");
    }
    return addr.ss_family;
}

// A listening Unix domain socket at `path` with `permissions`. A socket file left by a
// process that is gone (nothing accepts on it) is replaced; anything else at the path (a
// live socket, a regular file) is an error, never deleted.
native_socket open_unix_listener(const std::string& path, unsigned permissions) {
    sockaddr_un addr{};
    if (path.empty() || path.size() >= sizeof addr.sun_path) {
        throw std::invalid_argument("tern: Unix socket path '" + path +
                                    "' is empty or longer than " +
                                    std::to_string(sizeof addr.sun_path - 1) + " bytes");
    }
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, path.size());
    const auto* sa = reinterpret_cast<const sockaddr*>(&addr);
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            throw std::invalid_argument("tern: '" + path + "' exists and is not a socket");
        }
        const int probe = platform::open_stream_socket(AF_UNIX, false);
        if (probe < 0) throw_errno(errno, "socket(AF_UNIX)");
        const bool live = ::connect(probe, sa, sizeof addr) == 0 || errno != ECONNREFUSED;
        ::close(probe);
        if (live) throw_errno(EADDRINUSE, "Unix socket '" + path + "' is in use");
        ::unlink(path.c_str());  // stale: its process is gone
    }
    const int fd = platform::open_stream_socket(AF_UNIX, false);
    if (fd < 0) throw_errno(errno, "socket(AF_UNIX)");
    // The mode is set before anyone can connect: bind creates the file, listen opens it.
    if (::bind(fd, sa, sizeof addr) != 0 || ::chmod(path.c_str(), permissions) != 0 ||
        ::listen(fd, SOMAXCONN) != 0) {
        const int err = errno;
        ::close(fd);
        ::unlink(path.c_str());
        throw_errno(err, "cannot listen on Unix socket '" + path + "'");
    }
    return fd;
}

void remove_unix_socket(const std::string& path) noexcept { ::unlink(path.c_str()); }

// A peer that resets a connection turns the next send into SIGPIPE, which kills the process
// by default. asio's sends pass MSG_NOSIGNAL, but sendfile(2) has no such flag. Blocking the
// signal in tern's own threads makes it an EPIPE error there, without changing the
// disposition the application chose for its other threads.
void block_sigpipe() noexcept {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

}  // namespace tern::detail::platform
