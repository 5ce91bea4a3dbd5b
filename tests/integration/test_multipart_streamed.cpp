// multipart/form-data bodies read part by part as they arrive (tern::multipart_reader on a
// tern::streamed_body route) over HTTP/1.1: raw bytes over loopback. Parts reach their sinks
// (hashed here) as their bytes pass; delimiters split across reads are found; a malformed
// body is 400, a limit passed 413, each with the connection kept or closed as the body's
// remainder requires, and another client still served.

#include <catch2/catch.hpp>

#include "support/eventually.hpp"
#include "support/fnv.hpp"
#include "support/raw_client.hpp"
#include "support/test_server.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace wire_test_multipart_streamed {

using namespace tern_test;
using namespace std::chrono_literals;

namespace {

using tern_test::fnv;

struct seen {
    std::atomic<int> pieces{0};
    std::atomic<int> body_failure{0};  // a tern::body_failure's value, 0: none
    std::atomic<int> finished{0};
    std::atomic<bool> started{false};
};

// "field filename content-type bytes hash" per part, one line each.
std::string describe_part(const tern::multipart_part& p, std::uint64_t bytes, std::uint64_t hash) {
    return p.field + " " + (p.is_file ? p.filename : "-") + " " + p.content_type + " " +
           std::to_string(bytes) + " " + std::to_string(hash) + "\n";
}

void routes(tern::app& app, seen& s) {
    constexpr std::size_t big = std::size_t{1} << 30;
    // Every part hashed as it arrives; files up to 64 MiB.
    app.post("/parts",
             tern::body_limit(big, tern::streamed_body([&s](tern::context& ctx) -> tern::task {
                                  tern::multipart_reader parts(
                                      ctx, tern::multipart_options{.max_file_size = 64 << 20});
                                  std::string out;
                                  while (auto part = co_await parts.next_part()) {
                                      std::uint64_t h = fnv("");
                                      std::uint64_t n = 0;
                                      while (auto piece = co_await parts.next_data()) {
                                          h = fnv(*piece, h);
                                          n += piece->size();
                                          ++s.pieces;
                                      }
                                      out += describe_part(*part, n, h);
                                  }
                                  ctx.text(out);
                              })));
    // Small limits; the reader's errors are left to tern (400, 413).
    app.post("/small",
             tern::body_limit(big, tern::streamed_body([](tern::context& ctx) -> tern::task {
                                  tern::multipart_reader parts(
                                      ctx, tern::multipart_options{.max_file_size = 1000,
                                                                   .max_parts = 3,
                                                                   .max_part_header_size = 200});
                                  int n = 0;
                                  while (auto part = co_await parts.next_part())
                                      ++n;  // data skipped
                                  ctx.text(std::to_string(n) + " parts");
                              })));
    // Reads until the reading fails, and records why.
    app.post("/watch", tern::streamed_body([&s](tern::context& ctx) -> tern::task {
                 tern::multipart_reader parts(ctx);
                 try {
                     while (auto part = co_await parts.next_part()) {
                         while (auto piece = co_await parts.next_data()) s.started = true;
                     }
                     ctx.text("whole");
                 } catch (const tern::body_error& e) {
                     s.body_failure = static_cast<int>(e.reason());
                 }
                 ++s.finished;
             }));
    // The callback form, in a plain handler that defers: names and sizes.
    app.post("/cb", tern::streamed_body([](tern::context& ctx) {
                 auto reply = ctx.defer();
                 auto parts = std::make_shared<tern::multipart_reader>(ctx);
                 auto out = std::make_shared<std::string>();
                 auto bytes = std::make_shared<std::size_t>(0);
                 auto on_part = std::make_shared<tern::multipart_reader::part_fn>();
                 auto on_data = std::make_shared<tern::body_reader::piece_fn>();
                 auto finish = [reply](std::string text, std::error_code ec) {
                     reply.complete([text = std::move(text), ec](tern::context& c) {
                         if (ec) c.status(ec == tern::multipart_failure::malformed ? 400 : 413);
                         c.text(ec ? ec.message() : text);
                     });
                 };
                 *on_data = [=](std::optional<std::string_view> piece, std::error_code ec) {
                     if (ec) {
                         finish({}, ec);
                         *on_part = nullptr;
                         *on_data = nullptr;
                     } else if (piece) {
                         *bytes += piece->size();
                         parts->next_data(*on_data);
                     } else {
                         *out += "=" + std::to_string(*bytes) + "\n";
                         parts->next_part(*on_part);
                     }
                 };
                 *on_part = [=](std::optional<tern::multipart_part> part, std::error_code ec) {
                     if (part) {
                         *out += part->field;
                         *bytes = 0;
                         parts->next_data(*on_data);
                         return;
                     }
                     finish(*out, ec);
                     *on_part = nullptr;  // the callbacks held each other: let them go
                     *on_data = nullptr;
                 };
                 parts->next_part(*on_part);
             }));
}

constexpr std::string_view form_type = "multipart/form-data; boundary=XyZ";

std::string head(std::string_view target, std::size_t length, std::string_view type = form_type) {
    return "POST " + std::string(target) +
           " HTTP/1.1\r\nHost: localhost\r\nContent-Type: " + std::string(type) +
           "\r\nContent-Length: " + std::to_string(length) + "\r\n\r\n";
}

std::string field(std::string_view name, std::string_view value) {
    return "--XyZ\r\nContent-Disposition: form-data; name=\"" + std::string(name) + "\"\r\n\r\n" +
           std::string(value) + "\r\n";
}

std::string file(std::string_view name, std::string_view filename, std::string_view data) {
    return "--XyZ\r\nContent-Disposition: form-data; name=\"" + std::string(name) +
           "\"; filename=\"" + std::string(filename) +
           "\"\r\nContent-Type: application/octet-stream\r\n\r\n" + std::string(data) + "\r\n";
}

const std::string close_delimiter = "--XyZ--\r\n";

std::string pattern(std::size_t n, std::size_t seed) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 31 + seed) % 256);
    return s;
}

