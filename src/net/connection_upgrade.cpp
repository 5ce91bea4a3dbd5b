// After a `101 Switching Protocols` answer (a WebSocket handshake): the connection carries
// the upgraded protocol instead of HTTP. What it reads goes to the protocol
// (upgraded_protocol::receive), and what it sends is pulled from it like a streamed body
// (connection_stream.cpp, unchunked); reading goes on while it writes, so a peer's close or
// ping is seen whatever the other direction does. When the protocol ends, the connection
// closes (docs/architecture.md, "How the next transports fit").

#include "net/connection.hpp"

#include "http/writer.hpp"
#include "net/worker.hpp"

#include <string_view>
#include <utility>

namespace tern::detail {

void connection::start_upgrade() {
    framing how;  // 101: no body, no Content-Length; the fields say Upgrade
    write_response(out_, response_, how);
    upgrade_ = std::move(response_.upgrade);
    response_.clear();
    stream_ = upgrade_;
    stream_chunked_ = false;
    // The connection ends with the protocol: nothing after it is HTTP.
    close_after_write_ = true;
    const std::shared_ptr<exchange_port> port(shared_from_this(), this);
    upgrade_->attach(owner_.door(), port);
    if (owner_.stopping()) upgrade_->end_on_stop();  // it starts as the server stops
    // Bytes the client sent right behind its handshake belong to the protocol.
    bool more = true;
    if (!input_.empty()) {
        more = upgrade_->receive(std::exchange(input_, std::string_view{}));
        if (!upgrade_) return;
    }
    if (more) read();
}

void connection::begin_closing() {
    if (upgrade_ && upgrade_->on_closing() && phase_ == phase::streaming) pull_stream();
}

void connection::on_upgraded_read(std::error_code ec, std::size_t n) {
    if (ec) {
        close();  // the peer left (without a closing handshake: the protocol hears of it)
        return;
    }
    const bool more = upgrade_->receive(std::string_view(io_.read_buffer().data(), n));
    if (!upgrade_) return;
    if (more) read();
    // What the bytes produced (a pong, an answer, a close) goes out now, unless a write is
    // in progress: its completion pulls.
    if (phase_ == phase::streaming) pull_stream();
}

}  // namespace tern::detail
