// The portable socket_poller (net/socket_poller.hpp): each watched descriptor is held by an
// asio descriptor object that never owns it (released, never closed, at forget), and waited
// for with async_wait only when its user asked (want).
#include "net/socket_poller.hpp"

#include "net/asio_watch.hpp"

#include <sys/select.h>
#include <sys/stat.h>

#include <cerrno>
#include <system_error>
#include <utility>

namespace tern::detail {

// asio's select reactor (the portable build on Linux, where epoll is left out) cannot wait on
// a descriptor numbered FD_SETSIZE or more; kqueue and IOCP have no such bound.
#if defined(ASIO_HAS_KQUEUE) || defined(ASIO_HAS_IOCP) || defined(ASIO_HAS_DEV_POLL)
constexpr bool bounded_by_fd_setsize = false;
#else
constexpr bool bounded_by_fd_setsize = true;
#endif

// The descriptor object (waiter) never owns the descriptor: released, never closed.
struct socket_poller::watched : asio_watch<asio::posix::stream_descriptor> {
    using asio_watch::asio_watch;
};

socket_poller::~socket_poller() {
    for (auto& [target, w] : watched_) {
        w->target = nullptr;
        w->waiter.release();
    }
}

bool socket_poller::watch(platform::native_socket fd, poll_target& target) noexcept {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return false;
    if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
        errno = EPERM;  // always ready: a wait would tell nothing
        return false;
    }
    if (bounded_by_fd_setsize && fd >= FD_SETSIZE) {
        errno = EMFILE;
        return false;
    }
    auto w = std::make_shared<watched>(io_);
    std::error_code ec;
    w->waiter.assign(fd, ec);
    if (ec) {
        errno = ec.value();
        return false;
    }
    w->target = &target;
    watched_[&target] = std::move(w);
    return true;
}

void socket_poller::forget(platform::native_socket /*fd*/, poll_target& target) noexcept {
    const auto it = watched_.find(&target);
    if (it == watched_.end()) return;
    auto& w = *it->second;
    w.target = nullptr;
    // Cancels the waits under way (their handlers run, and tell nobody) and leaves the
    // descriptor open: its owner closes it.
    w.waiter.release();
    watched_.erase(it);
}

void socket_poller::want(platform::native_socket /*fd*/, poll_target& target, bool write) noexcept {
    const auto it = watched_.find(&target);
    if (it != watched_.end()) wait_once(it->second, write);
}

}  // namespace tern::detail
