// A UDP socket on one event loop: see datagram_socket.hpp.

#include "net/datagram_socket.hpp"

#include "net/cancel_waits.hpp"
#include "platform/datagrams.hpp"
#include "platform/sockets.hpp"

#include <asio/error.hpp>
#include <asio/post.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

namespace tern::detail {

namespace {

[[noreturn]] void fail(const char* what) {
    throw std::system_error(errno, std::generic_category(), what);
}

// A non-blocking UDP socket bound to host:port, sharing it with the other workers' sockets
// (SO_REUSEPORT, platform/sockets.hpp) unless `alone`.
platform::native_socket bind_udp(const std::string& host, std::uint16_t port, bool alone = false) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
    addrinfo* found = nullptr;
    const auto service = std::to_string(port);
    if (getaddrinfo(host.c_str(), service.c_str(), &hints, &found) != 0 || found == nullptr) {
        throw std::system_error(EINVAL, std::generic_category(),
                                "tern: http3: not an IP address: " + host);
    }
    const platform::native_socket fd = platform::open_datagram_socket(found->ai_family);
    if (fd == platform::invalid_socket) {
        freeaddrinfo(found);
        fail("tern: http3: socket");
    }
    if (!alone) platform::share_port(fd);
    if (::bind(fd, found->ai_addr, static_cast<platform::socket_length>(found->ai_addrlen)) != 0) {
        const int err = platform::socket_error();
        freeaddrinfo(found);
        platform::close_socket(fd);
        throw std::system_error(err, std::generic_category(), "tern: http3: bind UDP " + service);
    }
    freeaddrinfo(found);
    return fd;
}

}  // namespace

void datagram_socket::refuse_in_use(const std::string& host, std::uint16_t port) {
    platform::close_socket(bind_udp(host, port, true));
}

datagram_socket::datagram_socket(asio::io_context& io, const std::string& host, std::uint16_t port,
                                 datagram_receiver& receiver)
    : datagram_socket(io, host, port) {
    receiver_ = &receiver;
}

datagram_socket::datagram_socket(asio::io_context& io, const std::string& host, std::uint16_t port,
                                 datagram_group* group, std::shared_ptr<loop_door> door)
    : group_(group),
      index_(group != nullptr ? static_cast<unsigned>(group->sockets.size()) : 0),
      socket_(io),
      timer_(io),
      buffer_(batch * max_datagram) {
    const platform::native_socket fd = bind_udp(host, port);
    std::error_code ec;
    assign_waitable(socket_, fd, ec);
    if (ec) {
        platform::close_socket(fd);
        throw std::system_error(ec, "tern: http3: UDP socket");
    }
    local_length_ = sizeof local_;
    if (::getsockname(socket_.native_handle(), reinterpret_cast<sockaddr*>(&local_),
                      &local_length_) != 0) {
        fail("tern: http3: getsockname");
    }
    port_ = local_.ss_family == AF_INET6
                ? ntohs(reinterpret_cast<const sockaddr_in6*>(&local_)->sin6_port)
                : ntohs(reinterpret_cast<const sockaddr_in*>(&local_)->sin_port);
    if (group_ != nullptr) group_->sockets.push_back({this, std::move(door)});
}

unsigned datagram_socket::count() const noexcept { return group_ != nullptr ? group_->size : 1; }

std::shared_ptr<void>& datagram_socket::shared() {
    return group_ != nullptr ? group_->shared : own_shared_;
}

void datagram_socket::forward(unsigned to, std::span<const std::uint8_t> bytes,
                              const sockaddr* remote, socklen_t remote_length) {
    if (group_ == nullptr || to >= group_->sockets.size() || to == index_) return;
    const auto& [target, door] = group_->sockets[to];
    if (!door) return;
    sockaddr_storage from{};
    const auto n = std::min(static_cast<std::size_t>(remote_length), sizeof from);
    std::memcpy(&from, remote, n);
    // The target runs it on its own thread; a door shut (its loop ended) drops it uncalled.
    (void)door->post([target = target, copy = std::vector<std::uint8_t>(bytes.begin(), bytes.end()),
                      from,
                      length = static_cast<socklen_t>(n)] { target->deliver(copy, from, length); });
}

