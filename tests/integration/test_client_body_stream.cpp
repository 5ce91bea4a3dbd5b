// tern::client sending a request body from a reader (client_request::body_stream) and
// client::relay's own body limit (relay_options::max_body), over real sockets: a
// streamed_body route forwards its body piece by piece to an upstream that hashes it, with
// Content-Length and chunked framing; a slow upstream stalls the downstream client's sends; a
// downstream client that leaves cuts the upstream call; a reader shorter or longer than
// body_stream_size fails the call; fetch_blocking refuses a body_stream; a large answer is
// relayed whole by default, and max_body refuses a Content-Length over it before the head.

#if !defined(_WIN32)  // Not on Windows: tern's client on a loop waits on descriptors (ENOTSUP
                      // there), and the scripted upstreams (support/script_server.hpp) are
                      // POSIX sockets, as in test_client.cpp
#include <catch2/catch.hpp>

#include <tern/client.hpp>
#include <tern/tern.hpp>

#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "support/eventually.hpp"
#include "support/fnv.hpp"
#include "support/raw_client.hpp"
#include "support/script_server.hpp"
#include "support/test_server.hpp"

namespace wire_test_client_body_stream {

using namespace std::chrono_literals;
using tern_test::fnv;
using tern_test::script_server;
using tern_test::test_server;

namespace {

constexpr std::size_t big_limit = std::size_t{1} << 30;

std::string url_of(const test_server& s, std::string_view path) {
    return "http://127.0.0.1:" + std::to_string(s.port()) + std::string(path);
}

// `n` bytes that are not all alike, so a lost or repeated piece changes the digest.
std::string pattern(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 7) % 251);
    return s;
}

// A scripted upstream that reads a request's head, then counts every body byte until the
// connection closes: into `got`, then `done` is set.
std::function<void(int)> counting_upstream(std::atomic<std::uint64_t>& got,
                                           std::atomic<bool>& done) {
    return [&got, &done](int fd) {
        std::string head = script_server::read_head(fd);
        std::uint64_t n = head.size() - head.find("\r\n\r\n") - 4;
        char buf[65536];
        for (;;) {
            const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
            if (r <= 0) break;
            n += static_cast<std::uint64_t>(r);
        }
        got = n;
        done = true;
    };
}

std::string expected_answer(std::string_view body, std::string_view framing) {
    return "bytes=" + std::to_string(body.size()) + " hash=" + std::to_string(fnv(body)) +
           " framing=" + std::string(framing);
}

// The upstream: POST /hash reads its body as it arrives and answers its length, digest and
// how it was framed.
void hash_route(tern::app& app) {
    app.post("/hash", tern::body_limit(
                          big_limit, tern::streamed_body([](tern::context& ctx) -> tern::task {
                              tern::body_reader body = ctx.body_reader();
                              tern_test::fnv_digest digest;
                              std::uint64_t n = 0;
                              while (auto piece = co_await body.next()) {
                                  digest.update(*piece);
                                  n += piece->size();
                              }
                              const char* framing = ctx.header("transfer-encoding") ? "chunked"
                                                    : ctx.header("content-length")  ? "length"
                                                                                    : "none";
                              ctx.text("bytes=" + std::to_string(n) +
                                       " hash=" + std::to_string(digest.h) + " framing=" + framing);
                          })));
}

// The request the front sends on: the client's body, sized when the client sized it.
tern::client_request forwarded(tern::context& ctx, const std::string& url) {
    tern::client_request req{.method = "POST", .url = url};
    req.body_stream = ctx.body_reader();
    if (auto length = ctx.header("content-length")) {
        req.body_stream_size = std::stoull(std::string(*length));
    }
    return req;
}

// The front: /fwd (callbacks) and /fwd-co (co_await) forward their streamed body to `url`;
// a failure is answered 502 with its name.
void forward_routes(tern::app& app, const tern::client& c, const std::string& url) {
    app.post("/fwd",
             tern::body_limit(
                 big_limit, tern::streamed_body([&c, url](tern::context& ctx) {
                     auto reply = ctx.defer();
                     c.fetch(reply, forwarded(ctx, url), [reply](const tern::client_result& r) {
                         reply.complete([r](tern::context& cx) {
                             if (!r) {
                                 cx.status(502).text(std::string(tern::describe(r.failure)));
                                 return;
                             }
                             cx.status(r.response.status).text(r.response.body);
                         });
                     });
                 })));
    app.post("/fwd-co",
             tern::body_limit(big_limit,
                              tern::streamed_body([&c, url](tern::context& ctx) -> tern::task {
                                  const tern::client_request req = forwarded(ctx, url);
                                  try {
                                      auto res = co_await c.fetch(req);
                                      ctx.status(res.status).text(res.body);
                                  } catch (const tern::client_error& e) {
                                      ctx.status(502).text(std::string(tern::describe(e.why())));
                                  }
                              })));
}

