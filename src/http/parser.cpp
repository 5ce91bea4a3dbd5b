#include "http/parser.hpp"

#include "http/buffers.hpp"
#include "http/error.hpp"
#include "http/header_values.hpp"
#include "http/host.hpp"
#include "http/message_head.hpp"
#include "http/spooled_body.hpp"
#include "http/token.hpp"

#include <llhttp.h>

#include <utility>

namespace tern::detail {

namespace {

enum class phase { idle, head, body, complete };

head_limits head_limits_of(const parser_limits& l) noexcept {
    return {l.max_line_size, l.max_header_size, l.max_header_count};
}

}  // namespace

struct request_parser::state {
    llhttp_t parser{};
    parser_limits limits;
    request req;
    // The request line's and header block's bytes, collected into req.storage and counted
    // against the limits as they arrive.
    message_head head{head_limits_of(limits)};
    phase stage = phase::idle;
    std::error_code failure;
    llhttp_errno_t paused = HPE_OK;  // how llhttp last paused, to resume it the same way

    bool line_ok = false;  // the request line arrived whole and is a valid HTTP/1.x line
    std::size_t empty_lines = 0;
    std::size_t method_len = 0, target_len = 0;
    // Fields that framing rules look at, noted as each field completes so the head is not
    // scanned again: how many Host fields and where the first is; whether Transfer-Encoding
    // or Expect appeared; how many Content-Type fields.
    std::size_t host_count = 0, host_field = 0, content_type_count = 0;
    bool has_transfer_encoding = false;
    bool has_expect = false;
    bool expect_continue = false;
    bool continue_was_sent = false;
    // This request's body limit (its route's, or max_body_size) and the bytes read so far.
    std::size_t body_limit = 0;
    std::size_t body_bytes = 0;
    // A streamed body (body_plan::streamed): its bytes are not kept but handed out a piece
    // per feed; the parser pauses after the head and after each chunk that gave a piece.
    bool streamed = false;
    bool head_pause = false;  // the pause is the streamed head's, not a piece's
    std::string_view piece;

    explicit state(const parser_limits& l) : limits(l) {
        llhttp_init(&parser, HTTP_REQUEST, &settings());
        parser.data = this;
        head.keep_trailers(&req.trailer_storage);
    }

    static state& of(llhttp_t* p) { return *static_cast<state*>(p->data); }

    int fail(detail::error e) {
        failure = e;
        return -1;
    }

    // 0 when the head is within its limits, else the failure (-1) for the limit it broke.
    int check(head_limit l) { return l == head_limit::none ? 0 : fail(limit_error(l)); }

    static detail::error limit_error(head_limit l) noexcept {
        switch (l) {
            case head_limit::line_too_long:
                return detail::error::line_too_long;
            case head_limit::header_too_large:
                return detail::error::header_too_large;
            case head_limit::too_many_headers:
                return detail::error::too_many_headers;
            case head_limit::none:  // not a failure; check() does not ask
            case head_limit::chunk_extension_too_long:
                break;
        }
        return detail::error::chunk_extension_too_long;
    }

    void reset_message() {
        req.clear();
        head.clear();
        stage = phase::idle;
        line_ok = false;
        empty_lines = 0;
        method_len = target_len = 0;
        host_count = host_field = content_type_count = 0;
        has_transfer_encoding = false;
        has_expect = false;
        expect_continue = false;
        continue_was_sent = false;
        streamed = false;
        head_pause = false;
        piece = {};
    }

    // ---- llhttp callbacks ------------------------------------------------------------

    static int on_message_begin(llhttp_t* p) {
        of(p).stage = phase::head;
        return 0;
    }

    static int on_method(llhttp_t* p, const char* at, std::size_t len) {
        auto& s = of(p);
        s.method_len += len;
        return s.check(s.head.line_part(s.req.storage, at, len));
    }

