#include "support/raw_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace tern_test {

namespace {

char lower(char c) noexcept {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// Printable form of received bytes for error messages: control bytes escaped, truncated.
std::string printable(std::string_view bytes, std::size_t limit = 300) {
    std::string out;
    for (std::size_t i = 0; i < bytes.size() && i < limit; ++i) {
        const char c = bytes[i];
        if (c == '\r') {
            out += "\\r";
        } else if (c == '\n') {
            out += "\\n";
        } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) {
            static constexpr char hex[] = "0123456789abcdef";
            const auto u = static_cast<unsigned char>(c);
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 0xf];
        } else {
            out += c;
        }
    }
    if (bytes.size() > limit) out += "...(" + std::to_string(bytes.size()) + " bytes)";
    return out;
}

sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return addr;
}

// Connects a new socket to 127.0.0.1:port; returns the fd, or -errno.
int open_socket(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    const sockaddr_in addr = loopback(port);
    int rc = 0;
    do {
        rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        const int err = errno;
        ::close(fd);
        return -err;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

}  // namespace

// ---- response and helpers ---------------------------------------------------------------

std::optional<std::string> response::header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
        if (iequals(n, name)) return v;
    }
    return std::nullopt;
}

std::size_t response::header_count(std::string_view name) const {
    return static_cast<std::size_t>(std::count_if(
        headers.begin(), headers.end(), [&](const auto& h) { return iequals(h.first, name); }));
}

std::string describe(const response& r) {
    std::string out = r.version + " " + std::to_string(r.status) + " " + r.reason + " |";
    for (const auto& [n, v] : r.headers) out += " " + n + ": " + v + " |";
    out += " body(" + std::to_string(r.body.size()) + "): " + printable(r.body, 120);
    return out;
}

bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
}

bool has_token(std::string_view list, std::string_view token) {
    while (!list.empty()) {
        const std::size_t comma = list.find(',');
        const std::string_view item = trim(list.substr(0, comma));
        if (iequals(item, token)) return true;
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
    }
    return false;
}

bool is_imf_fixdate(std::string_view v) {
    // "Sun, 06 Nov 1994 08:49:37 GMT"
    //  0123456789012345678901234567 8
    if (v.size() != 29) return false;
    static constexpr std::array<std::string_view, 7> days{"Mon", "Tue", "Wed", "Thu",
                                                          "Fri", "Sat", "Sun"};
    static constexpr std::array<std::string_view, 12> months{
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    const auto digits = [&](std::size_t pos, std::size_t n) {
        for (std::size_t i = pos; i < pos + n; ++i) {
            if (!is_digit(v[i])) return false;
        }
        return true;
    };
    const auto number = [&](std::size_t pos, std::size_t n) {
        int value = 0;
        for (std::size_t i = pos; i < pos + n; ++i) value = value * 10 + (v[i] - '0');
        return value;
    };
    if (std::find(days.begin(), days.end(), v.substr(0, 3)) == days.end()) return false;
    if (v.substr(3, 2) != ", " || !digits(5, 2) || v[7] != ' ') return false;
    if (std::find(months.begin(), months.end(), v.substr(8, 3)) == months.end()) return false;
    if (v[11] != ' ' || !digits(12, 4) || v[16] != ' ') return false;
    if (!digits(17, 2) || v[19] != ':' || !digits(20, 2) || v[22] != ':' || !digits(23, 2)) {
        return false;
    }
    if (v.substr(25) != " GMT") return false;
    const int day = number(5, 2);
    return day >= 1 && day <= 31 && number(17, 2) <= 23 && number(20, 2) <= 59 &&
           number(23, 2) <= 60;
}

std::string get_request(std::string_view target, std::string_view extra_headers) {
    std::string out = "GET ";
    out += target;
    out += " HTTP/1.1\r\nHost: localhost\r\n";
    out += extra_headers;
    out += "\r\n";
    return out;
}

std::string body_request(std::string_view method, std::string_view target, std::string_view body,
                         std::string_view extra_headers) {
    std::string out(method);
    out += ' ';
    out += target;
    out += " HTTP/1.1\r\nHost: localhost\r\n";
    out += extra_headers;
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    out += body;
    return out;
}

// ---- raw_client -----------------------------------------------------------------------------

raw_client::raw_client(std::uint16_t port) { connect(port); }

raw_client::~raw_client() { close(); }

raw_client::raw_client(raw_client&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      peer_closed_(other.peer_closed_),
      buffer_(std::move(other.buffer_)),
      timeout_(other.timeout_) {}

raw_client& raw_client::operator=(raw_client&& other) noexcept {
    if (this != &other) {
        close();
        fd_ = std::exchange(other.fd_, -1);
        peer_closed_ = other.peer_closed_;
        buffer_ = std::move(other.buffer_);
        timeout_ = other.timeout_;
    }
    return *this;
}

void raw_client::connect(std::uint16_t port) {
    close();
    const int fd = open_socket(port);
    if (fd < 0) {
        throw client_error("raw_client: cannot connect to 127.0.0.1:" + std::to_string(port) +
                           ": " + std::strerror(-fd));
    }
    fd_ = fd;
    peer_closed_ = false;
}

int raw_client::connect_error(std::uint16_t port) {
    const int fd = open_socket(port);
    if (fd < 0) return -fd;
    ::close(fd);
    return 0;
}

void raw_client::close() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    buffer_.clear();
}

void raw_client::send(std::string_view bytes) {
    if (fd_ < 0) throw client_error("raw_client: send on a closed client");
    while (!bytes.empty()) {
        const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw client_error(std::string("raw_client: send failed: ") + std::strerror(errno));
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
}

void raw_client::send_raw_and_close(std::string_view bytes) {
    send(bytes);
    close();
}

void raw_client::shutdown_write() {
    if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);
}

raw_client::recv_status raw_client::receive_some(clock::time_point deadline) {
    if (fd_ < 0) throw client_error("raw_client: read on a closed client");
    if (peer_closed_) return recv_status::closed;
    for (;;) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
        if (left.count() <= 0) return recv_status::timed_out;
        pollfd pfd{fd_, POLLIN, 0};
        const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
        if (ready < 0) {
            if (errno == EINTR) continue;
            throw client_error(std::string("raw_client: poll failed: ") + std::strerror(errno));
        }
        if (ready == 0) return recv_status::timed_out;
        std::array<char, 64 * 1024> chunk;
        const ssize_t n = ::recv(fd_, chunk.data(), chunk.size(), 0);
        if (n > 0) {
            buffer_.append(chunk.data(), static_cast<std::size_t>(n));
            return recv_status::data;
        }
        if (n == 0 || errno == ECONNRESET) {
            peer_closed_ = true;
            return recv_status::closed;
        }
        if (errno == EINTR || errno == EAGAIN) continue;
        throw client_error(std::string("raw_client: recv failed: ") + std::strerror(errno));
    }
}

