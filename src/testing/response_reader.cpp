#include "testing/response_reader.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <optional>

namespace tern::testing::detail {

namespace {

// Bounds on what the client reads, so a broken server cannot make a test eat all memory.
constexpr std::size_t max_head_size = 1024 * 1024;
constexpr std::size_t max_body_size = 256 * 1024 * 1024;
constexpr std::size_t max_chunk_line = 4096;

char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// The bytes of one response as they arrive: `buffer` holds what is received and not yet
// consumed.
class reader {
public:
    // `started`: part of the response was read before (by another reader), so a close now is
    // in its middle.
    reader(stream& s, std::string& buffer, clock::time_point deadline, bool started = false)
        : stream_(s), buffer_(buffer), deadline_(deadline), received_any_(started) {}

    // The received bytes not yet consumed.
    const std::string& buffer() const noexcept { return buffer_; }
    // Consumes the first `n` received bytes.
    void consume(std::size_t n) { buffer_.erase(0, n); }

    // Receives more bytes; false at the peer's close.
    bool fill() {
        std::array<char, 16384> chunk{};
        const std::size_t n = stream_.receive(chunk.data(), chunk.size(), deadline_);
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
    stream& stream_;
    std::string& buffer_;
    clock::time_point deadline_;
    bool received_any_;
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
    r.protocol = std::string(line.substr(0, 8));
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

// Reads the next chunk of a chunked body (RFC 9112 section 7.1) and appends its data to
// `out`: false at the last chunk, whose trailer fields go to `trailer`. Nothing is consumed
// until the whole chunk (or the last chunk and its trailer) has arrived, so a timeout leaves
// the body where it was and a later call goes on from there.
bool next_chunk(reader& in, std::string& out, header_list& trailer) {
    for (;;) {
        const std::string& b = in.buffer();
        const std::size_t line_end = b.find("\r\n");
        if (line_end == std::string::npos && b.size() > max_chunk_line) {
            throw client_error("a chunk size line is too long");
        }
        if (line_end != std::string::npos) {
            if (line_end > max_chunk_line) throw client_error("a chunk size line is too long");
            std::string_view size_text(b.data(), line_end);
            size_text = trim(size_text.substr(0, size_text.find(';')));
            const std::size_t size = parse_size(size_text, 16, "chunk size");
            const std::size_t data = line_end + 2;
            if (size > 0) {
                if (size > max_body_size || out.size() + size > max_body_size) {
                    throw client_error("the chunked body is over 256 MiB");
                }
                if (b.size() >= data + size + 2) {
                    if (b.compare(data + size, 2, "\r\n") != 0) {
                        throw client_error("a chunk is longer than its size line says");
                    }
                    out.append(b, data, size);
                    in.consume(data + size + 2);
                    return true;
                }
            } else {
                // The last chunk: the trailer's fields, then an empty line.
                const std::size_t end =
                    b.compare(data, 2, "\r\n") == 0 ? data : b.find("\r\n\r\n", data);
                if (end != std::string::npos && b.size() >= end + 2) {
                    std::string_view fields(b.data() + data, end == data ? 0 : end + 2 - data);
                    while (!fields.empty()) {
                        const std::size_t eol = fields.find("\r\n");
                        trailer.push_back(parse_field(fields.substr(0, eol)));
                        fields.remove_prefix(eol + 2);
                    }
                    in.consume(end == data ? data + 2 : end + 4);
                    return false;
                }
                if (b.size() - data > max_head_size) {
                    throw client_error("the chunked trailer is over 1 MiB");
                }
            }
        }
        if (!in.fill()) in.closed("a chunked body");
    }
}

void read_chunked(reader& in, response& r) {
    while (next_chunk(in, r.body, r.headers)) {
    }
}

// Reads the status line and the fields, skipping interim responses; true for HTTP/1.0.
bool read_head(reader& in, response& r) {
    bool http10 = false;
    for (;;) {
        r = response{};
        parse_status_line(in.take_line(max_head_size, "the status line"), r, http10);
        read_fields(in, r.headers, "the response head");
        // 100 Continue and 103 Early Hints precede the real answer; 101 is the answer.
        if (r.status >= 100 && r.status < 200 && r.status != 101) continue;
        return http10;
    }
}

bool read_body(reader& in, std::string_view method, response& r, bool http10) {
    const auto connection = r.header("Connection");
    bool keep_alive = http10 ? connection && has_token(*connection, "keep-alive")
                             : !(connection && has_token(*connection, "close"));
    if (r.status == 101) return false;  // the connection now speaks another protocol
    // RFC 9112 section 6.3: which of the framings applies, in this order.
    if (iequals(method, "HEAD") || r.status == 204 || r.status == 304) return keep_alive;
    if (const auto coding = r.header("Transfer-Encoding")) {
        std::string_view last = *coding;
        if (const auto comma = last.rfind(','); comma != std::string_view::npos) {
            last.remove_prefix(comma + 1);
        }
        if (iequals(trim(last), "chunked")) {
            read_chunked(in, r);
            return keep_alive;
        }
        in.take_all(r.body);
        return false;
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
        return keep_alive;
    }
    in.take_all(r.body);
    return false;
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) noexcept {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                              [](char x, char y) { return lower(x) == lower(y); });
}

bool has_token(std::string_view value, std::string_view token) noexcept {
    while (!value.empty()) {
        const auto comma = value.find(',');
        if (iequals(trim(value.substr(0, comma)), token)) return true;
        if (comma == std::string_view::npos) break;
        value.remove_prefix(comma + 1);
    }
    return false;
}

read_result read_response(stream& s, std::string& buffer, std::string_view method,
                          clock::time_point deadline) {
    reader in(s, buffer, deadline);
    read_result result;
    const bool http10 = read_head(in, result.response);
    result.keep_alive = read_body(in, method, result.response, http10);
    return result;
}

head_result read_head(stream& s, std::string& buffer, clock::time_point deadline) {
    reader in(s, buffer, deadline);
    head_result result;
    result.http10 = read_head(in, result.response);
    return result;
}

bool read_body(stream& s, std::string& buffer, std::string_view method, head_result& head,
               clock::time_point deadline) {
    reader in(s, buffer, deadline, true);
    return read_body(in, method, head.response, head.http10);
}

bool read_chunk(stream& s, std::string& buffer, std::string& out, clock::time_point deadline) {
    reader in(s, buffer, deadline);
    header_list trailer;
    return next_chunk(in, out, trailer);
}

std::string describe_refusal(stream& s, std::string& buffer, head_result& head, std::string what,
                             clock::time_point deadline) {
    constexpr std::size_t quoted = 200;
    try {
        // A body that does not end (another kind of stream) is not waited for long.
        const auto soon = std::min(deadline, clock::now() + std::chrono::milliseconds(500));
        read_body(s, buffer, "GET", head, soon);
    } catch (const client_error&) {
        // What arrived of the body is quoted; the refusal is the error to report.
    }
    const std::string& body = head.response.body;
    if (!body.empty()) {
        what += ": '" + body.substr(0, quoted) + (body.size() > quoted ? "...'" : "'");
    }
    return what;
}

}  // namespace tern::testing::detail
