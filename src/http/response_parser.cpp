#include "http/response_parser.hpp"

#include "http/header_values.hpp"
#include "http/message_head.hpp"
#include "http/request.hpp"
#include "http/token.hpp"

#include <llhttp.h>

namespace tern::detail {

namespace {

enum class response_phase {
    idle,       // no byte of the next head yet (empty lines may come first)
    head,       // inside a head
    head_done,  // paused after a head: an interim one, or the final one before its body
    body,       // the final head was reported; its body (or its end) follows
    complete,   // paused after the final response's end
};

head_limits head_limits_of(const response_limits& l) noexcept {
    return {l.max_line_size, l.max_header_size, l.max_header_count};
}

}  // namespace

std::string_view describe(response_error e) noexcept {
    switch (e) {
        case response_error::none:
            return "no error";
        case response_error::malformed:
            return "malformed response";
        case response_error::line_too_long:
            return "response status line too long";
        case response_error::header_too_large:
            return "response header too large";
        case response_error::too_many_headers:
            return "too many response header fields";
        case response_error::body_too_large:
            return "response body too large";
        case response_error::bad_framing:
            return "response body framing is invalid";
        case response_error::truncated:
            return "connection closed before the response ended";
        case response_error::chunk_extension_too_long:
            return "response chunk extensions too long";
    }
    return "unknown response error";
}

struct response_parser::state {
    llhttp_t parser{};
    response_limits limits;
    response_head resp;
    // The status line's and header block's bytes, collected into resp.storage (the reason
    // phrase first, then the fields) and counted against the limits as they arrive.
    message_head head{head_limits_of(limits)};
    std::string body;
    std::uint64_t body_bytes = 0;
    response_phase stage = response_phase::idle;
    response_error failure = response_error::none;
    bool paused = false;        // llhttp returned HPE_PAUSED; resume before the next execute
    bool head_request = false;  // the request was HEAD: no body follows any final head
    bool interim = false;       // the head being parsed or just reported is a 1xx
    bool keep_alive = false;
    bool interim_close = false;  // an interim head of this response said the connection ends
    bool has_transfer_encoding = false;
    std::size_t reason_len = 0;
    // Empty lines skipped before a head: counted as part of its status line, so a peer
    // cannot send them without bound, and the count does not depend on how reads split them.
    std::size_t leading = 0;

    explicit state(const response_limits& l) : limits(l) {
        llhttp_init(&parser, HTTP_RESPONSE, &settings());
        parser.data = this;
    }

    static state& of(llhttp_t* p) { return *static_cast<state*>(p->data); }

    int fail(response_error e) {
        failure = e;
        return -1;
    }

    // 0 when the head is within its limits, else the failure (-1) for the limit it broke.
    int check(head_limit l) { return l == head_limit::none ? 0 : fail(limit_error(l)); }

    static response_error limit_error(head_limit l) noexcept {
        switch (l) {
            case head_limit::line_too_long:
                return response_error::line_too_long;
            case head_limit::header_too_large:
                return response_error::header_too_large;
            case head_limit::too_many_headers:
                return response_error::too_many_headers;
            case head_limit::none:  // not a failure; check() does not ask
            case head_limit::chunk_extension_too_long:
                break;
        }
        return response_error::chunk_extension_too_long;
    }

    // Forgets the response: its head, its body and how it ended.
    void reset_response() noexcept {
        resp.status = 0;
        resp.version_major = resp.version_minor = 1;
        resp.reason = {};
        resp.headers.clear();
        resp.storage.clear();
        head.clear();
        body.clear();
        body_bytes = 0;
        interim = keep_alive = interim_close = has_transfer_encoding = false;
        reason_len = leading = 0;
    }

    // ---- llhttp callbacks ------------------------------------------------------------

