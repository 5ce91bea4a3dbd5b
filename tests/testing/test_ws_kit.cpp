// The kit's WebSocket client (tern::testing::ws_client) against real app.ws routes: echo of
// text and binary in every length form, fragmented sends, subprotocols, refused upgrades,
// close codes both ways, pings, and hostile bytes; against canned servers for what tern
// never sends (frames a strict client must refuse, a wrong accept key, a bare close).

#include "support/eventually.hpp"
#include "testing/canned_server.hpp"

#include <catch2/catch.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

namespace kit_test_ws_kit {

using namespace std::chrono_literals;
using tern::testing::ws_client;
using tern::testing::ws_closed;
using tern::testing::ws_options;

namespace {

// Echoes text and binary messages; "close me" makes the server close with 4000 "done".
void add_echo(tern::app& app) {
    app.ws("/echo", [](tern::ws_handlers& ws) {
        ws.on_message([](tern::ws_connection& c, std::string_view text) {
            if (text == "close me") {
                c.close(4000, "done");
                return;
            }
            c.send(text);
        });
        ws.on_binary([](tern::ws_connection& c, std::string_view data) { c.send_binary(data); });
    });
}

// `n` bytes of ASCII with a pattern, so a reordered or dropped piece shows.
std::string pattern(std::size_t n) {
    std::string out(n, '\0');
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>('a' + i % 26);
    return out;
}

// The RFC 6455 section 1.3 example key and its accept value, for the canned servers.
constexpr const char* rfc_key = "dGhlIHNhbXBsZSBub25jZQ==";
constexpr const char* rfc_accept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

std::string canned_101(std::string_view accept = rfc_accept) {
    return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Accept: " +
           std::string(accept) + "\r\n\r\n";
}

ws_options rfc_key_options() {
    ws_options options;
    options.headers = {{"Sec-WebSocket-Key", rfc_key}};
    options.timeout = 2s;
    return options;
}

}  // namespace

TEST_CASE("ws_client: text and binary messages are echoed", "[kit][ws]") {
    tern::app app;
    add_echo(app);
    tern::testing::server server(app);
    ws_client ws = server.ws("/echo");
    ws.send_text("hello");
    const auto text = ws.receive();
    CHECK(text.data == "hello");
    CHECK_FALSE(text.binary);
    ws.send_binary(std::string("\x00\x01\xFF\xFE", 4));
    const auto binary = ws.receive();
    CHECK(binary.binary);
    CHECK(binary.data == std::string("\x00\x01\xFF\xFE", 4));
    ws.send_text("");
    CHECK(ws.receive().data.empty());
    ws.send_text("\xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80");
    CHECK(ws.receive().data == "\xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80");

    bool accept_seen = false;
    for (const auto& h : ws.headers())
        accept_seen = accept_seen || h.name == "Sec-WebSocket-Accept";
    CHECK(accept_seen);
    CHECK(ws.subprotocol().empty());
}

TEST_CASE("ws_client: messages of 16-bit and 64-bit lengths go and come back whole", "[kit][ws]") {
    tern::app app;
    add_echo(app);
    tern::testing::server server(app);
    ws_client ws = server.ws("/echo");
    for (const std::size_t n : {125u, 126u, 65535u, 65536u, 300000u}) {
        const std::string text = pattern(n);
        ws.send_text(text);
        CHECK(ws.receive().data == text);
        ws.send_binary(text);
        const auto back = ws.receive();
        CHECK(back.binary);
        CHECK(back.data.size() == n);
        CHECK(back.data == text);
    }
}

TEST_CASE("ws_client: fragment_size sends a message in fragments the server joins", "[kit][ws]") {
    tern::app app;
    add_echo(app);
    tern::testing::server server(app);
    ws_options options;
    options.fragment_size = 7;  // splits the two- and four-byte characters below too
    ws_client ws = server.ws("/echo", options);
    std::string text;
    for (int i = 0; i < 50; ++i) text += "caf\xC3\xA9 \xF0\x9F\x98\x80 ";
    ws.send_text(text);
    CHECK(ws.receive().data == text);
    const std::string bytes = pattern(70000);
    ws.send_binary(bytes);
    CHECK(ws.receive().data == bytes);
    ws.send_text("x");  // shorter than a fragment: one frame
    CHECK(ws.receive().data == "x");
}

TEST_CASE("ws_client offers subprotocols and reports the one the route chose", "[kit][ws]") {
    tern::app app;
    app.ws("/proto", [](tern::ws_handlers& ws) {
        ws.subprotocols({"chat.v2", "chat.v1"});
        ws.on_connect([](tern::ws_connection& c) { c.send(std::string(c.subprotocol())); });
    });
    tern::testing::server server(app);
    ws_options v1_first;
    v1_first.subprotocols = {"chat.v1", "chat.v2"};
    ws_client ws = server.ws("/proto", v1_first);
    CHECK(ws.subprotocol() == "chat.v1");  // the first of the client's list the route speaks
    CHECK(ws.receive().data == "chat.v1");

    ws_options unknown;
    unknown.subprotocols = {"mqtt"};
    ws_client none = server.ws("/proto", unknown);
    CHECK(none.subprotocol().empty());
    CHECK(none.receive().data.empty());
}

TEST_CASE("ws_client: a refused upgrade is a client_error naming the status and the body",
          "[kit][ws]") {
    tern::app app;
    app.before("/guarded", [](tern::context& ctx) {
        if (ctx.header("Authorization") != "Bearer ok") throw tern::http_error(403, "no entry");
    });
    app.ws("/guarded", [](tern::ws_handlers& ws) {
        ws.on_connect([](tern::ws_connection& c) { c.send("in"); });
    });
    app.ws("/site", [](tern::ws_handlers& ws) { ws.allowed_origins({"https://site.example"}); });
    app.get("/plain", [](tern::context& ctx) { ctx.text("not a websocket"); });
    tern::testing::server server(app);

    CHECK_THROWS_WITH(server.ws("/guarded"), Catch::Contains("403") && Catch::Contains("no entry"));
    ws_options authorized;
    authorized.headers = {{"Authorization", "Bearer ok"}};
    CHECK(server.ws("/guarded", authorized).receive().data == "in");

    ws_options evil;
    evil.headers = {{"Origin", "https://evil.example"}};
    CHECK_THROWS_WITH(server.ws("/site", evil), Catch::Contains("403"));
    CHECK_THROWS_WITH(server.ws("/plain"),
                      Catch::Contains("200") && Catch::Contains("not a websocket"));
    CHECK_THROWS_WITH(server.ws("/nowhere"), Catch::Contains("404"));
    ws_options version8;
    version8.headers = {{"Sec-WebSocket-Version", "8"}};  // replaces the kit's 13
    CHECK_THROWS_WITH(server.ws("/site", version8), Catch::Contains("426"));
}

TEST_CASE("ws_client: the server's close code and reason reach receive and wait_close",
          "[kit][ws]") {
    std::mutex mutex;
    int server_saw = 0;
    tern::app app;
    add_echo(app);
    app.ws("/bye", [&](tern::ws_handlers& ws) {
        ws.on_connect([](tern::ws_connection& c) { c.close(4001, "see you"); });
        ws.on_close([&](tern::ws_connection&, int code, std::string_view) {
            const std::lock_guard lock(mutex);
            server_saw = code;
        });
    });
    tern::testing::server server(app);

    ws_client echo = server.ws("/echo");
    echo.send_text("close me");
    try {
        echo.receive();
        FAIL("receive() returned after the server's Close");
    } catch (const ws_closed& e) {
        CHECK(e.code() == 4000);
        CHECK(e.reason() == "done");
    }
    CHECK_THROWS_AS(echo.receive(), ws_closed);  // and on every later call
    CHECK(echo.wait_close() == 4000);
    CHECK(echo.close() == 4000);  // already closed by the server: its code, nothing sent

    ws_client bye = server.ws("/bye");
    CHECK(bye.wait_close() == 4001);
    // The client answered the Close with the same code: the server's closing handshake
    // completed (not 1006).
    CHECK(tern_test::eventually([&] {
        const std::lock_guard lock(mutex);
        return server_saw == 4001;
    }));
}

TEST_CASE("ws_client: close() is a closing handshake the server answers", "[kit][ws]") {
    std::mutex mutex;
    int code_seen = 0;
    std::string reason_seen;
    tern::app app;
    app.ws("/polite", [&](tern::ws_handlers& ws) {
        ws.on_message([](tern::ws_connection& c, std::string_view text) { c.send(text); });
        ws.on_close([&](tern::ws_connection&, int code, std::string_view reason) {
            const std::lock_guard lock(mutex);
            code_seen = code;
            reason_seen = reason;
        });
    });
    tern::testing::server server(app);
    ws_client ws = server.ws("/polite");
    ws.send_text("unread");  // its echo arrives before the Close answer and is discarded
    CHECK(ws.close(4100, "finished") == 4100);
    CHECK(tern_test::eventually([&] {
        const std::lock_guard lock(mutex);
        return code_seen == 4100 && reason_seen == "finished";
    }));
    CHECK_THROWS_AS(ws.send_text("after"), ws_closed);
    CHECK_THROWS_AS(ws.close(999), std::invalid_argument);
}

TEST_CASE("ws_client answers the server's pings and skips the pongs to its own", "[kit][ws]") {
    tern::app app;
    // A client that answers nothing is closed after two intervals (400 ms): wide enough that
    // a loaded machine's scheduling does not close a client that does answer.
    app.configure([](tern::config& c) { c.websocket.ping_interval = 200ms; });
    add_echo(app);
    tern::testing::server server(app);
    ws_client ws = server.ws("/echo");
    ws.ping("are you there");
    ws.ping();
    ws.send_text("first");
    CHECK(ws.receive().data == "first");
    // receive() waits through several of the server's pings and answers each.
    ws_options short_wait;
    short_wait.timeout = 1000ms;
    ws_client quiet = server.ws("/echo", short_wait);
    CHECK_THROWS_AS(quiet.receive(), tern::testing::timeout_error);
    quiet.send_text("still open");
    CHECK(quiet.receive().data == "still open");
    CHECK_THROWS_AS(ws.ping(std::string(126, 'p')), std::invalid_argument);
    // A client that reads nothing answers no ping: the server gives up on it.
    ws_client sleeper = server.ws("/echo");
    std::this_thread::sleep_for(1500ms);
    CHECK_THROWS_AS(sleeper.receive(), ws_closed);
}

TEST_CASE("ws_client: bad frames sent with send_raw make the server close with 1002", "[kit][ws]") {
    tern::app app;
    add_echo(app);
    tern::testing::server server(app);
    ws_client unmasked = server.ws("/echo");
    unmasked.send_raw(std::string("\x81\x02hi", 4));  // a text frame without a mask
    CHECK(unmasked.wait_close() == 1002);

    ws_client bad_opcode = server.ws("/echo");
    bad_opcode.send_raw(std::string("\x83\x80\x00\x00\x00\x00", 6));  // opcode 3, masked
    CHECK(bad_opcode.wait_close() == 1002);

    ws_client bad_text = server.ws("/echo");
    bad_text.send_text("\xC0\xAF");  // sent as given: not UTF-8
    CHECK(bad_text.wait_close() == 1007);
}

TEST_CASE("ws_client: no message within the timeout is a timeout_error, and the stop is 1001",
          "[kit][ws]") {
    tern::app app;
    add_echo(app);
    tern::testing::server server(app);
    ws_options options;
    options.timeout = 200ms;
    ws_client ws = server.ws("/echo", options);
    CHECK_THROWS_AS(ws.receive(), tern::testing::timeout_error);
    CHECK_THROWS_AS(ws.wait_close(), tern::testing::timeout_error);
    ws.send_text("after the timeouts");
    CHECK(ws.receive().data == "after the timeouts");
    CHECK(ws.close() == 1000);

    ws_client other = server.ws("/echo");
    // stop() waits for the answers to its Close frames: it runs beside the client.
    std::thread stopping([&server] { server.stop(); });
    try {
        other.receive();
        FAIL("receive() returned after the stop");
    } catch (const ws_closed& e) {
        CHECK(e.code() == 1001);
        CHECK(e.reason() == "server stopping");
    }
    stopping.join();
    CHECK(other.wait_close() == 1001);
}

TEST_CASE("ws_client refuses a 101 with a wrong Sec-WebSocket-Accept", "[kit][ws]") {
    tern_testing_test::canned_server wrong(canned_101("d3JvbmcgYWNjZXB0IGtleSAxMjM0NTY="), false);
    CHECK_THROWS_WITH(ws_client(wrong.port(), "/", rfc_key_options()),
                      Catch::Contains("Sec-WebSocket-Accept"));
    tern_testing_test::canned_server right(canned_101(), false);
    CHECK_NOTHROW(ws_client(right.port(), "/", rfc_key_options()));
}

TEST_CASE("ws_client refuses server frames with reserved bits, bad opcodes, masks or bad text",
          "[kit][ws]") {
    const std::pair<std::string, const char*> cases[] = {
        {std::string("\xC1\x02hi", 4), "reserved bit"},
        {std::string("\x83\x00", 2), "unknown opcode"},
        {std::string("\x81\x82\x00\x00\x00\x00hi", 8), "masked"},
        {std::string("\x81\x02\xC0\xAF", 4), "not UTF-8"},
        {std::string("\x80\x02hi", 4), "continuation frame without a message"},
        {std::string("\x01\x01h\x81\x01i", 6), "inside a fragmented one"},
        {std::string("\x88\x02\x03\xED", 4), "which no endpoint may send"},  // 1005
    };
    for (const auto& [frame, reason] : cases) {
        tern_testing_test::canned_server hostile(canned_101() + frame, false);
        ws_client ws(hostile.port(), "/", rfc_key_options());
        CHECK_THROWS_WITH(ws.receive(), Catch::Contains(reason));
    }
}

TEST_CASE("ws_client: a connection that ends without a Close is ws_closed with 1006", "[kit][ws]") {
    tern_testing_test::canned_server bare(canned_101() + std::string("\x81\x02ok", 4), true);
    ws_client ws(bare.port(), "/", rfc_key_options());
    CHECK(ws.receive().data == "ok");  // what came before the close is still read
    try {
        ws.receive();
        FAIL("receive() returned after the connection ended");
    } catch (const ws_closed& e) {
        CHECK(e.code() == 1006);
    }
    CHECK(ws.wait_close() == 1006);
}

}  // namespace kit_test_ws_kit
