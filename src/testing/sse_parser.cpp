#include "testing/sse_parser.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

namespace tern::testing::detail {

namespace {

// What sse_reader holds unparsed at most: a server that never ends a line cannot make a test
// eat all memory.
constexpr std::size_t max_pending = 256 * 1024 * 1024;

constexpr std::string_view byte_order_mark = "\xEF\xBB\xBF";

}  // namespace

sse_parser::sse_parser(std::string last_event_id)
    : id_buffer_(last_event_id), last_event_id_(std::move(last_event_id)) {}

void sse_parser::feed(std::string_view bytes) {
    if (pending_.size() + bytes.size() > max_pending) {
        throw client_error("the event stream has a line over 256 MiB");
    }
    pending_ += bytes;
}

void sse_parser::restart() {
    pending_.clear();
    at_start_ = true;
    skip_lf_ = false;
    data_.clear();
    type_.clear();
    id_buffer_ = last_event_id_;  // an id of an event the stream did not finish is dropped
}

std::optional<sse_event> sse_parser::next() {
    if (at_start_) {
        // One leading byte order mark is dropped; wait for three bytes to tell.
        const std::size_t n = std::min(pending_.size(), byte_order_mark.size());
        if (std::string_view(pending_).substr(0, n) == byte_order_mark.substr(0, n)) {
            if (n < byte_order_mark.size()) return std::nullopt;
            pending_.erase(0, n);
        }
        at_start_ = pending_.empty();
    }
    std::optional<sse_event> out;
    std::size_t pos = 0;
    while (!out) {
        if (skip_lf_ && pos < pending_.size()) {
            if (pending_[pos] == '\n') ++pos;
            skip_lf_ = false;
        }
        const std::size_t end = pending_.find_first_of("\r\n", pos);
        if (end == std::string::npos) break;
        line(std::string_view(pending_).substr(pos, end - pos), out);
        skip_lf_ = pending_[end] == '\r';
        pos = end + 1;
    }
    pending_.erase(0, pos);
    return out;
}

bool sse_parser::line(std::string_view text, std::optional<sse_event>& out) {
    if (text.empty()) {
        // Dispatch (HTML "dispatch the event"): the last event id is set first, even for an
        // event without data, which is then dropped.
        last_event_id_ = id_buffer_;
        if (data_.empty()) {
            type_.clear();
            return false;
        }
        data_.pop_back();  // the "\n" after the last data line
        out = sse_event{last_event_id_, type_.empty() ? "message" : std::move(type_),
                        std::move(data_)};
        data_.clear();
        type_.clear();
        return true;
    }
    if (text.front() == ':') return false;  // a comment
    const std::size_t colon = text.find(':');
    const std::string_view field = text.substr(0, colon);
    std::string_view value;
    if (colon != std::string_view::npos) {
        value = text.substr(colon + 1);
        if (value.starts_with(' ')) value.remove_prefix(1);
    }
    if (field == "event") {
        type_ = value;
    } else if (field == "data") {
        data_.append(value).push_back('\n');
    } else if (field == "id") {
        if (value.find('\0') == std::string_view::npos) id_buffer_ = value;
    } else if (field == "retry") {
        std::size_t ms = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
        if (!value.empty() && ec == std::errc{} && end == value.data() + value.size() &&
            std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
            retry_ = std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(ms));
        }
    }
    return false;
}

}  // namespace tern::testing::detail