    // A head begins: after expect(), or after an interim head, whose views end here.
    static int on_message_begin(llhttp_t* p) {
        auto& s = of(p);
        s.resp.headers.clear();
        s.resp.storage.clear();
        s.resp.reason = {};
        s.head.clear();
        s.head.skipped(s.leading);
        s.leading = 0;
        s.reason_len = 0;
        s.interim = s.has_transfer_encoding = false;
        s.stage = response_phase::head;
        return 0;
    }

    static int on_version(llhttp_t* p, const char* at, std::size_t len) {
        auto& s = of(p);
        // The line ends at least after the status code: llhttp takes exactly one SP and
        // three digits after the version. A reason phrase moves the end further.
        return s.check(s.head.end_line_at(s.head.pos(at, len) + 4));
    }

    static int on_version_complete(llhttp_t* p) {
        return p->http_major == 1 ? 0 : of(p).fail(response_error::malformed);
    }

    static int on_status(llhttp_t* p, const char* at, std::size_t len) {
        auto& s = of(p);
        s.reason_len += len;
        if (const int rc = s.check(s.head.line_part(s.resp.storage, at, len)); rc != 0) return rc;
        return s.check(s.head.end_line_at(s.head.pos(at, len)));
    }

    static int on_status_complete(llhttp_t* p) {
        of(p).head.line_complete();
        return 0;
    }

    // Fields after a chunked body are trailers: counted, not kept.
    static int on_header_field(llhttp_t* p, const char* at, std::size_t len) {
        auto& s = of(p);
        return s.check(s.head.field_name(s.resp.storage, at, len, s.stage == response_phase::body));
    }

    static int on_header_value(llhttp_t* p, const char* at, std::size_t len) {
        auto& s = of(p);
        return s.check(
            s.head.field_value(s.resp.storage, at, len, s.stage == response_phase::body));
    }

    static int on_header_value_complete(llhttp_t* p) {
        auto& s = of(p);
        if (s.stage == response_phase::body) {
            s.head.trailer_complete();
            return 0;
        }
        if (iequals(s.head.field_complete(s.resp.storage), "transfer-encoding"))
            s.has_transfer_encoding = true;
        return 0;
    }

    static int on_headers_complete(llhttp_t* p) {
        auto& s = of(p);
        s.build_views();
        s.stage = response_phase::head_done;
        const int status = p->status_code;
        // llhttp takes three digits; "099" and "999" are not status codes (RFC 9110 15: all
        // valid ones are within 100 to 599). What a client would do with one is undefined, and
        // a relay cannot pass it on.
        if (status < 100 || status > 599) return s.fail(response_error::malformed);
        // The client asks for no upgrade, so a switch of protocols is not an answer it can
        // read (RFC 9110 15.2.2: a server switches only when the request asked it to).
        if (status == 101) return s.fail(response_error::malformed);
        s.interim = status < 200;
        // RFC 9112 6.3: responses to HEAD, 1xx, 204 and 304 end with their head, whatever
        // their fields say. llhttp knows some of these cases, not all (a 1xx other than 100,
        // 102 and 103 with a Content-Length, HEAD): the flag it sets itself when on_headers
        // complete returns 1, which it cannot do here, since this callback returns
        // HPE_PAUSED.
        if (s.interim || status == 204 || status == 304 || s.head_request) {
            p->flags |= F_SKIPBODY;
        } else {
            if (s.has_transfer_encoding) {
                if (const int rc = s.check_transfer_encoding(); rc != 0) return rc;
            }
            if ((p->flags & F_CONTENT_LENGTH) != 0 && p->content_length > s.limits.max_body_size) {
                return s.fail(response_error::body_too_large);
            }
        }
        // Stop here so the caller sees the head before any body byte.
        return HPE_PAUSED;
    }

    static int on_body(llhttp_t* p, const char* at, std::size_t len) {
        auto& s = of(p);
        if (len > s.limits.max_body_size - s.body_bytes) {
            return s.fail(response_error::body_too_large);
        }
        s.body_bytes += len;
        s.body.append(at, len);
        return 0;
    }

