#pragma once
// A one-connection server on 127.0.0.1 for the kit's own tests of responses tern never
// sends (a close-delimited body) or never finishes (silence): it accepts one connection,
// reads the request head, writes `reply` (which may be empty) and then either closes or
// keeps the connection open, silent, until it is destroyed.

#include "platform/socket_api.hpp"

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

namespace tern_testing_test {

namespace platform = tern::detail::platform;

// Its sockets through libtern's platform calls (Winsock on Windows); its waits are slices of
// 50 ms that look at `stop_`, so that the destructor never depends on how a system wakes a
// thread blocked in accept().
class canned_server {
public:
    canned_server(std::string reply, bool close_after)
        : reply_(std::move(reply)), close_after_(close_after) {
        platform::start_sockets();
        listener_ = platform::open_client_socket(AF_INET);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        platform::socket_length length = sizeof address;
        if (listener_ == platform::invalid_socket ||
            ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
            ::listen(listener_, 4) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
            throw std::runtime_error("canned_server: cannot listen on 127.0.0.1");
        }
        port_ = ntohs(address.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~canned_server() {
        stop_ = true;
        thread_.join();
        platform::close_socket(listener_);
    }
    canned_server(const canned_server&) = delete;
    canned_server& operator=(const canned_server&) = delete;

    std::uint16_t port() const noexcept { return port_; }

private:
    // Waits until `s` is readable or the server stops: false when it stops.
    bool readable(platform::native_socket s) const {
        while (!stop_) {
            if (platform::wait_socket(s, false, 50) != 0) return true;
        }
        return false;
    }

    void serve() {
        if (!readable(listener_)) return;
        platform::socket_handle connection(::accept(listener_, nullptr, nullptr));
        if (!connection || !platform::set_non_blocking(connection.get())) return;
        const platform::native_socket fd = connection.get();
        std::string request;
        char buffer[4096];
        while (request.find("\r\n\r\n") == std::string::npos && readable(fd)) {
            const auto n = platform::receive_bytes(fd, buffer, sizeof buffer, 0);
            if (n <= 0) break;
            request.append(buffer, static_cast<std::size_t>(n));
        }
        if (!reply_.empty()) {
            platform::send_bytes(fd, reply_.data(), reply_.size(), platform::no_signal);
        }
        // Silent until the destructor (or until the client leaves).
        if (!close_after_) readable(fd);
    }

    std::string reply_;
    bool close_after_;
    std::atomic<bool> stop_{false};
    platform::native_socket listener_ = platform::invalid_socket;
    std::uint16_t port_ = 0;
    std::thread thread_;
};

}  // namespace tern_testing_test
