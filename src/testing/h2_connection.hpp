#pragma once
// The client's HTTP/2 connection (RFC 9113): h2 chosen by ALPN over TLS, or h2c with prior
// knowledge over plain TCP; every request of an exchange a stream of its own, all sent at
// once and read until each has its response. A connection the server has closed or ended
// with GOAWAY is replaced on the next exchange, and an exchange it dropped before answering
// anything on a reused connection is sent once more on a new one.

#include "testing/h2_client_codec.hpp"
#include "testing/outgoing.hpp"
#include "testing/stream.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tern::testing::detail {

/// One request of an exchange failed alone: the server reset its stream, or ended the
/// connection before answering it. `index` is its place in the exchange.
class h2_stream_error : public client_error {
public:
    /// The message `what` about the request at `index`.
    h2_stream_error(std::size_t index, const std::string& what)
        : client_error(what), index_(index) {}
    /// The failed request's place in the exchange.
    std::size_t index() const noexcept { return index_; }

private:
    std::size_t index_;
};

/// An HTTP/2 connection to 127.0.0.1:port, opened on first use.
class h2_connection {
public:
    /// For the server at `port`: h2 over TLS when `tls`, else h2c.
    h2_connection(std::uint16_t port, bool tls);
    ~h2_connection();
    h2_connection(h2_connection&& other) noexcept;
    h2_connection& operator=(h2_connection&& other) noexcept;
    h2_connection(const h2_connection&) = delete;
    h2_connection& operator=(const h2_connection&) = delete;

    /// Sends every request as a stream and returns their responses in order. Throws
    /// h2_stream_error for the first request (in order) the server reset or dropped,
    /// client_error for a connection that failed as a whole, timeout_error past `deadline`.
    std::vector<response> exchange(const std::vector<outgoing_request>& requests,
                                   clock::time_point deadline);
    /// Closes the connection (the next exchange opens a new one).
    void disconnect() noexcept;

private:
    struct connection;

    void open(clock::time_point deadline);
    bool still_usable();
    void run(const std::vector<outgoing_request>& requests, std::vector<h2_stream_state>& states,
             clock::time_point deadline);
    std::vector<response> results(std::vector<h2_stream_state>& states, bool reused);

    std::uint16_t port_;
    bool tls_;
    std::unique_ptr<connection> connection_;
};

}  // namespace tern::testing::detail
