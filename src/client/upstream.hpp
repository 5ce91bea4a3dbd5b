#pragma once
// One connection of tern::client to a server: its non-blocking socket, the TLS channel over
// it (https), and what every read and write did. It never waits: a call that cannot go on
// says which readiness it needs, and the call's driver waits (docs/client.md).

#include "client/url.hpp"
#include "platform/socket_api.hpp"
#include "tls/channel.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

struct sockaddr;

namespace tern::detail {

class upstream {
public:
    using clock = std::chrono::steady_clock;

    /// What a read, a write, a connect or a handshake step did.
    enum class status {
        done,        ///< `n` bytes moved, or the step is complete
        want_read,   ///< again once readable
        want_write,  ///< again once writable
        closed,      ///< the peer's end (a read of 0, a reset)
        failed,      ///< `error` says why
    };
    struct io {
        status what = status::done;
        std::size_t n = 0;
    };

    explicit upstream(origin where) : where_(std::move(where)) {}

    /// Starts a non-blocking connect to `address`. `failed` (with `error`) when no socket.
    io connect(const sockaddr* address, unsigned length);
    /// After the socket turned writable: whether the connect succeeded.
    io connected();
    /// The TLS handshake (https): started on the first call.
    io handshake(const std::shared_ptr<const tls_client_context>& context);

    io read(char* into, std::size_t n) noexcept;
    io write(const char* from, std::size_t n) noexcept;
    /// Before reuse from the pool: nothing has arrived and the peer has not closed (an idle
    /// connection the server has given up on says so by its FIN or a close_notify).
    bool fit_for_reuse() noexcept;

    platform::native_socket fd() const noexcept { return socket_.get(); }
    const origin& where() const noexcept { return where_; }
    const std::string& error() const noexcept { return error_; }
    /// Requests sent on it so far (0: new).
    std::size_t uses = 0;
    /// When it went back to the pool.
    clock::time_point idle_since{};

private:
    io fail(std::string why);
    io from_tls(tls_channel::result r);

    origin where_;
    platform::socket_handle socket_;
    std::unique_ptr<tls_channel> tls_;
    std::string error_;
};

}  // namespace tern::detail
