// HPACK's encoder (src/h2/hpack_encoder.cpp): its bytes for :status and for each indexing
// choice, the dynamic table size updates it owes the peer, and round trips: tern's encoder
// read by tern's decoder and by nghttp2's inflater, nghttp2's deflater read by both decoders.

#include "h2/hpack.hpp"
#include "support/allocation_counter.hpp"
#include "support/hpack_oracle.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace unit_test_h2_hpack_encoder {

namespace hpack = tern::h2::hpack;
using hpack::decode_status;
using tern_test::hpack_field;
using tern_test::hpack_fields;

std::string hex(std::string_view bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (const char c : bytes) {
        const auto b = static_cast<unsigned char>(c);
        if (!out.empty()) out += ' ';
        out += digits[b >> 4];
        out += digits[b & 0xf];
    }
    return out;
}

// One response's block: begin_block, :status, then the fields.
std::string encode(hpack::encoder& encoder, int status, const hpack_fields& fields) {
    std::string out;
    encoder.begin_block(out);
    encoder.status(status, out);
    for (const auto& f : fields) encoder.field(f.name, f.value, out, f.never_indexed);
    return out;
}

hpack_fields with_status(int status, hpack_fields fields) {
    fields.insert(fields.begin(), {":status", std::to_string(status), false});
    return fields;
}

TEST_CASE("hpack encoder: :status is one byte for the static codes, a literal otherwise",
          "[hpack]") {
    hpack::encoder encoder;
    std::string first;
    encoder.begin_block(first);
    CHECK(hex(first) == "3f e1 07");  // the table tern uses: 1,024 bytes, not the default 4,096
    const std::pair<int, std::string_view> codes[] = {{200, "88"},
                                                      {204, "89"},
                                                      {206, "8a"},
                                                      {304, "8b"},
                                                      {400, "8c"},
                                                      {404, "8d"},
                                                      {500, "8e"},
                                                      {201, "08 03 32 30 31"},
                                                      {103, "08 03 31 30 33"}};
    for (const auto& [code, bytes] : codes) {
        std::string out;
        encoder.begin_block(out);  // nothing owed any more
        encoder.status(code, out);
        CHECK(hex(out) == bytes);
    }
}

TEST_CASE(
    "hpack encoder: repeated fields are indexed, changing ones are literals, credentials "
    "never indexed",
    "[hpack]") {
    hpack::encoder encoder;
    std::string out;
    encoder.begin_block(out);
    out.clear();
    encoder.field("server", "tern", out);  // static name 54, incremental indexing
    CHECK(hex(out) == "76 83 49 6c ab");
    out.clear();
    encoder.field("server", "tern", out);  // now dynamic entry 62
    CHECK(hex(out) == "be");
    out.clear();
    encoder.field("content-length", "1234", out);  // static name 28, not indexed
    CHECK(hex(out) == "0f 0d 83 08 99 6b");
    out.clear();
    encoder.field("content-length", "1234", out);  // still a literal
    CHECK(hex(out) == "0f 0d 83 08 99 6b");
    out.clear();
    encoder.field("authorization", "secret", out);  // static name 23, never indexed
    CHECK(hex(out).substr(0, 5) == "1f 08");
    out.clear();
    encoder.field("set-cookie", "a=b", out, true);  // never indexed on request: name 55
    CHECK(hex(out).substr(0, 5) == "1f 28");
    out.clear();
    encoder.field("accept-encoding", "gzip, deflate", out);  // a whole static entry
    CHECK(hex(out) == "90");
    out.clear();
    encoder.field("x-request-id", "abc", out);  // a new name, not indexed: raw, 3 is shorter
    CHECK(out[0] == 0x00);
    CHECK(encoder.table().count() == 1);
    // An indexed name with a value too large for a quarter of the table is not inserted.
    encoder.field("content-type", std::string(300, 'x'), out);
    CHECK(encoder.table().count() == 1);
}