    static int on_url(llhttp_t* p, const char* at, std::size_t len) {
        auto& s = of(p);
        s.target_len += len;
        return s.check(s.head.line_part(s.req.storage, at, len));
    }

    static int on_version(llhttp_t* p, const char* at, std::size_t len) {
        auto& s = of(p);
        // Header bytes are counted from the end of the version (the line's CRLF included).
        return s.check(s.head.end_line_at(s.head.pos(at, len)));
    }

    static int on_version_complete(llhttp_t* p) {
        auto& s = of(p);
        s.head.line_complete();
        // RFC 9112 3: the parts are separated by exactly one SP. llhttp tolerates more; a
        // line longer than its parts plus two spaces and "HTTP/x.y" had extra whitespace.
        if (s.head.line_end() != s.method_len + s.target_len + 10) {
            return s.fail(detail::error::bad_request);
        }
        if (p->http_major != 1) return s.fail(detail::error::version_not_supported);
        s.line_ok = true;
        return 0;
    }

    // Fields after a chunked body are trailers: counted, and kept apart from the head.
    static int on_header_field(llhttp_t* p, const char* at, std::size_t len) {
        auto& s = of(p);
        return s.check(s.head.field_name(s.req.storage, at, len, s.stage == phase::body));
    }

    static int on_header_value(llhttp_t* p, const char* at, std::size_t len) {
        auto& s = of(p);
        return s.check(s.head.field_value(s.req.storage, at, len, s.stage == phase::body));
    }

    static int on_header_value_complete(llhttp_t* p) {
        auto& s = of(p);
        if (s.stage == phase::body) {
            s.head.trailer_complete();
            return 0;
        }
        const std::string_view name = s.head.field_complete(s.req.storage);
        switch (name.size()) {
            case 4:
                if (iequals(name, "host") && s.host_count++ == 0) {
                    s.host_field = s.head.field_count();
                }
                break;
            case 6:
                if (iequals(name, "expect")) s.has_expect = true;
                break;
            case 12:
                if (iequals(name, "content-type")) ++s.content_type_count;
                break;
            case 17:
                if (iequals(name, "transfer-encoding")) s.has_transfer_encoding = true;
                break;
            default:
                break;
        }
        return 0;
    }

    static int on_headers_complete(llhttp_t* p) {
        auto& s = of(p);
        s.stage = phase::body;
        s.build_views(s.head.field_count());
        // llhttp takes "GET /" without a version as HTTP/0.9; tern speaks 1.x only.
        if (p->http_major == 0) return s.fail(detail::error::bad_request);
        // RFC 9112 3.2: no form of request-target carries a fragment; "*" is for OPTIONS.
        if (s.req.target.find('#') != std::string_view::npos) {
            return s.fail(detail::error::bad_request);
        }
        if (s.req.target == "*" && p->method != HTTP_OPTIONS) {
            return s.fail(detail::error::bad_request);
        }
        if (p->method == HTTP_CONNECT) return s.fail(detail::error::method_not_supported);
        // RFC 9112 3.2: a client MUST send Host in HTTP/1.1; a server MUST answer 400 to a
        // request without one or with more than one.
        if (s.host_count > 1) return s.fail(detail::error::duplicate_host);
        if (s.host_count == 0 && p->http_minor == 1) return s.fail(detail::error::missing_host);
        if (s.host_count == 1 && !is_valid_host(s.req.headers[s.host_field - 1].value)) {
            return s.fail(detail::error::bad_host);
        }
        // RFC 9110 8.3: Content-Type is a singleton. Two of them leave the form reader (which
        // takes the first) and anything in front (which may take the last) disagreeing
        // about what the body is.
        if (s.content_type_count > 1) return s.fail(detail::error::duplicate_content_type);
        if (s.has_transfer_encoding) {
            if (int rc = s.check_transfer_encoding(); rc != 0) return rc;
        }
        const bool has_body = (p->flags & F_CHUNKED) != 0 ||
                              ((p->flags & F_CONTENT_LENGTH) != 0 && p->content_length > 0);
        s.body_limit = s.limits.max_body_size;
        s.body_bytes = 0;
        if (has_body && s.limits.planner != nullptr) {
            const body_plan plan = s.limits.planner->plan_body(s.req);
            s.body_limit = plan.limit;
            s.streamed = plan.streamed;
        }
        if ((p->flags & F_CONTENT_LENGTH) != 0 && p->content_length > s.body_limit) {
            return s.fail(detail::error::body_too_large);
        }
        // A body known to be large goes to its file from the first byte.
        if (!s.streamed && (p->flags & F_CONTENT_LENGTH) != 0 && s.limits.spool_body_above != 0 &&
            p->content_length > s.limits.spool_body_above) {
            if (const auto e = s.start_spool(p->content_length); e != detail::error{})
                return s.fail(e);
        }
        if (s.has_expect) {
            if (int rc = s.check_expect(has_body); rc != 0) return rc;
        }
        if (s.streamed) {
            // The handler runs before any body byte is read (event::head).
            s.head_pause = true;
            return HPE_PAUSED;
        }
        return 0;
    }

