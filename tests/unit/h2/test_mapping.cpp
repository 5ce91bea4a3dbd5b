// The HTTP/2 connection (src/h2) without a socket: a client made of hand-built frames, whose
// header blocks nghttp2's own HPACK encoder writes (so it can send what a well-behaved
// client library refuses to: upper-case names, connection-specific fields), talks to
// make_h2_connection through its receive and pull. What the wire tests check over loopback with
// Python's h2, here for the mapping itself: pseudo-fields to tern's request, tern's response
// to fields, trailers, the malformed requests and limits docs/http2.md says are refused on
// their stream only, and the GOAWAYs of a stop and of max_requests_per_connection.

#include "h2/connection.hpp"
#include "http/exchange_port.hpp"
#include "http/request_handler.hpp"
#include "http/token.hpp"
#include "support/fake_h2_host.hpp"
#include "support/fake_loop.hpp"

#include <tern/config.hpp>

#include <nghttp2/nghttp2.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace unit_test_h2_mapping {

using namespace tern::detail;

namespace {

using field_list = std::vector<std::pair<std::string, std::string>>;

using tern_test::fake_loop;  // functions posted run when the harness says

using tern_test::empty_state;
using tern_test::fake_h2_host;
using tern_test::idle_port;

// What the handler was given, copied out of the request.
struct seen_request {
    std::string method, target, path, query, body;
    field_list headers;
    bool secure = false;
    field_list trailers;
    std::optional<std::string> header(std::string_view name) const {
        for (const auto& [n, v] : headers) {
            if (iequals(n, name)) return v;
        }
        return std::nullopt;
    }
};

// Records each request and answers by path: "/fields" with the fields below, "/empty" 204,
// anything else 200 with "seen <target>".
class recorder final : public request_handler {
public:
    std::vector<seen_request> seen;
    std::size_t body_limit(const request& /*head*/) const noexcept override { return 64; }
    std::unique_ptr<loop_state> make_loop_state() override {
        return std::make_unique<empty_state>();
    }
    void handle(request& req, response& res, std::string_view /*ip*/, answer_later& /*later*/,
                loop_state& /*state*/) noexcept override {
        seen_request s{std::string(req.method),
                       std::string(req.target),
                       std::string(req.path),
                       std::string(req.query),
                       std::string(req.body_view()),
                       {},
                       req.secure,
                       {}};
        for (const auto& h : req.headers) s.headers.emplace_back(h.name, h.value);
        for (const auto& t : req.trailers) s.trailers.emplace_back(t.name, t.value);
        seen.push_back(std::move(s));
        if (req.path == "/empty") {
            res.status = 204;
            return;
        }
        if (req.path.starts_with("/trailers")) {
            // Trailers after the body ("/trailers"), after the head alone ("/trailers/none").
            res.trailers = {{"grpc-status", "0"}, {"x-sum", "7"}};
            if (req.path == "/trailers") res.body = "payload";
            return;
        }
        if (req.path.starts_with("/status/")) {
            // A bodyless status whose handler set a body and a type anyway.
            res.status = std::stoi(std::string(req.path.substr(8)));
            res.content_type = "text/plain";
            res.body = "never sent";
            res.fields.emplace_back("ETag", "\"v1\"");
            return;
        }
        res.content_type = "text/plain";
        res.body = "seen " + std::string(req.target);
        if (req.path == "/fields") {
            // Connection-specific fields are HTTP/1's: never sent over HTTP/2.
            res.fields.emplace_back("Connection", "close");
            res.fields.emplace_back("Keep-Alive", "timeout=5");
            res.fields.emplace_back("Transfer-Encoding", "chunked");
            res.fields.emplace_back("Upgrade", "websocket");
            res.fields.emplace_back("TE", "trailers");
            res.fields.emplace_back("Proxy-Connection", "keep-alive");
            res.fields.emplace_back("X-Custom", "Value");
            res.close = true;  // no meaning on a stream
        }
    }
    void handle_failure(request& /*req*/, int status, std::string_view /*message*/, response& res,
                        std::string_view /*ip*/, loop_state& /*state*/) noexcept override {
        res.status = status;
        res.body = "refused";
    }
};

// What a rig changes from the defaults below.
struct options {
    bool secure = true;                           // h2 over TLS, else h2c
    std::size_t max_requests_per_connection = 0;  // 0: no limit
};

// The settings and parser limits of a rig: small, so the limit cases stay short.
tern::config rig_settings(const options& o) {
    tern::config c;
    c.limits.max_header_count = 20;
    c.limits.max_header_size = 1024;
    c.limits.max_line_size = 256;
    c.limits.max_requests_per_connection = o.max_requests_per_connection;
    return c;
}

parser_limits rig_limits(const tern::config& c, const body_planner& planner) {
    parser_limits l;
    l.max_header_count = c.limits.max_header_count;
    l.max_header_size = c.limits.max_header_size;
    l.max_line_size = c.limits.max_line_size;
    l.max_body_size = 1024;
    l.planner = &planner;
    return l;
}

constexpr std::uint8_t data_frame = 0x0;
constexpr std::uint8_t headers_frame = 0x1;
constexpr std::uint8_t rst_stream_frame = 0x3;
constexpr std::uint8_t settings_frame = 0x4;
constexpr std::uint8_t ping_frame = 0x6;
constexpr std::uint8_t goaway_frame = 0x7;
constexpr std::uint8_t ack = 0x1;
constexpr std::uint8_t end_stream = 0x1;
constexpr std::uint8_t end_headers = 0x4;
constexpr std::uint32_t no_error = 0x0;
constexpr std::uint32_t protocol_error = 0x1;
constexpr std::uint32_t internal_error = 0x2;
constexpr std::uint32_t enhance_your_calm = 0xb;

std::string frame(std::uint8_t type, std::uint8_t flags, std::uint32_t stream,
                  std::string_view payload) {
    std::string f;
    const auto n = payload.size();
    f += static_cast<char>((n >> 16) & 0xff);
    f += static_cast<char>((n >> 8) & 0xff);
    f += static_cast<char>(n & 0xff);
    f += static_cast<char>(type);
    f += static_cast<char>(flags);
    for (int shift = 24; shift >= 0; shift -= 8) f += static_cast<char>((stream >> shift) & 0xff);
    f += payload;
    return f;
}

std::uint32_t be32(const std::string& s, std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
    return v;
}

// One stream's answer as the client saw it.
struct answer {
    std::vector<int> interim;  // 1xx statuses, in order
    field_list fields;         // the final head's, :status first
    std::string body;
    field_list trailers;                 // a HEADERS block after the final head's
    bool body_ended = false;             // a DATA frame carried END_STREAM
    bool ended = false;                  // END_STREAM arrived
    std::optional<std::uint32_t> reset;  // the server's RST_STREAM code
    int status() const {
        for (const auto& [n, v] : fields) {
            if (n == ":status") return std::stoi(v);
        }
        return 0;
    }
    std::optional<std::string> field(std::string_view name) const {
        for (const auto& [n, v] : fields) {
            if (n == name) return v;
        }
        return std::nullopt;
    }
};

// The client side: HPACK by nghttp2's deflater and inflater, frames by hand.
class rig {
public:
    explicit rig(const options& o = {})
        : host_(loop_, handler_, rig_settings(o), rig_limits(rig_settings(o), handler_)),
          connection_(make_h2_connection(host_, h2_peer{"127.0.0.1", o.secure, {}})) {
        REQUIRE(nghttp2_hd_deflate_new(&deflater_, 4096) == 0);
        REQUIRE(nghttp2_hd_inflate_new(&inflater_) == 0);
        connection_->attach(loop_ptr_, port_);
        send(std::string(h2_preface) + frame(settings_frame, 0, 0, {}));
    }
    ~rig() {
        connection_->closed();
        nghttp2_hd_deflate_del(deflater_);
        nghttp2_hd_inflate_del(inflater_);
    }
    rig(const rig&) = delete;
    rig& operator=(const rig&) = delete;

