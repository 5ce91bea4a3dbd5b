// gzip compression over the wire: what is compressed and what is not (size, type, encoding
// already set, static files), the framing of compressed bodies (Content-Length, HEAD,
// pipelining), Vary, and that it is off unless app.compression() is called.

#include <zlib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/decoders.hpp"
#include "support/gate.hpp"
#include "support/raw_client.hpp"
#include "support/temp_dir.hpp"
#include "support/test_server.hpp"

namespace wire_test_compression_wire {

using namespace tern_test;
namespace fs = std::filesystem;

namespace {

// Without br and zstd, which tern prefers when offered (test_compression_codings_wire.cpp).
const std::string gzip_accepted = "Accept-Encoding: gzip, deflate\r\n";

// The chunk data of a chunked response as far as it has arrived whole (the head skipped).
std::string dechunk_prefix(std::string_view raw) {
    std::string data;
    auto at = raw.find("\r\n\r\n");
    if (at == std::string_view::npos) return data;
    at += 4;
    for (;;) {
        const auto line_end = raw.find("\r\n", at);
        if (line_end == std::string_view::npos) return data;
        const auto size = std::stoul(std::string(raw.substr(at, line_end - at)), nullptr, 16);
        if (size == 0 || line_end + 2 + size + 2 > raw.size()) return data;
        data.append(raw.substr(line_end + 2, size));
        at = line_end + 2 + size + 2;
    }
}

// Inflates what a gzip stream holds so far (flushed data decodes before the stream ends).
std::string inflate_prefix(std::string_view in) {
    z_stream z{};
    if (inflateInit2(&z, 15 + 32) != Z_OK) return {};
    std::string out;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    char buffer[16384];
    int rc = Z_OK;
    while (rc == Z_OK && z.avail_in > 0) {
        z.next_out = reinterpret_cast<Bytef*>(buffer);
        z.avail_out = sizeof buffer;
        rc = inflate(&z, Z_SYNC_FLUSH);
        out.append(buffer, sizeof buffer - z.avail_out);
    }
    inflateEnd(&z);
    return out;
}

// gzip-compresses `in` (for the precompressed static file).
std::string gzip_of(std::string_view in) {
    z_stream z{};
    REQUIRE(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    std::string out(deflateBound(&z, static_cast<uLong>(in.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&z, Z_FINISH);
    out.resize(out.size() - z.avail_out);
    deflateEnd(&z);
    REQUIRE(rc == Z_STREAM_END);
    return out;
}

// Text that compresses well and whose every line differs, so a shifted byte shows.
std::string big_text(std::size_t lines = 800) {
    std::string s;
    for (std::size_t i = 0; i < lines; ++i) {
        s += "line " + std::to_string(i) + ": the quick brown fox jumps over the lazy dog\n";
    }
    return s;
}

std::string big_json() {
    std::string s = "[";
    for (int i = 0; i < 500; ++i) {
        if (i != 0) s += ',';
        s += "{\"id\":" + std::to_string(i) + ",\"name\":\"item " + std::to_string(i) +
             "\",\"tags\":[\"a\",\"b\"]}";
    }
    s += "]";
    return s;
}

// Bytes that look like a PNG and would compress well if anyone tried.
std::string fake_png() {
    std::string s = "\x89PNG\r\n\x1a\n";
    s.append(8000, '\0');
    return s;
}

// gzip alone, for the tests that offer "*" or several codings.
tern::compression_config gzip_only() {
    tern::compression_config c;
    c.brotli = false;
    c.zstd = false;
    return c;
}

// Routes with bodies of every kind the tests need.
void routes(tern::app& app) {
    app.get("/text", [](tern::context& ctx) { ctx.text(big_text()); });
    app.get("/json", [](tern::context& ctx) { ctx.json_text(big_json()); });
    app.get("/sized/{n}", [](tern::context& ctx) {
        ctx.text(std::string(ctx.path_param<std::size_t>("n"), 'a'));
    });
    app.get("/png", [](tern::context& ctx) { ctx.content_type("image/png").result(fake_png()); });
    app.get("/encoded", [](tern::context& ctx) {
        // The handler compressed the body itself (or pretends to): leave it alone.
        ctx.header("Content-Encoding", "br").content_type("text/plain").result(big_text());
    });
    app.get("/etag", [](tern::context& ctx) { ctx.header("ETag", "\"v1\"").text(big_text()); });
    app.get("/vary", [](tern::context& ctx) { ctx.header("Vary", "Cookie").text(big_text()); });
    app.get("/small", [](tern::context& ctx) { ctx.text("tiny"); });
}

// Checks that `r` is `original` gzipped: the fields, the framing and the bytes.
void check_gzipped(const response& r, const std::string& original) {
    INFO(describe(r));
    CHECK(r.status == 200);
    check_common_headers(r);
    CHECK(r.header("Content-Encoding") == "gzip");
    CHECK(r.header_count("Content-Encoding") == 1);
    CHECK(r.header("Vary") == "Accept-Encoding");
    CHECK(r.header("Content-Length") == std::to_string(r.body.size()));
    CHECK(r.body.size() < original.size() / 4);
    REQUIRE(r.body.size() > 2);
    CHECK(static_cast<unsigned char>(r.body[0]) == 0x1f);  // the gzip magic (RFC 1952 2.3.1)
    CHECK(static_cast<unsigned char>(r.body[1]) == 0x8b);
    const auto inflated = tern_test::decode_gzip(r.body);
    REQUIRE(inflated.has_value());
    CHECK(inflated->size() == original.size());
    CHECK(*inflated == original);
}

// Checks that `r` is `original` as it is, with the Vary a negotiated response needs
// (`vary`) or none.
void check_identity(const response& r, const std::string& original,
                    std::optional<std::string> vary) {
    INFO(describe(r));
    CHECK(r.status == 200);
    check_common_headers(r);
    CHECK_FALSE(r.header("Content-Encoding"));
    CHECK(r.header("Content-Length") == std::to_string(original.size()));
    CHECK(r.body == original);
    CHECK(r.header("Vary") == vary);
}

}  // namespace

TEST_CASE("a large text or JSON response is gzipped for a client that accepts it",
          "[wire][compression]") {
    test_server server([](tern::app& app) {
        routes(app);
        app.compression(gzip_only());  // "*" would pick zstd otherwise
    });
    auto r = fetch(server, get_request("/text", gzip_accepted));
    check_gzipped(r, big_text());
    CHECK(r.header("Content-Type") == "text/plain; charset=utf-8");

    r = fetch(server, get_request("/json", "Accept-Encoding: gzip\r\n"));
    check_gzipped(r, big_json());
    CHECK(r.header("Content-Type") == "application/json");

    // Codings are case-insensitive; "*" and "x-gzip" count as gzip.
    for (const char* accept :
         {"GZIP", "*", "x-gzip", "deflate;q=1, gzip;q=0.5", "identity, gzip"}) {
        INFO("Accept-Encoding: " << accept);
        r = fetch(server, get_request("/text", "Accept-Encoding: " + std::string(accept) + "\r\n"));
        check_gzipped(r, big_text());
    }
}

TEST_CASE("without an acceptable gzip the body goes as it is, still with Vary",
          "[wire][compression]") {
    test_server server([](tern::app& app) {
        routes(app);
        app.compression(gzip_only());  // "*" would pick zstd otherwise
    });
    check_identity(fetch(server, get_request("/text")), big_text(), "Accept-Encoding");
    for (const char* accept : {"identity", "deflate", "gzip;q=0", "*;q=0", "gzip;q=0, *"}) {
        INFO("Accept-Encoding: " << accept);
        const auto r =
            fetch(server, get_request("/text", "Accept-Encoding: " + std::string(accept) + "\r\n"));
        check_identity(r, big_text(), "Accept-Encoding");
    }
}

TEST_CASE("bodies under min_size and incompressible types are not compressed",
          "[wire][compression]") {
    test_server server([](tern::app& app) {
        routes(app);
        app.compression();  // min_size 1024
    });
    check_identity(fetch(server, get_request("/sized/1023", gzip_accepted)), std::string(1023, 'a'),
                   std::nullopt);
    check_gzipped(fetch(server, get_request("/sized/1024", gzip_accepted)), std::string(1024, 'a'));
    check_identity(fetch(server, get_request("/small", gzip_accepted)), "tiny", std::nullopt);

    const auto r = fetch(server, get_request("/png", gzip_accepted));
    check_identity(r, fake_png(), std::nullopt);
    CHECK(r.header("Content-Type") == "image/png");
}

TEST_CASE("compression_config sets min_size and level", "[wire][compression]") {
    test_server server([](tern::app& app) {
        routes(app);
        tern::compression_config cfg;
        cfg.min_size = 100;
        cfg.level = 9;
        app.compression(cfg);
    });
    check_identity(fetch(server, get_request("/sized/99", gzip_accepted)), std::string(99, 'a'),
                   std::nullopt);
    check_gzipped(fetch(server, get_request("/sized/100", gzip_accepted)), std::string(100, 'a'));
    check_gzipped(fetch(server, get_request("/text", gzip_accepted)), big_text());

    tern::app app;
    tern::compression_config bad;
    bad.level = 0;
    CHECK_THROWS_AS(app.compression(bad), std::invalid_argument);
    bad.level = 10;
    CHECK_THROWS_AS(app.compression(bad), std::invalid_argument);
}

TEST_CASE("HEAD never runs the coder: the identity length, Vary, no Content-Encoding, no body",
          "[wire][compression]") {
    test_server server([](tern::app& app) {
        routes(app);
        app.compression();
    });
    raw_client c = server.client();
    c.send(get_request("/text", gzip_accepted));
    const auto get = c.read_response();
    check_gzipped(get, big_text());

    c.send("HEAD /text HTTP/1.1\r\nHost: localhost\r\n" + gzip_accepted + "\r\n");
    const auto head = c.read_response(true);
    INFO(describe(head));
    CHECK(head.status == 200);
    CHECK(head.body.empty());
    // What a GET with identity would get: the body was not coded to learn its length
    // (docs/compression.md, RFC 9110 9.3.2), and the choice still depends on Accept-Encoding.
    CHECK_FALSE(head.header("Content-Encoding"));
    CHECK(head.header("Vary") == "Accept-Encoding");
    CHECK(head.header("Content-Length") == std::to_string(big_text().size()));

    // HEAD without gzip: the identity length.
    c.send("HEAD /text HTTP/1.1\r\nHost: localhost\r\n\r\n");
    const auto plain = c.read_response(true);
    CHECK(plain.header("Content-Length") == std::to_string(big_text().size()));
    CHECK_FALSE(plain.header("Content-Encoding"));

    // Nothing was sent after the HEAD answers: the next response parses cleanly.
    c.send(get_request(alive_path));
    const auto next = c.read_response();
    CHECK(next.status == 200);
    CHECK(next.body == "alive");
}

TEST_CASE("a body over max_size is sent as it is, with no Vary", "[wire][compression]") {
    test_server server([](tern::app& app) {
        routes(app);
        tern::compression_config cfg;
        cfg.max_size = 4096;
        app.compression(cfg);
    });
    raw_client c = server.client();
    c.send(get_request("/sized/4096", gzip_accepted));
    const auto at = c.read_response();
    CHECK(at.header("Content-Encoding") == "gzip");
    c.send(get_request("/sized/4097", gzip_accepted));
    check_identity(c.read_response(), std::string(4097, 'a'), std::nullopt);
}

TEST_CASE("a Content-Encoding the handler set is left alone", "[wire][compression]") {
    test_server server([](tern::app& app) {
        routes(app);
        app.compression();
    });
    const auto r = fetch(server, get_request("/encoded", gzip_accepted));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.header("Content-Encoding") == "br");
    CHECK(r.header_count("Content-Encoding") == 1);
    CHECK(r.body == big_text());
    CHECK(r.header("Content-Length") == std::to_string(big_text().size()));
}

TEST_CASE("gzip weakens a strong ETag and merges Accept-Encoding into the handler's Vary",
          "[wire][compression]") {
    test_server server([](tern::app& app) {
        routes(app);
        app.compression();
    });
    auto r = fetch(server, get_request("/etag", gzip_accepted));
    CHECK(r.header("Content-Encoding") == "gzip");
    CHECK(r.header("ETag") == "W/\"v1\"");
    r = fetch(server, get_request("/etag"));
    CHECK_FALSE(r.header("Content-Encoding"));
    CHECK(r.header("ETag") == "\"v1\"");

    r = fetch(server, get_request("/vary", gzip_accepted));
    INFO(describe(r));
    CHECK(r.header("Content-Encoding") == "gzip");
    CHECK(r.header_count("Vary") == 1);
    CHECK(r.header("Vary") == "Cookie, Accept-Encoding");
}

TEST_CASE("static files are not gzipped on the fly, a precompressed .gz is sent as it is",
          "[wire][compression]") {
    temp_dir dir;
    const std::string page = big_text(600);
    const std::string gz = gzip_of(page);
    dir.write("page.txt", page);
    dir.write("pre.txt", page);
    dir.write("pre.txt.gz", gz);
    test_server server([&](tern::app& app) {
        app.compression();
        app.static_files(dir.path.string());
    });

    // No .gz beside it: the file as it is, although the client takes gzip.
    auto r = fetch(server, get_request("/page.txt", gzip_accepted));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK_FALSE(r.header("Content-Encoding"));
    CHECK(r.header("Content-Length") == std::to_string(page.size()));
    CHECK(r.body == page);
    CHECK(r.header_count("Vary") == 1);

    // A .gz beside it: its bytes, not compressed again.
    r = fetch(server, get_request("/pre.txt", "Accept-Encoding: gzip\r\n"));
    CHECK(r.status == 200);
    CHECK(r.header("Content-Encoding") == "gzip");
    CHECK(r.header_count("Content-Encoding") == 1);
    CHECK(r.header("Content-Length") == std::to_string(gz.size()));
    CHECK(r.body == gz);
    CHECK(tern_test::decode_gzip(r.body) == page);

    r = fetch(server, get_request("/pre.txt"));
    CHECK(r.status == 200);
    CHECK_FALSE(r.header("Content-Encoding"));
    CHECK(r.body == page);
}

TEST_CASE("pipelined requests mixing gzip and identity all come back right",
          "[wire][compression]") {
    test_server server([](tern::app& app) {
        routes(app);
        app.compression();
    });
    raw_client c = server.client();
    std::string batch;
    batch += get_request("/text", gzip_accepted);
    batch += get_request("/json");
    batch += get_request("/small", gzip_accepted);
    batch += "HEAD /json HTTP/1.1\r\nHost: localhost\r\n" + gzip_accepted + "\r\n";
    batch += get_request("/png", gzip_accepted);
    batch += get_request("/json", gzip_accepted);
    batch += get_request("/sized/5000");
    c.send(batch);

    check_gzipped(c.read_response(), big_text());
    check_identity(c.read_response(), big_json(), "Accept-Encoding");
    check_identity(c.read_response(), "tiny", std::nullopt);
    const auto head = c.read_response(true);
    CHECK_FALSE(head.header("Content-Encoding"));
    CHECK(head.body.empty());
    check_identity(c.read_response(), fake_png(), std::nullopt);
    const auto json = c.read_response();
    check_gzipped(json, big_json());
    CHECK(head.header("Content-Length") == std::to_string(big_json().size()));
    check_identity(c.read_response(), std::string(5000, 'a'), "Accept-Encoding");
    CHECK(c.buffered().empty());
}

TEST_CASE("the request logger sees the compressed length", "[wire][compression]") {
    std::atomic<std::uint64_t> logged{0};
    test_server server([&](tern::app& app) {
        routes(app);
        app.compression();
        app.request_logger([&](const tern::context& ctx, std::chrono::nanoseconds) {
            if (ctx.path() == "/text") logged = ctx.response_length();
        });
    });
    const auto r = fetch(server, get_request("/text", gzip_accepted));
    CHECK(r.header("Content-Encoding") == "gzip");
    CHECK(logged == r.body.size());
}

TEST_CASE("compression is off unless app.compression() is called", "[wire][compression]") {
    test_server server(routes);
    for (const char* target : {"/text", "/json", "/sized/5000"}) {
        INFO("target " << target);
        const auto r = fetch(server, get_request(target, gzip_accepted));
        INFO(describe(r));
        CHECK(r.status == 200);
        CHECK_FALSE(r.header("Content-Encoding"));
        CHECK_FALSE(r.header("Vary"));
        CHECK(r.header("Content-Length") == std::to_string(r.body.size()));
    }
    CHECK(fetch(server, get_request("/text", gzip_accepted)).body == big_text());
    CHECK_FALSE(server.app().settings().compression.has_value());
}

TEST_CASE("a streamed body is gzip-compressed piece by piece, each piece flushed",
          "[wire][compression][stream]") {
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
        app.sse("/events", [](tern::context&, tern::sse_client c) {
            c.send("not compressed");
            c.close();
        });
    });
    raw_client c = server.client();
    c.send(get_request("/stream", gzip_accepted));
    // The first piece arrives, decodable, before the producer ends: the compressor flushed
    // it (without the flush, zlib would hold it back until more input or the end).
    std::string decoded;
    for (int i = 0; i < 50 && decoded.find("first piece;") == std::string::npos; ++i) {
        c.receive_more(std::chrono::milliseconds(100));
        decoded = inflate_prefix(dechunk_prefix(c.buffered()));
    }
    CHECK(decoded == std::string(2000, 'a') + "first piece;");
    may_end.open();
    const auto r = c.read_response();
    INFO(describe(r));
    CHECK(r.header("Content-Encoding") == "gzip");
    CHECK(r.header("Transfer-Encoding") == "chunked");
    CHECK(r.header("Vary") == "Accept-Encoding");
    CHECK(tern_test::decode_gzip(r.body) == std::string(2000, 'a') + "first piece;second piece");
    // Event streams are left alone.
    const auto events = fetch(server, get_request("/events", gzip_accepted));
    CHECK_FALSE(events.header("Content-Encoding"));
    CHECK(events.body == "data: not compressed\n\n");
}

}  // namespace wire_test_compression_wire
