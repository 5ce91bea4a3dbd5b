// HPACK's Huffman code (src/h2/hpack_huffman.cpp, RFC 7541 5.2 and Appendix B): the strings
// of the RFC's examples (C.4, C.6) both ways, every byte value through a round trip, and the
// three ways a coded string is refused.

#include "h2/hpack.hpp"
#include "support/hex.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <random>
#include <string>
#include <string_view>
#include <utility>

namespace unit_test_h2_hpack_huffman {

namespace hpack = tern::h2::hpack;

using tern_test::from_hex;

std::string encoded(std::string_view s) {
    std::string out;
    hpack::huffman_encode(s, out);
    return out;
}

// The literals of RFC 7541 C.4 and C.6, and their Huffman codes.
const std::pair<std::string_view, std::string_view> rfc_strings[] = {
    {"www.example.com", "f1e3 c2e5 f23a 6ba0 ab90 f4ff"},
    {"no-cache", "a8eb 1064 9cbf"},
    {"custom-key", "25a8 49e9 5ba9 7d7f"},
    {"custom-value", "25a8 49e9 5bb8 e8b4 bf"},
    {"302", "6402"},
    {"307", "640e ff"},
    {"private", "aec3 771a 4b"},
    {"Mon, 21 Oct 2013 20:13:21 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff"},
    {"https://www.example.com", "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3"},
    {"Mon, 21 Oct 2013 20:13:22 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff"},
    {"gzip", "9bd9 ab"},
    {"foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
     "94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 "
     "03ed 4ee5 b106 3d50 07"},
};

TEST_CASE("hpack huffman: the RFC 7541 example strings encode and decode to their codes",
          "[hpack]") {
    for (const auto& [text, hex] : rfc_strings) {
        const std::string code = from_hex(hex);
        CHECK(encoded(text) == code);
        CHECK(hpack::huffman_encoded_size(text) == code.size());
        std::string decoded;
        CHECK(hpack::huffman_decode(code, decoded));
        CHECK(decoded == text);
    }
}

TEST_CASE("hpack huffman: every byte value, alone and in random strings, survives a round trip",
          "[hpack]") {
    for (int b = 0; b < 256; ++b) {
        const std::string one(1, static_cast<char>(b));
        for (const std::string& s : {one, one + one + one, std::string(17, one[0])}) {
            std::string decoded = "kept:";
            REQUIRE(hpack::huffman_decode(encoded(s), decoded));
            CHECK(decoded == "kept:" + s);  // appended
        }
    }
    std::mt19937 random(51);
    for (int round = 0; round < 500; ++round) {
        std::string s(random() % 300, '\0');
        for (char& c : s) c = static_cast<char>(random() % 256);
        std::string decoded;
        REQUIRE(hpack::huffman_decode(encoded(s), decoded));
        CHECK(decoded == s);
    }
    std::string empty;
    CHECK(hpack::huffman_decode("", empty));
    CHECK(empty.empty());
}

TEST_CASE("hpack huffman: the EOS symbol, padding over 7 bits and padding not all ones are refused",
          "[hpack]") {
    std::string out;
    // EOS is 30 ones: four bytes of ones hold it.
    CHECK_FALSE(hpack::huffman_decode(from_hex("ffff ffff"), out));
    // 'a' is 00011: 0x1f is 'a' and three bits of padding; one more byte of ones is 11.
    CHECK(hpack::huffman_decode(from_hex("1f"), out));
    CHECK_FALSE(hpack::huffman_decode(from_hex("1f ff"), out));
    CHECK_FALSE(hpack::huffman_decode(from_hex("ff"), out));  // 8 bits of padding alone
    // Padding of zeros: 'a' then 000.
    CHECK_FALSE(hpack::huffman_decode(from_hex("18"), out));
    // '&' is 11111000: a whole byte, no padding.
    out.clear();
    CHECK(hpack::huffman_decode(from_hex("f8"), out));
    CHECK(out == "&");
}

TEST_CASE(
    "hpack huffman: a bounded decode appends no more than its limit and still checks the rest",
    "[hpack]") {
    const std::string code = encoded("Mon, 21 Oct 2013 20:13:21 GMT");
    std::string out;
    CHECK(hpack::detail::huffman_decode(code, out, 5) == hpack::detail::huffman_result::over);
    CHECK(out == "Mon, ");
    out.clear();
    CHECK(hpack::detail::huffman_decode(code, out, 29) == hpack::detail::huffman_result::ok);
    std::string bad = code;
    bad.back() = static_cast<char>(0xfe);  // padding not all ones
    out.clear();
    CHECK(hpack::detail::huffman_decode(bad, out, 5) == hpack::detail::huffman_result::invalid);
}

}  // namespace unit_test_h2_hpack_huffman