TEST_CASE(
    "hpack encoder: a smaller peer table shrinks the encoder's at once and is told at the "
    "next block",
    "[hpack]") {
    hpack::encoder encoder;
    std::string out;
    encoder.begin_block(out);
    encoder.field("server", "tern", out);
    CHECK(encoder.table().count() == 1);
    encoder.set_peer_max_table_size(0);
    encoder.set_peer_max_table_size(4096);
    CHECK(encoder.table().count() == 0);
    out.clear();
    encoder.begin_block(out);
    CHECK(hex(out) == "20 3f e1 07");  // the smallest, 0, then the final 1,024
    out.clear();
    encoder.set_peer_max_table_size(100);
    encoder.begin_block(out);
    CHECK(hex(out) == "3f 45");
}

// Responses as tern sends them, over several blocks on one connection.
const std::vector<hpack_fields> responses = {
    {{"server", "tern"},
     {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
     {"content-type", "text/plain; charset=utf-8"},
     {"content-length", "13"}},
    {{"server", "tern"},
     {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
     {"content-type", "application/json"},
     {"content-length", "2"},
     {"cache-control", "no-store"},
     {"vary", "accept-encoding"}},
    {{"server", "tern"},
     {"date", "Mon, 21 Oct 2013 20:13:22 GMT"},
     {"content-type", "text/plain; charset=utf-8"},
     {"content-length", "13"},
     {"set-cookie", "session=abc; HttpOnly", true},
     {"etag", "\"5f-1a2b\""},
     {"x-custom", "\x01\xff binary \x7f"},
     {"location", "/elsewhere"},
     {"authorization", "Basic Zm9vOmJhcg=="}},
};

TEST_CASE("hpack encoder: what it writes, tern's decoder and nghttp2's inflater read the same",
          "[hpack]") {
    hpack::encoder encoder;
    hpack::decoder decoder;
    tern_test::nghttp2_inflater inflater;
    const int statuses[] = {200, 201, 404, 200, 302, 200};
    for (int round = 0; round < 2; ++round) {
        for (std::size_t i = 0; i < 6; ++i) {
            if (round == 1 && i == 3) {
                encoder.set_peer_max_table_size(64);
                REQUIRE(inflater.change_table_size(64));
                decoder.set_max_table_size(64);
            }
            const auto& fields = responses[i % responses.size()];
            const std::string block = encode(encoder, statuses[i], fields);
            // never_indexed as sent, except authorization, which tern never indexes anyway.
            hpack_fields expected = with_status(statuses[i], fields);
            for (auto& f : expected) f.never_indexed |= f.name == "authorization";
            hpack_fields ours;
            REQUIRE(tern_decode(decoder, block, ours) == decode_status::ok);
            CHECK(ours == expected);
            hpack_fields theirs;
            REQUIRE(inflater.inflate(block, theirs));
            CHECK(theirs == expected);
        }
    }
}

TEST_CASE("hpack dynamic table: entries keep their numbers through evictions and growth",
          "[hpack]") {
    hpack::dynamic_table table(128);
    REQUIRE(table.insert("a", std::string(40, 'x')));  // number 1
    REQUIRE(table.insert("b", std::string(40, 'y')));  // number 2: evicts a (73 + 73 > 128)
    CHECK(table.inserted() == 2);
    CHECK(table.count() == 1);
    CHECK(table.value_equals(table.inserted() - 2, std::string(40, 'y')));
    CHECK(table.inserted() - 1 >= table.count());  // number 1 is gone
    table.set_max_capacity(4096);                  // laid out again in a larger ring
    CHECK(table.inserted() == 2);
    CHECK(table.value_equals(table.inserted() - 2, std::string(40, 'y')));
    table.set_capacity(4096);
    REQUIRE(table.insert("c", "z"));  // number 3
    CHECK(table.name_equals(table.inserted() - 3, "c"));
    CHECK(table.name_equals(table.inserted() - 2, "b"));
}

TEST_CASE(
    "hpack encoder: fields sent again are found by the entry last added under their name, "
    "through evictions, alternating values and table size changes, as nghttp2 reads them",
    "[hpack]") {
    hpack::encoder encoder;
    tern_test::nghttp2_inflater inflater;
    std::mt19937 random(11);
    const std::vector<std::string> types = {"text/html", "application/json", "image/png",
                                            "text/css; charset=utf-8"};
    const std::vector<std::string> tags = {"\"1-a\"", "\"2-bb\"", "\"3-ccc\"", "\"4-dddd\"",
                                           "\"5-eeeee\""};
    std::size_t one_byte_repeats = 0;
    for (int i = 0; i < 2000; ++i) {
        if (i % 250 == 249) {
            // The peer's table shrinks and grows again: the entries go, their numbers stay.
            const std::uint32_t size = (i / 250) % 2 == 0 ? 128 : 4096;
            encoder.set_peer_max_table_size(size);
            REQUIRE(inflater.change_table_size(size));
        }
        const hpack_fields fields = {
            {"server", "tern"},
            {"date", "Mon, 07 Dec 2026 08:" + std::to_string(10 + i / 100) + ":00 GMT"},
            {"content-type", types[random() % types.size()]},
            {"etag", tags[random() % tags.size()]},
            {"content-length", std::to_string(random() % 5000)},
            {"x-filler", std::string(random() % 200, 'f')}};
        const std::string block = encode(encoder, 200, fields);
        hpack_fields theirs;
        REQUIRE(inflater.inflate(block, theirs));
        REQUIRE(theirs == with_status(200, fields));
        // The same response again at once: every indexed field is one byte (a table of
        // 128 bytes holds only some of them).
        const std::string again = encode(encoder, 200, fields);
        hpack_fields twice;
        REQUIRE(inflater.inflate(again, twice));
        REQUIRE(twice == with_status(200, fields));
        if (encoder.table().capacity() >= 1024) {
            if (again.size() < block.size()) ++one_byte_repeats;
            // :status, four indexed fields, content-length (a literal with the static name)
            // and x-filler (a literal with a name of its own)
            CHECK(again.size() <=
                  1 + 4 + 2 + fields[4].value.size() + 2 + 8 + fields[5].value.size() + 2);
        }
    }
    CHECK(one_byte_repeats > 0);
}

TEST_CASE("hpack encoder: what nghttp2's deflater writes, tern's decoder reads as nghttp2 does",
          "[hpack]") {
    tern_test::nghttp2_deflater deflater;
    hpack::decoder decoder;
    tern_test::nghttp2_inflater inflater;
    std::mt19937 random(7);
    const hpack_fields request = {{":method", "GET"},
                                  {":scheme", "https"},
                                  {":authority", "example.com"},
                                  {":path", "/"},
                                  {"user-agent", "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0"},
                                  {"accept", "text/html,application/xhtml+xml,*/*;q=0.8"},
                                  {"accept-encoding", "gzip, deflate, br"},
                                  {"accept-language", "en-US,en;q=0.9"},
                                  {"cookie", "a=1"},
                                  {"cookie", "session=0123456789abcdef"}};
    for (int i = 0; i < 200; ++i) {
        hpack_fields fields = request;
        fields[3].value = "/item/" + std::to_string(random() % 50);
        if (i % 7 == 0) fields.push_back({"authorization", "Bearer xyz", true});
        if (i % 11 == 0) fields.push_back({"x-long", std::string(random() % 3000, 'v')});
        if (i == 100) {
            deflater.change_table_size(256);
            REQUIRE(inflater.change_table_size(256));
            decoder.set_max_table_size(256);
        }
        const std::string block = deflater.deflate(fields);
        hpack_fields ours;
        hpack_fields theirs;
        REQUIRE(tern_decode(decoder, block, ours) == decode_status::ok);
        REQUIRE(inflater.inflate(block, theirs));
        CHECK(ours == theirs);
        CHECK(ours.size() == fields.size());
    }
}

TEST_CASE("hpack encoder: encoding allocates nothing but what the output buffer takes", "[hpack]") {
    hpack::encoder encoder;
    std::string out;
    out.reserve(4096);
    for (const auto& fields : responses) {
        out.clear();
        encoder.begin_block(out);
        for (const auto& f : fields) encoder.field(f.name, f.value, out, f.never_indexed);
    }
    const long before = tern_test::allocation_count();
    for (int round = 0; round < 100; ++round) {
        for (const auto& fields : responses) {
            out.clear();
            encoder.begin_block(out);
            encoder.status(200, out);
            for (const auto& f : fields) encoder.field(f.name, f.value, out, f.never_indexed);
        }
    }
    CHECK(tern_test::allocation_count() == before);
}

}  // namespace unit_test_h2_hpack_encoder
