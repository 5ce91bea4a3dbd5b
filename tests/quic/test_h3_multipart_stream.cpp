// tern::multipart_reader over HTTP/3 (docs/uploads.md): a streamed_body route reads a
// multipart body's parts as the DATA frames arrive, a file part of several MiB in pieces
// with the digest right; a file over the route's part limit is 413 and a malformed body 400
// on its stream, and the connection goes on serving. Built only with TERN_HTTP3.

#include <catch2/catch.hpp>

#include "support/fnv.hpp"
#include "support/quic_app.hpp"
#include "support/quic_client.hpp"

#include <tern/multipart_reader.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace wire_test_h3_multipart_stream {

using namespace std::chrono_literals;
using tern_test::fnv;
using tern_test::h3_body;
using tern_test::h3_data;
using tern_test::h3_post_typed;
using tern_test::h3_statuses;
using tern_test::quic_app;
using tern_test::quic_client;
using tern_test::start_h3;

namespace {

constexpr std::size_t file_limit = std::size_t{8} << 20;
constexpr const char* form_type = "multipart/form-data; boundary=XyZ";

// Each part: its field name, file name, byte count, digest and the pieces it came in.
void routes(tern::app& app) {
    app.post("/parts",
             tern::body_limit(
                 std::size_t{1} << 30, tern::streamed_body([](tern::context& ctx) -> tern::task {
                     tern::multipart_reader parts(
                         ctx, tern::multipart_options{.max_file_size = file_limit});
                     std::string out(ctx.protocol());
                     while (auto part = co_await parts.next_part()) {
                         std::uint64_t n = 0;
                         std::uint64_t h = fnv({});
                         int pieces = 0;
                         while (auto piece = co_await parts.next_data()) {
                             h = fnv(*piece, h);
                             n += piece->size();
                             ++pieces;
                         }
                         out += " " + part->field + ":" + part->filename + ":" + std::to_string(n) +
                                ":" + std::to_string(h) + ":" + (pieces > 1 ? "pieces" : "whole");
                     }
                     ctx.text(out);
                 })));
    app.get("/ping", [](tern::context& ctx) { ctx.text("pong"); });
}

std::string pattern(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 7 % 251);
    return s;
}

std::string form(const std::string& file) {
    return "--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n"
           "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.bin\"\r\n"
           "Content-Type: application/octet-stream\r\n\r\n" +
           file + "\r\n--XyZ--\r\n";
}

// POSTs `body` to /parts in DATA frames of 64 KiB and returns the stream.
std::int64_t post(quic_client& c, const std::string& body) {
    const auto id = c.open_bidi();
    REQUIRE(id >= 0);
    auto bytes = h3_post_typed("/parts", body.size(), form_type);
    for (std::size_t at = 0; at < body.size(); at += 65536) {
        const auto data = h3_data(std::string_view(body).substr(at, 65536));
        bytes.insert(bytes.end(), data.begin(), data.end());
    }
    c.send(id, bytes, true);
    return id;
}

bool answered(quic_client& c, std::int64_t id) {
    return c.pump_until([&] { return c.stream(id).ended || c.stream(id).reset; }, 30s);
}

}  // namespace

TEST_CASE("h3: a multipart_reader reads a 6 MiB file part in pieces as it arrives, whole",
          "[http3][multipart-stream]") {
    quic_app server({}, routes);
    quic_client c(server.port);
    start_h3(c);
    const std::string file = pattern(std::size_t{6} << 20);
    const auto id = post(c, form(file));
    REQUIRE(answered(c, id));
    const auto st = c.stream(id);
    CHECK(h3_statuses(st.bytes) == std::vector<int>{200});
    CHECK(h3_body(st.bytes) == "HTTP/3 note::5:" + std::to_string(fnv("hello")) +
                                   ":whole f:a.bin:" + std::to_string(file.size()) + ":" +
                                   std::to_string(fnv(file)) + ":pieces");
}

TEST_CASE(
    "h3: a multipart_reader's refusals are 413 and 400 on their streams, and the "
    "connection goes on",
    "[http3][multipart-stream]") {
    quic_app server({}, routes);
    quic_client c(server.port);
    start_h3(c);

    const auto big = post(c, form(pattern(file_limit + 1)));
    REQUIRE(answered(c, big));
    // 413 is not in QPACK's static table (h3_statuses reads 0): its body says what it is.
    CHECK(h3_statuses(c.stream(big).bytes).size() == 1);
    CHECK(h3_body(c.stream(big).bytes).find("is larger than " + std::to_string(file_limit)) !=
          std::string::npos);

    const auto bad = post(c, "--XyZ\r\nno end of the part's headers");
    REQUIRE(answered(c, bad));
    CHECK(h3_statuses(c.stream(bad).bytes) == std::vector<int>{400});

    const auto ok = post(c, form("abc"));
    REQUIRE(answered(c, ok));
    CHECK(h3_statuses(c.stream(ok).bytes) == std::vector<int>{200});
    CHECK(h3_body(c.stream(ok).bytes) == "HTTP/3 note::5:" + std::to_string(fnv("hello")) +
                                             ":whole f:a.bin:3:" + std::to_string(fnv("abc")) +
                                             ":whole");
}

}  // namespace wire_test_h3_multipart_stream