void another_client_is_served(const test_server& server) {
    raw_client other = server.client();
    other.send(get_request(alive_path));
    const response r = other.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "alive");
}

// The connection was kept: a second request on it is answered.
void connection_kept(raw_client& c) {
    c.send(get_request(alive_path));
    const response r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "alive");
}

}  // namespace

TEST_CASE("two file parts and a field are streamed to their sinks and hashed as they arrive",
          "[wire][multipart-stream]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    const std::string a = pattern(3'000'000, 1);
    const std::string b = pattern(1'000'001, 7);
    const std::string body = file("a", "../dir/a.bin", a) + field("note", "hello") +
                             file("b", "b.bin", b) + close_delimiter;
    raw_client c = server.client();
    c.send(head("/parts", body.size()) + body);
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "a a.bin application/octet-stream 3000000 " + std::to_string(fnv(a)) +
                        "\nnote - text/plain 5 " + std::to_string(fnv("hello")) +
                        "\nb b.bin application/octet-stream 1000001 " + std::to_string(fnv(b)) +
                        "\n");
    CHECK_FALSE(r.header("Connection").has_value());
    CHECK(s.pieces > 3);  // the files came in pieces
    connection_kept(c);
    another_client_is_served(server);
}

TEST_CASE("delimiters split across small writes with pauses are found",
          "[wire][multipart-stream]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    const std::string a = pattern(5000, 3);
    const std::string body =
        field("x", "first value") + file("f", "f.txt", a) + field("y", "") + close_delimiter;
    raw_client c = server.client();
    c.send(head("/parts", body.size()));
    // Writes of 7 bytes, each after a pause, so that the server reads every delimiter in
    // pieces; the file's middle goes in one write.
    const std::size_t middle_from = body.find(a.substr(0, 100)) + 50;
    const std::size_t middle_to = middle_from + a.size() - 100;
    std::size_t at = 0;
    while (at < body.size()) {
        std::size_t n = std::min<std::size_t>(7, body.size() - at);
        if (at >= middle_from && at < middle_to) n = middle_to - at;
        c.send(std::string_view(body).substr(at, n));
        at += n;
        std::this_thread::sleep_for(1ms);
    }
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "x - text/plain 11 " + std::to_string(fnv("first value")) +
                        "\nf f.txt application/octet-stream 5000 " + std::to_string(fnv(a)) +
                        "\ny - text/plain 0 " + std::to_string(fnv("")) + "\n");
    connection_kept(c);
}

TEST_CASE("a multipart Content-Type without a valid boundary is 400 and the connection stays",
          "[wire][multipart-stream]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    const std::string body = field("x", "1") + close_delimiter;
    raw_client c = server.client();
    c.send(head("/parts", body.size(), "multipart/form-data; boundary=\"a@b\"") + body);
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 400);
    CHECK(r.body.find("boundary") != std::string::npos);
    CHECK_FALSE(r.header("Connection").has_value());  // the small rest is read and dropped
    connection_kept(c);
    raw_client other = server.client();
    other.send(head("/parts", body.size(), "text/plain") + body);
    CHECK(other.read_response().status == 415);
    another_client_is_served(server);
}