    // A HEADERS frame on `stream` with `fields` exactly as given (pseudo-fields included).
    void request(std::uint32_t stream, const field_list& fields, bool ends = true) {
        std::vector<nghttp2_nv> nva;
        for (const auto& [n, v] : fields) {
            nva.push_back({reinterpret_cast<std::uint8_t*>(const_cast<char*>(n.data())),
                           reinterpret_cast<std::uint8_t*>(const_cast<char*>(v.data())), n.size(),
                           v.size(), NGHTTP2_NV_FLAG_NONE});
        }
        std::string block(nghttp2_hd_deflate_bound(deflater_, nva.data(), nva.size()), '\0');
        const auto n =
            nghttp2_hd_deflate_hd(deflater_, reinterpret_cast<std::uint8_t*>(block.data()),
                                  block.size(), nva.data(), nva.size());
        REQUIRE(n >= 0);
        block.resize(static_cast<std::size_t>(n));
        const auto flags = static_cast<std::uint8_t>(end_headers | (ends ? end_stream : 0));
        send(frame(headers_frame, flags, stream, block));
    }
    // A `method` request for `path` with the usual pseudo-fields and `extra` after them;
    // a body follows in DATA frames unless `ends`.
    void ask(std::string_view method, std::uint32_t stream, const std::string& path,
             const field_list& extra = {}, bool ends = true) {
        field_list fields{{":method", std::string(method)},
                          {":scheme", "https"},
                          {":authority", "example.test"},
                          {":path", path}};
        fields.insert(fields.end(), extra.begin(), extra.end());
        request(stream, fields, ends);
    }
    void get(std::uint32_t stream, const std::string& path, const field_list& extra = {}) {
        ask("GET", stream, path, extra);
    }
    void post(std::uint32_t stream, const std::string& path, const field_list& extra = {},
              bool ends = false) {
        ask("POST", stream, path, extra, ends);
    }
    void data(std::uint32_t stream, std::string_view bytes, bool ends) {
        send(frame(data_frame, ends ? end_stream : 0, stream, bytes));
    }
    void send(const std::string& bytes) {
        REQUIRE(connection_->receive(bytes));
        pump();
    }
    // Trailers on `stream`: a HEADERS frame that ends it.
    void trailers(std::uint32_t stream, const field_list& fields) { request(stream, fields); }
    // Runs posted work and takes the server's output until both are quiet; PINGs are
    // acknowledged as they come, unless ack_pings is false (then the last is kept).
    void pump() {
        for (int turn = 0; turn < 100; ++turn) {
            const bool ran = loop_.run();
            const bool replied = !replies_.empty();
            if (replied) REQUIRE(connection_->receive(std::exchange(replies_, {})));
            std::string out;
            const auto status = connection_->pull(out, 1 << 20);
            input_ += out;
            parse();
            if (status != pull_status::more) {
                ended_ = true;
                return;
            }
            if (!ran && !replied && out.empty()) return;
        }
        FAIL("the connection did not settle in 100 turns");
    }
    // The server stops between requests: its GOAWAY.
    void stop() {
        host_.stopping = true;
        connection_->end_on_stop();
        pump();
    }