    static int on_body(llhttp_t* p, const char* at, std::size_t len) {
        auto& s = of(p);
        s.expect_continue = false;  // the client did not wait; no 100 Continue is owed
        if (s.body_bytes + len > s.body_limit) return s.fail(detail::error::body_too_large);
        s.body_bytes += len;
        if (s.streamed) {
            // One piece per feed: Content-Length gives one span per input, chunked one per
            // chunk, and the parser pauses after each chunk that gave one (on_chunk_complete).
            if (s.piece.empty()) {
                s.piece = {at, len};
            } else if (s.piece.data() + s.piece.size() == at) {
                s.piece = {s.piece.data(), s.piece.size() + len};
            } else {
                return s.fail(detail::error::bad_request);
            }
            return 0;
        }
        if (!s.req.spooled && s.limits.spool_body_above != 0 &&
            s.body_bytes > s.limits.spool_body_above) {
            if (const auto e = s.start_spool(0); e != detail::error{}) return s.fail(e);
        }
        if (s.req.spooled) {
            if (const auto e = error_of(s.req.spooled->append({at, len})); e != detail::error{}) {
                return s.fail(e);
            }
        } else {
            s.req.body.append(at, len);
        }
        return 0;
    }

    // Moves the body to a temporary file (what arrived so far first), with room for
    // `declared` bytes taken from the spool quota at once. Why it could not, else none.
    detail::error start_spool(std::uint64_t declared) {
        req.spooled = spooled_body::create(limits.spool_directory, limits.spool_space);
        if (!req.spooled) return detail::error::body_spool_failed;
        if (const auto e = error_of(req.spooled->reserve(declared)); e != detail::error{}) return e;
        if (const auto e = error_of(req.spooled->append(req.body)); e != detail::error{}) return e;
        clear_buffer(req.body);
        return detail::error{};
    }

    static detail::error error_of(spooled_body::outcome o) noexcept {
        switch (o) {
            case spooled_body::outcome::stored:
                return detail::error{};
            case spooled_body::outcome::full:
                return detail::error::body_spool_full;
            case spooled_body::outcome::failed:
                break;
        }
        return detail::error::body_spool_failed;
    }

    static int on_chunk_extension(llhttp_t* p, const char*, std::size_t len) {
        auto& s = of(p);
        return s.check(s.head.chunk_extension(len));
    }

    static int on_chunk_complete(llhttp_t* p) {
        // A streamed body's piece is handed out before the next chunk is parsed.
        return of(p).streamed && !of(p).piece.empty() ? HPE_PAUSED : 0;
    }