TEST_CASE("a malformed part delimiter is 400 and the connection stays",
          "[wire][multipart-stream]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    const std::string body = field("x", "1") + "--XyZjunk\r\n" + field("y", "2") + close_delimiter;
    raw_client c = server.client();
    c.send(head("/parts", body.size()) + body);
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 400);
    CHECK(r.body.find("multipart boundary is followed by something other than a line end") !=
          std::string::npos);
    CHECK_FALSE(r.header("Connection").has_value());
    connection_kept(c);
    another_client_is_served(server);
}

TEST_CASE("too many parts is 413 and the connection stays", "[wire][multipart-stream]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    std::string body;
    for (int i = 0; i < 4; ++i) body += field("p" + std::to_string(i), "v");
    body += close_delimiter;
    raw_client c = server.client();
    c.send(head("/small", body.size()) + body);
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 413);
    CHECK(r.body.find("multipart body has more than 3 parts") != std::string::npos);
    CHECK_FALSE(r.header("Connection").has_value());
    connection_kept(c);
    // Three parts are within the limit.
    const std::string three = field("a", "1") + field("b", "2") + field("c", "3") + close_delimiter;
    c.send(head("/small", three.size()) + three);
    CHECK(c.read_response().body == "3 parts");
    another_client_is_served(server);
}

TEST_CASE("an over-long part header is 413 and the connection stays", "[wire][multipart-stream]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    const std::string body =
        "--XyZ\r\nContent-Disposition: form-data; name=\"x\"\r\nX-Pad: " + std::string(300, 'p') +
        "\r\n\r\nv\r\n" + close_delimiter;
    raw_client c = server.client();
    c.send(head("/small", body.size()) + body);
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 413);
    CHECK(r.body.find("part headers are larger than 200 bytes") != std::string::npos);
    CHECK_FALSE(r.header("Connection").has_value());
    connection_kept(c);
    another_client_is_served(server);
}

TEST_CASE(
    "a file over the limit is 413 as it passes, before the rest is read, and a large "
    "remainder closes the connection",
    "[wire][multipart-stream]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    const std::string body = file("f", "big.bin", pattern(16'000'000, 5)) + close_delimiter;
    raw_client c = server.client();
    const std::string request = head("/small", body.size()) + body;
    // The server answers long before the body's end, and reads no more of it.
    c.send_while_reading(request, 5s);
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 413);
    CHECK(r.body.find("file 'big.bin' is larger than 1000 bytes") != std::string::npos);
    CHECK(r.header("Connection") == std::optional<std::string>("close"));
    CHECK(c.closed_by_peer());
    another_client_is_served(server);
}

TEST_CASE("a small file over the limit is 413 and the connection stays",
          "[wire][multipart-stream]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    const std::string body = file("f", "f.bin", pattern(1001, 5)) + close_delimiter;
    raw_client c = server.client();
    c.send(head("/small", body.size()) + body);
    const response r = c.read_response();
    CHECK(r.status == 413);
    CHECK_FALSE(r.header("Connection").has_value());
    connection_kept(c);
}

TEST_CASE("a chunked multipart body is read part by part", "[wire][multipart-stream]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    const std::string body = field("x", "chunked value") + close_delimiter;
    std::string chunked;
    for (std::size_t at = 0; at < body.size(); at += 10) {
        const std::string piece = body.substr(at, 10);
        char size[16];
        std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
        chunked += size + piece + "\r\n";
    }
    chunked += "0\r\n\r\n";
    raw_client c = server.client();
    c.send("POST /parts HTTP/1.1\r\nHost: localhost\r\nContent-Type: " + std::string(form_type) +
           "\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked);
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "x - text/plain 13 " + std::to_string(fnv("chunked value")) + "\n");
    connection_kept(c);
}

TEST_CASE("the callback form reads parts and their data", "[wire][multipart-stream]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    const std::string body =
        field("x", "12345") + file("f", "f.bin", pattern(100'000, 9)) + close_delimiter;
    raw_client c = server.client();
    c.send(head("/cb", body.size()) + body);
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "x=5\nf=100000\n");
    connection_kept(c);
    const std::string bad = field("x", "1") + "--XyZ?\r\n";
    c.send(head("/cb", bad.size()) + bad);
    const response refused = c.read_response();
    CHECK(refused.status == 400);
    CHECK(refused.body == make_error_code(tern::multipart_failure::malformed).message());
}

TEST_CASE("a client leaving during a multipart body ends the reading with client_left",
          "[wire][multipart-stream]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    {
        raw_client c = server.client();
        const std::string start = file("f", "f.bin", pattern(1000, 2));
        c.send(head("/watch", start.size() + 100'000) + start);
        REQUIRE(eventually([&] { return s.started.load(); }));
    }  // closed
    REQUIRE(eventually([&] { return s.finished.load() == 1; }));
    CHECK(s.body_failure == static_cast<int>(tern::body_failure::client_left));
    another_client_is_served(server);
}

}  // namespace wire_test_multipart_streamed
