#include "testing/response_reader.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <optional>

namespace tern::testing::detail {

namespace {

// Bounds on what the client reads, so a broken server cannot make a test eat all memory.
constexpr std::size_t max_head_size = 1024 * 1024;
constexpr std::size_t max_body_size = 256 * 1024 * 1024;

char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// True when the comma-separated list `value` holds `token` (case-insensitive).
bool has_token(std::string_view value, std::string_view token) noexcept {
    while (!value.empty()) {
        const auto comma = value.find(',');
        if (iequals(trim(value.substr(0, comma)), token)) return true;
        if (comma == std::string_view::npos) break;
        value.remove_prefix(comma + 1);
    }
    return false;
}

// The bytes of one response as they arrive: `buffer` holds what is received and not yet
// consumed.
class reader {
public:
    reader(socket& s, std::string& buffer, clock::time_point deadline)
        : socket_(s), buffer_(buffer), deadline_(deadline) {}

    // Receives more bytes; false at the peer's close.
    bool fill() {
        std::array<char, 16384> chunk{};
        const std::size_t n = socket_.receive(chunk.data(), chunk.size(), deadline_);
        if (n == 0) return false;
        buffer_.append(chunk.data(), n);
        received_any_ = true;
        return true;
    }

    // Consumes and returns the text up to the next CRLF (without it).
    std::string take_line(std::size_t limit, const char* what) {
        std::size_t end = 0;
        while ((end = buffer_.find("\r\n")) == std::string::npos) {
            if (buffer_.size() > limit) throw client_error(std::string(what) + " is too long");
            if (!fill()) closed(what);
        }
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 2);
        return line;
    }

    // Consumes `n` bytes into `out`.
    void take(std::size_t n, std::string& out, const char* what) {
        while (buffer_.size() < n) {
            if (!fill()) closed(what);
        }
        out.append(buffer_, 0, n);
        buffer_.erase(0, n);
    }

    // Consumes everything until the peer's close into `out`.
    void take_all(std::string& out) {
        do {
            if (out.size() + buffer_.size() > max_body_size) {
                throw client_error("the close-delimited body is over 256 MiB");
            }
            out += buffer_;
            buffer_.clear();
        } while (fill());
    }

    [[noreturn]] void closed(const char* what) const {
        if (!received_any_ && buffer_.empty()) throw closed_before_response{};
        throw client_error(std::string("the server closed the connection in the middle of ") +
                           what);
    }

private:
    socket& socket_;
    std::string& buffer_;
    clock::time_point deadline_;
    bool received_any_ = false;
};

std::size_t parse_size(std::string_view text, int base, const char* what) {
    std::size_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) {
        throw client_error(std::string("malformed ") + what + ": '" + std::string(text) + "'");
    }
    return value;
}

// "HTTP/1.1 200 OK": the version's minor digit, the status and the reason.
int parse_status_line(std::string_view line, response& r, bool& http10) {
    if (line.size() < 12 || !line.starts_with("HTTP/1.") || line[8] != ' ' ||
        (line.size() > 12 && line[12] != ' ')) {
        throw client_error("not an HTTP/1.x status line: '" + std::string(line) + "'");
    }
    http10 = line[7] == '0';
    r.status = static_cast<int>(parse_size(line.substr(9, 3), 10, "status code"));
    r.reason = line.size() > 13 ? std::string(line.substr(13)) : std::string();
    return r.status;
}

header parse_field(std::string_view line) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0 || line.front() == ' ' ||
        line.front() == '\t' || trim(line.substr(0, colon)).size() != colon) {
        throw client_error("malformed header field: '" + std::string(line) + "'");
    }
    return {std::string(line.substr(0, colon)), std::string(trim(line.substr(colon + 1)))};
}

// Reads header lines up to the empty line into `out`; `used` counts the bytes read.
void read_fields(reader& in, header_list& out, const char* what) {
    std::size_t used = 0;
    for (;;) {
        std::string line = in.take_line(max_head_size - used, what);
        used += line.size() + 2;
        if (used > max_head_size) throw client_error(std::string(what) + " is over 1 MiB");
        if (line.empty()) return;
        out.push_back(parse_field(line));
    }
}

void read_chunked(reader& in, response& r) {
    for (;;) {
        const std::string line = in.take_line(4096, "a chunk size line");
        std::string_view size_text = line;
        size_text = trim(size_text.substr(0, size_text.find(';')));
        const std::size_t size = parse_size(size_text, 16, "chunk size");
        if (size == 0) break;
        if (r.body.size() + size > max_body_size) {
            throw client_error("the chunked body is over 256 MiB");
        }
        in.take(size, r.body, "a chunked body");
        if (!in.take_line(2, "a chunked body").empty()) {
            throw client_error("a chunk is longer than its size line says");
        }
    }
    read_fields(in, r.headers, "the chunked trailer");
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) noexcept {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                              [](char x, char y) { return lower(x) == lower(y); });
}

read_result read_response(socket& s, std::string& buffer, std::string_view method,
                          clock::time_point deadline) {
    reader in(s, buffer, deadline);
    read_result result;
    response& r = result.response;
    bool http10 = false;
    for (;;) {
        r = response{};
        parse_status_line(in.take_line(max_head_size, "the status line"), r, http10);
        read_fields(in, r.headers, "the response head");
        // 100 Continue and 103 Early Hints precede the real answer; 101 is the answer.
        if (r.status >= 100 && r.status < 200 && r.status != 101) continue;
        break;
    }
    const auto connection = r.header("Connection");
    result.keep_alive = http10 ? connection && has_token(*connection, "keep-alive")
                               : !(connection && has_token(*connection, "close"));
    if (r.status == 101) {
        result.keep_alive = false;  // the connection now speaks another protocol
        return result;
    }
    // RFC 9112 section 6.3: which of the framings applies, in this order.
    if (iequals(method, "HEAD") || r.status == 204 || r.status == 304) return result;
    if (const auto coding = r.header("Transfer-Encoding")) {
        std::string_view last = *coding;
        if (const auto comma = last.rfind(','); comma != std::string_view::npos) {
            last.remove_prefix(comma + 1);
        }
        if (iequals(trim(last), "chunked")) {
            read_chunked(in, r);
            return result;
        }
        in.take_all(r.body);
        result.keep_alive = false;
        return result;
    }
    std::optional<std::size_t> length;
    for (const std::string_view value : r.header_values("Content-Length")) {
        const std::size_t n = parse_size(value, 10, "Content-Length");
        if (length && *length != n) throw client_error("conflicting Content-Length fields");
        length = n;
    }
    if (length) {
        if (*length > max_body_size) throw client_error("a Content-Length over 256 MiB");
        in.take(*length, r.body, "the body");
        return result;
    }
    in.take_all(r.body);
    result.keep_alive = false;
    return result;
}

}  // namespace tern::testing::detail
