#include "testing/h2_connection.hpp"

#include "testing/response_reader.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace tern::testing::detail {

namespace {

std::string goaway_text(const h2_goaway& g) {
    std::string out = "GOAWAY " + h2_error_name(g.error_code);
    if (!g.debug_data.empty()) out += " \"" + g.debug_data + "\"";
    return out;
}

// Why the stream of `state` has no complete response.
std::string failure_of(const h2_stream_state& state, const h2_goaway& g) {
    if (!state.failure.empty()) return state.failure;
    const bool not_taken = g.received && state.id > g.last_stream_id;
    if (not_taken) {
        return "the server ended the connection with " + goaway_text(g) +
               " before taking the request";
    }
    if (state.closed && state.reset_by_server) {
        return "the server reset the stream: RST_STREAM " + h2_error_name(state.error_code);
    }
    if (state.closed) {
        return "the stream was reset with " + h2_error_name(state.error_code) +
               ": the client found the response malformed";
    }
    std::string out = "the server closed the connection before the response was complete";
    if (g.received) out += " (after " + goaway_text(g) + ")";
    return out;
}

// A server without HTTP/2 answers the h2c preface in HTTP/1.1 (tern: 505): named as such
// rather than as the frames nghttp2 cannot parse.
void refuse_http1_answer(std::string_view first_bytes) {
    if (!first_bytes.starts_with("HTTP/1.")) return;
    const std::string_view line = first_bytes.substr(0, first_bytes.find('\r'));
    throw client_error(
        "the server answered the HTTP/2 preface (h2c with prior knowledge) in "
        "HTTP/1.x, not HTTP/2: '" +
        std::string(line.substr(0, 100)) + "': does the app serve HTTP/2 (app.http2)?");
}

}  // namespace

struct h2_connection::connection {
    explicit connection(stream s) : wire(std::move(s)) {}

    stream wire;
    h2_client_codec codec;
    bool received_any = false;  // the server has sent bytes on this connection
    bool ended = false;         // the server closed it, or its codec has ended
};

h2_connection::h2_connection(std::uint16_t port, bool tls) : port_(port), tls_(tls) {}
h2_connection::~h2_connection() = default;
h2_connection::h2_connection(h2_connection&& other) noexcept = default;
h2_connection& h2_connection::operator=(h2_connection&& other) noexcept = default;

void h2_connection::disconnect() noexcept { connection_.reset(); }

void h2_connection::open(clock::time_point deadline) {
    stream wire(port_, stream_options{tls_, tls_ ? "h2" : ""}, deadline);
    if (tls_ && wire.alpn() != "h2") {
        const std::string chosen = wire.alpn();
        throw client_error("the server did not choose h2 by ALPN (it chose " +
                           (chosen.empty() ? std::string("none") : chosen) +
                           "): does the app serve HTTP/2 (app.http2)?");
    }
    connection_ = std::make_unique<connection>(std::move(wire));
}

bool h2_connection::still_usable() {
    connection& c = *connection_;
    try {
        // What the server sent meanwhile (a PING, SETTINGS, a GOAWAY, its close) is taken now.
        std::array<char, 16384> chunk{};
        for (;;) {
            if (c.ended || c.codec.goaway().received || !c.codec.alive()) return false;
            const std::ptrdiff_t n = c.wire.receive_until(chunk.data(), chunk.size(), clock::now());
            if (n < 0) return true;
            if (n == 0) return false;
            c.codec.feed(chunk.data(), static_cast<std::size_t>(n));
        }
    } catch (const client_error&) {
        return false;
    }
}

void h2_connection::run(const std::vector<outgoing_request>& requests,
                        std::vector<h2_stream_state>& states, clock::time_point deadline) {
    connection& c = *connection_;
    const std::string authority = "127.0.0.1:" + std::to_string(port_);
    for (std::size_t i = 0; i < requests.size(); ++i) {
        states[i].index = i;
        c.codec.submit(requests[i], tls_ ? "https" : "http", authority, states[i]);
    }
    std::string out;
    std::array<char, 16384> chunk{};
    bool can_send = true;
    for (;;) {
        out.clear();
        c.codec.take_output(out);
        // A server that closed its reading side may still have sent what explains it (a
        // GOAWAY): read on until its close.
        if (can_send && !out.empty()) can_send = c.wire.send_all(out, deadline);
        const bool all_closed = std::all_of(states.begin(), states.end(),
                                            [](const h2_stream_state& s) { return s.closed; });
        if (all_closed) return;
        if (!c.codec.alive()) break;
        const std::size_t n = c.wire.receive(chunk.data(), chunk.size(), deadline);
        if (n == 0) break;
        if (!c.received_any) refuse_http1_answer(std::string_view(chunk.data(), n));
        c.received_any = true;
        c.codec.feed(chunk.data(), n);
    }
    c.ended = true;
}

std::vector<response> h2_connection::results(std::vector<h2_stream_state>& states, bool reused) {
    const bool ended = connection_->ended;
    const h2_goaway goaway = connection_->codec.goaway();
    const bool answered = std::any_of(states.begin(), states.end(),
                                      [](const h2_stream_state& s) { return s.received; });
    const bool none_taken = std::all_of(states.begin(), states.end(), [&](const auto& s) {
        return !goaway.received || s.id > goaway.last_stream_id;
    });
    const bool all_closed = std::all_of(states.begin(), states.end(),
                                        [](const h2_stream_state& s) { return s.closed; });
    // Streams left open point into `states`: the connection goes with them.
    if (ended || goaway.received || !all_closed) disconnect();
    // A reused connection the server closed before it answered anything: sent again.
    if (reused && !answered && (ended || goaway.received) && none_taken) {
        throw closed_before_response{};
    }
    std::vector<response> out;
    out.reserve(states.size());
    for (h2_stream_state& state : states) {
        if (!state.complete || !state.failure.empty()) {
            throw h2_stream_error(state.index, failure_of(state, goaway));
        }
        state.answer.protocol = "HTTP/2";
        out.push_back(std::move(state.answer));
    }
    return out;
}

std::vector<response> h2_connection::exchange(const std::vector<outgoing_request>& requests,
                                              clock::time_point deadline) {
    for (int attempt = 0;; ++attempt) {
        bool reused = connection_ != nullptr;
        if (reused && !still_usable()) {
            disconnect();
            reused = false;
        }
        if (!connection_) open(deadline);
        std::vector<h2_stream_state> states(requests.size());
        try {
            run(requests, states, deadline);
            return results(states, reused);
        } catch (const closed_before_response&) {
            if (attempt > 0)
                throw client_error("the server closed the connection without answering");
        } catch (const h2_stream_error&) {
            throw;  // results() kept the connection when it can serve on
        } catch (...) {
            disconnect();
            throw;
        }
    }
}

}  // namespace tern::testing::detail