    static int on_chunk_extension(llhttp_t* p, const char*, std::size_t len) {
        auto& s = of(p);
        return s.check(s.head.chunk_extension(len));
    }

    static int on_message_complete(llhttp_t* p) {
        auto& s = of(p);
        // An interim response's end is not reported: the final head follows. llhttp would
        // take a close in it (Connection: close, HTTP/1.0) for the connection's end and
        // refuse the final head; that head is read, and the close applies to it.
        if (s.interim) {
            s.interim_close = s.interim_close || llhttp_should_keep_alive(p) == 0;
            p->flags = static_cast<std::uint16_t>((p->flags & ~F_CONNECTION_CLOSE) |
                                                  F_CONNECTION_KEEP_ALIVE);
            s.stage = response_phase::idle;
            return 0;
        }
        s.stage = response_phase::complete;
        s.keep_alive = !s.interim_close && llhttp_should_keep_alive(p) != 0;
        return HPE_PAUSED;
    }

    static const llhttp_settings_t& settings() {
        static const llhttp_settings_t instance = [] {
            llhttp_settings_t st;
            llhttp_settings_init(&st);
            st.on_message_begin = on_message_begin;
            st.on_version = on_version;
            st.on_version_complete = on_version_complete;
            st.on_status = on_status;
            st.on_status_complete = on_status_complete;
            st.on_header_field = on_header_field;
            st.on_header_value = on_header_value;
            st.on_header_value_complete = on_header_value_complete;
            st.on_headers_complete = on_headers_complete;
            st.on_body = on_body;
            st.on_chunk_extension_name = on_chunk_extension;
            st.on_chunk_extension_value = on_chunk_extension;
            st.on_message_complete = on_message_complete;
            return st;
        }();
        return instance;
    }

    // ---- checks and views ------------------------------------------------------------

    void build_views() {
        resp.status = parser.status_code;
        resp.version_major = parser.http_major;
        resp.version_minor = parser.http_minor;
        resp.reason = {resp.storage.data(), reason_len};
        head.build_fields(resp.storage, resp.headers, head.field_count());
    }

    // RFC 9112 6.1/6.3: chunked must be the final coding, once, and HTTP/1.0 has no
    // transfer codings (a recipient treats the framing as faulty). Codings before the final
    // chunked are allowed: the body is de-chunked and left in them ("gzip, chunked" gives
    // gzip bytes), for the caller to decode. Without a final chunked the body would run to
    // the close (RFC 9112 6.3 item 4), which a client cannot tell from a truncated one, so
    // that is refused too; so is an empty list element, as the request parser refuses it.
    int check_transfer_encoding() {
        bool chunked_last = false, empty_element = false;
        int chunked_count = 0;
        for (const auto& h : resp.headers) {
            if (!iequals(h.name, "transfer-encoding")) continue;
            for_each_element(h.value, [&](std::string_view coding) {
                if (coding.empty()) {
                    empty_element = true;
                    return false;
                }
                chunked_last = iequals(coding, "chunked");
                if (chunked_last) ++chunked_count;
                return true;
            });
            if (empty_element) return fail(response_error::bad_framing);
        }
        if (parser.http_minor == 0 || !chunked_last || chunked_count > 1) {
            return fail(response_error::bad_framing);
        }
        return 0;
    }

    // Names the error llhttp stopped with when no callback named it.
    static response_error classify(llhttp_errno_t rc) noexcept {
        switch (rc) {
            case HPE_INVALID_CONTENT_LENGTH:     // not a number, or beside Transfer-Encoding
            case HPE_UNEXPECTED_CONTENT_LENGTH:  // a second Content-Length
            case HPE_INVALID_TRANSFER_ENCODING:  // Transfer-Encoding beside Content-Length
                return response_error::bad_framing;
            default:
                return response_error::malformed;
        }
    }

