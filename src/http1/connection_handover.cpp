// Where HTTP/1 gives its connection away: after a `101 Switching Protocols` answer (a
// WebSocket handshake), and when a plain connection opens with the HTTP/2 preface (h2c with
// prior knowledge, RFC 9113 3.3). The transport is handed to an upgraded_connection
// (upgraded.hpp) with the bytes read behind the handshake; this connection hears nothing
// more from it.

#include "h2/connection.hpp"
#include "http/writer.hpp"
#include "http1/connection.hpp"
#include "http1/upgraded.hpp"

#include <tern/config.hpp>

#include <algorithm>
#include <string_view>
#include <utility>

namespace tern::detail {

void http1_connection::start_upgrade() {
    framing how;  // 101: no body, no Content-Length; the fields say Upgrade
    write_response(out_, response_, how);
    auto protocol = std::move(response_.upgrade);
    response_.clear();
    phase_ = phase::handed_over;
    // Bytes the client sent right behind its handshake belong to the protocol.
    io_->hand_over(std::make_shared<upgraded_connection>(io_, host_, std::move(protocol),
                                                         std::exchange(input_, {})));
}

bool http1_connection::h2_preface_arrived() const noexcept {
    // The preface must open the connection; a shorter first read that matches its start is
    // taken too (h2_connection checks the rest). Not on the listener that redirects to HTTPS.
    constexpr std::size_t enough = 4;  // "PRI ": no HTTP/1 request of tern's starts so
    if (redirect_port_ != 0 || io_->secure() || !host_.settings().http2.enabled ||
        input_.size() < enough) {
        return false;
    }
    const std::size_t n = std::min(input_.size(), h2_preface.size());
    return input_.substr(0, n) == h2_preface.substr(0, n);
}

void http1_connection::start_h2() {
    auto h2 =
        make_h2_connection(host_, h2_peer{io_->remote_ip(), io_->secure(), io_->client_subject()});
    host_.count_h2_connection();
    parser_.release();  // no HTTP/1 request follows
    phase_ = phase::handed_over;
    io_->hand_over(std::make_shared<upgraded_connection>(io_, host_, std::move(h2),
                                                         std::exchange(input_, {})));
}

}  // namespace tern::detail
