#include <tern/testing.hpp>

#include "testing/response_reader.hpp"
#include "testing/sse_parser.hpp"
#include "testing/stream.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <utility>

namespace tern::testing {

namespace {

// How much of a refusal's body goes into the error message.

bool has_field(const header_list& fields, std::string_view name) {
    return std::any_of(fields.begin(), fields.end(),
                       [name](const testing::header& h) { return detail::iequals(h.name, name); });
}

// True for `text/event-stream`, with or without parameters (HTML: the MIME type's essence).
bool is_event_stream(std::string_view content_type) {
    content_type = content_type.substr(0, content_type.find(';'));
    while (!content_type.empty() && (content_type.back() == ' ' || content_type.back() == '\t')) {
        content_type.remove_suffix(1);
    }
    return detail::iequals(content_type, "text/event-stream");
}

}  // namespace

struct sse_reader::impl {
    // How the body of the event stream is framed (RFC 9112 section 6.3).
    enum class framing { chunked, length, close };

    std::uint16_t port;
    std::string target;
    sse_options options;
    std::optional<detail::stream> connection;
    std::string buffer;  // received bytes not yet de-framed
    header_list head;
    framing framed_by = framing::close;
    std::size_t remaining = 0;  // of a Content-Length body
    bool ended = false;         // the server ended this stream
    detail::sse_parser parser;

    impl(std::uint16_t p, std::string t, sse_options o)
        : port(p), target(std::move(t)), options(std::move(o)), parser(options.last_event_id) {}

    std::string describe() const { return "tern::testing: GET " + target + " (event stream)"; }

    std::string request() const {
        std::string out = "GET " + target + " HTTP/1.1\r\n";
        auto field = [&out](std::string_view name, std::string_view value) {
            out.append(name).append(": ").append(value).append("\r\n");
        };
        if (!has_field(options.headers, "Host")) field("Host", "127.0.0.1:" + std::to_string(port));
        if (!has_field(options.headers, "Accept")) field("Accept", "text/event-stream");
        if (!has_field(options.headers, "Cache-Control")) field("Cache-Control", "no-cache");
        const std::string& last = parser.last_event_id();
        if (!last.empty()) field("Last-Event-ID", last);
        for (const testing::header& h : options.headers) {
            // The reader's own Last-Event-ID wins: it is the stream's, after a reconnect too.
            if (!last.empty() && detail::iequals(h.name, "Last-Event-ID")) continue;
            field(h.name, h.value);
        }
        out += "\r\n";
        return out;
    }

    void open() {
        close();
        const auto deadline = detail::clock::now() + options.timeout;
        try {
            connection.emplace(port, detail::http1_stream(options.tls), deadline);
            if (!connection->send_all(request(), deadline)) {
                throw client_error("the server closed the connection before the request was sent");
            }
            detail::head_result result = detail::read_head(*connection, buffer, deadline);
            const response& r = result.response;
            const auto type = r.header("Content-Type");
            if (r.status != 200 || !type || !is_event_stream(*type)) refused(result, deadline);
            head = r.headers;
            if (const auto coding = r.header("Transfer-Encoding")) {
                if (!detail::has_token(*coding, "chunked")) {
                    throw client_error("a Transfer-Encoding other than chunked: '" +
                                       std::string(*coding) + "'");
                }
                framed_by = framing::chunked;
            } else if (const auto length = r.header("Content-Length")) {
                const auto [end, ec] =
                    std::from_chars(length->data(), length->data() + length->size(), remaining);
                if (length->empty() || ec != std::errc{} ||
                    end != length->data() + length->size()) {
                    throw client_error("malformed Content-Length: '" + std::string(*length) + "'");
                }
                framed_by = framing::length;
            } else {
                framed_by = framing::close;
            }
            ended = false;
            parser.restart();
        } catch (const detail::closed_before_response&) {
            close();
            throw client_error(describe() + ": the server closed the connection without answering");
        } catch (const timeout_error& e) {
            close();
            throw timeout_error(describe() + ": " + e.what() + " (" +
                                std::to_string(options.timeout.count()) + " ms)");
        } catch (const client_error& e) {
            close();
            throw client_error(describe() + ": " + e.what());
        }
    }

