#pragma once
// The event-stream format of the HTML standard ("Server-sent events", section 9.2.6, the
// interpretation of an event stream), transport-free: bytes in, events out. sse_reader feeds
// it what the connection delivers, de-chunked.

#include <tern/testing.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tern::testing::detail {

/// Parses an event stream as EventSource does: lines end at CRLF, LF or CR; `data:` lines are
/// joined with "\n"; `event:` names the type ("message" when none); `id:` sets the stream's
/// last event id when its event is dispatched, even one without data (an id holding a NUL is
/// ignored), and it is kept for later events; `retry:` of
/// ASCII digits sets the reconnection time; comments (`:`), unknown fields and events without
/// data are skipped. A leading byte order mark is dropped.
class sse_parser {
public:
    /// A parser whose last event id starts as `last_event_id` (what a reconnect sent).
    explicit sse_parser(std::string last_event_id = {});

    /// Appends bytes of the stream. Throws client_error past 256 MiB not yet parsed.
    void feed(std::string_view bytes);
    /// The next complete event, parsing no further than its blank line (so last_event_id()
    /// and retry() are those after it); std::nullopt when the bytes fed so far hold none.
    std::optional<sse_event> next();
    /// Starts a new stream (a reconnect): drops what was fed and the event being built, and
    /// keeps the last event id and the retry time.
    void restart();

    /// The stream's last event id so far.
    const std::string& last_event_id() const noexcept { return last_event_id_; }
    /// The last `retry:` value, 0 when none.
    std::chrono::milliseconds retry() const noexcept { return retry_; }

private:
    // Handles one line (without its end); true when it dispatched an event into `out`.
    bool line(std::string_view text, std::optional<sse_event>& out);

    std::string pending_;    // fed and not yet parsed
    bool at_start_ = true;   // no byte of this stream parsed yet (a BOM may come)
    bool skip_lf_ = false;   // the last line ended at a CR: a LF right after it belongs to it
    std::string data_;       // the data buffer of the event being built: each line + "\n"
    std::string type_;       // its event type buffer
    std::string id_buffer_;  // the last id: of the stream, set as its last event id at a dispatch
    std::string last_event_id_;
    std::chrono::milliseconds retry_{0};
};

}  // namespace tern::testing::detail