void raw_client::fail(std::string_view what, std::string_view why) const {
    throw client_error("raw_client: " + std::string(what) + ": " + std::string(why) +
                       "; received so far: \"" + printable(buffer_) + "\"");
}

void raw_client::fill_to(std::size_t n, clock::time_point deadline, std::string_view what) {
    while (buffer_.size() < n) {
        switch (receive_some(deadline)) {
            case recv_status::data:
                break;
            case recv_status::closed:
                fail(what, "connection closed early (wanted " + std::to_string(n) + " bytes)");
            case recv_status::timed_out:
                fail(what, "timed out (wanted " + std::to_string(n) + " bytes)");
        }
    }
}

std::size_t raw_client::fill_until(std::string_view delimiter, std::size_t from,
                                   clock::time_point deadline, std::string_view what) {
    for (;;) {
        const std::size_t pos = buffer_.find(delimiter, from);
        if (pos != std::string::npos) return pos;
        switch (receive_some(deadline)) {
            case recv_status::data:
                break;
            case recv_status::closed:
                fail(what, "connection closed early");
            case recv_status::timed_out:
                fail(what, "timed out");
        }
    }
}

response raw_client::read_response(bool head_request) {
    return read_response(head_request, timeout_);
}

response raw_client::read_response(bool head_request, std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    const std::size_t head_end = fill_until("\r\n\r\n", 0, deadline, "reading response head");
    const std::string head = buffer_.substr(0, head_end);
    buffer_.erase(0, head_end + 4);

    response r;
    const std::size_t line_end = std::min(head.find("\r\n"), head.size());
    const std::string_view status_line = std::string_view(head).substr(0, line_end);
    // "HTTP/1.1 200 OK": version SP 3DIGIT SP [reason]
    const std::size_t sp = status_line.find(' ');
    if (sp == std::string_view::npos || status_line.substr(0, 5) != "HTTP/" ||
        status_line.size() < sp + 4 || !is_digit(status_line[sp + 1]) ||
        !is_digit(status_line[sp + 2]) || !is_digit(status_line[sp + 3]) ||
        (status_line.size() > sp + 4 && status_line[sp + 4] != ' ')) {
        throw client_error("raw_client: malformed status line \"" + printable(status_line) + "\"");
    }
    r.version = std::string(status_line.substr(0, sp));
    std::from_chars(status_line.data() + sp + 1, status_line.data() + sp + 4, r.status);
    if (status_line.size() > sp + 5) r.reason = std::string(status_line.substr(sp + 5));

    std::size_t pos = line_end;
    while (pos < head.size()) {
        pos += 2;  // skip CRLF
        const std::size_t next = std::min(head.find("\r\n", pos), head.size());
        const std::string_view line = std::string_view(head).substr(pos, next - pos);
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0) {
            throw client_error("raw_client: malformed header line \"" + printable(line) + "\"");
        }
        r.headers.emplace_back(std::string(line.substr(0, colon)),
                               std::string(trim(line.substr(colon + 1))));
        pos = next;
    }

    const bool no_body =
        head_request || (r.status >= 100 && r.status < 200) || r.status == 204 || r.status == 304;
    if (no_body) return r;

    if (r.header_count("Content-Length") > 1) {
        throw client_error("raw_client: several Content-Length fields: " + describe(r));
    }
    if (const auto cl = r.header("Content-Length")) {
        std::size_t length = 0;
        const auto [end, ec] = std::from_chars(cl->data(), cl->data() + cl->size(), length);
        if (ec != std::errc{} || end != cl->data() + cl->size()) {
            throw client_error("raw_client: malformed Content-Length \"" + *cl + "\"");
        }
        fill_to(length, deadline, "reading response body");
        r.body = buffer_.substr(0, length);
        buffer_.erase(0, length);
        return r;
    }
    if (const auto te = r.header("Transfer-Encoding"); te && has_token(*te, "chunked")) {
        for (;;) {
            const std::size_t size_end = fill_until("\r\n", 0, deadline, "reading chunk size");
            std::size_t size = 0;
            const std::string size_field = buffer_.substr(0, buffer_.find_first_of(";\r"));
            const auto [end, ec] =
                std::from_chars(size_field.data(), size_field.data() + size_field.size(), size, 16);
            if (ec != std::errc{} || end != size_field.data() + size_field.size()) {
                throw client_error("raw_client: malformed chunk size \"" + printable(size_field) +
                                   "\"");
            }
            buffer_.erase(0, size_end + 2);
            if (size == 0) {
                // Trailer fields (ignored), then the empty line.
                fill_to(2, deadline, "reading the last chunk");
                const std::size_t trailer_end =
                    buffer_.compare(0, 2, "\r\n") == 0
                        ? 0
                        : fill_until("\r\n\r\n", 0, deadline, "reading trailers") + 2;
                buffer_.erase(0, trailer_end + 2);
                return r;
            }
            fill_to(size + 2, deadline, "reading chunk data");
            r.body.append(buffer_, 0, size);
            buffer_.erase(0, size + 2);
        }
    }
    // Neither: the body runs until the server closes.
    r.body = read_all_until_close(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()));
    return r;
}