    // Not an event stream: reads a little of the body for the message, then throws.
    [[noreturn]] void refused(detail::head_result& result, detail::clock::time_point deadline) {
        const response& r = result.response;
        std::string what = "not an event stream: " + std::to_string(r.status);
        if (!r.reason.empty()) what += " " + r.reason;
        const auto type = r.header("Content-Type");
        what += type ? ", Content-Type " + std::string(*type) : ", no Content-Type";
        what = detail::describe_refusal(*connection, buffer, result, std::move(what), deadline);
        throw client_error(what);
    }

    // Moves more of the body into the parser; sets `ended` at its end.
    void pull(detail::clock::time_point deadline) {
        switch (framed_by) {
            case framing::chunked: {
                std::string data;
                try {
                    if (!detail::read_chunk(*connection, buffer, data, deadline)) ended = true;
                } catch (const detail::closed_before_response&) {
                    ended = true;  // closed between two chunks
                }
                parser.feed(data);
                return;
            }
            case framing::length:
            case framing::close: {
                if (framed_by == framing::length && remaining == 0) {
                    ended = true;
                    return;
                }
                if (buffer.empty()) {
                    std::array<char, 16384> chunk{};
                    const std::size_t n = connection->receive(chunk.data(), chunk.size(), deadline);
                    if (n == 0) {
                        if (framed_by == framing::length) {
                            throw client_error(
                                "the server closed the connection in the middle of "
                                "the event stream's Content-Length body");
                        }
                        ended = true;
                        return;
                    }
                    buffer.assign(chunk.data(), n);
                }
                const std::size_t take = framed_by == framing::length
                                             ? std::min(remaining, buffer.size())
                                             : buffer.size();
                parser.feed(std::string_view(buffer).substr(0, take));
                buffer.erase(0, take);
                if (framed_by == framing::length) remaining -= take;
                return;
            }
        }
    }

    sse_event next() {
        if (!connection && !ended) throw client_error(describe() + ": the reader is closed");
        const auto deadline = detail::clock::now() + options.timeout;
        try {
            for (;;) {
                if (auto event = parser.next()) return std::move(*event);
                if (ended) {
                    close();
                    throw stream_ended(describe() + ": the server ended the stream");
                }
                pull(deadline);
            }
        } catch (const stream_ended&) {
            ended = true;
            throw;
        } catch (const timeout_error&) {
            throw timeout_error(describe() + ": no event within the timeout (" +
                                std::to_string(options.timeout.count()) + " ms)");
        } catch (const client_error& e) {
            close();
            throw client_error(describe() + ": " + e.what());
        }
    }

    void close() noexcept {
        connection.reset();
        buffer.clear();
    }
};

sse_reader::sse_reader(std::uint16_t port, std::string target, sse_options options)
    : impl_(std::make_unique<impl>(port, std::move(target), std::move(options))) {
    impl_->open();
}

sse_reader::~sse_reader() = default;
sse_reader::sse_reader(sse_reader&& other) noexcept = default;
sse_reader& sse_reader::operator=(sse_reader&& other) noexcept = default;

const header_list& sse_reader::headers() const noexcept { return impl_->head; }

sse_event sse_reader::next() { return impl_->next(); }

const std::string& sse_reader::last_event_id() const noexcept {
    return impl_->parser.last_event_id();
}

std::chrono::milliseconds sse_reader::retry() const noexcept { return impl_->parser.retry(); }

void sse_reader::reconnect() { impl_->open(); }

void sse_reader::close() noexcept {
    impl_->close();
    impl_->ended = false;
}

}  // namespace tern::testing
