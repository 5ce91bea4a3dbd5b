// The incremental UTF-8 validator (src/ws/utf8.hpp): the cases of the Autobahn testsuite's
// section 6 (valid text split at every byte, each class of invalid sequence, fail-fast
// positions), and an exhaustive comparison with a decoder written from RFC 3629 for every
// sequence of up to three bytes.

#include <catch2/catch.hpp>

#include "ws/utf8.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace unit_test_ws_utf8 {

using tern::detail::ws::is_valid_utf8;
using tern::detail::ws::utf8_validator;

namespace {

std::string bytes(std::initializer_list<int> list) {
    std::string out;
    for (const int b : list) out += static_cast<char>(b);
    return out;
}

// RFC 3629 section 3 and 4, by decoding: the reference the validator is compared with.
bool reference_valid(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto b = static_cast<std::uint8_t>(s[i]);
        std::size_t len = 0;
        std::uint32_t cp = 0;
        if (b < 0x80) {
            len = 1;
            cp = b;
        } else if ((b & 0xE0) == 0xC0) {
            len = 2;
            cp = b & 0x1Fu;
        } else if ((b & 0xF0) == 0xE0) {
            len = 3;
            cp = b & 0x0Fu;
        } else if ((b & 0xF8) == 0xF0) {
            len = 4;
            cp = b & 0x07u;
        } else {
            return false;
        }
        if (i + len > s.size()) return false;
        for (std::size_t k = 1; k < len; ++k) {
            const auto c = static_cast<std::uint8_t>(s[i + k]);
            if ((c & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (c & 0x3Fu);
        }
        static constexpr std::uint32_t min_for_len[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_for_len[len]) return false;         // overlong
        if (cp >= 0xD800 && cp <= 0xDFFF) return false;  // surrogate
        if (cp > 0x10FFFF) return false;                 // beyond Unicode
        i += len;
    }
    return true;
}

// Feeds `s` in pieces cut at `cuts` (ascending offsets); the final result and complete().
std::pair<bool, bool> fed_in_pieces(std::string_view s, const std::vector<std::size_t>& cuts) {
    utf8_validator v;
    std::size_t from = 0;
    bool ok = true;
    for (const std::size_t cut : cuts) {
        ok = v.feed(s.substr(from, cut - from)) && ok;
        from = cut;
    }
    ok = v.feed(s.substr(from)) && ok;
    return {ok, v.complete()};
}

}  // namespace

TEST_CASE("valid UTF-8 at every length and boundary code point is accepted", "[ws][utf8]") {
    const std::vector<std::string> valid = {
        "",
        "Hello-\xC2\xB5@\xC3\x9F\xC3\xB6\xC3\xA4\xC3\xBC\xC3\xA0\xC3\xA1-UTF-8!!",
        "\xCE\xBA\xE1\xBD\xB9\xCF\x83\xCE\xBC\xCE\xB5",  // κόσμε (Autobahn 6.2.1)
        bytes({0x7F}),
        bytes({0xC2, 0x80}),
        bytes({0xDF, 0xBF}),
        bytes({0xE0, 0xA0, 0x80}),
        bytes({0xED, 0x9F, 0xBF}),        // U+D7FF
        bytes({0xEE, 0x80, 0x80}),        // U+E000
        bytes({0xEF, 0xBF, 0xBF}),        // U+FFFF
        bytes({0xEF, 0xBF, 0xBE}),        // U+FFFE (a noncharacter, still valid UTF-8)
        bytes({0xF0, 0x90, 0x80, 0x80}),  // U+10000
        bytes({0xF4, 0x8F, 0xBF, 0xBF}),  // U+10FFFF
        std::string(1000, 'a') + "\xF0\x9F\x98\x80" + std::string(13, 'b'),
    };
    for (const auto& s : valid) {
        CAPTURE(s);
        CHECK(is_valid_utf8(s));
    }
}

TEST_CASE("valid multi-byte text split at every byte is accepted", "[ws][utf8]") {
    const std::string text = "\xCE\xBA\xE1\xBD\xB9\xCF\x83\xCE\xBC\xCE\xB5 a\xF0\x9F\x98\x80z" +
                             std::string(17, 'x') + "\xF4\x8F\xBF\xBF";
    for (std::size_t cut = 0; cut <= text.size(); ++cut) {
        CAPTURE(cut);
        const auto [ok, complete] = fed_in_pieces(text, {cut});
        CHECK(ok);
        CHECK(complete);
    }
    // One byte at a time: complete() only between characters.
    utf8_validator v;
    const std::string smile = "\xF0\x9F\x98\x80";
    for (std::size_t i = 0; i < smile.size(); ++i) {
        CHECK(v.feed(smile.substr(i, 1)));
        CHECK(v.complete() == (i + 1 == smile.size()));
    }
}

TEST_CASE("each class of invalid sequence is rejected", "[ws][utf8]") {
    const std::vector<std::string> invalid = {
        bytes({0x80}),  // a lone continuation byte
        bytes({0xBF}),
        bytes({0x61, 0x80, 0x62}),
        bytes({0xC0, 0x80}),        // overlong NUL
        bytes({0xC1, 0xBF}),        // overlong 2-byte
        bytes({0xE0, 0x80, 0x80}),  // overlong 3-byte
        bytes({0xE0, 0x9F, 0xBF}),
        bytes({0xF0, 0x80, 0x80, 0x80}),  // overlong 4-byte
        bytes({0xF0, 0x8F, 0xBF, 0xBF}),
        bytes({0xED, 0xA0, 0x80}),                    // U+D800
        bytes({0xED, 0xBF, 0xBF}),                    // U+DFFF
        bytes({0xED, 0xA0, 0x80, 0xED, 0xB0, 0x80}),  // a surrogate pair
        bytes({0xF4, 0x90, 0x80, 0x80}),              // U+110000
        bytes({0xF7, 0xBF, 0xBF, 0xBF}),
        bytes({0xF5}),
        bytes({0xF8}),
        bytes({0xFC}),
        bytes({0xFE}),
        bytes({0xFF}),
        bytes({0xC2, 0x41}),  // a lead byte followed by ASCII
        bytes({0xE1, 0x80, 0x41}),
        bytes({0xF1, 0x80, 0x80, 0xC2}),
        // Autobahn 6.3.1: valid text, then a surrogate, then more text.
        "\xCE\xBA\xE1\xBD\xB9\xCF\x83\xCE\xBC\xCE\xB5\xED\xA0\x80\x65\x64\x69\x74\x65\x64",
    };
    for (const auto& s : invalid) {
        CAPTURE(s);
        CHECK_FALSE(is_valid_utf8(s));
        CHECK_FALSE(reference_valid(s));
        for (std::size_t cut = 0; cut <= s.size(); ++cut) {
            CHECK_FALSE(fed_in_pieces(s, {cut}).first);
        }
    }
}

TEST_CASE("a character cut off at the end is valid so far but not complete", "[ws][utf8]") {
    for (const auto& s :
         {bytes({0xC3}), bytes({0xE2, 0x82}), bytes({0xF0, 0x9F, 0x98}), "abc" + bytes({0xF4})}) {
        utf8_validator v;
        CHECK(v.feed(s));
        CHECK_FALSE(v.complete());
        CHECK_FALSE(is_valid_utf8(s));
    }
}

TEST_CASE("the validator fails at the first byte that makes the text invalid", "[ws][utf8]") {
    // Autobahn 6.4.x: fail fast, at the byte that breaks the rule, not at the end of the
    // character.
    const std::vector<std::pair<int, int>> first_bad = {
        {0xE0, 0x9F}, {0xED, 0xA0}, {0xF0, 0x8F}, {0xF4, 0x90}, {0xC2, 0xC2}};
    for (const auto& [lead, bad] : first_bad) {
        CAPTURE(lead, bad);
        utf8_validator v;
        CHECK(v.feed("\xCE\xBA\xE1\xBD\xB9" + bytes({lead})));
        CHECK_FALSE(v.feed(bytes({bad})));
    }
    for (const int lead : {0x80, 0xC0, 0xC1, 0xF5, 0xFF}) {
        utf8_validator v;
        CHECK_FALSE(v.feed(bytes({lead})));
    }
}

TEST_CASE("a failed validator stays failed until reset", "[ws][utf8]") {
    utf8_validator v;
    CHECK_FALSE(v.feed(bytes({0xFF})));
    CHECK_FALSE(v.feed("plain ascii"));
    CHECK_FALSE(v.feed({}));
    CHECK_FALSE(v.complete());
    v.reset();
    CHECK(v.complete());
    CHECK(v.feed("fine"));
    CHECK(v.complete());
}

TEST_CASE("an invalid byte anywhere in a long ASCII run is found", "[ws][utf8]") {
    for (std::size_t at = 0; at < 40; ++at) {
        std::string s(40, 'a');
        s[at] = static_cast<char>(0x80);
        CAPTURE(at);
        CHECK_FALSE(is_valid_utf8(s));
        s[at] = static_cast<char>(0xC3);
        CHECK_FALSE(is_valid_utf8(s));
        if (at + 1 < s.size()) {
            s[at + 1] = static_cast<char>(0xA9);
            CHECK(is_valid_utf8(s));
        }
    }
}

TEST_CASE("every sequence of up to three bytes is judged as an RFC 3629 decoder judges it",
          "[ws][utf8]") {
    std::string s(3, '\0');
    std::size_t mismatches = 0;
    for (int a = 0; a < 256; ++a) {
        for (int b = 0; b < 256; ++b) {
            s.assign({static_cast<char>(a), static_cast<char>(b)});
            if (is_valid_utf8(s) != reference_valid(s)) ++mismatches;
            if (a < 0xE0 || a > 0xF4) continue;
            for (int c = 0; c < 256; ++c) {
                s.assign({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)});
                if (is_valid_utf8(s) != reference_valid(s)) ++mismatches;
                if (a < 0xF0) continue;
                for (const int d : {0x41, 0x80, 0xBF, 0xC0}) {
                    s.assign({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c),
                              static_cast<char>(d)});
                    if (is_valid_utf8(s) != reference_valid(s)) ++mismatches;
                }
            }
        }
    }
    CHECK(mismatches == 0);
}

}  // namespace unit_test_ws_utf8
