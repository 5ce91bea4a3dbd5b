// br and zstd beside gzip, without sockets: which coding Accept-Encoding and the config
// choose, and that every coding's bytes (whole bodies and flushed stream pieces) decode
// with the libraries' own decoders to what went in.

#include "http/header_values.hpp"
#include "http/response.hpp"
#include "support/response_fields.hpp"
#include "web/compressed_source.hpp"
#include "web/compression.hpp"
#include "web/encoders.hpp"

#include "support/decoders.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace unit_test_web_compression_codings {

using tern::compression_config;
using tern::header_field;
using tern::detail::choose_coding;
using tern::detail::coding;
using tern::detail::coding_name;
using tern::detail::compress_response;
using tern::detail::encode_whole;
using tern::detail::make_stream_encoder;
using tern::detail::response;
using namespace tern_test;

namespace {

using fields = std::vector<header_field>;

std::string json_of_size(std::size_t size) {
    std::string s = "[";
    for (int i = 0; s.size() < size; ++i) {
        s += "{\"id\":" + std::to_string(i) + ",\"name\":\"user" + std::to_string(i * 7) +
             "\",\"active\":" + (i % 3 == 0 ? "true" : "false") + "},";
    }
    s.back() = ']';
    return s;
}

coding chosen(std::string_view accept_encoding, const compression_config& config = {}) {
    return choose_coding(fields{{"Accept-Encoding", std::string(accept_encoding)}}, config);
}

}  // namespace

TEST_CASE("codings: the highest q-value wins, zstd then br then gzip on ties", "[compression]") {
    CHECK(chosen("gzip, deflate, br, zstd") == coding::zstd);  // Chrome 123+
    CHECK(chosen("gzip, deflate, br") == coding::br);          // Safari, older Chrome
    CHECK(chosen("gzip, deflate") == coding::gzip);
    CHECK(chosen("*") == coding::zstd);
    CHECK(chosen("gzip;q=1, br;q=0.9, zstd;q=0.8") == coding::gzip);
    CHECK(chosen("br;q=0.5, zstd;q=0.4") == coding::br);
    CHECK(chosen("zstd;q=0, *") == coding::br);
    CHECK(chosen("ZSTD;Q=0.2, x-gzip;q=0.1") == coding::zstd);
    CHECK(chosen("identity") == coding::identity);
    CHECK(chosen("deflate") == coding::identity);
    CHECK(chosen("*;q=0") == coding::identity);
    CHECK(choose_coding(fields{}, compression_config{}) == coding::identity);
}

TEST_CASE("codings: a coding turned off in the config is never chosen", "[compression]") {
    compression_config no_zstd;
    no_zstd.zstd = false;
    CHECK(chosen("gzip, br, zstd", no_zstd) == coding::br);
    CHECK(chosen("zstd", no_zstd) == coding::identity);

    compression_config gzip_only;
    gzip_only.brotli = false;
    gzip_only.zstd = false;
    CHECK(chosen("gzip, br, zstd", gzip_only) == coding::gzip);
    CHECK(chosen("br;q=1, gzip;q=0.1", gzip_only) == coding::gzip);

    compression_config none;
    none.gzip = false;
    none.brotli = false;
    none.zstd = false;
    CHECK(chosen("gzip, br, zstd", none) == coding::identity);
}

