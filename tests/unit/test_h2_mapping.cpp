// The HTTP/2 session (src/h2) without a socket: a client made of hand-built frames, whose
// header blocks nghttp2's own HPACK encoder writes (so it can send what a well-behaved
// client library refuses to: upper-case names, connection-specific fields), talks to
// make_h2_session through its receive and pull. What the wire tests check over loopback with
// Python's h2, here for the mapping itself: pseudo-fields to tern's request, tern's response
// to fields, and the malformed requests docs/http2.md says are refused on their stream only.

#include "h2/session.hpp"
#include "http/exchange_port.hpp"
#include "http/request_handler.hpp"
#include "support/fake_loop.hpp"

#include <tern/config.hpp>

#include <nghttp2/nghttp2.h>
#include <catch2/catch.hpp>

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

class empty_state final : public loop_state {};

// What the handler was given, copied out of the request.
struct seen_request {
    std::string method, target, path, query, body;
    field_list headers;
    bool secure = false;
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
                       req.secure};
        for (const auto& h : req.headers) s.headers.emplace_back(h.name, h.value);
        seen.push_back(std::move(s));
        if (req.path == "/empty") {
            res.status = 204;
            return;
        }
        res.content_type = "text/plain";
        res.body = "seen " + std::string(req.target);
        if (req.path == "/fields") {
            // Connection-specific fields are HTTP/1's: never sent over HTTP/2.
            res.fields.emplace_back("Connection", "close");
            res.fields.emplace_back("Keep-Alive", "timeout=5");
            res.fields.emplace_back("X-Custom", "Value");
        }
    }
    void handle_failure(request& /*req*/, int status, std::string_view /*message*/, response& res,
                        std::string_view /*ip*/, loop_state& /*state*/) noexcept override {
        res.status = status;
        res.body = "refused";
    }
};

class host final : public protocol_host {
public:
    explicit host(fake_loop& loop) : loop_door_(loop) {
        settings.max_header_count = 20;
        settings.max_header_size = 1024;
        settings.max_line_size = 256;
        limits_.max_header_count = settings.max_header_count;
        limits_.max_header_size = settings.max_header_size;
        limits_.max_line_size = settings.max_line_size;
        limits_.max_body_size = 1024;
        limits_.planner = &handler;
        loop_ = loop_view{&handler, &state_,   &settings, &limits_, &stopping,
                          &no_,     &counted_, &counted_, &counted_};
    }
    std::shared_ptr<loop_door> door() override { return nullptr; }
    void expect_posted() override {}
    void unexpect_posted() noexcept override {}
    void post(std::function<void()> fn) override { loop_door_.post(std::move(fn)); }

    recorder handler;
    tern::config settings;
    std::atomic<bool> stopping{false};

private:
    fake_loop& loop_door_;
    empty_state state_;
    parser_limits limits_;
    std::atomic<bool> no_{false};
    std::atomic<std::uint64_t> counted_{0};
};

class port final : public exchange_port {
public:
    std::shared_ptr<loop_door> door() override { return nullptr; }
    void hold(std::shared_ptr<held_link> /*link*/) override {}
    void finish(response&& /*res*/) override {}
    void wake() override {}
};

