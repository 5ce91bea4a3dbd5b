#include "http/writer.hpp"

#include "http/date.hpp"
#include "http/status.hpp"

#include <cstdint>
#include <cstring>

namespace tern::detail {

namespace {

using namespace std::string_view_literals;

std::size_t decimal_length(std::uint64_t n) noexcept {
    std::size_t digits = 1;
    while (n >= 10) {
        n /= 10;
        ++digits;
    }
    return digits;
}

// Fills reserved bytes front to back. The head is measured first and `out` grown once, so
// each piece is a plain copy: no capacity check and no call per piece as with append().
class filler {
public:
    explicit filler(char* at) noexcept : p_(at) {}

    filler& operator<<(std::string_view s) noexcept {
        if (s.empty()) return *this;  // memcpy from a null data() is undefined even for 0
        std::memcpy(p_, s.data(), s.size());
        p_ += s.size();
        return *this;
    }

    // Writes `n` in exactly `digits` characters (decimal_length(n)).
    void number(std::uint64_t n, std::size_t digits) noexcept {
        p_ += digits;
        char* d = p_;
        do {
            *--d = static_cast<char>('0' + n % 10);
            n /= 10;
        } while (n != 0);
    }

private:
    char* p_;
};

// Grows `out` by `size` bytes and returns a filler for them.
filler grow(std::string& out, std::size_t size) {
    const std::size_t at = out.size();
    out.resize(at + size);
    return filler(out.data() + at);
}

constexpr auto version = "HTTP/1.1 "sv;
constexpr auto date_name = "\r\nDate: "sv;
constexpr auto crlf = "\r\n"sv;

// The status line and the Date field every response starts with:
// "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n".
struct status_line {
    std::uint64_t code;
    std::size_t code_digits;
    std::string_view reason;
    std::string_view date;

    explicit status_line(int status)
        : code(static_cast<std::uint64_t>(status)),
          code_digits(decimal_length(code)),
          reason(reason_phrase(status)),
          date(http_date_now()) {}

    std::size_t size() const noexcept {
        return version.size() + code_digits + 1 + reason.size() + date_name.size() + date.size() +
               crlf.size();
    }

    void put(filler& f) const noexcept {
        f << version;
        f.number(code, code_digits);
        f << " "sv << reason << date_name << date << crlf;
    }
};

}  // namespace

void write_response(std::string& out, const response& res, const framing& how) {
    constexpr auto content_type = "Content-Type: "sv;
    constexpr auto content_length = "Content-Length: "sv;
    const status_line head(res.status);
    constexpr auto chunked = "Transfer-Encoding: chunked\r\n"sv;
    const bool bodyless = status_forbids_body(res.status);
    const bool streamed = res.source != nullptr;
    const bool typed = !bodyless && !res.content_type.empty() &&
                       (streamed || !res.body.empty() || res.file.length != 0);
    const std::uint64_t length = res.file.file ? res.file.length : res.body.size();
    const std::size_t length_digits = decimal_length(length);
    const std::string_view connection = how.close            ? "Connection: close\r\n"sv
                                        : how.keep_alive_1_0 ? "Connection: keep-alive\r\n"sv
                                                             : ""sv;
    // A file body is sent by the connection after these bytes.
    const bool with_body = !bodyless && !how.omit_body && !res.file.file && !streamed;
    // A body with trailers goes chunked, the trailers in its last chunk (how.trailers is
    // never set for a file body, a HEAD or HTTP/1.0).
    const bool trailed = how.trailers && !bodyless && !streamed;
    // A streamed body's length is not known: chunks, or the close (HTTP/1.0).
    const bool sized = !bodyless && !streamed && !trailed;
    const bool chunk_field = !bodyless && ((streamed && how.chunked) || trailed);

    std::size_t size = head.size() + connection.size() + crlf.size();
    if (typed) size += content_type.size() + res.content_type.size() + crlf.size();
    if (sized) size += content_length.size() + length_digits + crlf.size();
    if (chunk_field) size += chunked.size();
    for (const auto& [name, value] : res.fields) size += name.size() + value.size() + 4;
    if (with_body && !trailed) size += res.body.size();

    filler f = grow(out, size);
    head.put(f);
    if (typed) f << content_type << res.content_type << crlf;
    if (sized) {
        f << content_length;
        f.number(length, length_digits);
        f << crlf;
    }
    if (chunk_field) f << chunked;
    f << connection;
    for (const auto& [name, value] : res.fields) f << name << ": "sv << value << crlf;
    f << crlf;
    if (!with_body) return;
    if (!trailed) {
        f << res.body;
        return;
    }
    if (!res.body.empty()) {
        const std::size_t at = begin_chunk(out);
        out.append(res.body);
        end_chunk(out, at);
    }
    write_last_chunk(out, res.trailers);
}

void write_continue(std::string& out) { out.append("HTTP/1.1 100 Continue\r\n\r\n"); }

namespace {
// A chunk-size line reserved before the data: eight hex digits (leading zeros are allowed,
// RFC 9112 7.1: chunk-size = 1*HEXDIG) and CRLF, so the size can be filled in afterwards.
constexpr std::size_t chunk_size_line = 10;
}  // namespace

std::size_t begin_chunk(std::string& out) {
    const std::size_t at = out.size();
    out.resize(at + chunk_size_line);
    return at;
}

void end_chunk(std::string& out, std::size_t at) {
    const std::size_t data = out.size() - at - chunk_size_line;
    if (data == 0) {
        out.resize(at);  // an empty chunk would end the body
        return;
    }
    constexpr char hex[] = "0123456789abcdef";
    char* p = out.data() + at;
    for (int i = 7; i >= 0; --i) {
        p[i] = hex[(data >> (4 * (7 - i))) & 0xf];
    }
    p[8] = '\r';
    p[9] = '\n';
    out.append("\r\n");
}

void write_last_chunk(std::string& out) { out.append("0\r\n\r\n"); }

void write_last_chunk(std::string& out,
                      const std::vector<std::pair<std::string, std::string>>& trailers) {
    out.append("0\r\n");
    for (const auto& [name, value] : trailers) {
        out.append(name).append(": ").append(value).append("\r\n");
    }
    out.append("\r\n");
}

void write_error_response(std::string& out, int status, std::string_view extra) {
    constexpr auto fields = "Content-Type: text/plain; charset=utf-8\r\nContent-Length: "sv;
    constexpr auto connection = "\r\nConnection: close\r\n"sv;
    const status_line head(status);
    const std::string_view body = head.reason;
    const std::size_t length_digits = decimal_length(body.size());
    filler f = grow(out, head.size() + fields.size() + length_digits + connection.size() +
                             extra.size() + crlf.size() + body.size());
    head.put(f);
    f << fields;
    f.number(body.size(), length_digits);
    f << connection << extra << crlf << body;
}

}  // namespace tern::detail
