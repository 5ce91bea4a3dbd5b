#include "client/upstream.hpp"

#include "platform/socket_api.hpp"
#include "platform/sockets.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

namespace tern::detail {

upstream::io upstream::fail(std::string why) {
    error_ = std::move(why);
    return {status::failed, 0};
}

upstream::io upstream::connect(const sockaddr* address, unsigned length) {
    platform::ignore_sigpipe();  // the portable path's sends have no MSG_NOSIGNAL
    socket_ = platform::socket_handle(platform::open_stream_socket(address->sa_family, true));
    if (!socket_) return fail(std::string("socket: ") + std::strerror(errno));
    platform::set_no_delay(socket_.get());
    if (platform::connect_socket(socket_.get(), address,
                                 static_cast<platform::socket_length>(length)) == 0) {
        return {};
    }
    if (errno == EINPROGRESS) return {status::want_write, 0};
    return fail(std::strerror(errno));
}

upstream::io upstream::connected() {
    const int err = platform::pending_error(socket_.get());
    if (err == EINPROGRESS || err == EALREADY) return {status::want_write, 0};
    if (err != 0) return fail(std::strerror(err));
    return {};
}

upstream::io upstream::handshake(const std::shared_ptr<const tls_client_context>& context) {
    if (!tls_) tls_ = std::make_unique<tls_channel>(context, socket_.get(), where_.host);
    const auto r = tls_->handshake();
    if (r.what == tls_channel::status::failed || r.what == tls_channel::status::closed) {
        const char* verify = tls_->verify_failure();
        if (verify != nullptr) return fail(std::string("certificate: ") + verify);
        if (r.what == tls_channel::status::closed) return fail("closed during the TLS handshake");
        return fail(tls_->failure() != nullptr ? tls_->failure() : "TLS handshake failed");
    }
    return from_tls(r);
}

upstream::io upstream::from_tls(tls_channel::result r) {
    switch (r.what) {
        case tls_channel::status::done:
            return {status::done, r.n};
        case tls_channel::status::want_read:
            return {status::want_read, 0};
        case tls_channel::status::want_write:
            return {status::want_write, 0};
        case tls_channel::status::closed:
            return {status::closed, 0};
        case tls_channel::status::failed:
            break;
    }
    return fail(tls_->failure() != nullptr ? tls_->failure() : "TLS error");
}

upstream::io upstream::read(char* into, std::size_t n) noexcept {
    if (tls_) return from_tls(tls_->read(into, n));
    for (;;) {
        const ssize_t got = platform::receive_bytes(socket_.get(), into, n, 0);
        if (got > 0) return {status::done, static_cast<std::size_t>(got)};
        if (got == 0) return {status::closed, 0};
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return {status::want_read, 0};
        return {status::closed, 0};  // a reset: the peer is gone either way
    }
}

upstream::io upstream::write(const char* from, std::size_t n) noexcept {
    if (tls_) return from_tls(tls_->write(from, n));
    for (;;) {
        const ssize_t sent = platform::send_bytes(socket_.get(), from, n, platform::send_flags);
        if (sent >= 0) return {status::done, static_cast<std::size_t>(sent)};
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return {status::want_write, 0};
        return {status::closed, 0};
    }
}

bool upstream::fit_for_reuse() noexcept {
    if (tls_ && tls_->has_pending()) return false;
    char byte = 0;
    const ssize_t got =
        platform::receive_bytes(socket_.get(), &byte, 1, MSG_PEEK | platform::dont_wait);
    return got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

}  // namespace tern::detail