    // Skips the empty lines before a head; returns how many bytes were skipped.
    std::size_t skip_empty_lines(std::string_view data) {
        std::size_t i = 0;
        while (i < data.size() && (data[i] == '\r' || data[i] == '\n')) ++i;
        leading += i;
        if (leading > limits.max_line_size) failure = response_error::line_too_long;
        return i;
    }

    result execute(std::string_view data, std::size_t off);
};

// Runs llhttp over `data` from `off`, resuming it first when it paused.
response_parser::result response_parser::state::execute(std::string_view data, std::size_t off) {
    if (paused) {
        llhttp_resume(&parser);
        paused = false;
    }
    if (stage == response_phase::head_done && !interim) stage = response_phase::body;
    const char* begin = data.data() + off;
    const std::size_t len = data.size() - off;
    head.start_chunk(begin);
    const llhttp_errno_t rc = llhttp_execute(&parser, begin, len);
    if (rc == HPE_OK) {
        if (stage == response_phase::head && check(head.chunk_ended_in_head(len, 1)) != 0) {
            return {event::error, data.size()};
        }
        return {event::need_more, data.size()};
    }
    if (rc == HPE_PAUSED && failure == response_error::none) {
        paused = true;
        const auto used = static_cast<std::size_t>(llhttp_get_error_pos(&parser) - data.data());
        return {stage == response_phase::complete ? event::complete : event::head, used};
    }
    if (failure == response_error::none) failure = classify(rc);
    return {event::error, data.size()};
}

response_parser::response_parser(const response_limits& limits)
    : state_(std::make_unique<state>(limits)) {}

response_parser::~response_parser() = default;

void response_parser::expect(bool head_request) noexcept {
    auto& s = *state_;
    s.head_request = head_request;
    if (s.failure != response_error::none) return;
    // In the middle of a response the bytes that follow are not a response's start.
    if (s.stage != response_phase::idle && s.stage != response_phase::complete) {
        s.failure = response_error::malformed;
        return;
    }
    s.reset_response();
    s.stage = response_phase::idle;
}

response_parser::result response_parser::feed(std::string_view data) {
    auto& s = *state_;
    if (s.failure != response_error::none) return {event::error, 0};
    // The response was reported complete; the next one starts after expect().
    if (s.stage == response_phase::complete) return {event::complete, 0};
    std::size_t off = 0;
    if (s.stage == response_phase::idle || (s.stage == response_phase::head_done && s.interim)) {
        off = s.skip_empty_lines(data);
        if (s.failure != response_error::none) return {event::error, off};
        if (off == data.size()) return {event::need_more, off};
    }
    return s.execute(data, off);
}

response_parser::result response_parser::finish() {
    auto& s = *state_;
    // After a final head, llhttp learns what follows it (the end, for a response without a
    // body; a body otherwise) only when it runs again.
    if (s.stage == response_phase::head_done && !s.interim && s.failure == response_error::none) {
        static constexpr std::string_view nothing = "";  // an empty input that points somewhere
        if (const auto r = s.execute(nothing, 0); r.what != event::need_more) return r;
    }
    if (s.failure != response_error::none) return {event::error, 0};
    if (s.stage == response_phase::complete) return {event::complete, 0};
    if (s.stage == response_phase::body) {
        // llhttp ends a body delimited by the close (calling on_message_complete) and
        // refuses the end of any other.
        const llhttp_errno_t rc = llhttp_finish(&s.parser);
        if (s.stage == response_phase::complete && (rc == HPE_OK || rc == HPE_PAUSED)) {
            return {event::complete, 0};
        }
    }
    s.failure = response_error::truncated;
    return {event::error, 0};
}

const response_head& response_parser::head() const noexcept { return state_->resp; }

std::string& response_parser::body() noexcept { return state_->body; }

std::uint64_t response_parser::body_bytes() const noexcept { return state_->body_bytes; }

bool response_parser::keep_alive() const noexcept {
    return state_->stage == response_phase::complete && state_->keep_alive;
}

response_error response_parser::error() const noexcept { return state_->failure; }

}  // namespace tern::detail