TEST_CASE("codings: whole bodies decode to the input at every level", "[compression]") {
    const std::string json = json_of_size(50'000);
    struct level_case {
        coding c;
        int level;
    };
    for (const auto& [c, level] : {level_case{coding::gzip, 1},
                                   {coding::gzip, 9},
                                   {coding::br, 0},
                                   {coding::br, 4},
                                   {coding::br, 11},
                                   {coding::zstd, 1},
                                   {coding::zstd, 3},
                                   {coding::zstd, 19}}) {
        CAPTURE(coding_name(c), level);
        std::string out;
        REQUIRE(encode_whole(c, json, level, out));
        CHECK(out.size() < json.size() / 4);
        CHECK(decode_as(coding_name(c), out) == json);
    }
    // The empty body too.
    for (const coding c : {coding::gzip, coding::br, coding::zstd}) {
        std::string out;
        REQUIRE(encode_whole(c, "", 3, out));
        CHECK(decode_as(coding_name(c), out) == std::string());
    }
    std::string out;
    CHECK_FALSE(encode_whole(coding::identity, json, 3, out));
}

TEST_CASE("codings: a higher level gives smaller br and zstd bodies", "[compression]") {
    // Each library on a body where its higher levels pay off, so a level that was not
    // applied shows: brotli on JSON, zstd on eight letters at random (its level 1 finds the
    // repeats of regular JSON as well as level 15 does).
    const std::string json = json_of_size(200'000);
    std::string letters;
    std::mt19937 gen(7);
    std::uniform_int_distribution<int> letter('a', 'h');
    for (int i = 0; i < 200'000; ++i) letters.push_back(static_cast<char>(letter(gen)));
    std::string fast;
    std::string small;
    REQUIRE(encode_whole(coding::br, json, 1, fast));
    REQUIRE(encode_whole(coding::br, json, 9, small));
    CHECK(small.size() < fast.size());
    REQUIRE(encode_whole(coding::zstd, letters, 1, fast));
    REQUIRE(encode_whole(coding::zstd, letters, 15, small));
    CHECK(small.size() < fast.size());
}

TEST_CASE("codings: each flushed stream piece decodes at once, and the end finishes the stream",
          "[compression]") {
    for (const coding c : {coding::gzip, coding::br, coding::zstd}) {
        CAPTURE(coding_name(c));
        auto encoder = make_stream_encoder(c, 3);
        REQUIRE(encoder);
        std::string coded;
        std::string plain;
        for (int i = 0; i < 20; ++i) {
            const std::string piece = "event " + std::to_string(i) + ": " + json_of_size(300);
            REQUIRE(encoder->encode(piece, false, coded));
            plain += piece;
            // What was flushed decodes whole before the stream ends.
            if (c == coding::br) {
                CHECK(decode_br_prefix(coded) == plain);
            } else if (c == coding::zstd) {
                CHECK(decode_zstd_prefix(coded) == plain);
            }
        }
        CHECK_FALSE(decode_as(coding_name(c), coded).has_value());  // not ended yet
        REQUIRE(encoder->encode("", true, coded));
        CHECK(decode_as(coding_name(c), coded) == plain);
    }
    CHECK(make_stream_encoder(coding::identity, 3) == nullptr);
}

TEST_CASE(
    "codings: compress_response sends br and zstd with their Content-Encoding, Vary and a "
    "weak ETag",
    "[compression]") {
    const std::string json = json_of_size(5000);
    for (const auto& [accept, name] : {std::pair<std::string, std::string>{"br", "br"},
                                       {"zstd, br, gzip", "zstd"},
                                       {"gzip", "gzip"}}) {
        CAPTURE(accept);
        response res;
        res.content_type = "application/json";
        res.body = json;
        res.fields.emplace_back("ETag", "\"v1\"");
        compress_response(res, fields{{"Accept-Encoding", accept}}, compression_config{});
        CHECK(only_field(res, "Content-Encoding") == name);
        CHECK(only_field(res, "Vary") == "Accept-Encoding");
        CHECK(only_field(res, "ETag") == "W/\"v1\"");
        CHECK(decode_as(name, res.body) == json);
    }
}

TEST_CASE("codings: the same gates hold for br and zstd: size, type, status, Content-Encoding",
          "[compression]") {
    const fields all = {{"Accept-Encoding", "zstd, br"}};
    const std::string json = json_of_size(5000);
    const auto make = [&](std::size_t size, std::string type, int status) {
        response res;
        res.content_type = std::move(type);
        res.body = json.substr(0, size);
        res.status = status;
        return res;
    };
    const auto untouched = [&](response res) {
        const std::string before = res.body;
        compress_response(res, all, compression_config{});
        return res.body == before && !only_field(res, "Content-Encoding").has_value();
    };
    CHECK(untouched(make(1023, "application/json", 200)));
    CHECK(untouched(make(5000, "image/png", 200)));
    CHECK(untouched(make(5000, "application/json", 206)));
    CHECK(untouched(make(5000, "application/json", 304)));
    response encoded = make(5000, "application/json", 200);
    encoded.fields.emplace_back("Content-Encoding", "gzip");
    compress_response(encoded, all, compression_config{});
    CHECK(encoded.body == json.substr(0, 5000));
    // The control: the same response without those traits is compressed.
    CHECK_FALSE(untouched(make(5000, "application/json", 200)));
}

namespace {

// A streamed body that never produces anything: what compress_stream wraps.
class silent_source final : public tern::detail::body_source {
public:
    void attach(std::shared_ptr<tern::detail::loop_door>,
                std::weak_ptr<tern::detail::exchange_port>) override {}
    tern::detail::pull_status pull(std::string&, std::size_t) override {
        return tern::detail::pull_status::more;
    }
    void closed() noexcept override {}
};

response streamed_text() {
    response res;
    res.content_type = "text/plain";
    res.source = std::make_shared<silent_source>();
    return res;
}

}  // namespace

TEST_CASE(
    "codings: at most max_streams streamed bodies hold a coder at once, past it they go "
    "uncompressed, and a finished one gives its slot back",
    "[compression]") {
    const auto slots = std::make_shared<tern::detail::stream_coder_slots>(2);
    const fields accepts{{"Accept-Encoding", "zstd, br, gzip"}};
    const compression_config config{};
    std::vector<response> open;
    for (int i = 0; i < 3; ++i) {
        open.push_back(streamed_text());
        compress_response(open.back(), accepts, config, false, slots.get());
    }
    CHECK(only_field(open[0], "Content-Encoding") == "zstd");
    CHECK(only_field(open[1], "Content-Encoding") == "zstd");
    // The third is sent as it is, still with Vary: the choice depended on Accept-Encoding.
    CHECK_FALSE(only_field(open[2], "Content-Encoding").has_value());
    CHECK(only_field(open[2], "Vary") == "Accept-Encoding");
    // A HEAD takes no slot; a whole body needs none.
    response head = streamed_text();
    compress_response(head, accepts, config, true, slots.get());
    open[0].source.reset();  // the first stream is done: its coder and its slot go
    response next = streamed_text();
    compress_response(next, accepts, config, false, slots.get());
    CHECK(only_field(next, "Content-Encoding") == "zstd");
    response another = streamed_text();
    compress_response(another, accepts, config, false, slots.get());
    CHECK_FALSE(only_field(another, "Content-Encoding").has_value());
}

}  // namespace unit_test_web_compression_codings
