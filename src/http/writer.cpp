#include "http/writer.hpp"

#include "http/date.hpp"
#include "http/status.hpp"

#include <charconv>

namespace tern::detail {

namespace {

void append_number(std::string& out, std::size_t n) {
    char digits[24];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, n);
    out.append(digits, end);
}

void append_status_line(std::string& out, int status) {
    out.append("HTTP/1.1 ");
    append_number(out, static_cast<std::size_t>(status));
    out.push_back(' ');
    out.append(reason_phrase(status));
    out.append("\r\nDate: ");
    out.append(http_date_now());
    out.append("\r\n");
}

}  // namespace

void write_response(std::string& out, const response& res, const framing& how) {
    append_status_line(out, res.status);
    const bool bodyless = status_forbids_body(res.status);
    if (!bodyless) {
        if (!res.content_type.empty() && (!res.body.empty() || res.file.length != 0)) {
            out.append("Content-Type: ");
            out.append(res.content_type);
            out.append("\r\n");
        }
        out.append("Content-Length: ");
        append_number(out,
                      res.file.file ? static_cast<std::size_t>(res.file.length) : res.body.size());
        out.append("\r\n");
    }
    if (how.close) {
        out.append("Connection: close\r\n");
    } else if (how.keep_alive_1_0) {
        out.append("Connection: keep-alive\r\n");
    }
    for (const auto& [name, value] : res.fields) {
        out.append(name);
        out.append(": ");
        out.append(value);
        out.append("\r\n");
    }
    out.append("\r\n");
    // A file body is sent by the connection after these bytes.
    if (!bodyless && !how.omit_body && !res.file.file) out.append(res.body);
}

void write_continue(std::string& out) { out.append("HTTP/1.1 100 Continue\r\n\r\n"); }

void write_error_response(std::string& out, int status, std::string_view extra) {
    const std::string_view body = reason_phrase(status);
    append_status_line(out, status);
    out.append("Content-Type: text/plain; charset=utf-8\r\nContent-Length: ");
    append_number(out, body.size());
    out.append("\r\nConnection: close\r\n");
    out.append(extra);
    out.append("\r\n");
    out.append(body);
}

}  // namespace tern::detail