constexpr std::uint8_t data_frame = 0x0;
constexpr std::uint8_t headers_frame = 0x1;
constexpr std::uint8_t rst_stream_frame = 0x3;
constexpr std::uint8_t settings_frame = 0x4;
constexpr std::uint8_t ping_frame = 0x6;
constexpr std::uint8_t goaway_frame = 0x7;
constexpr std::uint8_t ack = 0x1;
constexpr std::uint8_t end_stream = 0x1;
constexpr std::uint8_t end_headers = 0x4;
constexpr std::uint32_t protocol_error = 0x1;
constexpr std::uint32_t no_error = 0x0;

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
    field_list fields;  // :status first
    std::string body;
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
    rig() : host_(loop_), session_(make_h2_session(host_, h2_peer{"127.0.0.1", true, {}})) {
        REQUIRE(nghttp2_hd_deflate_new(&deflater_, 4096) == 0);
        REQUIRE(nghttp2_hd_inflate_new(&inflater_) == 0);
        session_->attach(loop_ptr_, port_);
        send(std::string(h2_preface) + frame(settings_frame, 0, 0, {}));
    }
    ~rig() {
        session_->closed();
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
    // A GET of `path` with the usual pseudo-fields and `extra` after them.
    void get(std::uint32_t stream, const std::string& path, const field_list& extra = {}) {
        field_list fields{{":method", "GET"},
                          {":scheme", "https"},
                          {":authority", "example.test"},
                          {":path", path}};
        fields.insert(fields.end(), extra.begin(), extra.end());
        request(stream, fields);
    }
    void data(std::uint32_t stream, std::string_view bytes, bool ends) {
        send(frame(data_frame, ends ? end_stream : 0, stream, bytes));
    }
    void send(const std::string& bytes) {
        REQUIRE(session_->receive(bytes));
        pump();
    }
    // Runs posted work and takes the server's output until both are quiet; PINGs are
    // acknowledged as they come.
    void pump() {
        for (int turn = 0; turn < 100; ++turn) {
            const bool ran = loop_.run();
            const bool replied = !replies_.empty();
            if (replied) REQUIRE(session_->receive(std::exchange(replies_, {})));
            std::string out;
            const auto status = session_->pull(out, 1 << 20);
            input_ += out;
            parse();
            if (status != pull_status::more) {
                ended_ = true;
                return;
            }
            if (!ran && !replied && out.empty()) return;
        }
        FAIL("the session did not settle in 100 turns");
    }
    // The server stops between requests: its GOAWAY.
    void stop() {
        host_.stopping = true;
        session_->end_on_stop();
        pump();
    }

    std::map<std::uint32_t, answer> answers;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> goaways;  // last stream id, code
    bool ended_ = false;
    std::vector<seen_request>& seen() { return host_.handler.seen; }

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
            if (type == headers_frame) {
                REQUIRE((flags & end_headers) != 0);  // tern's blocks fit in one frame here
                inflate(answers[stream], payload);
                if ((flags & end_stream) != 0) answers[stream].ended = true;
            } else if (type == data_frame) {
                answers[stream].body += payload;
                if ((flags & end_stream) != 0) answers[stream].ended = true;
            } else if (type == rst_stream_frame) {
                answers[stream].reset = be32(payload, 0);
            } else if (type == goaway_frame) {
                goaways.emplace_back(be32(payload, 0) & 0x7fffffffU, be32(payload, 4));
            } else if (type == ping_frame && (flags & ack) == 0) {
                replies_ += frame(ping_frame, ack, 0, payload);
            }
        }
    }
    void inflate(answer& a, const std::string& block) {
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
                a.fields.emplace_back(std::string(reinterpret_cast<char*>(nv.name), nv.namelen),
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
    host host_;
    std::shared_ptr<port> port_ = std::make_shared<port>();
    std::shared_ptr<upgraded_protocol> session_;
    nghttp2_hd_deflater* deflater_ = nullptr;
    nghttp2_hd_inflater* inflater_ = nullptr;
    std::string input_;
    std::string replies_;  // PING acknowledgements to send
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

TEST_CASE("cookies split over several HTTP/2 fields reach the handler joined by \"; \"",
          "[h2map]") {
    rig c;
    c.get(1, "/", {{"cookie", "a=1"}, {"cookie", "b=2"}, {"cookie", "c=3"}});
    REQUIRE(c.seen().size() == 1);
    CHECK(c.seen()[0].header("cookie") == "a=1; b=2; c=3");  // RFC 9113 8.2.3
}

TEST_CASE("a request body in several DATA frames reaches the handler whole", "[h2map]") {
    rig c;
    c.request(1,
              {{":method", "POST"},
               {":scheme", "https"},
               {":authority", "example.test"},
               {":path", "/upload"},
               {"content-length", "11"}},
              false);
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
    for (const auto& [name, value] : a.fields) {
        for (const char ch : name) CHECK_FALSE((ch >= 'A' && ch <= 'Z'));
    }
}

TEST_CASE("HEAD gets the length of the body it does not get, 204 gets neither", "[h2map]") {
    rig c;
    c.request(1, {{":method", "HEAD"},
                  {":scheme", "https"},
                  {":authority", "example.test"},
                  {":path", "/abc"}});
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
    SECTION("te other than trailers") { c.get(1, "/", {{"te", "gzip"}}); }
    SECTION("no :path") {
        c.request(1, {{":method", "GET"}, {":scheme", "https"}, {":authority", "example.test"}});
    }
    SECTION("a pseudo-field after a regular one") {
        c.request(1, {{":method", "GET"},
                      {":scheme", "https"},
                      {"accept", "*/*"},
                      {":authority", "example.test"},
                      {":path", "/"}});
    }
    SECTION("a body longer than its content-length") {
        c.request(1,
                  {{":method", "POST"},
                   {":scheme", "https"},
                   {":authority", "example.test"},
                   {":path", "/upload"},
                   {"content-length", "3"}},
                  false);
        c.data(1, "abcdef", true);
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
        c.request(1,
                  {{":method", "POST"},
                   {":scheme", "https"},
                   {":authority", "example.test"},
                   {":path", "/upload"},
                   {"content-length", "100"}},
                  false);
        CHECK(c.answers[1].status() == 413);
    }
    SECTION("an undeclared body that grows past the route's limit") {
        c.request(1,
                  {{":method", "POST"},
                   {":scheme", "https"},
                   {":authority", "example.test"},
                   {":path", "/upload"}},
                  false);
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

}  // namespace unit_test_h2_mapping
