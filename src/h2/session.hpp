#pragma once
// One HTTP/2 connection's protocol (RFC 9113), over nghttp2: framing, HPACK and flow
// control are nghttp2's; streams, limits, deadlines and the mapping onto tern's request
// handler are here. Transport-free: the connection hands it what it reads and pulls what it
// sends, exactly as for a WebSocket (an upgraded_protocol), so the connection's reads,
// writes, TLS, door and idle timer serve HTTP/2 unchanged (docs/architecture.md, "How the
// next transports fit"; docs/http2.md).

#include "http/exchange_port.hpp"
#include "http/request_handler.hpp"

#include <tern/config.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace tern::detail {

/// What an HTTP/2 session needs from the event loop it runs on (implemented by the worker,
/// which outlives its connections' sessions and their posted resumes).
class h2_host {
public:
    virtual request_handler& handler() noexcept = 0;
    virtual loop_state& app_state() noexcept = 0;
    virtual const tern::config& settings() const noexcept = 0;
    virtual const parser_limits& limits() const noexcept = 0;
    virtual bool stopping() const noexcept = 0;
    /// A request answered on an HTTP/2 stream (for the server's counters).
    virtual void count_h2_request() noexcept = 0;
    /// The process is close to its descriptor limit (RLIMIT_NOFILE): new streams are
    /// refused (REFUSED_STREAM) rather than run. Never, unless the host says so.
    virtual bool short_of_descriptors() noexcept { return false; }
    /// A deferred stream's resume will be posted (the loop runs until it comes back).
    virtual void expect_posted() = 0;
    /// It will not (the work was taken back).
    virtual void unexpect_posted() noexcept = 0;
    /// Any thread: `fn` runs on the loop.
    virtual void post(std::function<void()> fn) = 0;

protected:
    ~h2_host() = default;
};

/// The peer of one connection, as requests see it.
struct h2_peer {
    std::string remote_ip;
    bool secure = false;         ///< over TLS (h2), else h2c
    std::string client_subject;  ///< a verified client certificate's subject (mutual TLS)
};

/// A server-side HTTP/2 session for one connection, which sends its SETTINGS first. Bytes
/// read go to `receive` (the client preface first); bytes to send are pulled. Loop thread
/// only, except the posted resumes of deferred streams.
std::shared_ptr<upgraded_protocol> make_h2_session(h2_host& host, h2_peer peer);

/// The first bytes of an HTTP/2 connection with prior knowledge (RFC 9113 3.4).
inline constexpr std::string_view h2_preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

}  // namespace tern::detail
