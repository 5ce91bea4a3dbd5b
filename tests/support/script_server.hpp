#pragma once
/// @file script_server.hpp
/// A TCP server on 127.0.0.1 that answers each connection with a scripted function on a
/// thread of its own: for the client tests' servers that misbehave on purpose (a response
/// cut short, a close-delimited body, 1xx heads, a server that never answers).

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <poll.h>

namespace tern_test {

class script_server {
public:
    /// `serve(fd)` runs for each connection, on its own thread; the socket closes after it.
    explicit script_server(std::function<void(int)> serve) : serve_(std::move(serve)) {
        listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        const int one = 1;
        ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&a), len) != 0 ||
            ::listen(listener_, 64) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
            throw std::runtime_error("script_server: cannot listen");
        }
        port_ = ntohs(a.sin_port);
        acceptor_ = std::thread([this] { accept_loop(); });
    }
    ~script_server() {
        stopping_ = true;
        ::shutdown(listener_, SHUT_RDWR);
        acceptor_.join();
        ::close(listener_);
        std::vector<std::thread> threads;
        {
            std::lock_guard lock(mutex_);
            threads.swap(threads_);
        }
        for (auto& t : threads) t.join();
    }
    script_server(const script_server&) = delete;
    script_server& operator=(const script_server&) = delete;

    std::uint16_t port() const noexcept { return port_; }
    std::string url(std::string_view path = "/") const {
        return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
    }
    /// Connections accepted so far.
    int accepted() const noexcept { return accepted_.load(); }

    /// Reads one request head (up to the empty line; what follows stays unread unless it
    /// came in the same read); returns it, or "" when the peer closed first.
    static std::string read_head(int fd) {
        std::string head;
        char buf[4096];
        while (head.find("\r\n\r\n") == std::string::npos) {
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) return "";
            head.append(buf, static_cast<std::size_t>(n));
        }
        return head;
    }
    static void send_all(int fd, std::string_view bytes) {
        while (!bytes.empty()) {
            const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
            if (n <= 0) return;
            bytes.remove_prefix(static_cast<std::size_t>(n));
        }
    }
    /// Waits until the peer closes (or `limit` passes): true when it closed.
    static bool peer_closes(int fd, std::chrono::milliseconds limit) {
        const auto until = std::chrono::steady_clock::now() + limit;
        char buf[4096];
        while (std::chrono::steady_clock::now() < until) {
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) return true;
        }
        return false;
    }

private:
    void accept_loop() {
        while (!stopping_) {
            const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) {
                if (errno == EINTR) continue;
                return;
            }
            ++accepted_;
            std::lock_guard lock(mutex_);
            threads_.emplace_back([this, fd] {
                serve_(fd);
                ::close(fd);
            });
        }
    }

    std::function<void(int)> serve_;
    int listener_ = -1;
    std::uint16_t port_ = 0;
    std::atomic<bool> stopping_{false};
    std::atomic<int> accepted_{0};
    std::thread acceptor_;
    std::mutex mutex_;
    std::vector<std::thread> threads_;
};

}  // namespace tern_test
