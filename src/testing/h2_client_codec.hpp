#pragma once
// The client side of one HTTP/2 connection (RFC 9113) as nghttp2's client session keeps it:
// requests submitted as streams, frames taken out to send and received bytes fed in, each
// stream's response collected as its frames arrive. No I/O: h2_connection moves the bytes.

#include "testing/outgoing.hpp"

#include <nghttp2/nghttp2.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tern::testing::detail {

/// One request's stream and what has come of it.
struct h2_stream_state {
    std::size_t index = 0;         // the request's place in the exchange
    std::int32_t id = 0;           // the stream id
    std::string_view body;         // the part of the request body not yet sent
    response answer;               // as it arrives (HEADERS, DATA, trailers)
    bool received = false;         // any response field arrived
    bool complete = false;         // the server's END_STREAM arrived: the response is whole
    bool closed = false;           // nghttp2 closed the stream
    bool reset_by_server = false;  // with the server's RST_STREAM
    std::uint32_t error_code = 0;  // the close's error code (RST_STREAM's, or nghttp2's)
    std::string failure;           // the client's own reason to reset it (a body over the limit)
};

/// A GOAWAY the server sent.
struct h2_goaway {
    bool received = false;
    std::uint32_t error_code = 0;
    std::int32_t last_stream_id = 0;
    std::string debug_data;  // its opaque data, printable bytes only
};

/// nghttp2's client session. Not movable: nghttp2 holds a pointer to it.
class h2_client_codec {
public:
    /// A new codec; the client's SETTINGS (no push, a 16 MiB stream window) are queued.
    /// Throws client_error when nghttp2 cannot make one.
    h2_client_codec();
    ~h2_client_codec();
    h2_client_codec(const h2_client_codec&) = delete;
    h2_client_codec& operator=(const h2_client_codec&) = delete;

    /// Submits `request` as a new stream with `:scheme` `scheme` and `:authority`
    /// `authority`; `state` (its answer and progress) must stay in place until the stream
    /// closes or the codec goes.
    void submit(const outgoing_request& request, std::string_view scheme,
                std::string_view authority, h2_stream_state& state);
    /// Appends the frames nghttp2 has ready to send to `out`. Throws client_error when it
    /// fails.
    void take_output(std::string& out);
    /// Feeds bytes the server sent. Throws client_error naming nghttp2's error for bytes
    /// that end the connection.
    void feed(const char* data, std::size_t size);
    /// True while the codec has anything left to read or send.
    bool alive() const;
    /// The server's GOAWAY, if one came.
    const h2_goaway& goaway() const noexcept { return goaway_; }
    /// Streams closed so far.
    std::size_t closed_streams() const noexcept { return closed_; }

private:
    static int on_header(nghttp2_session* session, const nghttp2_frame* frame,
                         const std::uint8_t* name, std::size_t name_length,
                         const std::uint8_t* value, std::size_t value_length, std::uint8_t flags,
                         void* user_data);
    static int on_frame(nghttp2_session* session, const nghttp2_frame* frame, void* user_data);
    static int on_data(nghttp2_session* session, std::uint8_t flags, std::int32_t stream_id,
                       const std::uint8_t* data, std::size_t length, void* user_data);
    static int on_close(nghttp2_session* session, std::int32_t stream_id, std::uint32_t error_code,
                        void* user_data);

    nghttp2_session* session_ = nullptr;
    h2_goaway goaway_;
    std::size_t closed_ = 0;
};

/// "PROTOCOL_ERROR (0x1)": an HTTP/2 error code's name and value (RFC 9113 section 7).
std::string h2_error_name(std::uint32_t code);

}  // namespace tern::testing::detail
