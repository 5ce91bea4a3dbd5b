// The Windows socket_poller (net/socket_poller.hpp, TERN_IO=portable on Windows): as the
// portable one, asio's own waits, asked for only by want(). Windows has no descriptor object
// that watches a socket without owning it, an asio socket cannot give its socket back
// (release() needs a call older Windows and Wine lack), and a socket is bound to one
// completion port once. So the asio socket that accepted the connection stays here (hold)
// and is what the waits go through, while the transport reads and writes a duplicate of it
// (WSADuplicateSocketW, net/waitable.hpp's take_socket); closing the asio socket at forget()
// leaves the connection open until its owner closes the duplicate. asio serves those waits
// with its select reactor beside IOCP.
#include "net/socket_poller.hpp"

#include "net/asio_watch.hpp"

#include <asio/ip/tcp.hpp>

#include <cerrno>
#include <system_error>
#include <utility>

namespace tern::detail {

// The waiter is asio's socket, which accepted the connection.
struct socket_poller::watched : asio_watch<asio::ip::tcp::socket> {
    using asio_watch::asio_watch;
};

socket_poller::~socket_poller() {
    held_.clear();
    for (auto& [target, w] : watched_) {
        w->target = nullptr;
        std::error_code ignored;
        w->waiter.close(ignored);
    }
}

void socket_poller::hold(platform::native_socket fd, asio::ip::tcp::socket socket) {
    held_.insert_or_assign(fd, std::move(socket));
}

bool socket_poller::watch(platform::native_socket fd, poll_target& target) noexcept {
    const auto found = held_.find(fd);
    if (found == held_.end()) {
        errno = EPERM;  // not a connection this loop accepted: nothing to wait through
        return false;
    }
    try {
        auto w = std::make_shared<watched>(io_);
        w->waiter = std::move(found->second);
        held_.erase(found);
        w->target = &target;
        watched_[&target] = std::move(w);
        return true;
    } catch (const std::bad_alloc&) {
        errno = ENOMEM;
        return false;
    }
}

void socket_poller::forget(platform::native_socket /*fd*/, poll_target& target) noexcept {
    const auto it = watched_.find(&target);
    if (it == watched_.end()) return;
    auto& w = *it->second;
    w.target = nullptr;
    // Cancels the waits under way (their handlers run, and tell nobody) and closes asio's
    // socket only: the duplicate the transport holds is its own to close.
    std::error_code ignored;
    w.waiter.close(ignored);
    watched_.erase(it);
}

void socket_poller::want(platform::native_socket /*fd*/, poll_target& target, bool write) noexcept {
    const auto it = watched_.find(&target);
    if (it != watched_.end()) wait_once(it->second, write);
}

}  // namespace tern::detail
