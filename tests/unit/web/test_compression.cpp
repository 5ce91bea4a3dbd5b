// gzip compression of response bodies without sockets: which responses are compressed, the
// bytes zlib gives back, and the Vary and Content-Encoding fields that go with them.

#include "http/file_handle.hpp"
#include "http/request.hpp"
#include "http/response.hpp"
#include "platform/files.hpp"
#include "support/response_fields.hpp"
#include "web/compression.hpp"

#include <zlib.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace unit_test_web_compression {

using tern::compression_config;
using tern::header_field;
using tern::detail::add_vary;
using tern::detail::compress_response;
using tern::detail::gzip_compress;
using tern::detail::is_compressible_type;
using tern::detail::response;
using tern_test::only_field;

namespace {

using fields = std::vector<header_field>;

// br and zstd, preferred when offered, have their own tests (test_compression_codings.cpp).
const fields accepts_gzip = {{"Accept-Encoding", "gzip, deflate"}};

/// Decompresses gzip (or zlib) data; fails the test on malformed input.
std::string gunzip(std::string_view in) {
    z_stream z{};
    REQUIRE(inflateInit2(&z, 15 + 32) == Z_OK);  // +32: detect gzip or zlib framing
    std::string out;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    int rc = Z_OK;
    while (rc == Z_OK) {
        char buffer[4096];
        z.next_out = reinterpret_cast<Bytef*>(buffer);
        z.avail_out = sizeof buffer;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buffer, sizeof buffer - z.avail_out);
    }
    inflateEnd(&z);
    REQUIRE(rc == Z_STREAM_END);
    return out;
}

/// `size` bytes of repetitive text, which gzip shrinks well.
std::string text_of_size(std::size_t size) {
    static constexpr std::string_view line = "{\"id\": 42, \"name\": \"compressible\"}\n";
    std::string s;
    while (s.size() < size) s.append(line);
    s.resize(size);
    return s;
}

/// `size` bytes that gzip cannot shrink (seeded, so every run sees the same bytes).
std::string random_bytes(std::size_t size) {
    std::mt19937 gen(12345);
    std::uniform_int_distribution<int> byte(0, 255);
    std::string s(size, '\0');
    for (auto& c : s) c = static_cast<char>(byte(gen));
    return s;
}

response text_response(std::string body, std::string type = "application/json") {
    response res;
    res.content_type = std::move(type);
    res.body = std::move(body);
    return res;
}

/// Whether `res` came out gzip-encoded, holding `original` once decompressed.
bool gzipped(const response& res, const std::string& original) {
    return only_field(res, "Content-Encoding") == "gzip" && res.body != original &&
           gunzip(res.body) == original;
}

}  // namespace

TEST_CASE("compression: gzip_compress output decompresses to the input", "[compression]") {
    for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{100}, std::size_t{70'000},
                             std::size_t{1'000'000}}) {
        CAPTURE(size);
        const std::string in = text_of_size(size);
        for (int level : {1, 6, 9}) {
            std::string out = "stale";
            REQUIRE(gzip_compress(in, level, out));
            // RFC 1952 2.3.1: ID1 ID2 CM(deflate).
            REQUIRE(out.size() >= 18);
            CHECK(static_cast<unsigned char>(out[0]) == 0x1f);
            CHECK(static_cast<unsigned char>(out[1]) == 0x8b);
            CHECK(out[2] == 8);
            CHECK(gunzip(out) == in);
        }
    }
    const std::string noise = random_bytes(300'000);
    std::string out;
    REQUIRE(gzip_compress(noise, 9, out));
    CHECK(gunzip(out) == noise);
}

TEST_CASE("compression: gzip_compress reports an invalid level", "[compression]") {
    std::string out;
    CHECK_FALSE(gzip_compress("abc", 42, out));
}

TEST_CASE("compression: text, JSON, XML, SVG and wasm are compressible", "[compression]") {
    for (std::string_view type :
         {"text/html; charset=utf-8", "text/plain", "TEXT/CSS", "text/javascript; charset=utf-8",
          "application/json", "application/json; charset=utf-8", "application/ld+json",
          "application/problem+json", "application/javascript", "application/xml",
          "application/atom+xml", "image/svg+xml", "application/wasm", "Application/JSON",
          " application/json ;charset=utf-8", "font/ttf", "font/otf"}) {
        CAPTURE(type);
        CHECK(is_compressible_type(type));
    }
}

TEST_CASE("compression: images, media, woff fonts, archives and unknown binaries are not",
          "[compression]") {
    for (std::string_view type :
         {"image/png", "image/jpeg", "image/webp", "image/gif", "audio/mpeg", "video/mp4",
          "font/woff", "font/woff2", "application/zip", "application/gzip",
          "application/x-7z-compressed", "application/epub+zip", "application/octet-stream",
          "application/pdf", "", "text", "text/", "json", "application/jsonx"}) {
        CAPTURE(type);
        CHECK_FALSE(is_compressible_type(type));
    }
}

