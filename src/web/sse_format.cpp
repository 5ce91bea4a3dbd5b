#include "web/sse_format.hpp"

#include <string>

namespace tern::detail {

namespace {

// Appends `prefix` + each line of `text` + "\n"; CRLF, CR and LF all end a line (the
// parser on the other side accepts the three, 9.2.5), so none can open a new field. A final
// line break gives a last, empty line: the browser joins the lines with LF, so the text
// arrives as it was sent (CR and CRLF become LF).
void append_lines(std::string& out, std::string_view prefix, std::string_view text) {
    std::size_t start = 0;
    for (;;) {
        const std::size_t end = text.find_first_of("\r\n", start);
        out.append(prefix);
        out.append(text.substr(start, end == std::string_view::npos ? end : end - start));
        out.push_back('\n');
        if (end == std::string_view::npos) return;
        start = end + 1;
        if (text[end] == '\r' && start < text.size() && text[start] == '\n') ++start;
    }
}

}  // namespace

bool sse_field_ok(std::string_view value, bool is_id) noexcept {
    for (const char c : value) {
        if (c == '\r' || c == '\n' || (is_id && c == '\0')) return false;
    }
    return true;
}

void append_sse_event(std::string& out, std::string_view data, std::string_view event,
                      std::string_view id) {
    if (!event.empty()) {
        out.append("event: ");
        out.append(event);
        out.push_back('\n');
    }
    if (!id.empty()) {
        out.append("id: ");
        out.append(id);
        out.push_back('\n');
    }
    append_lines(out, "data: ", data);
    out.push_back('\n');
}

void append_sse_comment(std::string& out, std::string_view text) {
    append_lines(out, ": ", text);
    out.push_back('\n');
}

void append_sse_retry(std::string& out, std::chrono::milliseconds delay) {
    out.append("retry: ");
    out.append(std::to_string(delay.count() < 0 ? 0 : delay.count()));
    out.append("\n\n");
}

}  // namespace tern::detail
