#include "http1/upgraded.hpp"

#include <tern/config.hpp>

#include <chrono>
#include <utility>

namespace tern::detail {

namespace {

// How much one pull takes: about what one write hands the socket.
constexpr std::size_t pull_bytes = std::size_t{64} * 1024;

}  // namespace

upgraded_connection::upgraded_connection(std::shared_ptr<byte_transport> io, protocol_host& host,
                                         std::shared_ptr<upgraded_protocol> protocol,
                                         std::string_view already_read)
    : io_(std::move(io)),
      host_(host),
      protocol_(std::move(protocol)),
      already_read_(already_read) {}

void upgraded_connection::start() {
    const std::shared_ptr<exchange_port> port(shared_from_this(), this);
    protocol_->attach(host_.door(), port);
    // It starts during a stop's grace period, or the stop itself.
    if (host_.closing_connections()) protocol_->on_closing();
    if (host_.stopping()) protocol_->end_on_stop();
    bool more = true;
    if (!already_read_.empty()) {
        more = protocol_->receive(std::exchange(already_read_, std::string_view{}));
        if (!protocol_) return;
    }
    if (more) io_->read();
    // A 101's head goes out first, whatever the protocol did meanwhile (a producer that
    // overflowed at once still lets the client see its handshake answered); then what the
    // protocol queued (the server's SETTINGS, answers to what came along).
    if (!io_->out().empty()) {
        write();
        return;
    }
    pull();
}

void upgraded_connection::on_read(std::error_code ec, std::size_t n) {
    // Ended: its last bytes are being written, then the transport lingers (nothing is read
    // meanwhile).
    if (!protocol_) return;
    if (ec) {
        io_->close();  // the peer left (without a closing handshake: the protocol hears of it)
        return;
    }
    const bool more = protocol_->receive(std::string_view(io_->read_buffer().data(), n));
    if (!protocol_) return;
    if (more) io_->read();
    // What the bytes produced (a pong, an answer, a close) goes out now, unless a write is
    // in progress: its completion pulls.
    if (phase_ == phase::streaming) pull();
}

void upgraded_connection::pull() {
    // Whatever deadline ran before (the first byte's, a write's that has completed) is over:
    // the write sets its own if it has to wait, and an idle protocol its ping.
    io_->clear_deadline();
    std::string& out = io_->out();
    switch (protocol_->pull(out, pull_bytes)) {
        case pull_status::more:
            if (!out.empty()) {
                write();
                return;
            }
            phase_ = phase::streaming;
            if (const auto idle = protocol_->idle_interval(); idle.count() > 0) {
                io_->set_deadline(idle, deadline_kind::stream_idle);
            }
            return;
        case pull_status::ended:
            end();
            write();  // then the linger
            return;
        case pull_status::aborted:
            io_->close();
            return;
    }
}

void upgraded_connection::write() {
    phase_ = phase::writing;
    io_->write();
}

void upgraded_connection::on_written(std::error_code ec) {
    if (phase_ == phase::closed) return;
    if (ec) {
        io_->close();
        return;
    }
    if (!protocol_) {
        linger();
        return;
    }
    // The next pull. Posted, not called: writes complete synchronously, and a protocol that
    // keeps producing must not nest pull -> write -> pull.
    io_->post([self = shared_from_this()] {
        if (self->phase_ == phase::writing && self->protocol_) self->pull();
    });
}

void upgraded_connection::wake() {
    if (!protocol_ || phase_ == phase::closed) return;
    if (protocol_->cut_off()) {
        io_->close();
        return;
    }
    // While writing, the pull after the write finds the bytes.
    if (phase_ == phase::streaming) pull();
}

void upgraded_connection::on_deadline(deadline_kind kind) {
    if (kind == deadline_kind::stream_idle) {
        if (phase_ != phase::streaming || !protocol_) return;
        protocol_->on_idle();  // a ping, a protocol's own deadlines
        pull();
        return;
    }
    io_->close();  // a write that made no progress
}

void upgraded_connection::stop_when_idle() {
    // An endless protocol (HTTP/2 with its GOAWAY, a WebSocket's close) ends now when it
    // says so; otherwise it runs on until the drain deadline.
    if (protocol_ && protocol_->end_on_stop() && phase_ == phase::streaming) pull();
}

void upgraded_connection::begin_closing() {
    if (protocol_ && protocol_->on_closing() && phase_ == phase::streaming) pull();
}

void upgraded_connection::on_close() noexcept {
    phase_ = phase::closed;
    end();
}

void upgraded_connection::end() noexcept {
    if (auto protocol = std::exchange(protocol_, nullptr)) protocol->closed();
}

void upgraded_connection::linger() {
    // The peer reads the protocol's last bytes instead of a reset.
    phase_ = phase::lingering;
    io_->linger();
}

}  // namespace tern::detail