    // Acknowledges the PING held while ack_pings was false.
    void ack_held_ping() {
        REQUIRE(held_ping_.size() == 8);
        send(frame(ping_frame, ack, 0, std::exchange(held_ping_, {})));
    }

    std::map<std::uint32_t, answer> answers;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> goaways;  // last stream id, code
    std::vector<std::uint8_t> frame_types;                         // every frame, in order
    std::map<std::uint16_t, std::uint32_t> server_settings;        // its SETTINGS frame's
    bool ack_pings = true;
    bool ended_ = false;
    std::vector<seen_request>& seen() { return handler_.seen; }

private:
    void parse() {
        while (input_.size() >= 9) {
            const auto* p = reinterpret_cast<const unsigned char*>(input_.data());
            const std::size_t length = (std::size_t{p[0]} << 16) | (std::size_t{p[1]} << 8) | p[2];
            if (input_.size() < 9 + length) return;
            const std::uint8_t type = p[3];
            const std::uint8_t flags = p[4];
            const std::uint32_t stream = be32(input_, 5) & 0x7fffffffU;
            const std::string payload = input_.substr(9, length);
            input_.erase(0, 9 + length);
            frame_types.push_back(type);
            if (type == headers_frame) {
                REQUIRE((flags & end_headers) != 0);  // tern's blocks fit in one frame here
                answer& a = answers[stream];
                field_list block;
                inflate(block, payload);
                REQUIRE(!block.empty());
                if (a.status() >= 200) {
                    // After the final head: trailers, which must end the stream.
                    REQUIRE((flags & end_stream) != 0);
                    a.trailers = block;
                    a.ended = true;
                    continue;
                }
                REQUIRE(block.front().first == ":status");
                const int code = std::stoi(block.front().second);
                if (code < 200) {
                    a.interim.push_back(code);
                } else {
                    a.fields.insert(a.fields.end(), block.begin(), block.end());
                }
                if ((flags & end_stream) != 0) a.ended = true;
            } else if (type == data_frame) {
                answers[stream].body += payload;
                if ((flags & end_stream) != 0)
                    answers[stream].ended = answers[stream].body_ended = true;
            } else if (type == rst_stream_frame) {
                answers[stream].reset = be32(payload, 0);
            } else if (type == goaway_frame) {
                goaways.emplace_back(be32(payload, 0) & 0x7fffffffU, be32(payload, 4));
            } else if (type == ping_frame && (flags & ack) == 0) {
                if (ack_pings) {
                    replies_ += frame(ping_frame, ack, 0, payload);
                } else {
                    held_ping_ = payload;
                }
            } else if (type == settings_frame && (flags & ack) == 0) {
                for (std::size_t at = 0; at + 6 <= payload.size(); at += 6) {
                    const auto id =
                        static_cast<std::uint16_t>((static_cast<unsigned char>(payload[at]) << 8) |
                                                   static_cast<unsigned char>(payload[at + 1]));
                    server_settings[id] = be32(payload, at + 2);
                }
            }
        }
    }
    void inflate(field_list& fields, const std::string& block) {
        const auto* in = reinterpret_cast<const std::uint8_t*>(block.data());
        std::size_t left = block.size();
        for (;;) {
            nghttp2_nv nv{};
            int flags = 0;
            const auto n = nghttp2_hd_inflate_hd2(inflater_, &nv, &flags, in, left, 1);
            REQUIRE(n >= 0);
            in += n;
            left -= static_cast<std::size_t>(n);
            if ((flags & NGHTTP2_HD_INFLATE_EMIT) != 0) {
                fields.emplace_back(std::string(reinterpret_cast<char*>(nv.name), nv.namelen),
                                    std::string(reinterpret_cast<char*>(nv.value), nv.valuelen));
            }
            if ((flags & NGHTTP2_HD_INFLATE_FINAL) != 0) {
                nghttp2_hd_inflate_end_headers(inflater_);
                return;
            }
            if (n == 0 && left == 0) return;
        }
    }