std::string sized_request(std::string_view target, std::string_view body) {
    return "POST " + std::string(target) +
           " HTTP/1.1\r\nHost: front\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + std::string(body);
}

std::string chunked_request(std::string_view target, std::string_view body) {
    std::string out = "POST " + std::string(target) +
                      " HTTP/1.1\r\nHost: front\r\nTransfer-Encoding: chunked\r\n\r\n";
    constexpr std::size_t chunk = 100'000;
    for (std::size_t at = 0; at < body.size(); at += chunk) {
        const auto part = body.substr(at, chunk);
        char size[32];
        std::snprintf(size, sizeof size, "%zx\r\n", part.size());
        out += size;
        out.append(part);
        out += "\r\n";
    }
    return out + "0\r\n\r\n";
}

}  // namespace

TEST_CASE(
    "client: a streamed body forwarded with body_stream arrives whole at the upstream, sized "
    "or chunked, from callbacks and from a coroutine",
    "[client][body-stream]") {
    test_server upstream(hash_route);
    tern::client c;
    test_server front([&](tern::app& app) { forward_routes(app, c, url_of(upstream, "/hash")); });
    for (const std::size_t size :
         {std::size_t{0}, std::size_t{1}, std::size_t{64 * 1024}, std::size_t{5 * 1024 * 1024}}) {
        const std::string body = pattern(size);
        for (const char* target : {"/fwd", "/fwd-co"}) {
            INFO("size " << size << ", " << target);
            auto cl = front.client();
            cl.set_timeout(30s);
            cl.send(sized_request(target, body));
            auto r = cl.read_response();
            CHECK(r.status == 200);
            CHECK(r.body == expected_answer(body, "length"));

            cl.send(chunked_request(target, body));
            r = cl.read_response();
            CHECK(r.status == 200);
            CHECK(r.body == expected_answer(body, "chunked"));
        }
    }
}

TEST_CASE(
    "client: an upstream that does not read stalls the downstream client's sends instead of "
    "the forwarding server's memory growing",
    "[client][body-stream]") {
    std::atomic<bool> release{false};
    std::atomic<std::uint64_t> upstream_got{0};
    script_server upstream([&](int fd) {
        const int small = 64 * 1024;
        ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        std::string head = script_server::read_head(fd);
        if (head.empty()) return;
        while (!release) std::this_thread::sleep_for(10ms);
        const auto at = head.find("\r\n\r\n");
        std::string got = head.substr(at + 4);
        const auto cl = head.find("Content-Length: ");
        const std::uint64_t want = std::stoull(head.substr(cl + 16));
        tern_test::fnv_digest digest;
        digest.update(got);
        std::uint64_t n = got.size();
        char buf[65536];
        while (n < want) {
            const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
            if (r <= 0) break;
            digest.update(std::string_view(buf, static_cast<std::size_t>(r)));
            n += static_cast<std::uint64_t>(r);
        }
        upstream_got = n;
        const std::string answer =
            "bytes=" + std::to_string(n) + " hash=" + std::to_string(digest.h) + " framing=length";
        script_server::send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: " +
                                        std::to_string(answer.size()) + "\r\n\r\n" + answer);
    });
    tern::client c;
    test_server front([&](tern::app& app) { forward_routes(app, c, upstream.url("/slow")); });
    const std::string body = pattern(std::size_t{192} * 1024 * 1024);
    const std::string request = sized_request("/fwd", body);
    auto cl = front.client();
    // For two seconds the upstream reads nothing: what the client can write is what the
    // sockets' buffers on the way hold (loopback autotuning: tens of MiB at most), not the
    // body.
    const std::size_t before_release = cl.send_while_reading(request, 2s);
    INFO("written before the upstream read: " << before_release << " of " << request.size());
    CHECK(before_release < std::size_t{96} * 1024 * 1024);
    release = true;
    cl.send(std::string_view(request).substr(before_release));
    cl.set_timeout(30s);
    const auto r = cl.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == expected_answer(body, "length"));
    CHECK(upstream_got == body.size());
}

TEST_CASE(
    "client: a downstream client that leaves mid-body ends the upstream call, whose "
    "connection closes with the body cut",
    "[client][body-stream]") {
    std::atomic<bool> upstream_done{false};
    std::atomic<std::uint64_t> upstream_got{0};
    script_server upstream(counting_upstream(upstream_got, upstream_done));
    tern::client c;
    test_server front([&](tern::app& app) { forward_routes(app, c, upstream.url("/cut")); });
    for (const bool chunked : {false, true}) {
        INFO((chunked ? "chunked" : "sized"));
        upstream_done = false;
        const std::string body = pattern(std::size_t{10} * 1024 * 1024);
        const std::string request =
            chunked ? chunked_request("/fwd", body) : sized_request("/fwd", body);
        auto cl = front.client();
        cl.send(std::string_view(request).substr(0, 1024 * 1024));
        std::this_thread::sleep_for(200ms);
        cl.close();
        CHECK(tern_test::eventually([&] { return upstream_done.load(); }));
        CHECK(upstream_got < body.size());
        CHECK(upstream_got > 0);
        CHECK(c.idle_connections() == 0);  // never given back to the pool
    }
}

