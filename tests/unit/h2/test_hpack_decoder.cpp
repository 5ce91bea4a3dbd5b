// HPACK's decoder (src/h2/hpack_decoder.cpp): the examples of RFC 7541 Appendix C (C.2 to
// C.6, with the dynamic table after each block), each malformed input it must refuse as a
// COMPRESSION_ERROR, its limits counted as it decodes (the HPACK bomb), the table kept in step
// past a limit, and no allocation once warm.

#include "h2/hpack.hpp"
#include "support/allocation_counter.hpp"
#include "support/hex.hpp"
#include "support/hpack_oracle.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace unit_test_h2_hpack_decoder {

namespace hpack = tern::h2::hpack;
using hpack::decode_status;
using tern_test::hpack_field;
using tern_test::hpack_fields;

using tern_test::from_hex;

using table_entries = std::vector<std::pair<std::string, std::string>>;

// The dynamic table, newest first.
table_entries entries(const hpack::dynamic_table& table) {
    table_entries out;
    for (std::size_t i = 0; i < table.count(); ++i) {
        std::string name;
        std::string value;
        table.append_name(i, name);
        table.append_value(i, value);
        out.emplace_back(std::move(name), std::move(value));
    }
    return out;
}

struct example {
    std::string_view hex;
    hpack_fields fields;
    table_entries table;
    std::size_t table_size;
};

// Decodes the blocks in order on one decoder, checking the fields and the table after each;
// with `oracle`, nghttp2's inflater must decode the same fields.
void run(const std::vector<example>& blocks, std::uint32_t table_size, bool oracle) {
    hpack::decoder decoder(table_size);
    tern_test::nghttp2_inflater inflater;
    for (const auto& block : blocks) {
        const std::string bytes = from_hex(block.hex);
        hpack_fields fields;
        REQUIRE(tern_decode(decoder, bytes, fields) == decode_status::ok);
        CHECK(fields == block.fields);
        CHECK(entries(decoder.table()) == block.table);
        CHECK(decoder.table().size() == block.table_size);
        if (oracle) {
            hpack_fields theirs;
            REQUIRE(inflater.inflate(bytes, theirs));
            CHECK(theirs == block.fields);
        }
    }
}

TEST_CASE("hpack decoder: RFC 7541 C.2, each kind of representation alone", "[hpack]") {
    run({{"400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572",
          {{"custom-key", "custom-header", false}},
          {{"custom-key", "custom-header"}},
          55}},
        4096, true);
    run({{"040c 2f73 616d 706c 652f 7061 7468", {{":path", "/sample/path", false}}, {}, 0}}, 4096,
        true);
    run({{"1008 7061 7373 776f 7264 0673 6563 7265 74", {{"password", "secret", true}}, {}, 0}},
        4096, true);
    run({{"82", {{":method", "GET", false}}, {}, 0}}, 4096, true);
}

const hpack_fields request_1 = {
    {":method", "GET"}, {":scheme", "http"}, {":path", "/"}, {":authority", "www.example.com"}};
const hpack_fields request_2 = {{":method", "GET"},
                                {":scheme", "http"},
                                {":path", "/"},
                                {":authority", "www.example.com"},
                                {"cache-control", "no-cache"}};
const hpack_fields request_3 = {{":method", "GET"},
                                {":scheme", "https"},
                                {":path", "/index.html"},
                                {":authority", "www.example.com"},
                                {"custom-key", "custom-value"}};
const table_entries requests_table_1 = {{":authority", "www.example.com"}};
const table_entries requests_table_2 = {{"cache-control", "no-cache"},
                                        {":authority", "www.example.com"}};
const table_entries requests_table_3 = {{"custom-key", "custom-value"},
                                        {"cache-control", "no-cache"},
                                        {":authority", "www.example.com"}};

TEST_CASE("hpack decoder: RFC 7541 C.3, three requests without Huffman coding", "[hpack]") {
    run({{"8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d", request_1, requests_table_1, 57},
         {"8286 84be 5808 6e6f 2d63 6163 6865", request_2, requests_table_2, 110},
         {"8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65", request_3,
          requests_table_3, 164}},
        4096, true);
}

TEST_CASE("hpack decoder: RFC 7541 C.4, three requests with Huffman coding", "[hpack]") {
    run({{"8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", request_1, requests_table_1, 57},
         {"8286 84be 5886 a8eb 1064 9cbf", request_2, requests_table_2, 110},
         {"8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf", request_3,
          requests_table_3, 164}},
        4096, true);
}