    std::shared_ptr<fake_loop> loop_ptr_ = std::make_shared<fake_loop>();
    fake_loop& loop_ = *loop_ptr_;
    recorder handler_;
    fake_h2_host host_;
    std::shared_ptr<idle_port> port_ = std::make_shared<idle_port>();
    std::shared_ptr<upgraded_protocol> connection_;
    nghttp2_hd_deflater* deflater_ = nullptr;
    nghttp2_hd_inflater* inflater_ = nullptr;
    std::string input_;
    std::string replies_;    // PING acknowledgements to send
    std::string held_ping_;  // a PING not acknowledged (ack_pings false)
};

}  // namespace

TEST_CASE("HTTP/2 pseudo-fields become the request's method, target, path, query and Host",
          "[h2map]") {
    rig c;
    c.get(1, "/items/7?sort=name&limit=2", {{"accept", "text/plain"}});
    REQUIRE(c.seen().size() == 1);
    const auto& r = c.seen()[0];
    CHECK(r.method == "GET");
    CHECK(r.target == "/items/7?sort=name&limit=2");
    CHECK(r.path == "/items/7");
    CHECK(r.query == "sort=name&limit=2");
    CHECK(r.header("host") == "example.test");
    CHECK(r.header("accept") == "text/plain");
    CHECK(r.secure);
    CHECK_FALSE(r.header(":path").has_value());  // pseudo-fields are not headers
    REQUIRE(c.answers.count(1) == 1);
    CHECK(c.answers[1].status() == 200);
    CHECK(c.answers[1].body == "seen /items/7?sort=name&limit=2");
    CHECK(c.answers[1].ended);
}

TEST_CASE(
    "cookies split over several HTTP/2 fields reach the handler as one, joined by a semicolon and "
    "a space",
    "[h2map]") {
    rig c;
    c.get(1, "/", {{"cookie", "a=1"}, {"cookie", "b=2"}, {"cookie", "c=3"}});
    REQUIRE(c.seen().size() == 1);
    CHECK(c.seen()[0].header("cookie") == "a=1; b=2; c=3");  // RFC 9113 8.2.3
}

TEST_CASE("a request body in several DATA frames reaches the handler whole", "[h2map]") {
    rig c;
    c.post(1, "/upload", {{"content-length", "11"}}, false);
    c.data(1, "hello", false);
    c.data(1, " ", false);
    CHECK(c.seen().empty());  // not before its end
    c.data(1, "world", true);
    REQUIRE(c.seen().size() == 1);
    CHECK(c.seen()[0].method == "POST");
    CHECK(c.seen()[0].body == "hello world");
    CHECK(c.answers[1].status() == 200);
}

TEST_CASE(
    "a response maps to :status, content-type and content-length, without HTTP/1's "
    "connection fields",
    "[h2map]") {
    rig c;
    c.get(1, "/fields");
    REQUIRE(c.answers.count(1) == 1);
    const auto& a = c.answers[1];
    REQUIRE(!a.fields.empty());
    CHECK(a.fields.front().first == ":status");  // pseudo-field first
    CHECK(a.status() == 200);
    CHECK(a.field("content-type") == "text/plain");
    CHECK(a.field("content-length") == std::to_string(a.body.size()));
    CHECK(a.field("x-custom") == "Value");  // names lower-cased (RFC 9113 8.2.1)
    CHECK_FALSE(a.field("connection").has_value());
    CHECK_FALSE(a.field("keep-alive").has_value());
    CHECK_FALSE(a.field("transfer-encoding").has_value());
    CHECK_FALSE(a.field("upgrade").has_value());
    CHECK_FALSE(a.field("te").has_value());
    CHECK_FALSE(a.field("proxy-connection").has_value());
    // In the order docs/http2.md gives: tern's own fields, then the handler's.
    std::vector<std::string> names;
    for (const auto& [name, value] : a.fields) names.push_back(name);
    CHECK(names == std::vector<std::string>{":status", "date", "content-type", "content-length",
                                            "x-custom"});
    CHECK(a.field("date").value_or("").ends_with(" GMT"));
    CHECK(a.body == "seen /fields");
    CHECK(a.ended);
    // res.close has no meaning on a stream: the connection goes on.
    CHECK(c.goaways.empty());
    c.get(3, "/next");
    CHECK(c.answers[3].status() == 200);
}

TEST_CASE("HEAD gets the length of the body it does not get, 204 gets neither", "[h2map]") {
    rig c;
    c.ask("HEAD", 1, "/abc");
    REQUIRE(c.answers.count(1) == 1);
    CHECK(c.answers[1].status() == 200);
    CHECK(c.answers[1].field("content-length") == std::to_string(std::string("seen /abc").size()));
    CHECK(c.answers[1].body.empty());
    CHECK(c.answers[1].ended);
    c.get(3, "/empty");
    CHECK(c.answers[3].status() == 204);
    CHECK(c.answers[3].body.empty());
    CHECK_FALSE(c.answers[3].field("content-length").has_value());
    CHECK(c.answers[3].ended);
}

