// The PROXY protocol header (config::proxy_protocol) before a connection's first request or
// TLS hello: read without ever consuming a byte of the client's own data, so what follows
// (HTTP, or a TLS hello) is read as on any connection.

#include "http/proxy_header.hpp"
#include "net/transport.hpp"
#include "net/worker.hpp"

#include "platform/socket_api.hpp"

#include <array>
#include <cerrno>
#include <utility>

namespace tern::detail {

void transport::read_proxy_header() { when_ready(ready::read, &transport::on_proxy_bytes); }

void transport::on_proxy_bytes() {
    if (!opening_ || closed_) return;
    // The whole header has the header deadline, counted from the accept.
    set_deadline_at(accepted_at_ + owner_.settings().timeouts.header, deadline_kind::handshake);
    std::array<char, max_proxy_header> peeked;
    const auto room = max_proxy_header - proxy_bytes_.size();
    const auto n = platform::receive_bytes(socket_.get(), peeked.data(), room, MSG_PEEK);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        can_read_ = ended_;
        read_proxy_header();
        return;
    }
    if (n <= 0) {
        open_failed(false);  // the balancer left, or an error
        return;
    }
    std::string candidate = proxy_bytes_;
    candidate.append(peeked.data(), static_cast<std::size_t>(n));
    const auto header = parse_proxy_header(candidate);
    if (header.result == proxy_header::state::invalid) {
        // Not from the balancer this listener trusts (or a broken one): nothing to answer,
        // since whoever sent it does not speak the protocol expected here.
        open_failed(false);
        return;
    }
    // Incomplete: every byte seen is header. Done: only the header's bytes are taken.
    const auto take = header.result == proxy_header::state::done ? header.size - proxy_bytes_.size()
                                                                 : static_cast<std::size_t>(n);
    const auto consumed = platform::receive_bytes(socket_.get(), peeked.data(), take, 0);
    if (consumed != static_cast<ssize_t>(take)) {
        // The peeked bytes are in the socket's buffer: anything else is an error.
        open_failed(false);
        return;
    }
    if (header.result == proxy_header::state::incomplete) {
        proxy_bytes_ = std::move(candidate);
        can_read_ = ended_;  // every byte there was is taken: the rest is a new arrival
        read_proxy_header();
        return;
    }
    if (!header.source.empty()) remote_ip_ = header.source;
    std::string().swap(proxy_bytes_);
    if (tls_context_) {
        // The first-byte deadline again, for the hello (as on a connection without PROXY).
        set_deadline(owner_.settings().timeouts.first_byte, deadline_kind::idle);
        start_handshake();
        return;
    }
    opened({});
}

}  // namespace tern::detail