TEST_CASE("compression: a compressible body is gzipped with Content-Encoding and Vary",
          "[compression]") {
    const std::string body = text_of_size(5000);
    auto res = text_response(body);
    compress_response(res, accepts_gzip, compression_config{});
    CHECK(gzipped(res, body));
    CHECK(res.body.size() < body.size());
    CHECK(only_field(res, "Vary") == "Accept-Encoding");
    CHECK(res.status == 200);
    CHECK(res.content_type == "application/json");
}

TEST_CASE("compression: min_size is the smallest body compressed", "[compression]") {
    compression_config config;
    config.min_size = 200;

    const std::string short_body = text_of_size(199);
    auto res = text_response(short_body);
    compress_response(res, accepts_gzip, config);
    CHECK(res.body == short_body);
    CHECK(res.fields.empty());

    const std::string body = text_of_size(200);
    res = text_response(body);
    compress_response(res, accepts_gzip, config);
    CHECK(gzipped(res, body));
}

TEST_CASE("compression: incompressible types are left untouched", "[compression]") {
    const std::string body = text_of_size(5000);
    for (std::string type : {"image/png", "application/zip", "font/woff2", ""}) {
        CAPTURE(type);
        auto res = text_response(body, type);
        compress_response(res, accepts_gzip, compression_config{});
        CHECK(res.body == body);
        CHECK(res.fields.empty());
    }
}

TEST_CASE("compression: Accept-Encoding decides, q=0 and identity-only refuse gzip",
          "[compression]") {
    const std::string body = text_of_size(5000);
    struct expectation {
        fields request;
        bool compressed;
    };
    compression_config gzip_only;  // "*" would pick zstd otherwise
    gzip_only.brotli = false;
    gzip_only.zstd = false;
    const std::vector<expectation> cases = {
        {{{"Accept-Encoding", "gzip"}}, true},
        {{{"Accept-Encoding", "*"}}, true},
        {{{"Accept-Encoding", "x-gzip"}}, true},
        {{{"accept-encoding", "GZIP;q=0.1"}}, true},
        {{{"Accept-Encoding", "deflate"}, {"Accept-Encoding", "gzip"}}, true},
        {{{"Accept-Encoding", "gzip;q=0"}}, false},
        {{{"Accept-Encoding", "gzip;q=0, *"}}, false},
        {{{"Accept-Encoding", "*;q=0"}}, false},
        {{{"Accept-Encoding", "identity"}}, false},
        {{{"Accept-Encoding", "deflate, compress"}}, false},
        {{{"Accept-Encoding", ""}}, false},
        {{}, false},
    };
    for (const auto& c : cases) {
        CAPTURE(c.request.empty() ? std::string_view("(none)") : c.request.front().value);
        auto res = text_response(body);
        compress_response(res, c.request, gzip_only);
        if (c.compressed) {
            CHECK(gzipped(res, body));
        } else {
            CHECK(res.body == body);
            CHECK_FALSE(only_field(res, "Content-Encoding"));
        }
        // Either way the response depends on Accept-Encoding.
        CHECK(only_field(res, "Vary") == "Accept-Encoding");
    }
}

TEST_CASE("compression: a body that already has a Content-Encoding is left untouched",
          "[compression]") {
    const std::string body = text_of_size(5000);
    auto res = text_response(body);
    res.fields.emplace_back("content-encoding", "br");
    compress_response(res, accepts_gzip, compression_config{});
    CHECK(res.body == body);
    CHECK(res.fields.size() == 1);
}

TEST_CASE("compression: Vary: Accept-Encoding merges into an existing Vary", "[compression]") {
    const std::string body = text_of_size(5000);

    auto res = text_response(body);
    res.fields.emplace_back("Vary", "Origin");
    compress_response(res, accepts_gzip, compression_config{});
    CHECK(only_field(res, "Vary") == "Origin, Accept-Encoding");

    res = text_response(body);
    res.fields.emplace_back("Vary", "*");
    compress_response(res, accepts_gzip, compression_config{});
    CHECK(only_field(res, "Vary") == "*");
    CHECK(gzipped(res, body));

    res = text_response(body);
    res.fields.emplace_back("vary", "origin, accept-encoding");
    compress_response(res, accepts_gzip, compression_config{});
    CHECK(only_field(res, "Vary") == "origin, accept-encoding");
}