const std::string date_1 = "Mon, 21 Oct 2013 20:13:21 GMT";
const std::string date_2 = "Mon, 21 Oct 2013 20:13:22 GMT";
const std::string cookie = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1";
const hpack_fields response_1 = {{":status", "302"},
                                 {"cache-control", "private"},
                                 {"date", date_1},
                                 {"location", "https://www.example.com"}};
const hpack_fields response_2 = {{":status", "307"},
                                 {"cache-control", "private"},
                                 {"date", date_1},
                                 {"location", "https://www.example.com"}};
const hpack_fields response_3 = {{":status", "200"},
                                 {"cache-control", "private"},
                                 {"date", date_2},
                                 {"location", "https://www.example.com"},
                                 {"content-encoding", "gzip"},
                                 {"set-cookie", cookie}};
const table_entries responses_table_1 = {{"location", "https://www.example.com"},
                                         {"date", date_1},
                                         {"cache-control", "private"},
                                         {":status", "302"}};
const table_entries responses_table_2 = {{":status", "307"},
                                         {"location", "https://www.example.com"},
                                         {"date", date_1},
                                         {"cache-control", "private"}};
const table_entries responses_table_3 = {
    {"set-cookie", cookie}, {"content-encoding", "gzip"}, {"date", date_2}};

// The responses' examples use a 256-byte table, so entries are evicted. nghttp2's inflater
// cannot start at 256 bytes without a size update the examples lack: tern's decoder alone.
TEST_CASE("hpack decoder: RFC 7541 C.5, three responses without Huffman coding, with eviction",
          "[hpack]") {
    run({{"4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 "
          "303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 "
          "6f6d",
          response_1, responses_table_1, 222},
         {"4803 3330 37c1 c0bf", response_2, responses_table_2, 222},
         {"88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 "
          "5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 "
          "5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31",
          response_3, responses_table_3, 215}},
        256, false);
}

TEST_CASE("hpack decoder: RFC 7541 C.6, three responses with Huffman coding, with eviction",
          "[hpack]") {
    run({{"4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b "
          "ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
          response_1, responses_table_1, 222},
         {"4883 640e ffc1 c0bf", response_2, responses_table_2, 222},
         {"88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad "
          "94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 "
          "65c0 03ed 4ee5 b106 3d50 07",
          response_3, responses_table_3, 215}},
        256, false);
}

// ---- malformed blocks ------------------------------------------------------------------------

decode_status decode_hex(hpack::decoder& decoder, std::string_view hex) {
    hpack_fields fields;
    return tern_decode(decoder, from_hex(hex), fields);
}

decode_status decode_hex(std::string_view hex) {
    hpack::decoder decoder;
    return decode_hex(decoder, hex);
}

TEST_CASE("hpack decoder: an integer past 2^32 - 1, too long or cut short is a compression error",
          "[hpack]") {
    CHECK(decode_hex("ff ff ff ff ff 0f") == decode_status::compression_error);     // > 2^32
    CHECK(decode_hex("ff 80 80 80 80 80 00") == decode_status::compression_error);  // 6 bytes
    CHECK(decode_hex("ff 80") == decode_status::compression_error);  // continuation missing
    CHECK(decode_hex("0f") == decode_status::compression_error);     // name index cut short
    // The largest value in five continuation bytes is still read (then refused as an index).
    CHECK(decode_hex("ff 80 ff ff ff 0f") == decode_status::compression_error);
}

TEST_CASE("hpack decoder: index 0 and indices past the tables are compression errors", "[hpack]") {
    CHECK(decode_hex("80") == decode_status::compression_error);
    CHECK(decode_hex("be") == decode_status::compression_error);           // 62, table empty
    CHECK(decode_hex("bd") == decode_status::ok);                          // 61, www-authenticate
    CHECK(decode_hex("7e 01 61") == decode_status::compression_error);     // name index 62
    CHECK(decode_hex("0f 2f 01 61") == decode_status::compression_error);  // name index 62
    hpack::decoder decoder;
    CHECK(decode_hex(decoder, "40 01 61 01 62") == decode_status::ok);  // a: b, entry 62
    CHECK(decode_hex(decoder, "be") == decode_status::ok);
    CHECK(decode_hex(decoder, "bf") == decode_status::compression_error);  // 63
}