TEST_CASE("malformed HTTP/2 requests are reset with PROTOCOL_ERROR and the connection goes on",
          "[h2map]") {
    rig c;
    SECTION("an upper-case field name") { c.get(1, "/", {{"X-Upper", "1"}}); }
    SECTION("a connection-specific field") { c.get(1, "/", {{"connection", "keep-alive"}}); }
    SECTION("keep-alive") { c.get(1, "/", {{"keep-alive", "timeout=5"}}); }
    SECTION("transfer-encoding") { c.get(1, "/", {{"transfer-encoding", "chunked"}}); }
    SECTION("upgrade") { c.get(1, "/", {{"upgrade", "websocket"}}); }
    SECTION("te other than trailers") { c.get(1, "/", {{"te", "gzip"}}); }
    SECTION("no :path") {
        c.request(1, {{":method", "GET"}, {":scheme", "https"}, {":authority", "example.test"}});
    }
    SECTION("no :method") {
        c.request(1, {{":scheme", "https"}, {":authority", "example.test"}, {":path", "/"}});
    }
    SECTION("an empty :path") {
        c.request(1, {{":method", "GET"},
                      {":scheme", "https"},
                      {":authority", "example.test"},
                      {":path", ""}});
    }
    SECTION("two :path fields") {
        c.request(1, {{":method", "GET"},
                      {":scheme", "https"},
                      {":authority", "example.test"},
                      {":path", "/a"},
                      {":path", "/b"}});
    }
    SECTION("an unknown pseudo-field") { c.get(1, "/", {{":protocol", "websocket"}}); }
    SECTION("a pseudo-field after a regular one") {
        c.request(1, {{":method", "GET"},
                      {":scheme", "https"},
                      {"accept", "*/*"},
                      {":authority", "example.test"},
                      {":path", "/"}});
    }
    SECTION("a body longer than its content-length") {
        c.post(1, "/upload", {{"content-length", "3"}}, false);
        c.data(1, "abcdef", true);
    }
    SECTION("a body shorter than its content-length") {
        c.post(1, "/upload", {{"content-length", "10"}}, false);
        c.data(1, "abc", true);
    }
    SECTION("a content-length on a request without a body") {
        c.get(1, "/", {{"content-length", "5"}});
    }
    CHECK(c.seen().empty());  // never reached the handler
    REQUIRE(c.answers.count(1) == 1);
    CHECK(c.answers[1].reset == protocol_error);
    CHECK(c.goaways.empty());
    c.get(3, "/next");
    REQUIRE(c.seen().size() == 1);
    CHECK(c.answers[3].status() == 200);
}

TEST_CASE(
    "an :authority tern does not take as one host, or a host field that disagrees, is "
    "answered 400 on its stream",
    "[h2map]") {
    rig c;
    SECTION("two hosts in one") {
        c.request(
            1, {{":method", "GET"}, {":scheme", "https"}, {":authority", "a,b"}, {":path", "/"}});
    }
    SECTION("a host field beside it") { c.get(1, "/", {{"host", "other.test"}}); }
    CHECK(c.answers[1].status() == 400);
    CHECK(c.seen().empty());
    c.get(3, "/next");
    CHECK(c.answers[3].status() == 200);
}

TEST_CASE("the HTTP/1 limits hold over HTTP/2: 431, 414 and 413 on the stream alone", "[h2map]") {
    rig c;
    SECTION("fields over max_header_size") {
        c.get(1, "/", {{"x-big", std::string(1100, 'a')}});
        CHECK(c.answers[1].status() == 431);
    }
    SECTION("more than max_header_count fields") {
        field_list many;
        for (int i = 0; i < 25; ++i) many.emplace_back("x-f" + std::to_string(i), "v");
        c.get(1, "/", many);
        CHECK(c.answers[1].status() == 431);
    }
    SECTION(":path over max_line_size") {
        c.get(1, "/" + std::string(300, 'p'));
        CHECK(c.answers[1].status() == 414);
    }
    SECTION("a declared body over the route's limit, answered before the body") {
        c.post(1, "/upload", {{"content-length", "100"}}, false);
        CHECK(c.answers[1].status() == 413);
    }
    SECTION("an undeclared body that grows past the route's limit") {
        c.post(1, "/upload", {}, false);
        c.data(1, std::string(40, 'x'), false);
        c.data(1, std::string(40, 'x'), true);
        CHECK(c.answers[1].status() == 413);
    }
    CHECK(c.seen().empty());
    CHECK(c.goaways.empty());
    c.get(3, "/next");
    CHECK(c.answers[3].status() == 200);
}