TEST_CASE(
    "client: a downstream client that goes quiet mid-body (body_idle) ends the upstream call "
    "as timed_out, its connection closed, and tern answers 408",
    "[client][body-stream]") {
    std::atomic<bool> upstream_done{false};
    std::atomic<std::uint64_t> upstream_got{0};
    script_server upstream(counting_upstream(upstream_got, upstream_done));
    tern::client c;
    std::atomic<int> failure{0};
    tern::config cfg = tern_test::test_config();
    cfg.timeouts.body_idle = 300ms;
    test_server front(
        [&](tern::app& app) {
            app.post("/quiet", tern::streamed_body([&](tern::context& ctx) {
                         auto reply = ctx.defer();
                         c.fetch(reply, forwarded(ctx, upstream.url("/quiet")),
                                 [reply, &failure](const tern::client_result& r) {
                                     failure = static_cast<int>(r.failure);
                                     reply.complete([](tern::context& cx) { cx.status(502); });
                                 });
                     }));
        },
        cfg);
    auto cl = front.client();
    cl.send("POST /quiet HTTP/1.1\r\nHost: front\r\nContent-Length: 1000\r\n\r\n0123456789");
    cl.set_timeout(5s);
    const auto r = cl.read_response();
    CHECK(r.status == 408);
    CHECK(tern_test::eventually([&] { return upstream_done.load(); }));
    CHECK(upstream_got == 10);
    CHECK(failure == static_cast<int>(tern::client_failure::timed_out));
    CHECK(c.idle_connections() == 0);
}

TEST_CASE(
    "client: a body_stream that gives more or fewer bytes than body_stream_size fails the call "
    "and closes its connection",
    "[client][body-stream]") {
    test_server upstream(hash_route);
    tern::client c;
    const std::string url = url_of(upstream, "/hash");
    // A route that reads its body whole: its reader gives it as one piece.
    test_server front([&](tern::app& app) {
        app.post("/sized", [&c, url](tern::context& ctx) -> tern::task {
            tern::client_request req{.method = "POST", .url = url};
            req.body_stream = ctx.body_reader();
            req.body_stream_size = std::stoull(std::string(ctx.query_param("size").value_or("0")));
            try {
                auto res = co_await c.fetch(req);
                ctx.text(res.body);
            } catch (const tern::client_error& e) {
                ctx.status(502).text(std::string(tern::describe(e.why())));
            }
        });
    });
    auto cl = front.client();
    cl.send(sized_request("/sized?size=5", "hello"));
    auto r = cl.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == expected_answer("hello", "length"));
    CHECK(c.idle_connections() == 1);

    cl.send(sized_request("/sized?size=3", "hello"));
    r = cl.read_response();
    CHECK(r.status == 502);
    CHECK(r.body == tern::describe(tern::client_failure::bad_request));
    CHECK(c.idle_connections() == 0);

    cl.send(sized_request("/sized?size=10", "hello"));
    r = cl.read_response();
    CHECK(r.status == 502);
    CHECK(r.body == tern::describe(tern::client_failure::body_stream_short));
    CHECK(c.idle_connections() == 0);
}

TEST_CASE(
    "client: a redirect that would send a body_stream again is returned, one that drops the "
    "body is followed",
    "[client][body-stream]") {
    test_server upstream([](tern::app& app) {
        app.post("/keep", [](tern::context& ctx) {
            ctx.status(307).header("Location", "/hello").text("moved");
        });
        app.post("/drop", [](tern::context& ctx) {
            ctx.status(303).header("Location", "/hello").text("see other");
        });
        app.get("/hello", [](tern::context& ctx) { ctx.text("hello"); });
        app.post("/hello",
                 [](tern::context& ctx) { ctx.text("posted " + std::string(ctx.body())); });
    });
    tern::client_options o;
    o.max_redirects = 3;
    tern::client c(o);
    test_server front([&](tern::app& app) {
        app.post("/go", tern::streamed_body([&c, &upstream](tern::context& ctx) -> tern::task {
                     tern::client_request req{
                         .method = "POST",
                         .url = url_of(upstream, ctx.query_param("to").value_or("/keep"))};
                     req.body_stream = ctx.body_reader();
                     auto res = co_await c.fetch(req);
                     ctx.text(std::to_string(res.status) + " " + res.body);
                 }));
    });
    auto cl = front.client();
    cl.send(sized_request("/go?to=/keep", "abc"));
    auto r = cl.read_response();
    CHECK(r.body == "307 moved");
    cl.send(sized_request("/go?to=/drop", "abc"));
    r = cl.read_response();
    CHECK(r.body == "200 hello");
}