TEST_CASE("hpack decoder: bad Huffman coding in a name or a value is a compression error",
          "[hpack]") {
    CHECK(decode_hex("04 84 ffffffff") == decode_status::compression_error);  // EOS
    CHECK(decode_hex("04 82 1fff") == decode_status::compression_error);      // 11 bits padding
    CHECK(decode_hex("04 81 18") == decode_status::compression_error);        // padding of zeros
    CHECK(decode_hex("00 81 18 01 61") == decode_status::compression_error);  // in the name
    CHECK(decode_hex("04 81 1f") == decode_status::ok);                       // "a"
}

TEST_CASE("hpack decoder: a string cut short is a compression error", "[hpack]") {
    CHECK(decode_hex("04 05 6162") == decode_status::compression_error);  // value
    CHECK(decode_hex("04") == decode_status::compression_error);          // no value
    CHECK(decode_hex("00 03 61") == decode_status::compression_error);    // name
    CHECK(decode_hex("40 01 61") == decode_status::compression_error);    // no value
    CHECK(decode_hex("04 7f") == decode_status::compression_error);       // length cut short
}

TEST_CASE(
    "hpack decoder: a table size update above the advertised size or after a field is a "
    "compression error",
    "[hpack]") {
    CHECK(decode_hex("3f e1 1f") == decode_status::ok);                 // 4096
    CHECK(decode_hex("3f e2 1f") == decode_status::compression_error);  // 4097
    CHECK(decode_hex("20 3f e1 1f 82") == decode_status::ok);           // two at the start
    CHECK(decode_hex("82 20") == decode_status::compression_error);
    hpack::decoder small(100);
    CHECK(decode_hex(small, "3f 45") == decode_status::ok);                 // 100
    CHECK(decode_hex(small, "3f 46") == decode_status::compression_error);  // 101
}

TEST_CASE(
    "hpack decoder: after tern advertises a smaller table, the next block must start with "
    "an update no larger",
    "[hpack]") {
    hpack::decoder decoder;
    CHECK(decode_hex(decoder, "40 01 61 01 62") == decode_status::ok);
    decoder.set_max_table_size(0);
    CHECK(decoder.table().count() == 0);
    hpack::decoder missing;
    missing.set_max_table_size(100);
    CHECK(decode_hex(missing, "82") == decode_status::compression_error);
    hpack::decoder empty;
    empty.set_max_table_size(100);
    CHECK(decode_hex(empty, "") == decode_status::compression_error);
    hpack::decoder larger;
    larger.set_max_table_size(100);
    CHECK(decode_hex(larger, "3f 46 82") == decode_status::compression_error);  // 101
    hpack::decoder right;
    right.set_max_table_size(100);
    right.set_max_table_size(4096);  // the smallest advertised still bounds the first update
    CHECK(decode_hex(right, "3f 46") == decode_status::compression_error);
    hpack::decoder fine;
    fine.set_max_table_size(100);
    CHECK(decode_hex(fine, "3f 45 82") == decode_status::ok);
    CHECK(decode_hex(fine, "82") == decode_status::ok);  // only the first block after it
    // The same for nghttp2's inflater.
    tern_test::nghttp2_inflater inflater;
    REQUIRE(inflater.change_table_size(100));
    hpack_fields fields;
    CHECK_FALSE(inflater.inflate(from_hex("82"), fields));
}

TEST_CASE("hpack decoder: a larger advertised size lets the peer grow its table, entries kept",
          "[hpack]") {
    hpack::decoder decoder(64);
    CHECK(decode_hex(decoder, "40 01 61 01 62") == decode_status::ok);        // 34 bytes
    CHECK(decode_hex(decoder, "3f 22") == decode_status::compression_error);  // 65
    hpack::decoder grown(64);
    CHECK(decode_hex(grown, "40 01 61 01 62") == decode_status::ok);
    grown.set_max_table_size(8192);
    CHECK(grown.table().capacity() == 64);
    CHECK(decode_hex(grown, "3f e1 3f 40 01 63 01 64") == decode_status::ok);  // 8192
    CHECK(entries(grown.table()) == table_entries{{"c", "d"}, {"a", "b"}});
}

// ---- limits ---------------------------------------------------------------------------------