    static int on_message_complete(llhttp_t* p) {
        auto& s = of(p);
        if (s.req.spooled && !s.req.spooled->finish()) {
            return s.fail(detail::error::body_spool_failed);
        }
        s.stage = phase::complete;
        if (s.head.has_trailers()) s.head.build_trailers(s.req.trailers);
        s.req.keep_alive = llhttp_should_keep_alive(p) != 0;
        // Stop here so the caller answers this request before the next one is parsed.
        return HPE_PAUSED;
    }

    static const llhttp_settings_t& settings() {
        static const llhttp_settings_t instance = [] {
            llhttp_settings_t st;
            llhttp_settings_init(&st);
            st.on_message_begin = on_message_begin;
            st.on_method = on_method;
            st.on_url = on_url;
            st.on_version = on_version;
            st.on_version_complete = on_version_complete;
            st.on_header_field = on_header_field;
            st.on_header_value = on_header_value;
            st.on_header_value_complete = on_header_value_complete;
            st.on_headers_complete = on_headers_complete;
            st.on_body = on_body;
            st.on_chunk_extension_name = on_chunk_extension;
            st.on_chunk_extension_value = on_chunk_extension;
            st.on_chunk_complete = on_chunk_complete;
            st.on_message_complete = on_message_complete;
            return st;
        }();
        return instance;
    }

    // ---- checks and views ------------------------------------------------------------

    // Views over the request line and the first `field_count` fields.
    void build_views(std::size_t field_count) {
        const char* base = req.storage.data();
        req.method = {base, method_len};
        req.target = {base + method_len, target_len};
        const auto q = req.target.find('?');
        req.path = origin_path(req.target.substr(0, q));
        req.query = q == std::string_view::npos ? std::string_view{} : req.target.substr(q + 1);
        req.version_major = parser.http_major;
        req.version_minor = parser.http_minor;
        req.is_head = parser.method == HTTP_HEAD;
        head.build_fields(req.storage, req.headers, field_count);
    }

    // RFC 9112 3.2.2: a server must accept the absolute form (`http://host/path`) and route
    // by its path; the authority in it is not used for routing.
    static std::string_view origin_path(std::string_view target) noexcept {
        if (target.empty() || target.front() == '/' || target == "*") return target;
        const auto scheme_end = target.find("://");
        if (scheme_end == std::string_view::npos) return target;
        const auto scheme = target.substr(0, scheme_end);
        if (!iequals(scheme, "http") && !iequals(scheme, "https")) return target;
        const auto slash = target.find('/', scheme_end + 3);
        return slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
    }

    // RFC 9112 6.1/6.3: chunked must be the final coding, once; HTTP/1.0 has no transfer
    // codings. tern decodes chunked only, so any other coding is 501 (RFC 9112 6.1).
    // A field with no coding at all (empty, blank, "," alone) has no final chunked: the
    // length is undetermined (6.3), and Content-Length must not be used instead. An empty
    // list element anywhere ("chunked,", ", chunked") is refused too: RFC 9110 5.6.1.2 lets
    // a recipient ignore "a reasonable number" of them, and for the one field that frames
    // the body that number is zero, since peers that compare the value with "chunked"
    // (nginx, Go) would not read such a body as chunked.
    int check_transfer_encoding() {
        bool chunked_last = false, other = false;
        int chunked_count = 0;
        bool empty_element = false;
        for (const auto& h : req.headers) {
            if (!iequals(h.name, "transfer-encoding")) continue;
            for_each_element(h.value, [&](std::string_view coding) {
                if (coding.empty()) {
                    empty_element = true;
                    return false;
                }
                chunked_last = iequals(coding, "chunked");
                if (chunked_last) {
                    ++chunked_count;
                } else {
                    other = true;
                }
                return true;
            });
            if (empty_element) return fail(detail::error::bad_transfer_encoding);
        }
        if (parser.http_minor == 0) return fail(detail::error::bad_transfer_encoding);
        if (!chunked_last || chunked_count > 1) return fail(detail::error::bad_transfer_encoding);
        if (other) return fail(detail::error::unknown_transfer_coding);
        return 0;
    }