TEST_CASE("compression: add_vary creates, appends and never repeats", "[compression]") {
    response res;
    add_vary(res, "Origin");
    REQUIRE(res.fields.size() == 1);
    CHECK(res.fields[0].first == "Vary");
    CHECK(res.fields[0].second == "Origin");
    add_vary(res, "Accept-Encoding");
    add_vary(res, "accept-encoding");
    add_vary(res, "ORIGIN");
    CHECK(res.fields[0].second == "Origin, Accept-Encoding");
    CHECK(res.fields.size() == 1);

    // A token in a second Vary field counts; new ones go into the first field.
    response split;
    split.fields = {{"Vary", "Origin"}, {"X-Other", "1"}, {"VARY", "Cookie"}};
    add_vary(split, "cookie");
    add_vary(split, "Accept-Encoding");
    CHECK(split.fields[0].second == "Origin, Accept-Encoding");
    CHECK(split.fields[2].second == "Cookie");

    response star;
    star.fields = {{"Vary", "Origin"}, {"Vary", "*"}};
    add_vary(star, "Accept-Encoding");
    CHECK(star.fields[0].second == "Origin");

    response empty;
    empty.fields = {{"Vary", ""}};
    add_vary(empty, "Origin");
    CHECK(empty.fields[0].second == "Origin");
}

TEST_CASE("compression: statuses without a body, and 206, are left untouched", "[compression]") {
    const std::string body = text_of_size(5000);
    for (int status : {100, 101, 204, 206, 304}) {
        CAPTURE(status);
        auto res = text_response(body);
        res.status = status;
        compress_response(res, accepts_gzip, compression_config{});
        CHECK(res.body == body);
        CHECK(res.fields.empty());
    }
    for (int status : {201, 404, 500}) {
        CAPTURE(status);
        auto res = text_response(body);
        res.status = status;
        compress_response(res, accepts_gzip, compression_config{});
        CHECK(gzipped(res, body));
    }
}

TEST_CASE("compression: a file body is left untouched", "[compression]") {
    const std::string body = text_of_size(5000);
    auto res = text_response(body, "text/plain; charset=utf-8");
    // Any open file will do: a spool file, which every system makes the same way.
    const int fd =
        tern::detail::platform::open_spool_file(std::filesystem::temp_directory_path().string());
    REQUIRE(fd >= 0);
    res.file.file = tern::detail::file_handle(fd);
    res.file.length = 5000;
    compress_response(res, accepts_gzip, compression_config{});
    CHECK(res.body == body);
    CHECK(res.fields.empty());
    CHECK(res.file.file.get() == fd);
}

TEST_CASE("compression: a body gzip cannot shrink is sent as it is, with Vary", "[compression]") {
    const std::string noise = random_bytes(4096);
    auto res = text_response(noise, "application/octet-stream");
    REQUIRE_FALSE(is_compressible_type(res.content_type));
    res.content_type = "text/plain";  // mislabelled, so only the size check stops it
    compress_response(res, accepts_gzip, compression_config{});
    CHECK(res.body == noise);
    CHECK_FALSE(only_field(res, "Content-Encoding"));
    CHECK(only_field(res, "Vary") == "Accept-Encoding");
}

TEST_CASE("compression: a strong ETag turns weak once the body is gzipped", "[compression]") {
    const std::string body = text_of_size(5000);
    auto res = text_response(body);
    res.fields.emplace_back("ETag", "\"v1\"");
    compress_response(res, accepts_gzip, compression_config{});
    CHECK(gzipped(res, body));
    CHECK(only_field(res, "ETag") == "W/\"v1\"");

    res = text_response(body);
    res.fields.emplace_back("etag", "W/\"v2\"");
    compress_response(res, accepts_gzip, compression_config{});
    CHECK(only_field(res, "ETag") == "W/\"v2\"");

    // Not compressed: the tag stays as the handler set it.
    res = text_response(body);
    res.fields.emplace_back("ETag", "\"v3\"");
    compress_response(res, fields{{"Accept-Encoding", "identity"}}, compression_config{});
    CHECK(only_field(res, "ETag") == "\"v3\"");
}

TEST_CASE("compression: the configured level is used", "[compression]") {
    std::string body;
    std::mt19937 gen(7);
    std::uniform_int_distribution<int> letter('a', 'h');
    for (int i = 0; i < 200'000; ++i) body.push_back(static_cast<char>(letter(gen)));

    compression_config fast;
    fast.level = 1;
    compression_config small;
    small.level = 9;
    auto a = text_response(body, "text/plain");
    auto b = text_response(body, "text/plain");
    compress_response(a, accepts_gzip, fast);
    compress_response(b, accepts_gzip, small);
    CHECK(gzipped(a, body));
    CHECK(gzipped(b, body));
    CHECK(b.body.size() < a.body.size());
}

}  // namespace unit_test_web_compression