// A block entering one field of `value_size` bytes, then referring to it `references` times.
std::string bomb(std::size_t value_size, std::size_t references) {
    std::string block = from_hex("40 06") + "x-bomb";
    hpack::append_integer(block, 0x00, 7, static_cast<std::uint32_t>(value_size));
    block.append(value_size, 'a');
    block.append(references, static_cast<char>(0xbe));
    return block;
}

TEST_CASE("hpack decoder: an HPACK bomb stops at the limit, and the next block decodes in step",
          "[hpack]") {
    hpack::decoder decoder;
    const std::string block = bomb(4096 - 32 - 6, 10000);  // a 4 KiB entry
    const hpack::decode_limits limits{100, 8192};
    std::size_t delivered = 0;
    std::size_t bytes = 0;
    const auto status = decoder.decode(tern_test::bytes_of(block), limits,
                                       [&](std::string_view name, std::string_view value, bool) {
                                           ++delivered;
                                           bytes += name.size() + value.size() + 32;
                                       });
    CHECK(status == decode_status::too_large);
    CHECK(delivered == 2);
    CHECK(bytes <= 8192);
    // The table is as the peer's encoder has it: the next block refers to the entry.
    hpack_fields fields;
    CHECK(tern_decode(decoder, from_hex("be 82"), fields, limits) == decode_status::ok);
    REQUIRE(fields.size() == 2);
    CHECK(fields[0].name == "x-bomb");
    CHECK(fields[0].value.size() == 4096 - 32 - 6);
    CHECK(fields[1] == hpack_field{":method", "GET", false});

    // Small fields: the count stops first.
    const std::string small = bomb(10, 10000);
    delivered = 0;
    CHECK(decoder.decode(tern_test::bytes_of(small), limits,
                         [&](std::string_view, std::string_view, bool) { ++delivered; }) ==
          decode_status::too_many_fields);
    CHECK(delivered == 100);
}

TEST_CASE(
    "hpack decoder: past a limit no string is copied, malformed input is still found, and "
    "insertions still happen",
    "[hpack]") {
    hpack::decoder decoder;
    const hpack::decode_limits limits{1, 1000};
    // Two fields over a limit of one; the second one, with incremental indexing, still enters
    // the table.
    std::string block = from_hex("82 40 01 61 01 62");
    hpack_fields fields;
    CHECK(tern_decode(decoder, block, fields, limits) == decode_status::too_many_fields);
    CHECK(fields.size() == 1);
    CHECK(entries(decoder.table()) == table_entries{{"a", "b"}});
    // Bad Huffman after the limit is still an error: the connection must end.
    CHECK(tern_decode(decoder, from_hex("82 82 04 81 18"), fields, limits) ==
          decode_status::compression_error);
    // A field larger than the list limit is refused before it is copied.
    hpack::decoder fresh;
    std::string large = from_hex("04");
    std::string coded;
    hpack::huffman_encode(std::string(5000, 'a'), coded);
    hpack::append_integer(large, 0x80, 7, static_cast<std::uint32_t>(coded.size()));
    large += coded;
    fields.clear();
    CHECK(tern_decode(fresh, large, fields, {100, 1000}) == decode_status::too_large);
    CHECK(fields.empty());
}

TEST_CASE("hpack decoder: decoding allocates nothing once warm, whatever the block", "[hpack]") {
    hpack::decoder decoder;
    const std::string requests[] = {
        from_hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff"),
        from_hex("8286 84be 5886 a8eb 1064 9cbf"),
        from_hex("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf"),
        bomb(4000, 10000),
    };
    std::size_t seen = 0;
    auto count = [&](std::string_view name, std::string_view value, bool) {
        seen += name.size() + value.size();
    };
    const hpack::decode_limits limits{100, 16384};
    // Warm: the scratch buffer grows to the longest string it had to copy (a Huffman-coded
    // one, or an entry wrapping around the end of the table's ring), then stays.
    for (int round = 0; round < 10; ++round) {
        for (const auto& block : requests) {
            decoder.decode(tern_test::bytes_of(block), limits, count);
        }
    }
    const long before = tern_test::allocation_count();
    for (int round = 0; round < 100; ++round) {
        for (const auto& block : requests) {
            decoder.decode(tern_test::bytes_of(block), limits, count);
        }
    }
    CHECK(tern_test::allocation_count() == before);
    CHECK(seen > 0);
}

}  // namespace unit_test_h2_hpack_decoder