TEST_CASE(
    "a stop sends GOAWAY twice: the notice, then the last stream taken once the PING "
    "is acknowledged",
    "[h2map]") {
    rig c;
    c.get(1, "/a");
    c.get(3, "/b");
    c.stop();
    REQUIRE(c.goaways.size() == 2);
    CHECK(c.goaways[0].first == 0x7fffffffU);  // RFC 9113 6.8: the notice
    CHECK(c.goaways[0].second == no_error);
    CHECK(c.goaways[1].first == 3);
    CHECK(c.goaways[1].second == no_error);
}

TEST_CASE(
    "the server's first frame is SETTINGS with its stream limit, header list size and table size",
    "[h2map]") {
    rig c;
    REQUIRE(!c.frame_types.empty());
    CHECK(c.frame_types.front() == settings_frame);
    CHECK(c.server_settings[0x3] == 100);   // MAX_CONCURRENT_STREAMS, the default
    CHECK(c.server_settings[0x6] == 1280);  // MAX_HEADER_LIST_SIZE: 1024 + 256
    CHECK(c.server_settings[0x1] == 4096);  // HEADER_TABLE_SIZE
}

TEST_CASE(
    "regular fields reach the handler in order after Host, the joined cookie where the first was",
    "[h2map]") {
    rig c;
    c.get(1, "/",
          {{"x-b", "2"}, {"cookie", "a=1"}, {"accept", "*/*"}, {"cookie", "b=2"}, {"x-a", ""}});
    REQUIRE(c.seen().size() == 1);
    CHECK(c.seen()[0].headers == field_list{{"Host", "example.test"},
                                            {"x-b", "2"},
                                            {"cookie", "a=1; b=2"},
                                            {"accept", "*/*"},
                                            {"x-a", ""}});
}

TEST_CASE("a host field equal to :authority is the request's only Host, where the client put it",
          "[h2map]") {
    rig c;
    c.get(1, "/", {{"accept", "*/*"}, {"host", "example.test"}});
    REQUIRE(c.seen().size() == 1);
    CHECK(c.seen()[0].headers == field_list{{"accept", "*/*"}, {"host", "example.test"}});
    CHECK(c.answers[1].status() == 200);
}

