#pragma once
// A one-connection server on 127.0.0.1 for the kit's own tests of responses tern never
// sends (a close-delimited body) or never finishes (silence): it accepts one connection,
// reads the request head, writes `reply` (which may be empty) and then either closes or
// keeps the connection open, silent, until it is destroyed.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdexcept>
#include <string>
#include <thread>

namespace tern_testing_test {

class canned_server {
public:
    canned_server(std::string reply, bool close_after)
        : reply_(std::move(reply)), close_after_(close_after) {
        listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        if (listener_ < 0 ||
            ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
            ::listen(listener_, 4) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
            throw std::runtime_error("canned_server: cannot listen on 127.0.0.1");
        }
        port_ = ntohs(address.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~canned_server() {
        ::shutdown(listener_, SHUT_RDWR);  // wakes the accept or the wait below
        thread_.join();
        ::close(listener_);
    }
    canned_server(const canned_server&) = delete;
    canned_server& operator=(const canned_server&) = delete;

    std::uint16_t port() const noexcept { return port_; }

private:
    void serve() {
        const int fd = ::accept(listener_, nullptr, nullptr);
        if (fd < 0) return;
        std::string request;
        char buffer[4096];
        while (request.find("\r\n\r\n") == std::string::npos) {
            const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0) break;
            request.append(buffer, static_cast<std::size_t>(n));
        }
        if (!reply_.empty()) ::send(fd, reply_.data(), reply_.size(), MSG_NOSIGNAL);
        if (!close_after_) {
            // Silent until the destructor shuts the listener down (or the client leaves).
            pollfd waits[2] = {{listener_, POLLIN, 0}, {fd, POLLIN, 0}};
            ::poll(waits, 2, -1);
        }
        ::close(fd);
    }

    std::string reply_;
    bool close_after_;
    int listener_ = -1;
    std::uint16_t port_ = 0;
    std::thread thread_;
};

}  // namespace tern_testing_test
