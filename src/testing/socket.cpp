#include "testing/socket.hpp"

#include <tern/testing.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cerrno>
#include <string>
#include <system_error>
#include <utility>

namespace tern::testing::detail {

namespace {

std::string errno_text(int code) { return std::system_category().message(code); }

int milliseconds_until(clock::time_point deadline) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
    return left.count() <= 0 ? 0 : static_cast<int>(left.count());
}

}  // namespace

socket::socket(std::uint16_t port, clock::time_point deadline) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) throw client_error("tern::testing: socket(): " + errno_text(errno));
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const std::string where = "127.0.0.1:" + std::to_string(port);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
        if (errno != EINPROGRESS) {
            const int code = errno;
            ::close(fd_);
            throw client_error("tern::testing: cannot connect to " + where + ": " +
                               errno_text(code));
        }
        if (!wait(POLLOUT, deadline)) {
            ::close(fd_);
            throw timeout_error("tern::testing: timed out connecting to " + where);
        }
        int code = 0;
        socklen_t length = sizeof code;
        ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &code, &length);
        if (code != 0) {
            ::close(fd_);
            throw client_error("tern::testing: cannot connect to " + where + ": " +
                               errno_text(code));
        }
    }
}

socket::~socket() {
    if (fd_ >= 0) ::close(fd_);
}

socket::socket(socket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

socket& socket::operator=(socket&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

bool socket::wait(short events, clock::time_point deadline) const {
    for (;;) {
        pollfd p{fd_, events, 0};
        const int n = ::poll(&p, 1, milliseconds_until(deadline));
        if (n > 0) return true;
        if (n == 0) return false;
        if (errno != EINTR) throw client_error("tern::testing: poll(): " + errno_text(errno));
    }
}

bool socket::send_all(std::string_view bytes, clock::time_point deadline) {
    while (!bytes.empty()) {
        const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n > 0) {
            bytes.remove_prefix(static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!wait(POLLOUT, deadline)) {
                throw timeout_error("the server took no more of the request within the timeout");
            }
            continue;
        }
        if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) return false;
        throw client_error("tern::testing: send(): " + errno_text(errno));
    }
    return true;
}

std::ptrdiff_t socket::receive_until(char* out, std::size_t size, clock::time_point deadline) {
    for (;;) {
        const ssize_t n = ::recv(fd_, out, size, 0);
        if (n >= 0) return n;
        if (errno == EINTR) continue;
        if (errno == ECONNRESET) return 0;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            throw client_error("tern::testing: recv(): " + errno_text(errno));
        }
        if (!wait(POLLIN, deadline)) return -1;
    }
}

std::size_t socket::receive(char* out, std::size_t size, clock::time_point deadline) {
    const std::ptrdiff_t n = receive_until(out, size, deadline);
    if (n < 0) throw timeout_error("no answer from the server within the timeout");
    return static_cast<std::size_t>(n);
}

bool socket::idle_and_open() const {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) == 0) return true;
    // Readable while idle: the peer closed, reset, or sent bytes nobody asked for (e.g. a
    // 408 before closing). None of these is a connection to send a new request on.
    return false;
}

}  // namespace tern::testing::detail
