// Large request bodies over real sockets: spooled to an unnamed temporary file above
// spool_body_above (read through ctx.body() and ctx.body_fd()), per-route body limits above
// and below max_body_size (413 from the Content-Length, or while a chunked body streams
// in), multipart uploads from a spooled body, a spool directory that cannot be used, and the
// spool quota (max_spooled_bytes).

#include "support/eventually.hpp"
#include "support/temp_dir.hpp"
#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include "platform/files.hpp"

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>

namespace wire_test_spooled_bodies {

using namespace tern_test;
using namespace std::chrono_literals;

namespace {

std::string pattern_bytes(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i % 26);
    return s;
}

std::size_t files_in(const std::filesystem::path& dir) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
    return n;
}

// Bodies over 1 KiB go to a spool directory that does not exist: every spool fails.
tern::config unusable_spool_config() {
    tern::config cfg = test_config();
    cfg.spool.body_above = 1024;
    cfg.spool.directory = "/nonexistent/tern-spool";
    return cfg;
}

}  // namespace

TEST_CASE("a body over spool_body_above goes to an unnamed file and reads back whole",
          "[wire][upload]") {
    temp_dir spool;
    tern::config cfg = test_config();
    cfg.spool.body_above = 4096;
    cfg.spool.directory = spool.path.string();
    std::atomic<std::size_t> files_seen{99};
    test_server server(
        [&](tern::app& app) {
            app.post("/echo-size", [&](tern::context& ctx) {
                files_seen = files_in(spool.path);  // unnamed: nothing to see, nothing to leak
                const auto body = ctx.body();
                const bool matches = body == pattern_bytes(body.size());
                // The file can also be read in pieces.
                char first[3] = {};
                const bool readable = ctx.body_fd() >= 0 && tern::detail::platform::read_file_at(
                                                                ctx.body_fd(), first, 3, 0) == 3;
                ctx.text(std::to_string(body.size()) + (matches ? " intact" : " corrupt") +
                         (readable ? " fd " + std::string(first, 3) : std::string(" no-fd")));
            });
        },
        cfg);
    const auto big = fetch(server, body_request("POST", "/echo-size", pattern_bytes(300'000)));
    CHECK(big.body == "300000 intact fd abc");
#if !defined(_WIN32)  // Windows names a spool file until it closes (delete-on-close)
    CHECK(files_seen == 0);
#endif
    // A chunked body that grows past the threshold moves to the file on the way.
    raw_client c = server.client();
    const std::string part = pattern_bytes(26 * 100);
    c.send("POST /echo-size HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    for (int i = 0; i < 4; ++i) c.send("a28\r\n" + part + "\r\n");
    c.send("0\r\n\r\n");
    CHECK(c.read_response().body == "10400 intact fd abc");
    // A small body stays in memory.
    CHECK(fetch(server, body_request("POST", "/echo-size", "abc")).body == "3 intact no-fd");
}

TEST_CASE("a route's own body limit may be above or below max_body_size", "[wire][upload]") {
    tern::config cfg = test_config();
    cfg.limits.max_body_size = 1024;
    test_server server(
        [](tern::app& app) {
            app.post("/upload", tern::body_limit(1024 * 1024, [](tern::context& ctx) {
                         ctx.text(std::to_string(ctx.body().size()));
                     }));
            app.post("/tiny", tern::body_limit(10, [](tern::context& ctx) { ctx.text("ok"); }));
            app.post("/default", [](tern::context& ctx) { ctx.text("ok"); });
        },
        cfg);
    CHECK(fetch(server, body_request("POST", "/upload", pattern_bytes(500'000))).body == "500000");
    CHECK(fetch(server, body_request("POST", "/default", pattern_bytes(2000))).status == 413);
    CHECK(fetch(server, body_request("POST", "/tiny", pattern_bytes(11))).status == 413);
    CHECK(fetch(server, body_request("POST", "/tiny", pattern_bytes(10))).body == "ok");
    check_still_serving(server.port());
}

TEST_CASE("a chunked upload over its route's limit is answered 413 while it streams in",
          "[wire][upload]") {
    test_server server([](tern::app& app) {
        app.post("/upload",
                 tern::body_limit(64 * 1024, [](tern::context& ctx) { ctx.text("ok"); }));
    });
    raw_client c = server.client();
    c.send("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    const std::string chunk = "4000\r\n" + std::string(0x4000, 'x') + "\r\n";
    for (int i = 0; i < 5; ++i) c.send(chunk);  // 80 KiB, and the body never ends
    const auto r = c.read_response();
    CHECK(r.status == 413);
    CHECK(r.header("Connection") == "close");
    check_still_serving(server.port());
}

TEST_CASE("a multipart upload from a spooled body gives its files back intact", "[wire][upload]") {
    tern::config cfg = test_config();
    cfg.spool.body_above = 1024;
    test_server server(
        [](tern::app& app) {
            app.post("/form", [](tern::context& ctx) {
                const auto file = ctx.uploaded_file("doc");
                REQUIRE(file);
                ctx.text(file->filename + " " + std::to_string(file->size()) + " " +
                         (file->content == pattern_bytes(file->size()) ? "intact" : "corrupt") +
                         " " + ctx.form_param("note", "none"));
            });
        },
        cfg);
    const std::string content = pattern_bytes(200'000);
    const std::string body =
        "--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n"
        "--XyZ\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"big.txt\"\r\n"
        "Content-Type: text/plain\r\n\r\n" +
        content + "\r\n--XyZ--\r\n";
    const auto r = fetch(server,
                         "POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: "
                         "multipart/form-data; boundary=XyZ\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\n\r\n" + body);
    CHECK(r.body == "big.txt 200000 intact hello");
}

TEST_CASE("a spool directory that cannot take the body answers 500 and the server goes on",
          "[wire][upload]") {
    test_server server(
        [](tern::app& app) { app.post("/echo", [](tern::context& ctx) { ctx.text("ok"); }); },
        unusable_spool_config());
    const auto r = fetch(server, body_request("POST", "/echo", pattern_bytes(5000)));
    CHECK(r.status == 500);
    CHECK(r.header("Connection") == "close");
    // What docs/uploads.md says, not a bare "Internal Server Error".
    CHECK(r.body == "request body could not be stored");
    CHECK(fetch(server, body_request("POST", "/echo", "small")).body == "ok");
    check_still_serving(server.port());
}

TEST_CASE("an app.error(500) shaper sees why a body could not be stored in ctx.error_message()",
          "[wire][upload]") {
    test_server server(
        [](tern::app& app) {
            app.post("/echo", [](tern::context& ctx) { ctx.text("ok"); });
            app.error(500, [](tern::context& ctx) {
                ctx.text(std::string("refused: ") + std::string(ctx.error_message()));
            });
        },
        unusable_spool_config());
    const auto r = fetch(server, body_request("POST", "/echo", pattern_bytes(5000)));
    CHECK(r.status == 500);
    CHECK(r.body == "refused: request body could not be stored");
    check_still_serving(server.port());
}

TEST_CASE("a deferred response reads its spooled body after the handler returned",
          "[wire][upload]") {
    tern::config cfg = test_config();
    cfg.spool.body_above = 1024;
    test_server server(
        [](tern::app& app) {
            app.post("/later", [](tern::context& ctx) {
                auto reply = ctx.defer();
                std::thread([reply] {
                    std::this_thread::sleep_for(20ms);
                    reply.complete([](tern::context& c) {
                        c.text(std::to_string(c.body().size()) +
                               (c.body() == pattern_bytes(c.body().size()) ? " intact" : " bad"));
                    });
                }).detach();
            });
        },
        cfg);
    raw_client c = server.client();
    c.send(body_request("POST", "/later", pattern_bytes(100'000)) +
           body_request("POST", "/later", pattern_bytes(50'000)));
    CHECK(c.read_response().body == "100000 intact");
    CHECK(c.read_response().body == "50000 intact");
}

// max_spooled_bytes 100,000: one upload declaring 60,000 bytes and holding after the first
// 10,000 takes 60,000 of it at once.
TEST_CASE(
    "the spool quota answers a body that would pass it 503 + Retry-After, and frees "
    "its space when the body is done",
    "[wire][upload]") {
    tern::config cfg = test_config();
    cfg.spool.body_above = 1024;
    cfg.spool.max_bytes = 100'000;
    test_server server(
        [](tern::app& app) {
            app.post("/size",
                     [](tern::context& ctx) { ctx.text(std::to_string(ctx.body().size())); });
        },
        cfg);
    const std::string held = pattern_bytes(60'000);
    raw_client holder = server.client();
    // 100 Continue comes once the head is read, and so after the reservation.
    holder.send(
        "POST /size HTTP/1.1\r\nHost: t\r\nContent-Length: 60000\r\n"
        "Expect: 100-continue\r\n\r\n");
    REQUIRE(holder.read_response().status == 100);
    holder.send(held.substr(0, 10'000));
    const auto refused = fetch(server, body_request("POST", "/size", pattern_bytes(50'000)));
    CHECK(refused.status == 503);
    CHECK(refused.header("Retry-After") == "5");
    CHECK(refused.header("Connection") == "close");
    CHECK(refused.body == "request body could not be stored now: the spool is full");
    // A chunked body is counted as it arrives: refused once it passes the quota.
    const auto chunked = fetch(server,
                               "POST /size HTTP/1.1\r\nHost: t\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n"
                               "c350\r\n" +
                                   pattern_bytes(50'000) + "\r\n0\r\n\r\n");
    CHECK(chunked.status == 503);
    // Bodies kept in memory, and spooled ones that fit, are served meanwhile.
    CHECK(fetch(server, body_request("POST", "/size", "small")).body == "5");
    // A spooled body that fits beside the holder: once the refused chunked body's space is
    // back, which (as below) may be a moment after its 503 reached the client.
    CHECK(eventually([&] {
        return fetch(server, body_request("POST", "/size", pattern_bytes(30'000))).body == "30000";
    }));
    // The holder finishes; its space comes back and the refused size now fits.
    holder.send(held.substr(10'000));
    CHECK(holder.read_response().body == "60000");
    // The space comes back when the holder's loop has finished with the request, which may
    // be a moment after its response reached the client (another loop may take the next).
    CHECK(eventually([&] {
        return fetch(server, body_request("POST", "/size", pattern_bytes(50'000))).body == "50000";
    }));
    CHECK(fetch(server, body_request("POST", "/size", pattern_bytes(90'000))).body == "90000");
    check_still_serving(server.port());
}

TEST_CASE("a body larger than the whole spool quota is refused before its first byte",
          "[wire][upload]") {
    tern::config cfg = test_config();
    cfg.spool.body_above = 1024;
    cfg.spool.max_bytes = 10'000;
    std::atomic<int> ran{0};
    test_server server(
        [&](tern::app& app) {
            app.post("/size", [&](tern::context& ctx) {
                ++ran;
                ctx.text(std::to_string(ctx.body().size()));
            });
        },
        cfg);
    raw_client c = server.client();
    c.send("POST /size HTTP/1.1\r\nHost: t\r\nContent-Length: 20000\r\n\r\n");
    const auto r = c.read_response();
    CHECK(r.status == 503);
    CHECK(r.header("Retry-After") == "5");
    CHECK(ran == 0);
    check_closed_and_still_serving(c, r, server.port());
}

}  // namespace wire_test_spooled_bodies
