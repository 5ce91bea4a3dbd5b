#pragma once
// The order of the client's stream ids (RFC 9113 5.1.1): a HEADERS frame that opens a
// stream must carry an id above every id the client has opened; a lower one is a
// connection error (PROTOCOL_ERROR). nghttp2 only ignores such a header block, since it
// does not remember every stream it has seen. A HEADERS frame with a lower id is
// legitimate in two cases: trailers on a stream still open (nghttp2 takes them), and
// trailers the client sent on a stream the server has just reset, before it saw the reset
// (RFC 9113 5.1, "closed": ignored). The resets are remembered for the last few streams
// only, which 5.1 allows ("MAY choose to limit the period"). Transport-free.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tern::detail {

class stream_order {
public:
    enum class verdict {
        opens,         ///< a new stream: its id is above every id seen
        late,          ///< an open stream, or one the server reset recently: nghttp2 decides
        out_of_order,  ///< a lower id on a stream neither open nor recently reset
    };

    /// Remembers the last `remembered` streams the server reset (at least one).
    explicit stream_order(std::size_t remembered);

    /// A HEADERS frame from the client on stream `id`; `open`: the stream is open.
    verdict on_headers(std::int32_t id, bool open);
    /// The server reset stream `id` (or ended it before the client's side ended).
    void on_reset(std::int32_t id);

private:
    std::int32_t highest_ = 0;
    std::vector<std::int32_t> resets_;  // a ring of the latest resets
    std::size_t next_ = 0;
};

}  // namespace tern::detail
