// HTTPS as HTTP/1 sees it: the plain listener's redirect to HTTPS, and the plain-text
// answer to plain HTTP on the HTTPS port (what a request learns of its TLS transport is
// marked in connection.cpp, on every request's path). The TLS itself (handshake, reads,
// writes) is the transport's (net/transport_tls.cpp).

#include "http1/connection.hpp"

#include <string>
#include <string_view>
#include <utility>

namespace tern::detail {

// The plain listener beside HTTPS in redirect mode: the same host and target over HTTPS,
// 301 for GET and HEAD (what browsers and the users expect), 308 for other methods
// so that a POST is not silently turned into a GET. The Host's own port gives way to the
// HTTPS port, left out when it is 443. A request without a Host (HTTP/1.0) gets 400: there
// is no name to send it to.
void http1_connection::redirect_to_https(const request& req) {
    std::string_view host = req.header("Host").value_or(std::string_view{});
    // Strip a port: after the last ':' unless that ':' is inside a bracketed IP literal.
    const auto colon = host.rfind(':');
    if (colon != std::string_view::npos && host.find(']', colon) == std::string_view::npos) {
        host = host.substr(0, colon);
    }
    response_.clear();
    if (host.empty()) {
        response_.status = 400;
        response_.content_type = "text/plain; charset=utf-8";
        response_.body = "This server speaks HTTPS; the request named no host to redirect to.\n";
        return;
    }
    std::string location = "https://";
    location.append(host);
    if (redirect_port_ != 443) location.append(":").append(std::to_string(redirect_port_));
    // The path and query (an absolute-form target's authority is not repeated).
    if (req.path.empty() || req.path.front() != '/') location.push_back('/');
    location.append(req.path);
    if (!req.query.empty()) location.append("?").append(req.query);
    response_.status = req.method == "GET" || req.method == "HEAD" ? 301 : 308;
    response_.content_type = "text/plain; charset=utf-8";
    response_.body = "Moved to " + location + "\n";
    response_.fields.emplace_back("Location", std::move(location));
}

// A plain HTTP request on the HTTPS port: answered in plain text, as nginx does, so that
// someone who typed http:// sees why instead of a reset. Then the connection closes.
void http1_connection::refuse_plain_http() {
    static constexpr std::string_view answer =
        "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
        "Content-Length: 55\r\nConnection: close\r\n\r\n"
        "This port speaks HTTPS: the request came as plain HTTP\n";
    static_assert(answer.size() - answer.find("\r\n\r\n") - 4 == 55);
    out_.append(answer);
    close_after_write_ = true;
    write();
}

}  // namespace tern::detail
