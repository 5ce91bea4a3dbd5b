#pragma once
// The request bodies one multiplexed connection (HTTP/2, HTTP/3) holds in memory, whatever
// its stream limit (docs/http2.md and docs/http3.md, "What one connection may hold"). A body
// under spool_body_above stays in memory until its stream closes, and a client may send as
// much of it as the flow-control windows allow; windows given back as bytes arrive would let
// one connection hold max_concurrent_streams x spool_body_above (100 MiB by default). So a
// stream's window is given back as its bytes arrive only while the connection's bodies in
// memory are within `budget` (`max_body_memory`); past it, the bytes are owed their window
// until bodies are let go (a stream closes, a body spools). Past the budget a stream's body
// grows by no more than the window it already had: the connection holds at most the budget,
// a stream window per stream still sending, and the one body that passed it.
//
// One stream is never held back: the body still arriving that holds the most memory (the
// nearest to its end, or to spooling) gets its window while the bodies of complete requests
// (their handlers' work) are within the budget. So a body larger than the window completes
// even when the others hold the budget, a client's uploads finish one after another instead
// of waiting on each other, and a body arriving slowly in small pieces (a long-lived stream)
// does not hold the others back. The connection's window is always given back at once: it
// is shared, and bytes owed on one stream must not stop the one that may go on.
//
// A protocol's stream provides `closed()`, `receiving()` (its body still arriving),
// `body_in_memory()`, `window_owed()` and `give_window()` (gives back what it owes); its
// connection keeps its streams in a map of ID to shared_ptr. Nothing here runs for a request
// without a body.

#include <cstdint>

namespace tern::detail {

/// What a connection's streams hold of request bodies in memory.
struct body_tally {
    std::uint64_t held = 0;       // body bytes in memory, every open stream's
    std::uint64_t complete = 0;   // of those, requests no longer arriving
    const void* front = nullptr;  // the stream never held back (see above)
    bool owing = false;           // some stream's window is held back
};

template <class Streams>
body_tally tally_bodies(const Streams& streams) {
    body_tally t;
    std::uint64_t front_bytes = 0;
    std::int64_t front_id = 0;
    for (const auto& [id, stream] : streams) {
        if (stream->closed()) continue;
        const std::uint64_t bytes = stream->body_in_memory();
        t.held += bytes;
        if (stream->window_owed() != 0) t.owing = true;
        if (!stream->receiving()) {
            t.complete += bytes;
            continue;
        }
        const auto this_id = static_cast<std::int64_t>(id);
        if (t.front == nullptr || bytes > front_bytes ||
            (bytes == front_bytes && this_id < front_id)) {
            t.front = stream.get();
            front_bytes = bytes;
            front_id = this_id;
        }
    }
    return t;
}

/// Whether `stream`, whose body just grew in memory, gets the window of those bytes back now.
template <class Stream, class Streams>
bool may_take_more(const Stream& stream, const Streams& streams, std::uint64_t budget) {
    const body_tally t = tally_bodies(streams);
    return t.held <= budget || (t.front == &stream && t.complete <= budget);
}

/// What settle_body_windows did: whether it gave some window back, and whether some stream
/// still owes.
struct body_windows {
    bool given = false;
    bool owing = false;
};

/// Gives back the windows owed that the connection's bodies now allow (after a stream
/// closed, a body spooled or ended).
template <class Streams>
body_windows settle_body_windows(const Streams& streams, std::uint64_t budget) {
    const body_tally t = tally_bodies(streams);
    body_windows done;
    if (!t.owing) return done;
    for (const auto& [id, stream] : streams) {
        if (stream->closed() || stream->window_owed() == 0) continue;
        // A body no longer arriving does not grow: what it owes is given back.
        if (t.held <= budget || !stream->receiving() ||
            (t.front == stream.get() && t.complete <= budget)) {
            stream->give_window();
            done.given = true;
        } else {
            done.owing = true;
        }
    }
    return done;
}

/// A connection's side of the rule: whether some stream's window is held back, so that a
/// connection none of whose streams was held back settles with one branch.
class body_windows_owed {
public:
    /// may_take_more, remembering a stream held back.
    template <class Stream, class Streams>
    bool may_take_more(const Stream& stream, const Streams& streams, std::uint64_t budget) {
        if (detail::may_take_more(stream, streams, budget)) return true;
        owing_ = true;
        return false;
    }
    /// settle_body_windows when some stream owes: whether some window was given back.
    template <class Streams>
    bool settle(const Streams& streams, std::uint64_t budget) {
        if (!owing_) return false;
        const body_windows done = settle_body_windows(streams, budget);
        owing_ = done.owing;
        return done.given;
    }

private:
    bool owing_ = false;
};

}  // namespace tern::detail
