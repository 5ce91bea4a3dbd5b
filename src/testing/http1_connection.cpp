#include "testing/http1_connection.hpp"

#include "testing/response_reader.hpp"

#include <utility>

namespace tern::testing::detail {

namespace {

void append_field(std::string& out, std::string_view name, std::string_view value) {
    out.append(name).append(": ").append(value).append("\r\n");
}

}  // namespace

std::string http1_connection::serialize(const outgoing_request& request) const {
    std::string out;
    out.reserve(256 + request.body.size());
    out.append(request.method).append(" ").append(request.target).append(" HTTP/1.1\r\n");
    if (!has_field(request.fields, "Host")) {
        append_field(out, "Host", "127.0.0.1:" + std::to_string(port_));
    }
    for (const testing::header& h : request.fields) append_field(out, h.name, h.value);
    if (adds_content_length(request)) {
        append_field(out, "Content-Length", std::to_string(request.body.size()));
    }
    out += "\r\n";
    out += request.body;
    return out;
}

response http1_connection::exchange(const outgoing_request& request, clock::time_point deadline) {
    const std::string bytes = serialize(request);
    try {
        // A keep-alive connection the server has closed meanwhile (idle timeout, stop,
        // max_requests_per_connection) is replaced, and a request it dropped unanswered is
        // sent once more on a new connection, as browsers do.
        for (int attempt = 0;; ++attempt) {
            bool reused = connection_.has_value();
            // Bytes left over after the last response were sent unasked: not a connection
            // to trust with the next request either.
            if (reused && (!buffer_.empty() || !connection_->idle_and_open())) {
                disconnect();
                reused = false;
            }
            if (!connection_) connection_.emplace(port_, http1_stream(tls_), deadline);
            try {
                if (!connection_->send_all(bytes, deadline)) throw closed_before_response{};
                read_result result = read_response(*connection_, buffer_, request.method, deadline);
                if (!result.keep_alive) disconnect();
                return std::move(result.response);
            } catch (const closed_before_response&) {
                disconnect();
                if (!reused || attempt > 0) {
                    throw client_error("the server closed the connection without answering");
                }
            }
        }
    } catch (const client_error&) {
        disconnect();
        throw;
    }
}

void http1_connection::disconnect() noexcept {
    connection_.reset();
    buffer_.clear();
}

}  // namespace tern::testing::detail
