// br and zstd over the wire beside gzip: the coding Accept-Encoding picks, its framing and
// bytes (decoded here with the libraries' decoders), HEAD, 304 and ranges left alone, the
// config's switches, and streamed bodies flushed piece by piece.

#include "support/decoders.hpp"
#include "support/gate.hpp"
#include "support/raw_client.hpp"
#include "support/temp_dir.hpp"
#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

namespace wire_test_compression_codings_wire {

using namespace tern_test;

namespace {

std::string big_json() {
    std::string s = "[";
    for (int i = 0; i < 600; ++i) {
        if (i != 0) s += ',';
        s += "{\"id\":" + std::to_string(i) + ",\"name\":\"item " + std::to_string(i) +
             "\",\"tags\":[\"a\",\"b\"]}";
    }
    s += "]";
    return s;
}

void routes(tern::app& app) {
    app.get("/json", [](tern::context& ctx) { ctx.json_text(big_json()); });
    app.get("/etag", [](tern::context& ctx) {
        if (ctx.header("If-None-Match") == "W/\"v1\"") {
            ctx.status(304);
            return;
        }
        ctx.header("ETag", "\"v1\"").json_text(big_json());
    });
}

std::string accept(std::string_view codings) {
    return "Accept-Encoding: " + std::string(codings) + "\r\n";
}

// Checks that `r` carries `original` encoded as `coding`, framed by Content-Length.
void check_encoded(const response& r, std::string_view coding, const std::string& original) {
    INFO(describe(r));
    CHECK(r.status == 200);
    check_common_headers(r);
    CHECK(r.header("Content-Encoding") == std::string(coding));
    CHECK(r.header("Vary") == "Accept-Encoding");
    CHECK(r.header("Content-Length") == std::to_string(r.body.size()));
    CHECK(r.body.size() < original.size() / 4);
    CHECK(decode_as(coding, r.body) == original);
}

}  // namespace

TEST_CASE("Accept-Encoding picks zstd, br or gzip by q-value, zstd then br then gzip on ties",
          "[wire][compression]") {
    test_server server([](tern::app& app) {
        routes(app);
        app.compression();
    });
    const std::string json = big_json();
    check_encoded(fetch(server, get_request("/json", accept("gzip, deflate, br, zstd"))), "zstd",
                  json);
    check_encoded(fetch(server, get_request("/json", accept("gzip, deflate, br"))), "br", json);
    check_encoded(fetch(server, get_request("/json", accept("gzip, deflate"))), "gzip", json);
    check_encoded(fetch(server, get_request("/json", accept("zstd;q=0.5, br;q=0.9, gzip"))), "gzip",
                  json);
    check_encoded(fetch(server, get_request("/json", accept("zstd;q=0.5, br;q=0.9"))), "br", json);
    check_encoded(fetch(server, get_request("/json", accept("*"))), "zstd", json);
    check_encoded(fetch(server, get_request("/json", accept("zstd;q=0, *"))), "br", json);
}

TEST_CASE("each coding can be turned off, and its level set", "[wire][compression]") {
    tern::compression_config only_gzip;
    only_gzip.brotli = false;
    only_gzip.zstd = false;
    test_server gzip_server([&](tern::app& app) {
        routes(app);
        app.compression(only_gzip);
    });
    const std::string json = big_json();
    check_encoded(fetch(gzip_server, get_request("/json", accept("br, zstd, gzip"))), "gzip", json);
    const auto none = fetch(gzip_server, get_request("/json", accept("br, zstd")));
    CHECK_FALSE(none.header("Content-Encoding"));
    CHECK(none.body == json);
    CHECK(none.header("Vary") == "Accept-Encoding");

    tern::compression_config levels;
    levels.brotli_level = 11;
    levels.zstd_level = 19;
    test_server small_server([&](tern::app& app) {
        routes(app);
        app.compression(levels);
    });
    const auto br_default = fetch(gzip_server, get_request("/json", accept("gzip")));
    const auto br11 = fetch(small_server, get_request("/json", accept("br")));
    check_encoded(br11, "br", json);
    const auto zstd19 = fetch(small_server, get_request("/json", accept("zstd")));
    check_encoded(zstd19, "zstd", json);
    // Level 11 brotli beats the default gzip on this body.
    CHECK(br11.body.size() < br_default.body.size());

    tern::app app;
    tern::compression_config bad;
    bad.zstd_level = 20;
    CHECK_THROWS_AS(app.compression(bad), std::invalid_argument);
    bad.zstd_level = 0;
    CHECK_THROWS_AS(app.compression(bad), std::invalid_argument);
    bad = {};
    bad.brotli_level = 12;
    CHECK_THROWS_AS(app.compression(bad), std::invalid_argument);
    bad.brotli_level = -1;
    CHECK_THROWS_AS(app.compression(bad), std::invalid_argument);
}

TEST_CASE("br and zstd keep HEAD, 304, ranges and ETags right", "[wire][compression]") {
    test_server server([](tern::app& app) {
        routes(app);
        app.compression();
    });
    raw_client c = server.client();
    for (const char* coding : {"br", "zstd"}) {
        INFO(coding);
        c.send(get_request("/etag", accept(coding)));
        const auto get = c.read_response();
        check_encoded(get, coding, big_json());
        CHECK(get.header("ETag") == "W/\"v1\"");

        c.send("HEAD /etag HTTP/1.1\r\nHost: localhost\r\n" + accept(coding) + "\r\n");
        const auto head = c.read_response(true);
        CHECK(head.status == 200);
        CHECK(head.body.empty());
        // HEAD never runs the coder: the identity length, without Content-Encoding.
        CHECK_FALSE(head.header("Content-Encoding"));
        CHECK(head.header("Content-Length") == std::to_string(big_json().size()));

        c.send(get_request("/etag", accept(coding) + "If-None-Match: W/\"v1\"\r\n"));
        const auto not_modified = c.read_response();
        CHECK(not_modified.status == 304);
        CHECK(not_modified.body.empty());
        CHECK_FALSE(not_modified.header("Content-Encoding"));
    }
    c.send(get_request(alive_path));
    CHECK(c.read_response().body == "alive");

    // A static file's range is never encoded on the fly.
    temp_dir dir;
    dir.write("data.json", big_json());
    tern::config cfg = test_config();
    tern::static_files_config files;
    files.directory = dir.path.string();
    cfg.static_files.push_back(files);
    test_server file_server(
        [](tern::app& app) {
            routes(app);
            app.compression();
        },
        cfg);
    const auto range =
        fetch(file_server, get_request("/data.json", accept("br, zstd") + "Range: bytes=0-99\r\n"));
    CHECK(range.status == 206);
    CHECK_FALSE(range.header("Content-Encoding"));
    CHECK(range.body == big_json().substr(0, 100));
}

TEST_CASE("a streamed body is br- or zstd-compressed piece by piece, each piece flushed",
          "[wire][compression][stream]") {
    for (const std::string coding : {"br", "zstd"}) {
        INFO(coding);
        gate may_end;
        test_server server([&](tern::app& app) {
            app.compression();
            app.get("/stream", [&](tern::context& ctx) {
                ctx.content_type("text/plain");
                auto out = ctx.stream();
                out.write(std::string(2000, 'a') + "first piece;");
                std::thread([out, &may_end] {
                    may_end.wait();
                    out.write("second piece");
                    out.end();
                }).detach();
            });
        });
        raw_client c = server.client();
        c.send(get_request("/stream", accept(coding)));
        std::string decoded;
        for (int i = 0; i < 50 && decoded.find("first piece;") == std::string::npos; ++i) {
            c.receive_more(std::chrono::milliseconds(100));
            const std::string_view raw = c.buffered();
            // The chunk data that has arrived whole.
            std::string data;
            auto at = raw.find("\r\n\r\n");
            if (at != std::string_view::npos) {
                at += 4;
                for (;;) {
                    const auto line_end = raw.find("\r\n", at);
                    if (line_end == std::string_view::npos) break;
                    const auto size =
                        std::stoul(std::string(raw.substr(at, line_end - at)), nullptr, 16);
                    if (size == 0 || line_end + 2 + size + 2 > raw.size()) break;
                    data.append(raw.substr(line_end + 2, size));
                    at = line_end + 2 + size + 2;
                }
            }
            decoded = coding == "br" ? decode_br_prefix(data) : decode_zstd_prefix(data);
        }
        CHECK(decoded == std::string(2000, 'a') + "first piece;");
        may_end.open();
        const auto r = c.read_response();
        INFO(describe(r));
        CHECK(r.header("Content-Encoding") == coding);
        CHECK(r.header("Transfer-Encoding") == "chunked");
        CHECK(decode_as(coding, r.body) == std::string(2000, 'a') + "first piece;second piece");
    }
}

TEST_CASE(
    "compressed streams are bounded by max_streams: one held open, the next is sent "
    "uncompressed, and once it ends the slot serves another",
    "[wire][compression][stream][hostile]") {
    gate may_end;
    test_server server([&](tern::app& app) {
        tern::compression_config settings;
        settings.max_streams = 1;
        app.compression(settings);
        app.get("/held", [&](tern::context& ctx) {
            ctx.content_type("text/plain");
            auto out = ctx.stream();
            out.write(std::string(2000, 'a') + "first piece;");
            std::thread([out, &may_end] {
                may_end.wait();
                out.end();
            }).detach();
        });
        app.get("/stream", [](tern::context& ctx) {
            ctx.content_type("text/plain");
            auto out = ctx.stream();
            out.write(std::string(2000, 'b'));
            out.end();
        });
    });
    raw_client holder = server.client();
    holder.send(get_request("/held", accept("zstd")));
    for (int i = 0; i < 50 && holder.buffered().find("\r\n\r\n") == std::string_view::npos; ++i) {
        holder.receive_more(std::chrono::milliseconds(100));
    }
    REQUIRE(holder.buffered().find("Content-Encoding: zstd") != std::string_view::npos);

    // The one slot is held: the next stream goes as it is, still varying on Accept-Encoding.
    const auto plain = fetch(server, get_request("/stream", accept("zstd")));
    INFO(describe(plain));
    CHECK(plain.status == 200);
    CHECK_FALSE(plain.header("Content-Encoding"));
    CHECK(plain.header("Vary") == "Accept-Encoding");
    CHECK(plain.body == std::string(2000, 'b'));

    may_end.open();
    const auto held = holder.read_response();
    CHECK(decode_as("zstd", held.body) == std::string(2000, 'a') + "first piece;");
    // The slot comes back once the held stream's coder is gone.
    std::optional<std::string> coding;
    for (int i = 0; i < 50 && coding != "zstd"; ++i) {
        coding = fetch(server, get_request("/stream", accept("zstd"))).header("Content-Encoding");
        if (coding != "zstd") std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    CHECK(coding == "zstd");
}

}  // namespace wire_test_compression_codings_wire
