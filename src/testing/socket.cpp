#include "testing/socket.hpp"

#include <tern/testing.hpp>

#include <cerrno>
#include <string>
#include <system_error>
#include <utility>

namespace tern::testing::detail {

namespace platform = tern::detail::platform;

namespace {

std::string errno_text(int code) { return std::generic_category().message(code); }

int milliseconds_until(clock::time_point deadline) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
    return left.count() <= 0 ? 0 : static_cast<int>(left.count());
}

}  // namespace

socket::socket(std::uint16_t port, clock::time_point deadline) {
    fd_ = platform::open_client_socket(AF_INET);
    if (fd_ == platform::invalid_socket) {
        throw client_error("tern::testing: socket(): " + errno_text(errno));
    }
    platform::set_no_delay(fd_);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const std::string where = "127.0.0.1:" + std::to_string(port);
    if (platform::connect_socket(fd_, reinterpret_cast<const sockaddr*>(&address),
                                 static_cast<platform::socket_length>(sizeof address)) != 0) {
        if (errno != EINPROGRESS) {
            const int code = errno;
            platform::close_socket(std::exchange(fd_, platform::invalid_socket));
            throw client_error("tern::testing: cannot connect to " + where + ": " +
                               errno_text(code));
        }
        if (!wait(true, deadline)) {
            platform::close_socket(std::exchange(fd_, platform::invalid_socket));
            throw timeout_error("tern::testing: timed out connecting to " + where);
        }
        const int code = platform::pending_error(fd_);
        if (code != 0) {
            platform::close_socket(std::exchange(fd_, platform::invalid_socket));
            throw client_error("tern::testing: cannot connect to " + where + ": " +
                               errno_text(code));
        }
    }
}

socket::~socket() {
    if (fd_ != platform::invalid_socket) platform::close_socket(fd_);
}

socket::socket(socket&& other) noexcept : fd_(std::exchange(other.fd_, platform::invalid_socket)) {}

socket& socket::operator=(socket&& other) noexcept {
    if (this != &other) {
        if (fd_ != platform::invalid_socket) platform::close_socket(fd_);
        fd_ = std::exchange(other.fd_, platform::invalid_socket);
    }
    return *this;
}

bool socket::wait(bool write, clock::time_point deadline) const {
    for (;;) {
        const int n = platform::wait_socket(fd_, write, milliseconds_until(deadline));
        if (n > 0) return true;
        if (n == 0) return false;
        if (errno != EINTR) throw client_error("tern::testing: poll(): " + errno_text(errno));
    }
}

bool socket::send_all(std::string_view bytes, clock::time_point deadline) {
    while (!bytes.empty()) {
        const ssize_t n =
            platform::send_bytes(fd_, bytes.data(), bytes.size(), platform::no_signal);
        if (n > 0) {
            bytes.remove_prefix(static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!wait(true, deadline)) {
                throw timeout_error("the server took no more of the request within the timeout");
            }
            continue;
        }
        if (n < 0 && (errno == EPIPE || errno == ECONNRESET || errno == ECONNABORTED)) return false;
        throw client_error("tern::testing: send(): " + errno_text(errno));
    }
    return true;
}

std::ptrdiff_t socket::receive_until(char* out, std::size_t size, clock::time_point deadline) {
    for (;;) {
        const ssize_t n = platform::receive_bytes(fd_, out, size, 0);
        if (n >= 0) return n;
        if (errno == EINTR) continue;
        if (errno == ECONNRESET || errno == ECONNABORTED) return 0;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            throw client_error("tern::testing: recv(): " + errno_text(errno));
        }
        if (!wait(false, deadline)) return -1;
    }
}

std::size_t socket::receive(char* out, std::size_t size, clock::time_point deadline) {
    const std::ptrdiff_t n = receive_until(out, size, deadline);
    if (n < 0) throw timeout_error("no answer from the server within the timeout");
    return static_cast<std::size_t>(n);
}

bool socket::idle_and_open() const {
    // Readable while idle: the peer closed, reset, or sent bytes nobody asked for (e.g. a
    // 408 before closing). None of these is a connection to send a new request on.
    return platform::wait_socket(fd_, false, 0) == 0;
}

}  // namespace tern::testing::detail
