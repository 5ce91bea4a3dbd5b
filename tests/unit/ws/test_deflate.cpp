// permessage-deflate (src/ws/deflate.hpp): negotiation of offers (RFC 7692 5, 7.1), the
// answer, and the compressor and decompressor, checked against zlib used directly: round
// trips with and without context takeover, a window other than 15, a block with BFINAL, bad
// data, and a bomb (a few bytes that inflate past the limit).

#include <catch2/catch.hpp>

#include "ws/deflate.hpp"

#define ZLIB_CONST
#include <zlib.h>

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace unit_test_ws_deflate {

using namespace tern::detail::ws;

namespace {

// Raw deflate with zlib itself, as a client would send: each message flushed with
// Z_SYNC_FLUSH and the 00 00 ff ff tail removed (or, with `final`, ended with Z_FINISH).
class client_compressor {
public:
    explicit client_compressor(int window_bits = 15, int level = 9) {
        REQUIRE(deflateInit2(&z_, level, Z_DEFLATED, -window_bits, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    }
    ~client_compressor() { deflateEnd(&z_); }
    client_compressor(const client_compressor&) = delete;
    client_compressor& operator=(const client_compressor&) = delete;

    std::string compress(std::string_view message, bool final = false) {
        std::string out(deflateBound(&z_, static_cast<uLong>(message.size())) + 64, '\0');
        z_.next_in = reinterpret_cast<const Bytef*>(message.data());
        z_.avail_in = static_cast<uInt>(message.size());
        z_.next_out = reinterpret_cast<Bytef*>(out.data());
        z_.avail_out = static_cast<uInt>(out.size());
        const int rc = ::deflate(&z_, final ? Z_FINISH : Z_SYNC_FLUSH);
        REQUIRE((rc == Z_OK || rc == Z_STREAM_END));
        REQUIRE(z_.avail_out != 0);
        out.resize(out.size() - z_.avail_out);
        if (final) {
            deflateReset(&z_);
        } else {
            REQUIRE(out.size() >= 4);
            REQUIRE(out.substr(out.size() - 4) == std::string("\0\0\xff\xff", 4));
            out.resize(out.size() - 4);
        }
        return out;
    }

private:
    z_stream z_{};
};

// Raw inflate with zlib itself, as a client would read the server's messages.
class client_decompressor {
public:
    client_decompressor() { REQUIRE(inflateInit2(&z_, -15) == Z_OK); }
    ~client_decompressor() { inflateEnd(&z_); }
    client_decompressor(const client_decompressor&) = delete;
    client_decompressor& operator=(const client_decompressor&) = delete;

    std::string decompress(std::string payload) {
        payload.append("\0\0\xff\xff", 4);
        std::string out;
        z_.next_in = reinterpret_cast<const Bytef*>(payload.data());
        z_.avail_in = static_cast<uInt>(payload.size());
        std::array<char, 4096> buf{};
        do {
            z_.next_out = reinterpret_cast<Bytef*>(buf.data());
            z_.avail_out = static_cast<uInt>(buf.size());
            const int rc = ::inflate(&z_, Z_SYNC_FLUSH);
            REQUIRE((rc == Z_OK || rc == Z_BUF_ERROR));
            out.append(buf.data(), buf.size() - z_.avail_out);
        } while (z_.avail_out == 0 || z_.avail_in != 0);
        return out;
    }

private:
    z_stream z_{};
};

std::string sample_text(int i) {
    std::string s;
    for (int k = 0; k < 40; ++k)
        s += "message " + std::to_string(i) + " repeats itself, k=" + std::to_string(k % 7) + ". ";
    return s;
}

}  // namespace

TEST_CASE("a plain permessage-deflate offer is accepted with the defaults", "[ws][deflate]") {
    const auto p = negotiate_deflate("permessage-deflate", false);
    REQUIRE(p);
    CHECK_FALSE(p->server_no_context_takeover);
    CHECK_FALSE(p->client_no_context_takeover);
    CHECK(p->server_max_window_bits == 15);
    CHECK(p->client_max_window_bits == 15);
    CHECK(format_deflate_answer(*p) == "permessage-deflate");
}

TEST_CASE(
    "a browser's offer is accepted and client_max_window_bits without a value is left out "
    "of the answer",
    "[ws][deflate]") {
    const auto p = negotiate_deflate("permessage-deflate; client_max_window_bits", false);
    REQUIRE(p);
    CHECK(p->client_max_window_bits == 15);
    CHECK(format_deflate_answer(*p) == "permessage-deflate");
}

TEST_CASE("every parameter is read, case-insensitively, and answered", "[ws][deflate]") {
    const auto p = negotiate_deflate(
        "PerMessage-Deflate ; Server_No_Context_Takeover; CLIENT_NO_CONTEXT_TAKEOVER ; "
        "server_max_window_bits=10;client_max_window_bits = 12",
        false);
    REQUIRE(p);
    CHECK(p->server_no_context_takeover);
    CHECK(p->client_no_context_takeover);
    CHECK(p->server_max_window_bits == 10);
    CHECK(p->client_max_window_bits == 12);
    CHECK(format_deflate_answer(*p) ==
          "permessage-deflate; server_no_context_takeover; client_no_context_takeover; "
          "server_max_window_bits=10; client_max_window_bits=12");
}

TEST_CASE("a quoted parameter value is accepted", "[ws][deflate]") {
    const auto p = negotiate_deflate("permessage-deflate; server_max_window_bits=\"10\"", false);
    REQUIRE(p);
    CHECK(p->server_max_window_bits == 10);
    CHECK_FALSE(negotiate_deflate("permessage-deflate; server_max_window_bits=\"1 0\"", false));
    CHECK_FALSE(negotiate_deflate("permessage-deflate; server_max_window_bits=\"10", false));
}

TEST_CASE("the server's wish for no context takeover is answered whatever was offered",
          "[ws][deflate]") {
    const auto p = negotiate_deflate("permessage-deflate", true);
    REQUIRE(p);
    CHECK(p->server_no_context_takeover);
    CHECK(format_deflate_answer(*p) == "permessage-deflate; server_no_context_takeover");
}

TEST_CASE("an offer with a bad parameter is declined and the next offer is tried",
          "[ws][deflate]") {
    const std::vector<std::string> bad = {
        "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
        "permessage-deflate; client_max_window_bits; client_max_window_bits=10",
        "permessage-deflate; server_max_window_bits=10; server_max_window_bits=10",
        "permessage-deflate; unknown_param",
        "permessage-deflate; server_no_context_takeover=1",
        "permessage-deflate; client_no_context_takeover=\"\"",
        "permessage-deflate; server_max_window_bits",
        "permessage-deflate; server_max_window_bits=7",
        "permessage-deflate; server_max_window_bits=16",
        "permessage-deflate; server_max_window_bits=010",
        "permessage-deflate; server_max_window_bits=09",
        "permessage-deflate; client_max_window_bits=08",
        "permessage-deflate; server_max_window_bits=ten",
        "permessage-deflate; client_max_window_bits=7",
        "permessage-deflate; client_max_window_bits=",
        "permessage-deflate;",
        "permessage-deflate; ;server_no_context_takeover",
    };
    for (const auto& offer : bad) {
        CAPTURE(offer);
        CHECK_FALSE(negotiate_deflate(offer, false));
        const auto p =
            negotiate_deflate(offer + ", permessage-deflate; client_no_context_takeover", false);
        REQUIRE(p);
        CHECK(p->client_no_context_takeover);
    }
}

TEST_CASE("an offer of server_max_window_bits=15 is answered, with 14", "[ws][deflate]") {
    // RFC 7692 7.1.2.1: the answer must carry the parameter, and 15 is what the answer
    // leaves out (client_max_window_bits may only be named when offered).
    const auto p = negotiate_deflate("permessage-deflate; server_max_window_bits=15", false);
    REQUIRE(p);
    CHECK(format_deflate_answer(*p) == "permessage-deflate; server_max_window_bits=14");
    const auto c = negotiate_deflate("permessage-deflate; client_max_window_bits=15", false);
    REQUIRE(c);
    CHECK(format_deflate_answer(*c) == "permessage-deflate");
}

TEST_CASE("server_max_window_bits=8 is declined and 9 is taken", "[ws][deflate]") {
    CHECK_FALSE(negotiate_deflate("permessage-deflate; server_max_window_bits=8", false));
    const auto p = negotiate_deflate(
        "permessage-deflate; server_max_window_bits=8, permessage-deflate; "
        "server_max_window_bits=9",
        false);
    REQUIRE(p);
    CHECK(p->server_max_window_bits == 9);
    const auto c = negotiate_deflate("permessage-deflate; client_max_window_bits=8", false);
    REQUIRE(c);
    CHECK(c->client_max_window_bits == 8);
    CHECK(format_deflate_answer(*c) == "permessage-deflate; client_max_window_bits=8");
}

TEST_CASE("the brief's two-offer example takes the first offer", "[ws][deflate]") {
    const auto p = negotiate_deflate(
        "permessage-deflate; client_max_window_bits, permessage-deflate; server_max_window_bits=10",
        false);
    REQUIRE(p);
    CHECK(p->server_max_window_bits == 15);
}

TEST_CASE("other extensions and empty list elements are skipped", "[ws][deflate]") {
    CHECK_FALSE(negotiate_deflate("", false));
    CHECK_FALSE(negotiate_deflate("x-webkit-deflate-frame", false));
    CHECK_FALSE(negotiate_deflate("permessage-deflatex", false));
    // A quoted value of another extension may hold a comma or a semicolon.
    const auto p = negotiate_deflate(
        ", foo; bar=\"a, permessage-deflate; b\" ,, permessage-deflate; server_max_window_bits=11",
        false);
    REQUIRE(p);
    CHECK(p->server_max_window_bits == 11);
}

TEST_CASE("messages round-trip through the deflater and inflater with context takeover",
          "[ws][deflate]") {
    const deflate_params params;
    deflater d(params);
    inflater i(params);
    client_decompressor client;
    std::size_t first_size = 0;
    for (int n = 0; n < 6; ++n) {
        const std::string msg = sample_text(n % 2);
        std::string wire;
        d.deflate(msg, wire);
        if (n == 0) first_size = wire.size();
        // The second time the same text comes, the shared window makes it tiny.
        if (n >= 2) CHECK(wire.size() < first_size / 2);
        CHECK(client.decompress(wire) == msg);
        std::string back;
        CHECK(i.inflate(wire, back, 1 << 20) == inflater::status::ok);
        CHECK(back == msg);
    }
}

TEST_CASE("without context takeover each message is compressed and inflated alone",
          "[ws][deflate]") {
    deflate_params params;
    params.server_no_context_takeover = true;
    params.client_no_context_takeover = true;
    deflater d(params);
    std::vector<std::string> wires;
    for (int n = 0; n < 3; ++n) {
        std::string wire;
        d.deflate(sample_text(1), wire);
        wires.push_back(wire);
    }
    CHECK(wires[0] == wires[1]);
    CHECK(wires[1] == wires[2]);
    // Each inflates alone, in a fresh inflater too.
    inflater i(params);
    for (const auto& w : wires) {
        std::string back;
        CHECK(i.inflate(w, back, 1 << 20) == inflater::status::ok);
        CHECK(back == sample_text(1));
        inflater fresh(params);
        back.clear();
        CHECK(fresh.inflate(w, back, 1 << 20) == inflater::status::ok);
        CHECK(back == sample_text(1));
    }
}

TEST_CASE("with client_no_context_takeover the inflater forgets each message's window",
          "[ws][deflate]") {
    // A second message that refers back into the first inflates only where the window is
    // kept: a client that promised no context takeover and broke it is bad_data.
    client_compressor client;
    const std::string first = client.compress(sample_text(7));
    const std::string second = client.compress(sample_text(7));
    inflater keeps(deflate_params{});
    std::string back;
    CHECK(keeps.inflate(first, back, 1 << 20) == inflater::status::ok);
    back.clear();
    CHECK(keeps.inflate(second, back, 1 << 20) == inflater::status::ok);
    CHECK(back == sample_text(7));

    deflate_params reset;
    reset.client_no_context_takeover = true;
    inflater forgets(reset);
    back.clear();
    CHECK(forgets.inflate(first, back, 1 << 20) == inflater::status::ok);
    back.clear();
    CHECK(forgets.inflate(second, back, 1 << 20) == inflater::status::bad_data);
}

TEST_CASE("a client's messages with context takeover and a small window inflate", "[ws][deflate]") {
    const auto p = negotiate_deflate("permessage-deflate; client_max_window_bits=9", false);
    REQUIRE(p);
    client_compressor client(9);
    inflater i(*p);
    for (int n = 0; n < 5; ++n) {
        const std::string msg = sample_text(n) + std::string(3000, static_cast<char>('a' + n));
        const std::string wire = client.compress(msg);
        std::string back = "prefix:";
        CHECK(i.inflate(wire, back, 1 << 20) == inflater::status::ok);
        CHECK(back == "prefix:" + msg);
    }
}

TEST_CASE("empty messages compress to one byte and inflate to nothing", "[ws][deflate]") {
    const deflate_params params;
    deflater d(params);
    inflater i(params);
    for (const std::string msg : {"", "", "abc", "", "abc"}) {
        std::string wire;
        d.deflate(msg, wire);
        CHECK_FALSE(wire.empty());
        std::string back;
        CHECK(i.inflate(wire, back, 100) == inflater::status::ok);
        CHECK(back == msg);
    }
    // RFC 7692 7.2.3.6: 0x00 is an empty message; so is an empty payload.
    std::string back;
    CHECK(i.inflate(std::string(1, '\0'), back, 100) == inflater::status::ok);
    CHECK(back.empty());
}

TEST_CASE("a message ended by a block with BFINAL inflates and the next one starts afresh",
          "[ws][deflate]") {
    client_compressor client;
    inflater i(deflate_params{});
    for (int n = 0; n < 3; ++n) {
        const std::string wire = client.compress(sample_text(n), true);
        std::string back;
        CHECK(i.inflate(wire, back, 1 << 20) == inflater::status::ok);
        CHECK(back == sample_text(n));
    }
    // Bytes after the final block are not deflate data.
    std::string wire = client.compress("abc", true) + "junk";
    std::string back;
    CHECK(i.inflate(wire, back, 1 << 20) == inflater::status::bad_data);
}

TEST_CASE("data zlib rejects is bad_data", "[ws][deflate]") {
    inflater i(deflate_params{});
    std::string back;
    // Block type 3 is reserved (RFC 1951 3.2.3).
    CHECK(i.inflate(std::string(1, '\x07'), back, 1000) == inflater::status::bad_data);
    // A message cut inside a block (the rest would be read as the next message's start).
    client_compressor client;
    const std::string whole = client.compress(sample_text(3));
    inflater j(deflate_params{});
    back.clear();
    CHECK(j.inflate(whole.substr(0, whole.size() / 2), back, 1 << 20) ==
          inflater::status::bad_data);
    // A stored block whose NLEN is not the complement of LEN.
    CHECK(i.inflate(std::string("\x00\x05\x00\x00\x00", 5), back, 1000) ==
          inflater::status::bad_data);
}

TEST_CASE("a tiny message that inflates past the limit is too_big and allocates no more",
          "[ws][deflate]") {
    // 64 MiB of zeros compress to about 64 KiB; 1 MiB of them, to about 1 KiB.
    client_compressor client;
    const std::string bomb = client.compress(std::string(64 << 20, '\0'));
    CHECK(bomb.size() < 100'000);
    inflater i(deflate_params{});
    std::string out;
    const std::size_t limit = 1 << 20;
    CHECK(i.inflate(bomb, out, limit) == inflater::status::too_big);
    CHECK(out.size() <= limit);
    CHECK(out.capacity() < limit + 64 * 1024);  // the limit and one step, not 64 MiB

    // Exactly at the limit is fine; one byte over is not.
    client_compressor exact;
    inflater j(deflate_params{});
    out.clear();
    CHECK(j.inflate(exact.compress(std::string(1000, 'z')), out, 1000) == inflater::status::ok);
    CHECK(out == std::string(1000, 'z'));
    client_compressor over;
    inflater k(deflate_params{});
    out.clear();
    CHECK(k.inflate(over.compress(std::string(1001, 'z')), out, 1000) == inflater::status::too_big);
    out.clear();
    inflater z(deflate_params{});
    client_compressor one;
    CHECK(z.inflate(one.compress("a"), out, 0) == inflater::status::too_big);
}

TEST_CASE("a deflater with a 9-bit window is read by a client inflater", "[ws][deflate]") {
    const auto p = negotiate_deflate("permessage-deflate; server_max_window_bits=9", false);
    REQUIRE(p);
    CHECK(format_deflate_answer(*p) == "permessage-deflate; server_max_window_bits=9");
    deflater d(*p, 9);
    client_decompressor client;
    for (int n = 0; n < 4; ++n) {
        std::string wire;
        d.deflate(sample_text(n) + std::string(5000, 'q'), wire);
        CHECK(client.decompress(wire) == sample_text(n) + std::string(5000, 'q'));
    }
}

TEST_CASE("a large message round-trips through output steps", "[ws][deflate]") {
    std::string msg;
    for (int n = 0; msg.size() < 300'000; ++n) msg += std::to_string(n * 7919) + ",";
    const deflate_params params;
    deflater d(params, 1);
    inflater i(params);
    std::string wire;
    d.deflate(msg, wire);
    std::string back;
    CHECK(i.inflate(wire, back, msg.size()) == inflater::status::ok);
    CHECK(back == msg);
}

}  // namespace unit_test_ws_deflate
