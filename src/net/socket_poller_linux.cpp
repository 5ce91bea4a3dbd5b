#include "net/socket_poller.hpp"

#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace tern::detail {

socket_poller::socket_poller(asio::io_context& io) : set_(io) {
    const int fd = ::epoll_create1(EPOLL_CLOEXEC);
    if (fd < 0) throw std::system_error(errno, std::system_category(), "tern: epoll_create1");
    std::error_code ec;
    set_.assign(fd, ec);
    if (ec) {
        ::close(fd);
        throw std::system_error(ec, "tern: watching the poller's epoll set");
    }
}

bool socket_poller::watch(platform::native_socket fd, poll_target& target) noexcept {
    // Edge-triggered: one event per change, not one per loop round while bytes wait. The
    // target reads until a read comes back short, and writes until the socket is full, so no
    // change is left untold. Room to write is told only after a write found none (the
    // kernel wakes a socket's writers then), so watching it costs nothing meanwhile.
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.ptr = &target;
    if (::epoll_ctl(set_.native_handle(), EPOLL_CTL_ADD, fd, &ev) != 0) return false;
    ++watched_;
    if (!armed_) arm();
    return true;
}

void socket_poller::forget(platform::native_socket fd, poll_target& target) noexcept {
    if (::epoll_ctl(set_.native_handle(), EPOLL_CTL_DEL, fd, nullptr) == 0) --watched_;
    if (watched_ == 0 && armed_) {
        armed_ = false;
        ++round_;
        std::error_code ignored;
        set_.cancel(ignored);
    }
    for (std::size_t i = batch_next_; i < batch_end_; ++i) {
        if (batch_[i].data.ptr == &target) batch_[i].data.ptr = nullptr;
    }
}

void socket_poller::arm() {
    armed_ = true;
    set_.async_wait(asio::posix::stream_descriptor::wait_read,
                    [this, round = round_](std::error_code ec) {
                        if (round != round_) return;  // given up by forget()
                        armed_ = false;
                        if (!ec) on_ready();
                    });
}

void socket_poller::on_ready() {
    // One round: what the set holds now, at most a batch (the rest keeps the set readable,
    // so asio reports it again at once).
    const int n = ::epoll_wait(set_.native_handle(), batch_.data(), batch_size, 0);
    batch_end_ = n > 0 ? static_cast<std::size_t>(n) : 0;
    for (batch_next_ = 0; batch_next_ < batch_end_;) {
        const auto& ev = batch_[batch_next_++];
        auto* target = static_cast<poll_target*>(ev.data.ptr);
        if (target == nullptr) continue;
        const bool failed = (ev.events & (EPOLLHUP | EPOLLERR)) != 0;
        const bool ended = failed || (ev.events & EPOLLRDHUP) != 0;
        target->on_ready(ended || (ev.events & EPOLLIN) != 0, failed || (ev.events & EPOLLOUT) != 0,
                         ended);
    }
    batch_end_ = batch_next_ = 0;
    if (watched_ > 0 && !armed_) arm();
}

}  // namespace tern::detail
