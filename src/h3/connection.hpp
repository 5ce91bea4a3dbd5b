#pragma once
// One HTTP/3 connection (docs/http3.md): nghttp3's framing and QPACK over a QUIC
// connection's streams (the quic::stream_sink the QUIC core feeds), each request stream an
// h3_stream handed to request_handler::handle. Transport-free: the QUIC connection below is
// reached through quic::stream_control, the loop through protocol_host. Private to src/h3.

#include "http/body_memory.hpp"
#include "http/field_section.hpp"
#include "http/protocol_host.hpp"
#include "http/stream_exchange.hpp"
#include "http/token_bucket.hpp"
#include "quic/stream_sink.hpp"

#include <nghttp3/nghttp3.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tern::detail {

class h3_stream;

class h3_connection final : public quic::stream_sink {
public:
    /// Opens the control and QPACK streams; is in `registry` while it lives. Throws
    /// std::runtime_error when nghttp3 cannot be set up.
    h3_connection(quic::stream_control& control, protocol_host& host, std::string remote_ip,
                  std::unordered_set<h3_connection*>& registry);
    ~h3_connection() override;
    h3_connection(const h3_connection&) = delete;
    h3_connection& operator=(const h3_connection&) = delete;

    // quic::stream_sink
    bool on_stream_data(std::int64_t id, std::span<const std::uint8_t> bytes, bool fin) override;
    std::uint64_t failure() const noexcept override { return failure_; }
    /// Counts the client's cancellation of a request stream against the rapid-reset budget:
    /// false (H3_EXCESSIVE_LOAD) past it.
    bool on_stream_reset(std::int64_t id) override;
    void on_stream_close(std::int64_t id, std::uint64_t code) override;
    long next_write(std::int64_t& id, bool& fin, std::span<quic::stream_vec> vecs) override;
    bool on_written(std::int64_t id, std::size_t n) override;
    void on_write_blocked(std::int64_t id) override;
    bool on_write_unblocked(std::int64_t id) override;
    void on_write_shut(std::int64_t id) override;
    bool on_acked(std::int64_t id, std::uint64_t n) override;
    void on_peer_stream_limit(std::uint64_t max_bidi) override;

    /// A stop has begun: GOAWAY, and no new requests.
    void on_closing() noexcept;
    /// The server stops: each stream's work not started is answered 503.
    void stop() noexcept;
    /// Request streams open (an answer under way, or a request not complete).
    std::size_t streams() const noexcept { return streams_.size(); }
    /// Acts on the streams' deadlines passed at `now` (h3_stream::check), and on the
    /// connection's send rate: while some answer waits on the client, the client must
    /// acknowledge http3.min_send_progress bytes per timeouts.write, else each answer that
    /// waits is reset (H3_REQUEST_CANCELLED).
    void check(std::chrono::steady_clock::time_point now);

    // ---- for the streams ----------------------------------------------------------------
    nghttp3_conn* raw() const noexcept { return conn_; }
    protocol_host& host() const noexcept { return host_; }
    const std::string& remote_ip() const noexcept { return remote_ip_; }
    quic::stream_control& control() const noexcept { return control_; }
    /// STOP_SENDING and RESET_STREAM for a request stream, by the server: the client's
    /// RESET_STREAM or STOP_SENDING in answer is not counted as its own cancellation.
    void stop_reading(std::int64_t id, std::uint64_t code);
    void stop_writing(std::int64_t id, std::uint64_t code);
    /// Where a stream makes its response's fields (reused: nghttp3 copies them).
    response_fields<nghttp3_nv>& response_scratch() noexcept { return response_fields_; }
    /// `s` asked for 100 Continue: sent once nghttp3 has returned.
    void queue_continue(h3_stream& s);
    /// `s`'s streamed body ended with trailers (found inside nghttp3's read callback):
    /// submitted once nghttp3 has returned.
    void queue_trailers(h3_stream& s);
    /// A stream may open one more descriptor (a spooled body): the connection holds fewer
    /// than http3.max_open_files and the process is not short of descriptors.
    bool may_open_file();
    /// Whether `stream` may hold `bytes` of spooled request body beside the other streams'
    /// (config::http3.max_spooled_bytes).
    bool may_spool(const h3_stream& stream, std::uint64_t bytes) const;
    /// Whether `stream`, whose body just grew in memory, gets those bytes' window back now
    /// (http3.max_body_memory, http/body_memory.hpp); when not, the connection remembers
    /// that a stream owes.
    bool may_take_more(const h3_stream& stream);

private:
    struct callbacks;
    // A stream whose request became complete is run after nghttp3 returns.
    void queue_if_ready(h3_stream& s);
    // Runs the complete requests the connection's budget lets run (http/stream_budget.hpp:
    // http3.max_unacked, http3.max_open_files); the others wait for acknowledgements and
    // closes.
    void admit();
    // The place of closed request stream `id` is given back once `work` has ended: now, or
    // by poll_work() (a timer on the loop while some place waits).
    void release_when_done(std::int64_t id, stream_exchange::work_left work);
    void poll_work();
    void check_send_rate(std::chrono::steady_clock::time_point now);
    // Gives back the request-body windows owed that the connection's bodies now allow.
    void settle_bodies();

    quic::stream_control& control_;
    protocol_host& host_;
    std::string remote_ip_;
    std::unordered_set<h3_connection*>& registry_;
    nghttp3_conn* conn_ = nullptr;
    head_limits limits_;
    std::unordered_map<std::int64_t, std::shared_ptr<h3_stream>> streams_;
    std::vector<std::shared_ptr<h3_stream>> ready_;
    std::vector<std::shared_ptr<h3_stream>> waiting_;    // complete, over the budget
    std::vector<std::shared_ptr<h3_stream>> continues_;  // 100 Continue to send
    std::vector<std::shared_ptr<h3_stream>> trailers_;   // streamed bodies' trailers to send
    response_fields<nghttp3_nv> response_fields_;
    // Buffers of finished streams for the next ones (stream_exchange's exchange_buffers):
    // at most max_spares; none once check() has twice seen the connection without streams.
    std::vector<exchange_buffers> spares_;
    static constexpr std::size_t max_spares = 16;
    unsigned idle_checks_ = 0;
    bool closing_ = false;
    body_windows_owed owed_;     // request-body windows held back (http3.max_body_memory)
    std::uint64_t failure_ = 0;  // the HTTP/3 error code of what nghttp3 refused

    // Rapid reset (docs/http3.md): the client's cancellations of request streams, counted
    // once per stream against a budget like HTTP/2's (2 x max_concurrent_streams at once,
    // max_concurrent_streams a second). `cancelled_`: the open request streams cancelled
    // already, by the client (counted) or by the server (not counted).
    token_bucket cancels_;
    std::unordered_set<std::int64_t> cancelled_;
    // Closed request streams whose work still runs: their places wait for it.
    struct place {
        std::int64_t id;
        stream_exchange::work_left work;
    };
    std::vector<place> places_;
    bool polling_ = false;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for the poll's timer
    // The connection's send rate: bytes of its streams the client acknowledged, and the
    // window of timeouts.write in which it must acknowledge http3.min_send_progress.
    std::uint64_t acked_ = 0;
    std::uint64_t window_acked_ = 0;
    std::chrono::steady_clock::time_point window_start_{};
};

}  // namespace tern::detail