TEST_CASE("without :authority the client's host field is the request's Host", "[h2map]") {
    rig c;
    c.request(1, {{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {"host", "h.test"}});
    REQUIRE(c.seen().size() == 1);
    CHECK(c.seen()[0].headers == field_list{{"host", "h.test"}});
    CHECK(c.answers[1].status() == 200);
}

TEST_CASE("a request is secure over TLS and not over h2c, whatever its :scheme says", "[h2map]") {
    const bool secure = GENERATE(true, false);
    const std::string scheme = GENERATE(std::string("http"), std::string("https"));
    rig c(options{secure, 0});
    c.request(
        1,
        {{":method", "GET"}, {":scheme", scheme}, {":authority", "example.test"}, {":path", "/"}});
    REQUIRE(c.seen().size() == 1);
    CHECK(c.seen()[0].secure == secure);
    CHECK_FALSE(c.seen()[0].header(":scheme").has_value());
}

TEST_CASE("a path without a query has an empty query, and an empty query after ? stays empty",
          "[h2map]") {
    rig c;
    c.get(1, "/plain");
    c.get(3, "/q?");
    REQUIRE(c.seen().size() == 2);
    CHECK(c.seen()[0].path == "/plain");
    CHECK(c.seen()[0].query.empty());
    CHECK(c.seen()[1].target == "/q?");
    CHECK(c.seen()[1].path == "/q");
    CHECK(c.seen()[1].query.empty());
}

TEST_CASE("te: trailers is the one te a request may carry", "[h2map]") {
    rig c;
    c.get(1, "/", {{"te", "trailers"}});
    REQUIRE(c.seen().size() == 1);
    CHECK(c.seen()[0].header("te") == "trailers");
    CHECK(c.answers[1].status() == 200);
    CHECK_FALSE(c.answers[1].reset.has_value());
}

TEST_CASE("request trailers end the request and reach the handler apart from the head", "[h2map]") {
    rig c;
    c.post(1, "/upload", {{"x-before", "1"}}, false);
    c.data(1, "abc", false);
    c.data(1, "def", false);
    CHECK(c.seen().empty());
    c.trailers(1, {{"x-checksum", "42"}, {"x-second", "b"}});
    REQUIRE(c.seen().size() == 1);
    CHECK(c.seen()[0].body == "abcdef");
    CHECK(c.seen()[0].header("x-before") == "1");
    CHECK_FALSE(c.seen()[0].header("x-checksum").has_value());
    CHECK(c.seen()[0].trailers == field_list{{"x-checksum", "42"}, {"x-second", "b"}});
    CHECK(c.answers[1].status() == 200);
    CHECK_FALSE(c.answers[1].reset.has_value());
}

TEST_CASE("a 204 or 304 whose handler set a body and a type sends the head alone", "[h2map]") {
    rig c;
    const std::string code = GENERATE(std::string("204"), std::string("304"));
    c.get(1, "/status/" + code);
    REQUIRE(c.answers.count(1) == 1);
    const auto& a = c.answers[1];
    std::vector<std::string> names;
    for (const auto& [name, value] : a.fields) names.push_back(name);
    CHECK(names == std::vector<std::string>{":status", "date", "etag"});
    CHECK(a.status() == std::stoi(code));
    CHECK(a.field("etag") == "\"v1\"");
    CHECK(a.body.empty());
    CHECK(a.ended);
    CHECK(std::count(c.frame_types.begin(), c.frame_types.end(), data_frame) == 0);
}

TEST_CASE("a HEAD answer carries the GET's type and length and no DATA frame", "[h2map]") {
    rig c;
    c.ask("HEAD", 1, "/abc");
    REQUIRE(c.seen().size() == 1);
    CHECK(c.seen()[0].method == "HEAD");
    CHECK(c.answers[1].field("content-type") == "text/plain");
    CHECK(c.answers[1].field("content-length") == "9");  // "seen /abc"
    CHECK(c.answers[1].ended);
    CHECK(std::count(c.frame_types.begin(), c.frame_types.end(), data_frame) == 0);
}

TEST_CASE("Expect: 100-continue gets an interim 100 before the final answer", "[h2map]") {
    rig c;
    c.post(1, "/upload", {{"content-length", "4"}, {"expect", "100-continue"}}, false);
    REQUIRE(c.answers.count(1) == 1);
    CHECK(c.answers[1].interim == std::vector<int>{100});
    CHECK(c.answers[1].fields.empty());  // no final answer yet
    c.data(1, "body", true);
    REQUIRE(c.seen().size() == 1);
    CHECK(c.seen()[0].body == "body");
    CHECK(c.answers[1].interim == std::vector<int>{100});
    CHECK(c.answers[1].status() == 200);
}

TEST_CASE("a declared body over the limit with Expect: 100-continue gets 413 and no 100",
          "[h2map]") {
    rig c;
    // The handler's body_limit is 64.
    c.post(1, "/upload", {{"content-length", "65"}, {"expect", "100-continue"}});
    CHECK(c.answers[1].interim.empty());
    CHECK(c.answers[1].status() == 413);
    CHECK(c.seen().empty());
}

TEST_CASE("a body of exactly the handler's body_limit is taken, one byte more is 413", "[h2map]") {
    rig c;
    const std::size_t size = GENERATE(std::size_t{64}, std::size_t{65});
    c.post(1, "/upload", {}, false);
    c.data(1, std::string(size, 'b'), true);
    if (size == 64) {
        REQUIRE(c.seen().size() == 1);
        CHECK(c.seen()[0].body == std::string(64, 'b'));
        CHECK(c.answers[1].status() == 200);
    } else {
        CHECK(c.seen().empty());
        CHECK(c.answers[1].status() == 413);
        CHECK(c.answers[1].body == "refused");  // the handler's handle_failure answered
    }
}

TEST_CASE("an answer sent before the request ended is followed by RST_STREAM NO_ERROR", "[h2map]") {
    rig c;
    c.post(1, "/upload", {{"content-length", "100"}}, false);
    CHECK(c.answers[1].status() == 413);
    CHECK(c.answers[1].ended);
    CHECK(c.answers[1].reset == no_error);  // RFC 9113 8.1
    CHECK(c.goaways.empty());
    c.get(3, "/next");
    CHECK(c.answers[3].status() == 200);
}

TEST_CASE("a malformed stream beside an open one is reset alone and the open one finishes",
          "[h2map]") {
    rig c;
    c.post(1, "/upload", {}, false);
    c.data(1, "first ", false);
    c.get(3, "/", {{"X-Upper", "1"}});
    CHECK(c.answers[3].reset == protocol_error);
    CHECK(c.seen().empty());
    c.data(1, "half", true);
    REQUIRE(c.seen().size() == 1);
    CHECK(c.seen()[0].body == "first half");
    CHECK(c.answers[1].status() == 200);
    CHECK_FALSE(c.answers[1].reset.has_value());
    CHECK(c.goaways.empty());
}

TEST_CASE(
    "a header block that decodes past twice the header list size is reset with INTERNAL_ERROR, "
    "the third ends the connection",
    "[h2map]") {
    rig c;
    // 2 x 1280 bytes, counted as HPACK does (name + value + 32 per field).
    const std::string big(3000, 'z');
    c.get(1, "/", {{"x-big", big}});
    CHECK(c.answers[1].reset == internal_error);
    CHECK(c.answers[1].fields.empty());
    c.get(3, "/", {{"x-big", big}});
    CHECK(c.answers[3].reset == internal_error);
    CHECK(c.goaways.empty());
    c.get(5, "/next");
    CHECK(c.answers[5].status() == 200);  // the connection goes on after two
    c.get(7, "/", {{"x-big", big}});
    REQUIRE(c.goaways.size() == 1);
    CHECK(c.goaways[0].first == 7);  // nghttp2 had begun the stream it was decoding
    CHECK(c.goaways[0].second == enhance_your_calm);
    CHECK(c.seen().size() == 1);
}

TEST_CASE(
    "at max_requests_per_connection answers the server sends GOAWAY NO_ERROR, the open streams "
    "finish and newer ones are ignored",
    "[h2map]") {
    rig c(options{true, 2});
    c.post(1, "/upload", {}, false);
    c.get(3, "/a");
    CHECK(c.goaways.empty());
    c.get(5, "/b");
    REQUIRE(c.goaways.size() == 1);
    CHECK(c.goaways[0] == std::pair<std::uint32_t, std::uint32_t>{5, no_error});
    CHECK(c.answers[5].status() == 200);
    c.get(7, "/too-late");
    CHECK(c.answers.count(7) == 0);
    CHECK_FALSE(c.ended_);
    c.data(1, "open", true);
    CHECK(c.answers[1].status() == 200);
    CHECK(c.answers[1].body == "seen /upload");
    CHECK(c.seen().size() == 3);
    CHECK(c.ended_);  // the last stream done, the connection ends
}

TEST_CASE(
    "a stream sent after the shutdown notice is served, one after the final GOAWAY is ignored "
    "and the streams taken finish",
    "[h2map]") {
    rig c;
    c.post(1, "/upload", {}, false);
    c.ack_pings = false;
    c.stop();
    REQUIRE(c.goaways.size() == 1);
    CHECK(c.goaways[0] == std::pair<std::uint32_t, std::uint32_t>{0x7fffffffU, no_error});
    c.get(3, "/sent-before-the-notice-arrived");
    CHECK(c.answers[3].status() == 200);
    c.ack_held_ping();
    REQUIRE(c.goaways.size() == 2);
    CHECK(c.goaways[1] == std::pair<std::uint32_t, std::uint32_t>{3, no_error});
    c.get(5, "/too-late");
    CHECK(c.answers.count(5) == 0);
    CHECK_FALSE(c.ended_);
    c.data(1, "x", true);
    CHECK(c.answers[1].status() == 200);
    CHECK(c.seen().size() == 2);
    CHECK(c.ended_);
}

TEST_CASE("request trailers over max_header_size or max_header_count are answered 431", "[h2map]") {
    rig c;
    c.post(1, "/upload", {{"x-head", "1"}}, false);
    c.data(1, "abc", false);
    field_list trailers;
    SECTION("one field of 1,100 bytes") { trailers.emplace_back("x-sum", std::string(1100, 'q')); }
    SECTION("20 fields beside the head's one") {
        for (int i = 0; i < 20; ++i) trailers.emplace_back("x-t" + std::to_string(i), "v");
    }
    c.trailers(1, trailers);
    CHECK(c.seen().empty());
    CHECK(c.answers[1].status() == 431);
    CHECK(c.answers[1].ended);
    CHECK(c.goaways.empty());
    c.get(3, "/next");
    CHECK(c.answers[3].status() == 200);
}

TEST_CASE("trailers within the limits beside a head near them are taken", "[h2map]") {
    rig c;
    // Their own byte budget: 900 bytes in the head and 900 in the trailers pass 1,024 each.
    c.post(1, "/upload", {{"x-head", std::string(900, 'h')}});
    c.data(1, "abc", false);
    c.trailers(1, {{"x-sum", std::string(900, 't')}});
    REQUIRE(c.seen().size() == 1);
    CHECK(c.seen()[0].body == "abc");
    REQUIRE(c.seen()[0].trailers.size() == 1);
    CHECK(c.seen()[0].trailers[0].second == std::string(900, 't'));
    CHECK(c.answers[1].status() == 200);
}

TEST_CASE("response trailers follow the last DATA frame in a HEADERS frame that ends the stream",
          "[h2map][trailers]") {
    rig c;
    c.get(1, "/trailers");
    CHECK(c.answers[1].status() == 200);
    CHECK(c.answers[1].body == "payload");
    CHECK_FALSE(c.answers[1].body_ended);  // END_STREAM is the trailers'
    CHECK(c.answers[1].trailers == field_list{{"grpc-status", "0"}, {"x-sum", "7"}});
    CHECK(c.answers[1].ended);
    // An answer without a body: its head, then its trailers.
    c.get(3, "/trailers/none");
    CHECK(c.answers[3].status() == 200);
    CHECK(c.answers[3].body.empty());
    CHECK(c.answers[3].trailers == field_list{{"grpc-status", "0"}, {"x-sum", "7"}});
    CHECK(c.answers[3].ended);
    // HEAD ends with its head: no trailers.
    c.request(
        5,
        {{":method", "HEAD"}, {":scheme", "https"}, {":authority", "a"}, {":path", "/trailers"}});
    CHECK(c.answers[5].status() == 200);
    CHECK(c.answers[5].trailers.empty());
    CHECK(c.answers[5].ended);
    // A response without trailers ends on its DATA frame, as before.
    c.get(7, "/plain");
    CHECK(c.answers[7].body_ended);
    CHECK(c.answers[7].trailers.empty());
}

}  // namespace unit_test_h2_mapping