TEST_CASE("client: fetch_blocking and a file body refuse a body_stream", "[client][body-stream]") {
    test_server upstream(hash_route);
    tern::client c;
    tern::client_request req{.method = "POST", .url = url_of(upstream, "/hash")};
    req.body_stream = tern::body_reader();
    try {
        c.fetch_blocking(req);
        FAIL("fetch_blocking sent a body_stream");
    } catch (const tern::client_error& e) {
        CHECK(e.why() == tern::client_failure::bad_request);
    }
    CHECK(upstream.app().stats().connections_accepted == 0);

    test_server front([&](tern::app& app) {
        app.post("/both", [&c, &upstream](tern::context& ctx) -> tern::task {
            tern::client_request both{.method = "POST", .url = url_of(upstream, "/hash")};
            both.body_stream = ctx.body_reader();
            both.body_fd = 0;
            try {
                co_await c.fetch(both);
                ctx.text("sent");
            } catch (const tern::client_error& e) {
                ctx.status(502).text(std::string(tern::describe(e.why())));
            }
        });
    });
    auto cl = front.client();
    cl.send(sized_request("/both", "x"));
    const auto r = cl.read_response();
    CHECK(r.status == 502);
    CHECK(r.body == tern::describe(tern::client_failure::bad_request));
}

namespace {

void relay_route(tern::app& app, const tern::client& c, std::string url,
                 tern::relay_options options = {}) {
    app.get("/relay", [&c, url, options](tern::context& ctx) {
        auto reply = ctx.defer();
        tern::client_request req{.url = url};
        c.relay(
            reply, req,
            [reply](const tern::client_result& r, bool relayed) {
                if (relayed) return;
                reply.complete([r](tern::context& cx) {
                    cx.status(502).text(std::string(tern::describe(r.failure)));
                });
            },
            options);
    });
}

}  // namespace

TEST_CASE(
    "client: relay passes a 100 MiB answer on whole with the default limits (max_response_body "
    "is 64 MiB)",
    "[client][body-stream]") {
    const std::string huge = pattern(std::size_t{100} * 1024 * 1024);
    test_server upstream(
        [&](tern::app& app) { app.get("/huge", [&](tern::context& ctx) { ctx.text(huge); }); });
    tern::client c;
    test_server front([&](tern::app& app) { relay_route(app, c, url_of(upstream, "/huge")); });
    auto cl = front.client();
    cl.set_timeout(60s);
    cl.send(tern_test::get_request("/relay"));
    const auto r = cl.read_response();
    CHECK(r.status == 200);
    CHECK(r.body.size() == huge.size());
    CHECK(fnv(r.body) == fnv(huge));
}

TEST_CASE(
    "client: relay_options::max_body refuses a Content-Length over it before the head, and "
    "cuts a chunked body that passes it",
    "[client][body-stream]") {
    test_server upstream([](tern::app& app) {
        app.get("/sized", [](tern::context& ctx) { ctx.text(std::string(1000, 's')); });
        app.get("/chunked", [](tern::context& ctx) {
            auto s = ctx.stream();
            for (int i = 0; i < 10; ++i) s.write(std::string(100, 'c'));
            s.end();
        });
    });
    tern::client c;
    tern::relay_options options;
    options.max_body = 500;
    test_server front([&](tern::app& app) {
        relay_route(app, c, url_of(upstream, "/sized"), options);
        app.get("/relay-chunked", [&c, &upstream, options](tern::context& ctx) {
            auto reply = ctx.defer();
            c.relay(
                reply, {.url = url_of(upstream, "/chunked")},
                [reply](const tern::client_result&, bool relayed) {
                    if (!relayed) reply.complete([](tern::context& cx) { cx.status(502); });
                },
                options);
        });
    });
    auto cl = front.client();
    cl.send(tern_test::get_request("/relay"));
    const auto r = cl.read_response();
    CHECK(r.status == 502);
    CHECK(r.body == tern::describe(tern::client_failure::response_too_large));

    auto cut = front.client();
    cut.send(tern_test::get_request("/relay-chunked"));
    // The head went out (200, chunked), then the stream is aborted: no last chunk.
    const std::string all = cut.read_all_until_close(10s);
    CHECK(all.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(all.find("\r\n0\r\n\r\n") == std::string::npos);
}

}  // namespace wire_test_client_body_stream

#endif  // !defined(_WIN32)
