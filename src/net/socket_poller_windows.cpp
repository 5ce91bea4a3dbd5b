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

#include <asio/ip/tcp.hpp>

#include <cerrno>
#include <system_error>
#include <utility>

namespace tern::detail {

struct socket_poller::watched {
    explicit watched(asio::io_context& io) : socket(io) {}
    asio::ip::tcp::socket socket;   // asio's, which accepted the connection
    poll_target* target = nullptr;  // null once forgotten: a wait that ends tells nobody
    bool reading = false;           // a wait for readability is under way
    bool writing = false;
};

socket_poller::~socket_poller() {
    held_.clear();
    for (auto& [target, w] : watched_) {
        w->target = nullptr;
        std::error_code ignored;
        w->socket.close(ignored);
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
        w->socket = std::move(found->second);
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
    w.socket.close(ignored);
    watched_.erase(it);
}

void socket_poller::want(platform::native_socket /*fd*/, poll_target& target, bool write) noexcept {
    const auto it = watched_.find(&target);
    if (it == watched_.end()) return;
    auto& w = it->second;
    bool& under_way = write ? w->writing : w->reading;
    if (under_way) return;
    under_way = true;
    using wait = asio::ip::tcp::socket;
    w->socket.async_wait(write ? wait::wait_write : wait::wait_read,
                         [w, write](std::error_code ec) {
                             (write ? w->writing : w->reading) = false;
                             if (ec || w->target == nullptr) return;
                             w->target->on_ready(!write, write, false);
                         });
}

}  // namespace tern::detail