std::string raw_client::read_all_until_close() { return read_all_until_close(timeout_); }

std::string raw_client::read_all_until_close(std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    for (;;) {
        switch (receive_some(deadline)) {
            case recv_status::data:
                break;
            case recv_status::closed:
                return std::exchange(buffer_, std::string());
            case recv_status::timed_out:
                fail("read_all_until_close", "the server did not close the connection in time");
        }
    }
}

bool raw_client::answered_within(std::chrono::milliseconds timeout) {
    if (!buffer_.empty() || peer_closed_) return true;
    return receive_some(clock::now() + timeout) != recv_status::timed_out;
}

bool raw_client::receive_more(std::chrono::milliseconds timeout) {
    if (peer_closed_) return false;
    return receive_some(clock::now() + timeout) == recv_status::data;
}

bool raw_client::closed_by_peer() { return closed_by_peer(timeout_); }

bool raw_client::closed_by_peer(std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    for (;;) {
        switch (receive_some(deadline)) {
            case recv_status::data:
                break;
            case recv_status::closed:
                return true;
            case recv_status::timed_out:
                return false;
        }
    }
}

std::vector<raw_client> open_clients(std::uint16_t port, std::size_t n) {
    std::vector<raw_client> clients;
    clients.reserve(n);
    for (std::size_t i = 0; i < n; ++i) clients.emplace_back(port);
    return clients;
}

}  // namespace tern_test
