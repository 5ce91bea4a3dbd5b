// HTTP/2 on a connection: after the TLS handshake chose `h2` by ALPN, or when a plain
// connection opens with the HTTP/2 preface (h2c with prior knowledge, RFC 9113 3.3). The
// session (src/h2) is carried like a WebSocket after its 101: every read goes to it, and
// what it sends is pulled as an unframed streamed body, through the same door, buffer,
// write deadline and idle timer (docs/architecture.md, "How the next transports fit").

#include "net/connection.hpp"

#include "h2/session.hpp"
#include "net/worker.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

namespace tern::detail {

bool connection::h2_preface_arrived() const noexcept {
    // The preface must open the connection; a shorter first read that matches its start is
    // taken too (the session checks the rest). Not on the listener that redirects to HTTPS.
    constexpr std::size_t enough = 4;  // "PRI ": no HTTP/1 request of tern's starts so
    if (served_ != 0 || parser_.in_progress() || redirect_port_ != 0 || io_.secure() ||
        !owner_.settings().http2 || input_.size() < enough) {
        return false;
    }
    const std::size_t n = std::min(input_.size(), h2_preface.size());
    return input_.substr(0, n) == h2_preface.substr(0, n);
}

void connection::start_h2() {
    owner_.count_h2_connection();
    parser_.release();  // no HTTP/1 request follows
    upgrade_ =
        make_h2_session(owner_, h2_peer{io_.remote_ip(), io_.secure(), io_.client_subject()});
    stream_ = upgrade_;
    stream_chunked_ = false;
    close_after_write_ = true;  // the connection ends with the session
    const std::shared_ptr<exchange_port> port(shared_from_this(), this);
    upgrade_->attach(owner_.door(), port);
    // It starts during a stop's grace period, or the stop itself.
    if (owner_.closing_connections()) upgrade_->on_closing();
    if (owner_.stopping()) upgrade_->end_on_stop();
    bool more = true;
    if (!input_.empty()) {
        more = upgrade_->receive(std::exchange(input_, std::string_view{}));
        if (!upgrade_) return;
    }
    if (more) read();
    // The server's SETTINGS, and the answers to what came with the preface.
    pull_stream();
}

}  // namespace tern::detail