void datagram_socket::deliver(std::span<const std::uint8_t> bytes, const sockaddr_storage& remote,
                              socklen_t remote_length) {
    if (!open_ || receiver_ == nullptr) return;
    receiver_->on_datagram(bytes, reinterpret_cast<const sockaddr*>(&local_), local_length_,
                           reinterpret_cast<const sockaddr*>(&remote), remote_length);
}

datagram_socket::~datagram_socket() { close(); }

void datagram_socket::start() { arm(); }

void datagram_socket::arm() {
    if (!open_) return;
    socket_.async_wait(waitable::wait_read, [this](const std::error_code& ec) {
        if (ec || !open_) return;
        read_all();
        arm();
    });
}

void datagram_socket::read_all() {
    std::array<platform::incoming_datagram, batch> slots{};
    for (;;) {
        for (std::size_t i = 0; i < batch; ++i) {
            slots[i] = {{buffer_.data() + i * max_datagram, max_datagram}, &from_[i]};
        }
        // EAGAIN (all read), or an error the next readiness retries, reads none.
        const std::size_t n = platform::receive_datagrams(socket_.native_handle(), slots);
        if (n == 0) return;
        for (std::size_t i = 0; i < n && open_; ++i) {
            receiver_->on_datagram(
                {slots[i].buffer.data(), slots[i].size}, reinterpret_cast<const sockaddr*>(&local_),
                local_length_, reinterpret_cast<const sockaddr*>(&from_[i]), slots[i].from_length);
        }
        if (!open_ || n < batch) return;  // a batch not filled emptied the socket
    }
}

bool datagram_socket::send(std::span<const std::uint8_t> bytes, const sockaddr* to,
                           socklen_t to_length) {
    if (!open_) return false;
    const auto sent = platform::send_datagram(socket_.native_handle(), {bytes, to, to_length});
    return sent == static_cast<ssize_t>(bytes.size());
}

void datagram_socket::send_many(std::span<const datagram_view> datagrams) {
    while (open_ && !datagrams.empty()) {
        const std::size_t done = platform::send_datagrams(socket_.native_handle(), datagrams);
        datagrams = datagrams.subspan(std::min(done, datagrams.size()));
    }
}

void datagram_socket::expire_at(clock::time_point when) {
    if (!open_) return;
    wanted_ = when;
    if (when <= clock::now()) {
        // Come already (a response completed later, or a datagram to send at once): the
        // loop's queue, not the timer, and once however many ask before it runs.
        if (!queued_) {
            queued_ = true;
            asio::post(socket_.get_executor(), [this] {
                queued_ = false;
                if (open_) expiry_due();
            });
        }
        return;
    }
    // The timer fires first, at or before `when`, and then waits again for what is wanted.
    if (armed_for_ <= when) return;
    arm_timer(when);
}

void datagram_socket::arm_timer(clock::time_point when) {
    armed_for_ = when;
    const std::uint64_t generation = ++timer_generation_;
    timer_.expires_at(when);
    timer_.async_wait([this, generation](const std::error_code& ec) {
        // Replaced by a later arm_timer (its wait may have fired before the replacement
        // could cancel it), cancelled at close: nothing to do.
        if (ec || !open_ || generation != timer_generation_) return;
        armed_for_ = clock::time_point::max();
        expiry_due();
    });
}

void datagram_socket::expiry_due() {
    if (wanted_ == clock::time_point::max()) return;
    if (clock::now() < wanted_) {
        // Moved later since the timer was set: wait again, for the time wanted now.
        if (armed_for_ > wanted_) arm_timer(wanted_);
        return;
    }
    wanted_ = clock::time_point::max();
    receiver_->on_expiry();
}

void datagram_socket::close() noexcept {
    if (!open_) return;
    open_ = false;
    std::error_code ignored;
    cancel_waits(timer_);
    socket_.close(ignored);
}

}  // namespace tern::detail