    // RFC 9110 10.1.1: Expect is a list whose only defined member is 100-continue (any
    // letter case). A member other than that is 417. Empty members are ignored (RFC 9110
    // 5.6.1.2), so an empty, blank or comma-only Expect asks for nothing, as in Apache httpd;
    // 100-continue named twice asks for one interim response.
    int check_expect(bool has_body) {
        bool wants_continue = false, other = false;
        for_each_member(req.headers, "expect", [&](std::string_view member) {
            if (iequals(member, "100-continue")) {
                wants_continue = true;
            } else {
                other = true;
            }
        });
        if (other) return fail(detail::error::unsupported_expectation);
        // HTTP/1.0 clients do not understand 1xx responses (RFC 9110 15.2).
        expect_continue = wants_continue && has_body && parser.http_minor == 1;
        return 0;
    }

    // Names the error llhttp stopped with, refining its codes where the status differs.
    detail::error classify(llhttp_errno_t rc, const char* begin, const char* end) const {
        const char* pos = llhttp_get_error_pos(&parser);
        switch (rc) {
            case HPE_PAUSED_H2_UPGRADE:
                return detail::error::version_not_supported;
            case HPE_INVALID_TRANSFER_ENCODING:
                return detail::error::bad_transfer_encoding;
            case HPE_INVALID_VERSION:
                // llhttp stops at the CR after a well-formed "HTTP/d.d" it does not support
                // (HTTP/1.2, HTTP/3.0): that is 505; anything else is malformed (400).
                return ends_well_formed_version(begin, pos, end)
                           ? detail::error::version_not_supported
                           : detail::error::bad_request;
            case HPE_INVALID_METHOD:
                // RFC 9110 9.1: an unrecognised method is 501. Only a line shaped like a
                // request line (token SP target SP "HTTP/") read in one piece counts as one;
                // anything else where a method should be is garbage (400).
                return head.bytes_before_chunk() == 0 && looks_like_request_line(begin, end)
                           ? detail::error::unknown_method
                           : detail::error::bad_request;
            default:
                return detail::error::bad_request;
        }
    }

    // Whether the 8 bytes before `pos` are "HTTP/d.d" and `pos` is the CR ending the line.
    static bool ends_well_formed_version(const char* begin, const char* pos,
                                         const char* end) noexcept {
        if (pos == nullptr || pos >= end || *pos != '\r' || pos - begin < 8) return false;
        const std::string_view v(pos - 8, 8);
        return v.substr(0, 5) == "HTTP/" && is_digit(v[5]) && v[6] == '.' && is_digit(v[7]);
    }

    // Whether [begin, end) starts with `token SP target SP "HTTP/"`.
    static bool looks_like_request_line(const char* begin, const char* end) noexcept {
        const std::string_view line(begin, static_cast<std::size_t>(end - begin));
        const auto method_end = line.find(' ');
        if (method_end == 0 || method_end == std::string_view::npos) return false;
        if (!is_token(line.substr(0, method_end))) return false;
        const auto target_end = line.find(' ', method_end + 1);
        if (target_end == std::string_view::npos || target_end == method_end + 1) return false;
        return line.substr(target_end + 1, 5) == "HTTP/";
    }

