// app.ws over real sockets: the opening handshake and its refusals, echo, fragmentation,
// control frames, UTF-8, limits, the closing handshake from either side, pings, sending from
// other threads, broadcasts, backpressure and stop. A conformance matrix written from RFC
// 6455 (the Autobahn suite's categories as the checklist); frames are built by the test's
// own client (support/ws_client), not by tern's codec.

#include "support/eventually.hpp"
#include "support/test_server.hpp"
#include "support/ws_client.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <zlib.h>

namespace wire_test_websocket {

using namespace tern_test;
using namespace std::chrono_literals;

namespace {

// What an echo route saw, for checks from the test's thread.
struct observed {
    std::mutex mutex;
    std::vector<std::string> events;
    void add(std::string e) {
        std::lock_guard lock(mutex);
        events.push_back(std::move(e));
    }
    bool has(const std::string& e) {
        std::lock_guard lock(mutex);
        for (const auto& x : events) {
            if (x == e) return true;
        }
        return false;
    }
};

// An echo endpoint at /echo that records its close and error callbacks in `seen`.
void echo_routes(tern::app& app, observed& seen) {
    app.ws("/echo", [&seen](tern::ws_handlers& ws) {
        ws.on_message([](tern::ws_connection& c, std::string_view text) { c.send(text); });
        ws.on_binary([](tern::ws_connection& c, std::string_view data) { c.send_binary(data); });
        ws.on_close([&seen](tern::ws_connection&, int code, std::string_view reason) {
            seen.add("close " + std::to_string(code) + " " + std::string(reason));
        });
        ws.on_error([&seen](tern::ws_connection&, int code, std::string_view) {
            seen.add("error " + std::to_string(code));
        });
    });
}

// The server keeps serving others: a fresh client gets /__alive.
void still_serves(const test_server& server) {
    const auto r = fetch(server, get_request(alive_path));
    REQUIRE(r.status == 200);
    REQUIRE(r.body == "alive");
}

// Sends `bytes` on an echo connection and expects the server to fail it with `code`, then
// to close the TCP connection.
void expect_failure(const test_server& server, std::string_view bytes, int code) {
    ws_client c(server.port(), "/echo");
    REQUIRE(c.handshake.status == 101);
    c.send(bytes);
    CHECK(c.read_close_code() == code);
    CHECK(c.raw.closed_by_peer(3000ms));
    still_serves(server);
}

}  // namespace

// ---- the opening handshake ---------------------------------------------------------------

TEST_CASE("a WebSocket upgrade is answered 101 with the RFC 6455 accept key", "[wire][ws]") {
    observed seen;
    test_server server([&](tern::app& app) { echo_routes(app, seen); });
    ws_client c(server.port(), "/echo");
    INFO(describe(c.handshake));
    REQUIRE(c.handshake.status == 101);
    CHECK(c.handshake.header("Sec-WebSocket-Accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    CHECK(iequals(c.handshake.header("Upgrade").value_or(""), "websocket"));
    CHECK(has_token(c.handshake.header("Connection").value_or(""), "upgrade"));
    CHECK_FALSE(c.handshake.header("Content-Length"));
    CHECK_FALSE(c.handshake.header("Sec-WebSocket-Extensions"));  // compression is opt-in
    c.send_text("hello");
    auto f = c.read_frame();
    REQUIRE(f);
    CHECK(f->opcode == 1);
    CHECK(f->fin);
    CHECK(f->payload == "hello");
    c.send(client_frame(2, std::string("\0\1\2\xff", 4)));
    f = c.read_frame();
    REQUIRE(f);
    CHECK(f->opcode == 2);
    CHECK(f->payload == std::string("\0\1\2\xff", 4));
}

TEST_CASE("echo works for payloads at each length encoding", "[wire][ws]") {
    observed seen;
    test_server server([&](tern::app& app) { echo_routes(app, seen); });
    ws_client c(server.port(), "/echo");
    REQUIRE(c.handshake.status == 101);
    for (std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{125}, std::size_t{126}, std::size_t{127},
          std::size_t{65535}, std::size_t{65536}, std::size_t{300000}}) {
        std::string payload(n, 'x');
        for (std::size_t i = 0; i < n; ++i) payload[i] = static_cast<char>('a' + i % 26);
        c.send_text(payload);
        const auto f = c.read_frame();
        REQUIRE(f);
        CHECK(f->payload.size() == n);
        CHECK(f->payload == payload);
    }
}

TEST_CASE("frames sent in the same packet as the handshake, and byte by byte, are read",
          "[wire][ws]") {
    observed seen;
    test_server server([&](tern::app& app) { echo_routes(app, seen); });
    raw_client raw = server.client();
    raw.send(ws_upgrade_request("/echo") + client_frame(1, "first"));
    const auto r = raw.read_response(true);
    REQUIRE(r.status == 101);
    ws_client c(server.port(), "/echo");  // a second connection, fed one byte at a time
    REQUIRE(c.handshake.status == 101);
    const auto frame = client_frame(1, "slowly");
    for (char ch : frame) {
        c.send(std::string_view(&ch, 1));
        std::this_thread::sleep_for(2ms);
    }
    const auto f = c.read_frame();
    REQUIRE(f);
    CHECK(f->payload == "slowly");
}

TEST_CASE("malformed upgrades are refused with 400 and the server keeps serving", "[wire][ws]") {
    observed seen;
    test_server server([&](tern::app& app) { echo_routes(app, seen); });
    const std::string base = "Upgrade: websocket\r\nConnection: Upgrade\r\n";
    const std::string v13 = "Sec-WebSocket-Version: 13\r\n";
    const std::string key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
    SECTION("no key") { CHECK(fetch(server, get_request("/echo", base + v13)).status == 400); }
    SECTION("a key that is not 16 bytes of base64") {
        CHECK(
            fetch(server, get_request("/echo", base + v13 + "Sec-WebSocket-Key: abc\r\n")).status ==
            400);
        CHECK(fetch(server, get_request("/echo", base + v13 +
                                                     "Sec-WebSocket-Key: "
                                                     "dGhlIHNhbXBsZSBub25jZQ=!\r\n"))
                  .status == 400);
    }
    SECTION("two keys") {
        CHECK(fetch(server, get_request("/echo", base + v13 + key + key)).status == 400);
    }
    SECTION("Connection without the upgrade token") {
        CHECK(fetch(server, get_request("/echo",
                                        "Upgrade: websocket\r\nConnection: "
                                        "keep-alive\r\n" +
                                            v13 + key))
                  .status == 400);
    }
    SECTION("a request body") {
        const auto r = fetch(server, "GET /echo HTTP/1.1\r\nHost: x\r\n" + base + v13 + key +
                                         "Content-Length: 3\r\n\r\nabc");
        CHECK(r.status == 400);
    }
    SECTION("HTTP/1.0") {
        const auto r =
            fetch(server, "GET /echo HTTP/1.0\r\nHost: x\r\n" + base + v13 + key + "\r\n");
        CHECK(r.status == 400);
    }
    still_serves(server);
}

TEST_CASE("a version other than 13, or no upgrade at all, is answered 426 with version 13",
          "[wire][ws]") {
    observed seen;
    test_server server([&](tern::app& app) { echo_routes(app, seen); });
    auto r = fetch(server, get_request("/echo",
                                       "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                                       "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                                       "Sec-WebSocket-Version: 8\r\n"));
    CHECK(r.status == 426);
    CHECK(r.header("Sec-WebSocket-Version") == "13");
    r = fetch(server, get_request("/echo"));
    CHECK(r.status == 426);
    CHECK(r.header("Upgrade") == "websocket");
    still_serves(server);
}

TEST_CASE("a before filter that throws answers the upgrade request and no upgrade happens",
          "[wire][ws]") {
    observed seen;
    test_server server([&](tern::app& app) {
        app.before("/echo", [](tern::context& ctx) {
            if (ctx.cookie("session") != "good") throw tern::http_error(401, "log in first");
        });
        echo_routes(app, seen);
    });
    ws_client refused(server.port(), "/echo");
    CHECK(refused.handshake.status == 401);
    ws_client allowed(server.port(), "/echo", "Cookie: session=good\r\n");
    CHECK(allowed.handshake.status == 101);
}

TEST_CASE("the upgrade request's path parameters, query, headers and cookies are kept",
          "[wire][ws]") {
    test_server server([&](tern::app& app) {
        app.group("/rooms", [](tern::group& g) {
            g.ws("/{room}", [](tern::ws_handlers& ws) {
                ws.on_connect([](tern::ws_connection& c) {
                    c.send(std::string(c.path_param("room")) + "|" +
                           c.query_param("nick").value_or("?") + "|" +
                           std::string(c.header("X-Client").value_or("?")) + "|" +
                           std::string(c.cookie("id").value_or("?")) + "|" + std::string(c.path()));
                });
            });
        });
    });
    ws_client c(server.port(), "/rooms/lobby?nick=ann%20b",
                "X-Client: test\r\nCookie: a=1; id=42\r\n");
    REQUIRE(c.handshake.status == 101);
    const auto f = c.read_frame();
    REQUIRE(f);
    CHECK(f->payload == "lobby|ann b|test|42|/rooms/lobby");
}

TEST_CASE("a subprotocol the route speaks is chosen in the client's order", "[wire][ws]") {
    test_server server([&](tern::app& app) {
        app.ws("/p", [](tern::ws_handlers& ws) {
            ws.subprotocols({"chat.v2", "chat.v1"});
            ws.on_connect([](tern::ws_connection& c) { c.send(c.subprotocol()); });
        });
    });
    ws_client c(server.port(), "/p", "Sec-WebSocket-Protocol: other, chat.v1, chat.v2\r\n");
    REQUIRE(c.handshake.status == 101);
    CHECK(c.handshake.header("Sec-WebSocket-Protocol") == "chat.v1");
    auto f = c.read_frame();
    REQUIRE(f);
    CHECK(f->payload == "chat.v1");
    ws_client none(server.port(), "/p", "Sec-WebSocket-Protocol: other\r\n");
    REQUIRE(none.handshake.status == 101);
    CHECK_FALSE(none.handshake.header("Sec-WebSocket-Protocol"));
}

TEST_CASE("allowed_origins refuses a browser handshake from another origin with 403",
          "[wire][ws]") {
    test_server server([&](tern::app& app) {
        app.ws("/o", [](tern::ws_handlers& ws) {
            ws.allowed_origins({"https://good.example"});
            ws.on_message([](tern::ws_connection& c, std::string_view t) { c.send(t); });
        });
    });
    CHECK(ws_client(server.port(), "/o", "Origin: https://evil.example\r\n").handshake.status ==
          403);
    CHECK(ws_client(server.port(), "/o", "Origin: https://good.example\r\n").handshake.status ==
          101);
    CHECK(ws_client(server.port(), "/o").handshake.status == 101);  // not a browser
    still_serves(server);
}

// ---- frames ------------------------------------------------------------------------------

TEST_CASE("frames that break RFC 6455 section 5 fail the connection with 1002", "[wire][ws]") {
    observed seen;
    test_server server([&](tern::app& app) { echo_routes(app, seen); });
    SECTION("an unmasked client frame") {
        expect_failure(server, client_frame(1, "x", true, false), 1002);
    }
    SECTION("RSV1 without an extension") {
        expect_failure(server, client_frame(1, "x", true, true, 4), 1002);
    }
    SECTION("RSV2") { expect_failure(server, client_frame(1, "x", true, true, 2), 1002); }
    SECTION("RSV3") { expect_failure(server, client_frame(1, "x", true, true, 1), 1002); }
    SECTION("reserved data opcode 3") { expect_failure(server, client_frame(3, "x"), 1002); }
    SECTION("reserved control opcode 0xB") { expect_failure(server, client_frame(0xB, "x"), 1002); }
    SECTION("a ping over 125 bytes") {
        expect_failure(server, client_frame(9, std::string(126, 'p')), 1002);
    }
    SECTION("a fragmented ping") { expect_failure(server, client_frame(9, "p", false), 1002); }
    SECTION("a continuation without a message") {
        expect_failure(server, client_frame(0, "x"), 1002);
    }
    SECTION("a new message inside a fragmented one") {
        expect_failure(server, client_frame(1, "a", false) + client_frame(1, "b"), 1002);
    }
    SECTION("a non-minimal length") {
        std::string f = client_frame(1, "x");
        // 126-form length for a 1-byte payload: 0x81 0xFE 0x00 0x01, mask, payload.
        std::string bad;
        bad += f[0];
        bad += static_cast<char>(0x80 | 126);
        bad += '\0';
        bad += '\1';
        bad += f.substr(2);
        expect_failure(server, bad, 1002);
    }
    CHECK(eventually([&] { return seen.has("error 1002"); }));
}

TEST_CASE("fragments are joined, with control frames between them answered at once", "[wire][ws]") {
    observed seen;
    test_server server([&](tern::app& app) { echo_routes(app, seen); });
    ws_client c(server.port(), "/echo");
    REQUIRE(c.handshake.status == 101);
    c.send(client_frame(1, "frag", false) + client_frame(9, "ping!") +
           client_frame(0, "men", false) + client_frame(10, "unsolicited pong") +
           client_frame(0, "ted", true));
    auto f = c.read_frame();
    REQUIRE(f);
    CHECK(f->opcode == 10);
    CHECK(f->payload == "ping!");
    f = c.read_frame();
    REQUIRE(f);
    CHECK(f->opcode == 1);
    CHECK(f->payload == "fragmented");
    // Empty fragments, and a binary message in fragments.
    c.send(client_frame(2, "", false) + client_frame(0, "ab", false) + client_frame(0, "", true));
    f = c.read_frame();
    REQUIRE(f);
    CHECK(f->opcode == 2);
    CHECK(f->payload == "ab");
}

TEST_CASE("text that is not UTF-8 fails the connection with 1007, even split across fragments",
          "[wire][ws]") {
    observed seen;
    test_server server([&](tern::app& app) { echo_routes(app, seen); });
    SECTION("an invalid byte") { expect_failure(server, client_frame(1, "ok\xff"), 1007); }
    SECTION("an overlong form") { expect_failure(server, client_frame(1, "\xc0\xaf"), 1007); }
    SECTION("a surrogate") { expect_failure(server, client_frame(1, "\xed\xa0\x80"), 1007); }
    SECTION("above U+10FFFF") { expect_failure(server, client_frame(1, "\xf4\x90\x80\x80"), 1007); }
    SECTION("a message ending inside a character") {
        expect_failure(server, client_frame(1, "ab\xe2\x82"), 1007);
    }
    SECTION("an invalid byte in a later fragment, before the message ends") {
        ws_client c(server.port(), "/echo");
        REQUIRE(c.handshake.status == 101);
        c.send(client_frame(1, "fine ", false) + client_frame(0, "\xff", false));
        CHECK(c.read_close_code() == 1007);  // fail fast: the final fragment never came
    }
}

TEST_CASE("a character split across fragments is valid", "[wire][ws]") {
    observed seen;
    test_server server([&](tern::app& app) { echo_routes(app, seen); });
    ws_client c(server.port(), "/echo");
    REQUIRE(c.handshake.status == 101);
    const std::string euro = "\xe2\x82\xac";  // U+20AC
    c.send(client_frame(1, "price " + euro.substr(0, 1), false) +
           client_frame(0, euro.substr(1, 1), false) + client_frame(0, euro.substr(2) + "5", true));
    const auto f = c.read_frame();
    REQUIRE(f);
    CHECK(f->payload == "price " + euro + "5");
}

// ---- limits ------------------------------------------------------------------------------

TEST_CASE("a message over ws_max_message_size fails the connection with 1009", "[wire][ws]") {
    observed seen;
    tern::config cfg = test_config();
    cfg.websocket.max_message_size = 1000;
    test_server server([&](tern::app& app) { echo_routes(app, seen); }, cfg);
    SECTION("one frame announcing more: refused at its header") {
        ws_client c(server.port(), "/echo");
        REQUIRE(c.handshake.status == 101);
        std::string head;
        head += static_cast<char>(0x81);
        head += static_cast<char>(0x80 | 126);
        head += static_cast<char>(0x10);  // 4 KiB announced, none sent
        head += '\0';
        head += "mask";
        c.send(head);
        CHECK(c.read_close_code() == 1009);
    }
    SECTION("fragments that add up to more") {
        expect_failure(server,
                       client_frame(2, std::string(600, 'a'), false) +
                           client_frame(0, std::string(600, 'b'), true),
                       1009);
    }
    SECTION("exactly the limit is fine") {
        ws_client c(server.port(), "/echo");
        REQUIRE(c.handshake.status == 101);
        c.send(client_frame(2, std::string(1000, 'a')));
        const auto f = c.read_frame();
        REQUIRE(f);
        CHECK(f->payload.size() == 1000);
    }
}

TEST_CASE("a peer that never reads is cut off instead of growing the server's memory",
          "[wire][ws]") {
    std::atomic<bool> saw_false{false};
    std::atomic<bool> closed{false};
    tern::config cfg = test_config();
    cfg.streams.buffer_size = 64 * 1024;
    cfg.streams.max_buffer = 256 * 1024;
    test_server server(
        [&](tern::app& app) {
            app.ws("/flood", [&](tern::ws_handlers& ws) {
                ws.on_connect([&](tern::ws_connection& c) {
                    // A producer that ignores the backpressure, on its own thread.
                    std::thread([c, &saw_false] {
                        const std::string chunk(16 * 1024, 'z');
                        for (int i = 0; i < 20000 && c.is_open(); ++i) {
                            if (!c.send_binary(chunk)) saw_false = true;
                        }
                    }).detach();
                });
                ws.on_close([&](tern::ws_connection&, int, std::string_view) { closed = true; });
            });
        },
        cfg);
    ws_client c(server.port(), "/flood");  // and never reads again
    REQUIRE(c.handshake.status == 101);
    CHECK(eventually([&] { return closed.load(); }, 15000ms));
    CHECK(saw_false.load());
    still_serves(server);
}

// ---- control frames and the closing handshake --------------------------------------------

TEST_CASE("a ping is answered with a pong carrying its payload", "[wire][ws]") {
    observed seen;
    test_server server([&](tern::app& app) { echo_routes(app, seen); });
    ws_client c(server.port(), "/echo");
    REQUIRE(c.handshake.status == 101);
    c.send(client_frame(9, "are you there"));
    const auto f = c.read_frame();
    REQUIRE(f);
    CHECK(f->opcode == 10);
    CHECK(f->payload == "are you there");
}

TEST_CASE("a client's close is answered with the same code and the server closes TCP",
          "[wire][ws]") {
    observed seen;
    test_server server([&](tern::app& app) { echo_routes(app, seen); });
    ws_client c(server.port(), "/echo");
    REQUIRE(c.handshake.status == 101);
    c.send(client_close(1000, "bye"));
    const auto f = c.read_frame();
    REQUIRE(f);
    CHECK(f->opcode == 8);
    CHECK(f->close_code() == 1000);
    CHECK(c.raw.closed_by_peer(3000ms));
    CHECK(eventually([&] { return seen.has("close 1000 bye"); }));
    // A close frame without a code is answered with one without a code.
    ws_client d(server.port(), "/echo");
    d.send(client_frame(8, ""));
    const auto g = d.read_frame();
    REQUIRE(g);
    CHECK(g->opcode == 8);
    CHECK(g->payload.empty());
    CHECK(eventually([&] { return seen.has("close 1005 "); }));
}

TEST_CASE("invalid close frames fail the connection", "[wire][ws]") {
    observed seen;
    test_server server([&](tern::app& app) { echo_routes(app, seen); });
    SECTION("a one-byte payload") { expect_failure(server, client_frame(8, "x"), 1002); }
    SECTION("code 999") { expect_failure(server, client_close(999), 1002); }
    SECTION("code 1005, which may not be sent") {
        expect_failure(server, client_close(1005), 1002);
    }
    SECTION("code 1016, unassigned") { expect_failure(server, client_close(1016), 1002); }
    SECTION("a reason that is not UTF-8") {
        expect_failure(server, client_close(1000, "\xff"), 1007);
    }
}

TEST_CASE("an application code closes from the server and the peer's answer ends it",
          "[wire][ws]") {
    observed seen;
    test_server server([&](tern::app& app) {
        app.ws("/bye", [&](tern::ws_handlers& ws) {
            ws.on_message([](tern::ws_connection& c, std::string_view) { c.close(4000, "done"); });
            ws.on_close([&](tern::ws_connection&, int code, std::string_view) {
                seen.add("close " + std::to_string(code));
            });
        });
    });
    ws_client c(server.port(), "/bye");
    REQUIRE(c.handshake.status == 101);
    c.send_text("please");
    const auto f = c.read_frame();
    REQUIRE(f);
    CHECK(f->opcode == 8);
    CHECK(f->close_code() == 4000);
    CHECK(f->close_reason() == "done");
    c.send(client_close(4000));
    CHECK(c.raw.closed_by_peer(3000ms));
    CHECK(eventually([&] { return seen.has("close 4000"); }));
}

TEST_CASE("close with a code an endpoint may not send throws", "[wire][ws]") {
    tern::ws_connection none;
    CHECK_THROWS_AS(none.close(1005), std::invalid_argument);
    CHECK_THROWS_AS(none.close(1006), std::invalid_argument);
    CHECK_THROWS_AS(none.close(2000), std::invalid_argument);
    CHECK_NOTHROW(none.close(4999));
    CHECK_THROWS_AS(none.send("\xff"), std::invalid_argument);
}

TEST_CASE("a callback that throws closes the connection with 1011", "[wire][ws]") {
    observed seen;
    test_server server([&](tern::app& app) {
        app.ws("/throws", [&](tern::ws_handlers& ws) {
            ws.on_message(
                [](tern::ws_connection&, std::string_view) { throw std::runtime_error("boom"); });
            ws.on_error([&](tern::ws_connection&, int code, std::string_view) {
                seen.add("error " + std::to_string(code));
            });
        });
    });
    ws_client c(server.port(), "/throws");
    REQUIRE(c.handshake.status == 101);
    c.send_text("x");
    CHECK(c.read_close_code() == 1011);
    CHECK(eventually([&] { return seen.has("error 1011"); }));
    still_serves(server);
}

TEST_CASE("the server pings a silent connection and closes one that never answers", "[wire][ws]") {
    observed seen;
    tern::config cfg = test_config();
    cfg.websocket.ping_interval = 200ms;
    test_server server([&](tern::app& app) { echo_routes(app, seen); }, cfg);
    ws_client c(server.port(), "/echo");
    REQUIRE(c.handshake.status == 101);
    auto f = c.read_frame(3000ms);
    REQUIRE(f);
    CHECK(f->opcode == 9);
    c.send(client_frame(10, f->payload));  // answered: the connection lives on
    f = c.read_frame(3000ms);
    REQUIRE(f);
    CHECK(f->opcode == 9);
    // Not answered now: the connection ends.
    CHECK(c.raw.closed_by_peer(5000ms));
    CHECK(eventually([&] { return seen.has("close 1006 "); }));
}

// ---- sending from other threads, broadcasts, stop ----------------------------------------

TEST_CASE("a broadcast from another thread reaches connections on every event loop", "[wire][ws]") {
    tern::ws_clients room;
    test_server server([&](tern::app& app) {
        app.ws("/room", [&](tern::ws_handlers& ws) {
            ws.on_connect([&](tern::ws_connection& c) {
                room.add(c);
                c.send("joined");
            });
        });
    });
    std::vector<ws_client> clients;
    for (int i = 0; i < 6; ++i) {
        clients.emplace_back(server.port(), "/room");
        REQUIRE(clients.back().handshake.status == 101);
        const auto f = clients.back().read_frame();
        REQUIRE(f);
        REQUIRE(f->payload == "joined");
    }
    std::size_t sent = 0;
    std::thread([&] { sent = room.broadcast("news"); }).join();
    CHECK(sent == 6);
    for (auto& c : clients) {
        const auto f = c.read_frame();
        REQUIRE(f);
        CHECK(f->payload == "news");
    }
    clients[0].send(client_close(1000));
    CHECK(clients[0].raw.closed_by_peer(3000ms));
    CHECK(eventually([&] { return room.broadcast("again") == 5; }));
    CHECK(room.size() == 5);
}

TEST_CASE("stop sends close 1001 to every WebSocket and waits for their answers", "[wire][ws]") {
    observed seen;
    test_server server([&](tern::app& app) { echo_routes(app, seen); });
    ws_client a(server.port(), "/echo");
    ws_client b(server.port(), "/echo");
    REQUIRE(a.handshake.status == 101);
    REQUIRE(b.handshake.status == 101);
    std::thread stopper([&] { server.stop(); });
    const auto f = a.read_frame();
    REQUIRE(f);
    CHECK(f->opcode == 8);
    CHECK(f->close_code() == 1001);
    a.send(client_close(1001));
    CHECK(b.read_close_code() == 1001);
    b.raw.close();  // leaves without answering: the drain (or the close timeout) ends it
    stopper.join();
    CHECK(a.raw.closed_by_peer(1000ms));
    CHECK(seen.has("close 1001 "));
}

// ---- permessage-deflate (RFC 7692) -------------------------------------------------------

namespace {

// Raw deflate of `text` flushed with Z_SYNC_FLUSH, without the 00 00 ff ff tail (7.2.1).
std::string deflate_message(std::string_view text) {
    z_stream z{};
    REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    std::string out(deflateBound(&z, static_cast<uLong>(text.size())) + 16, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z.avail_in = static_cast<uInt>(text.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    REQUIRE(deflate(&z, Z_SYNC_FLUSH) == Z_OK);
    out.resize(out.size() - z.avail_out);
    deflateEnd(&z);
    REQUIRE(out.size() >= 4);
    REQUIRE(out.substr(out.size() - 4) == std::string("\0\0\xff\xff", 4));
    out.resize(out.size() - 4);
    return out;
}

// The client's side of a compressed connection: one raw inflate stream for every message
// (the server keeps its context between messages).
class message_inflater {
public:
    message_inflater() { REQUIRE(inflateInit2(&z_, -15) == Z_OK); }
    ~message_inflater() { inflateEnd(&z_); }
    message_inflater(const message_inflater&) = delete;
    message_inflater& operator=(const message_inflater&) = delete;

    std::string operator()(std::string payload) {
        payload.append("\0\0\xff\xff", 4);
        std::string out(1 << 20, '\0');
        z_.next_in = reinterpret_cast<Bytef*>(payload.data());
        z_.avail_in = static_cast<uInt>(payload.size());
        z_.next_out = reinterpret_cast<Bytef*>(out.data());
        z_.avail_out = static_cast<uInt>(out.size());
        const int rc = inflate(&z_, Z_SYNC_FLUSH);
        INFO("inflate returned " << rc);
        REQUIRE((rc == Z_OK || rc == Z_BUF_ERROR));
        REQUIRE(z_.avail_in == 0);
        out.resize(out.size() - z_.avail_out);
        return out;
    }

private:
    z_stream z_{};
};

constexpr std::string_view offer =
    "Sec-WebSocket-Extensions: permessage-deflate; "
    "client_max_window_bits\r\n";

}  // namespace

TEST_CASE("permessage-deflate is agreed only when the app turns it on", "[wire][ws]") {
    observed seen;
    test_server off([&](tern::app& app) { echo_routes(app, seen); });
    ws_client plain(off.port(), "/echo", offer);
    REQUIRE(plain.handshake.status == 101);
    CHECK_FALSE(plain.handshake.header("Sec-WebSocket-Extensions"));

    tern::config cfg = test_config();
    cfg.websocket.compression = true;
    test_server on([&](tern::app& app) { echo_routes(app, seen); }, cfg);
    ws_client c(on.port(), "/echo", offer);
    REQUIRE(c.handshake.status == 101);
    const auto ext = c.handshake.header("Sec-WebSocket-Extensions").value_or("");
    CHECK(ext.rfind("permessage-deflate", 0) == 0);
    // Compressed messages in, with the context kept between them; long answers come back
    // compressed, short ones may not.
    message_inflater inflate_message;
    for (int i = 0; i < 3; ++i) {
        const std::string text = "compressible " + std::string(200, 'c') + std::to_string(i);
        c.send(client_frame(1, deflate_message(text), true, true, 4));
        const auto f = c.read_frame();
        REQUIRE(f);
        CHECK(f->opcode == 1);
        CHECK(f->rsv1);
        CHECK(inflate_message(f->payload) == text);
    }
    // An uncompressed message is fine too (RSV1 clear).
    c.send_text("raw");
    const auto f = c.read_frame();
    REQUIRE(f);
    CHECK(f->payload == "raw");
}

TEST_CASE("a compressed message that inflates past the limit fails with 1009 (zip bomb)",
          "[wire][ws]") {
    observed seen;
    tern::config cfg = test_config();
    cfg.websocket.compression = true;
    cfg.websocket.max_message_size = 64 * 1024;
    test_server server([&](tern::app& app) { echo_routes(app, seen); }, cfg);
    ws_client c(server.port(), "/echo", offer);
    REQUIRE(c.handshake.status == 101);
    const std::string bomb = deflate_message(std::string(50 * 1024 * 1024, '\0'));
    REQUIRE(bomb.size() < 64 * 1024);  // small on the wire
    c.send(client_frame(2, bomb, true, true, 4));
    CHECK(c.read_close_code() == 1009);
    still_serves(server);
}

TEST_CASE("RSV1 on a continuation or control frame fails a compressing connection with 1002",
          "[wire][ws]") {
    observed seen;
    tern::config cfg = test_config();
    cfg.websocket.compression = true;
    test_server server([&](tern::app& app) { echo_routes(app, seen); }, cfg);
    for (const auto& bytes : {client_frame(1, "a", false) + client_frame(0, "b", true, true, 4),
                              client_frame(9, "p", true, true, 4)}) {
        ws_client c(server.port(), "/echo", offer);
        REQUIRE(c.handshake.status == 101);
        c.send(bytes);
        CHECK(c.read_close_code() == 1002);
    }
    // Bytes that are not deflate data at all: 1007.
    ws_client c(server.port(), "/echo", offer);
    c.send(client_frame(1, "\xff\xff\xff\xff garbage", true, true, 4));
    CHECK(c.read_close_code() == 1007);
}

TEST_CASE(
    "an app with blocking routes and compression and CORS and after filters and a logger upgrades",
    "[wire][ws]") {
    // With a blocking route the chain runs in two halves (dispatch_begin/end); compression,
    // CORS and after filters see the 101 and must leave it as it is.
    observed seen;
    std::atomic<int> after_ran{0};
    std::atomic<int> logged_101{0};
    test_server server([&](tern::app& app) {
        echo_routes(app, seen);
        app.get("/work", tern::blocking([](tern::context& ctx) { ctx.text("worked"); }));
        app.compression();
        tern::cors_config cors;
        cors.allowed_origins = {"http://page.example"};
        app.cors(cors);
        app.after([&](tern::context&) { ++after_ran; });
        app.request_logger([&](const tern::context& ctx, std::chrono::nanoseconds) {
            if (ctx.status() == 101) ++logged_101;
        });
    });
    ws_client c(server.port(), "/echo", "Origin: http://page.example\r\nAccept-Encoding: gzip\r\n");
    INFO(describe(c.handshake));
    REQUIRE(c.handshake.status == 101);
    CHECK_FALSE(c.handshake.header("Content-Encoding"));
    CHECK_FALSE(c.handshake.header("Content-Length"));
    CHECK_FALSE(c.handshake.header("Transfer-Encoding"));
    const std::string big(4000, 'z');  // above the compression threshold as an HTTP body
    c.send_text(big);
    const auto f = c.read_frame();
    REQUIRE(f);
    CHECK(f->payload == big);
    CHECK(after_ran.load() >= 1);
    CHECK(eventually([&] { return logged_101.load() == 1; }));
    const auto r = fetch(server, get_request("/work"));
    CHECK(r.status == 200);
    CHECK(r.body == "worked");
}

}  // namespace wire_test_websocket
