#pragma once
// The text/event-stream format (HTML Living Standard, "Server-sent events", 9.2.5-9.2.6):
// events, comments and the retry field, appended to a buffer. Transport-free.

#include <chrono>
#include <string>
#include <string_view>

namespace tern::detail {

/// Whether `value` may be an event type (`is_id` false) or an id (`is_id` true): no CR or
/// LF (they would end the field), and for an id no NUL (browsers ignore such an id).
bool sse_field_ok(std::string_view value, bool is_id) noexcept;

/// Appends one event: `event:` and `id:` lines when not empty, then one `data:` line per
/// line of `data` (split at CRLF, CR or LF), then the blank line that dispatches it. The
/// caller checks `event` and `id` with sse_field_ok first.
void append_sse_event(std::string& out, std::string_view data, std::string_view event,
                      std::string_view id);
/// Appends a comment (one `:` line per line of `text`) and a blank line.
void append_sse_comment(std::string& out, std::string_view text);
/// Appends `retry: <milliseconds>` and a blank line.
void append_sse_retry(std::string& out, std::chrono::milliseconds delay);

}  // namespace tern::detail