    // Skips the empty lines a client may send before a request line (RFC 9112 2.2), up to
    // max_empty_lines. Returns how many bytes were skipped.
    std::size_t skip_empty_lines(std::string_view data) {
        std::size_t i = 0;
        for (; i < data.size() && (data[i] == '\r' || data[i] == '\n'); ++i) {
            if (data[i] == '\n' && ++empty_lines > limits.max_empty_lines) {
                failure = detail::error::too_many_empty_lines;
                return i + 1;
            }
        }
        return i;
    }
};

request_parser::request_parser(const parser_limits& limits)
    : state_(std::make_unique<state>(limits)) {}

request_parser::~request_parser() = default;

request_parser::result request_parser::feed(std::string_view data) {
    auto& s = *state_;
    if (s.failure) return {event::error, 0};
    std::size_t off = 0;
    if (s.stage == phase::idle) {
        off = s.skip_empty_lines(data);
        if (s.failure) return {event::error, off};
        if (off == data.size()) return {event::need_more, off};
    }
    if (s.paused == HPE_PAUSED) {
        llhttp_resume(&s.parser);
    } else if (s.paused == HPE_PAUSED_UPGRADE) {
        // Upgrade is ignored on ordinary routes: the request was served as plain HTTP/1.1.
        llhttp_resume_after_upgrade(&s.parser);
    }
    s.paused = HPE_OK;
    s.piece = {};

    const char* begin = data.data() + off;
    std::size_t len = data.size() - off;
    s.head.start_chunk(begin);
    llhttp_errno_t rc = llhttp_execute(&s.parser, begin, len);
    if (rc == HPE_PAUSED_UPGRADE && s.stage != phase::complete) {
        // After a request with Upgrade (served as plain HTTP/1.1), llhttp pauses once more
        // before the next message; carry on parsing it as HTTP.
        llhttp_resume_after_upgrade(&s.parser);
        begin = llhttp_get_error_pos(&s.parser);
        len = static_cast<std::size_t>(data.data() + data.size() - begin);
        s.head.start_chunk(begin);
        rc = llhttp_execute(&s.parser, begin, len);
    }
    if (rc == HPE_OK) {
        if (s.stage == phase::head && s.check(s.head.chunk_ended_in_head(len)) != 0) {
            return {event::error, data.size()};
        }
        return {s.piece.empty() ? event::need_more : event::piece, data.size()};
    }
    if ((rc == HPE_PAUSED || rc == HPE_PAUSED_UPGRADE) && s.stage == phase::complete) {
        s.paused = rc;
        const char* stop = llhttp_get_error_pos(&s.parser);
        return {event::request, static_cast<std::size_t>(stop - data.data())};
    }
    if (rc == HPE_PAUSED && s.streamed) {
        s.paused = rc;
        const auto consumed =
            static_cast<std::size_t>(llhttp_get_error_pos(&s.parser) - data.data());
        return {std::exchange(s.head_pause, false) ? event::head : event::piece, consumed};
    }
    if (!s.failure) s.failure = s.classify(rc, begin, data.data() + data.size());
    return {event::error, data.size()};
}

request& request_parser::current() noexcept { return state_->req; }

request& request_parser::parsed_so_far() {
    auto& s = *state_;
    if (s.stage == phase::head) {
        if (s.line_ok) {
            s.build_views(s.head.fields_done());
        } else {
            s.req.method = s.req.target = s.req.path = s.req.query = {};
        }
    }
    return s.req;
}

void request_parser::next() noexcept { state_->reset_message(); }

void request_parser::release() noexcept {
    state_->reset_message();
    state_->req = request{};
    state_->head.release();
}

std::error_code request_parser::error() const noexcept { return state_->failure; }

bool request_parser::in_progress() const noexcept {
    return state_->stage == phase::head || state_->stage == phase::body;
}

bool request_parser::reading_body() const noexcept { return state_->stage == phase::body; }

bool request_parser::wants_continue() const noexcept {
    return state_->stage == phase::body && state_->expect_continue && !state_->continue_was_sent;
}

void request_parser::continue_sent() noexcept { state_->continue_was_sent = true; }

bool request_parser::streaming() const noexcept { return state_->streamed; }

std::string_view request_parser::piece() const noexcept { return state_->piece; }

std::int64_t request_parser::body_left() const noexcept {
    const auto& s = *state_;
    if (s.stage != phase::body || (s.parser.flags & F_CONTENT_LENGTH) == 0) return -1;
    return static_cast<std::int64_t>(s.parser.content_length);
}

}  // namespace tern::detail
