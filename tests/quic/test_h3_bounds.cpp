// What one HTTP/3 connection may hold, over a real UDP socket on 127.0.0.1 (docs/http3.md,
// "What one connection may hold"): answers in memory the client has not acknowledged
// (http3.max_unacked), open files (http3.max_open_files), spooled request bodies
// (http3.max_open_files, http3.max_spooled_bytes), request bodies in memory
// (http3.max_body_memory). tests/support/quic_client plays a client
// that opens many streams and reads nothing (it grants no flow-control window); the server
// must run only the handlers its budget allows, keep serving others, and answer the rest
// once the client reads. Built only with TERN_HTTP3.

#include <catch2/catch.hpp>

#include "support/descriptors.hpp"
#include "support/quic_app.hpp"
#include "support/quic_client.hpp"
#include "support/temp_dir.hpp"

#include <tern/config.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace wire_test_h3_bounds {

using namespace std::chrono_literals;
using tern_test::h3_body;
using tern_test::h3_data;
using tern_test::h3_fetch;
using tern_test::h3_get;
using tern_test::h3_post;
using tern_test::h3_status;
using tern_test::open_descriptors;
using tern_test::quic_app;
using tern_test::quic_client;
using tern_test::start_h3;

// Opens `count` streams and sends a GET of `path` on each (its end included).
std::vector<std::int64_t> get_on_streams(quic_client& c, std::string_view path, int count) {
    std::vector<std::int64_t> ids;
    for (int i = 0; i < count; ++i) {
        const auto id = c.open_bidi();
        REQUIRE(id >= 0);
        c.send(id, h3_get(path), true);
        ids.push_back(id);
    }
    return ids;
}

// Pumps `c` for `span` whatever comes.
void pump_for(quic_client& c, std::chrono::milliseconds span) {
    const auto until = std::chrono::steady_clock::now() + span;
    while (!c.closed() && std::chrono::steady_clock::now() < until) c.pump(50ms);
}

bool all_ended(const quic_client& c, const std::vector<std::int64_t>& ids) {
    for (const auto id : ids) {
        if (!c.stream(id).ended) return false;
    }
    return true;
}

// Pumps until every stream of `ids` has ended (60 s at most), each a 200 whose body is `size`
// bytes.
void read_all(quic_client& c, const std::vector<std::int64_t>& ids, std::size_t size) {
    CHECK(c.pump_until([&] { return all_ended(c, ids); }, 60s));
    for (const auto id : ids) {
        const auto s = c.stream(id);
        CHECK(h3_status(s.bytes) == 200);
        CHECK(h3_body(s.bytes).size() == size);
    }
}

// Opens `count` streams, each a POST /size declaring 4,096 bytes of body and sending the first
// 2,048 of them, with time between for the server to take each (so they spool in this order).
std::vector<std::int64_t> begin_uploads(quic_client& c, int count) {
    std::vector<std::int64_t> ids;
    for (int i = 0; i < count; ++i) {
        const auto id = c.open_bidi();
        REQUIRE(id >= 0);
        auto bytes = h3_post("/size", 4096);
        const auto half = h3_data(std::string(2048, 'b'));
        bytes.insert(bytes.end(), half.begin(), half.end());
        c.send(id, bytes, false);
        ids.push_back(id);
        pump_for(c, 300ms);
    }
    return ids;
}

TEST_CASE(
    "h3 bounds: a client that reads nothing gets only the answers http3.max_unacked holds run, "
    "the rest when it reads",
    "[http3]") {
    constexpr std::size_t answer = 256 * 1024;
    std::atomic<int> big_handled{0};
    tern::config settings;
    settings.http3.max_unacked = 1024 * 1024;
    quic_app server(settings, [&](tern::app& app) {
        app.get("/big", [&](tern::context& ctx) {
            ++big_handled;
            ctx.text(std::string(answer, 'x'));
        });
    });
    quic_client c(server.port, 16 * 1024);
    start_h3(c);
    c.hold_window(true);
    const auto ids = get_on_streams(c, "/big", 16);
    pump_for(c, 1500ms);

    // Each answer run holds 256 KiB less the 16 KiB window the client granted: the fifth
    // passes 1 MiB, and the eleven others wait (all sixteen ran before the bound).
    INFO("handlers run: " << big_handled.load() << "; closed: " << c.close_reason());
    REQUIRE_FALSE(c.closed());
    CHECK(big_handled.load() >= 1);
    CHECK(big_handled.load() <= 5);

    // Another client is served meanwhile.
    quic_client other(server.port);
    start_h3(other);
    CHECK(h3_status(h3_fetch(other, "/").bytes) == 200);

    // The client reads: every stream is answered, whole, in turn.
    c.hold_window(false);
    read_all(c, ids, answer);
    CHECK(big_handled.load() == 16);
}

TEST_CASE(
    "h3 bounds: a client that reads nothing holds at most http3.max_open_files files open, the "
    "rest when it reads",
    "[http3]") {
    tern_test::temp_dir dir;
    constexpr std::size_t size = 2 * 1024 * 1024;
    {
        std::ofstream(dir.path / "big.bin", std::ios::binary) << std::string(size, 'f');
        std::ofstream(dir.path / "small.txt") << "small";
    }
    tern::config settings;
    settings.http3.max_open_files = 2;
    quic_app server(settings, [&](tern::app& app) {
        tern::static_files_config files;
        files.hosted_path = "/files";
        files.directory = dir.path.string();
        app.static_files(files);
    });
    quic_client c(server.port, 16 * 1024);
    start_h3(c);
    // What the static layer keeps open for the directory, opened now (a small file is
    // served from memory and keeps no descriptor of its own).
    CHECK(h3_body(h3_fetch(c, "/files/small.txt").bytes) == "small");
    const auto before = open_descriptors();

    c.hold_window(true);
    const auto ids = get_on_streams(c, "/files/big.bin", 10);
    pump_for(c, 1500ms);
    const auto during = open_descriptors();
    INFO("descriptors before: " << before << ", during: " << during);
    REQUIRE_FALSE(c.closed());
    // Two files open, the eight other requests waiting (ten files open before the bound).
    CHECK(during <= before + 2);
    CHECK(during >= before + 1);

    c.hold_window(false);
    read_all(c, ids, size);
}

TEST_CASE(
    "h3 bounds: a request body that would spool past http3.max_open_files is rejected, "
    "unprocessed, and the others are answered",
    "[http3]") {
    constexpr std::uint64_t request_rejected = 0x10b;
    tern::config settings;
    settings.http3.max_open_files = 2;
    settings.spool.body_above = 1024;
    quic_app server(settings, tern_test::size_route);
    quic_client c(server.port);
    start_h3(c);

    // Three bodies of 4,096 bytes, each past spool.body_above after its first 2,048: the
    // third to spool finds two files open.
    const auto ids = begin_uploads(c, 3);
    INFO(c.close_reason());
    REQUIRE(c.pump_until([&] { return c.stream(ids[2]).reset; }, 10s));
    CHECK(c.stream(ids[2]).reset_code == request_rejected);
    CHECK(h3_status(c.stream(ids[2]).bytes) == 0);  // no answer: not processed

    // The two others finish their bodies and are answered.
    const std::vector<std::int64_t> kept{ids[0], ids[1]};
    for (const auto id : kept) c.send(id, h3_data(std::string(2048, 'b')), true);
    CHECK(c.pump_until([&] { return all_ended(c, kept); }, 10s));
    for (const auto id : kept) {
        CHECK(h3_status(c.stream(id).bytes) == 200);
        CHECK(h3_body(c.stream(id).bytes) == "4096");
    }
    // And the connection serves on.
    CHECK(h3_body(h3_fetch(c, "/").bytes) == "hi");
}

TEST_CASE(
    "h3 bounds: a spooled body that would take the connection past http3.max_spooled_bytes "
    "beside another is answered 503",
    "[http3]") {
    tern::config settings;
    settings.http3.max_spooled_bytes = 6000;
    settings.spool.body_above = 1024;
    quic_app server(settings, tern_test::size_route);
    quic_client c(server.port);
    start_h3(c);

    // Each declares 4,096 bytes, reserved whole once it spools: the second's 4,096 beside the
    // first's would pass 6,000.
    const auto ids = begin_uploads(c, 2);
    INFO(c.close_reason());
    CHECK(c.pump_until([&] { return c.stream(ids[1]).ended || c.stream(ids[1]).reset; }, 10s));
    CHECK(h3_status(c.stream(ids[1]).bytes) == 503);

    c.send(ids[0], h3_data(std::string(2048, 'b')), true);
    CHECK(c.pump_until([&] { return c.stream(ids[0]).ended; }, 10s));
    CHECK(h3_status(c.stream(ids[0]).bytes) == 200);
    CHECK(h3_body(c.stream(ids[0]).bytes) == "4096");
}

TEST_CASE(
    "h3 bounds: 100 unfinished uploads on one connection are let in no further than "
    "http3.max_body_memory + a stream window each + one body, and all finish once the client "
    "goes on",
    "[http3]") {
    constexpr std::size_t body = 900 * 1024;
    constexpr std::size_t window = 64 * 1024;
    constexpr int uploads = 100;
    tern::config settings;
    settings.http3.stream_window = window;
    quic_app server(settings, tern_test::size_route);
    quic_client c(server.port);
    start_h3(c);

    // Each stream: a POST declaring 900 KiB (kept in memory: under spool.body_above) and all
    // of it sent, without the stream's end.
    std::vector<std::int64_t> ids;
    auto bytes = h3_post("/size", body);
    const auto data = h3_data(std::string(body, 'u'));
    bytes.insert(bytes.end(), data.begin(), data.end());
    for (int i = 0; i < uploads; ++i) {
        const auto id = c.open_bidi();
        REQUIRE(id >= 0);
        c.send(id, bytes, false);
        ids.push_back(id);
    }
    // What the server took (acknowledged) of them: pumped until it takes nothing more for a
    // second (30 s at most).
    const auto taken = [&] {
        std::uint64_t n = 0;
        for (const auto id : ids) n += c.stream(id).acked;
        return n;
    };
    const auto until = std::chrono::steady_clock::now() + 30s;
    for (std::uint64_t before = ~std::uint64_t{0};
         taken() != before && !c.closed() && std::chrono::steady_clock::now() < until;) {
        before = taken();
        pump_for(c, 1000ms);
    }
    // The budget, a stream window per stream still sending, the one body that passed the
    // budget (at most spool.body_above), and the heads (a few dozen bytes each).
    constexpr std::uint64_t budget = 4 * 1024 * 1024;  // http3.max_body_memory, its default
    const std::uint64_t bound = budget + uploads * window + settings.spool.body_above;
    INFO("taken: " << taken() << " of " << uploads * bytes.size() << ", bound " << bound << "; "
                   << c.close_reason());
    REQUIRE_FALSE(c.closed());
    CHECK(taken() <= bound + uploads * 64);

    // Another client is served meanwhile.
    quic_client other(server.port);
    start_h3(other);
    CHECK(h3_status(h3_fetch(other, "/").bytes) == 200);

    // The client ends every upload: each is answered, whole, in turn.
    for (const auto id : ids) c.send(id, {}, true);
    CHECK(c.pump_until([&] { return all_ended(c, ids); }, 120s));
    int whole = 0;
    for (const auto id : ids) {
        const auto s = c.stream(id);
        whole += h3_status(s.bytes) == 200 && h3_body(s.bytes) == std::to_string(body) ? 1 : 0;
    }
    CHECK(whole == uploads);
}

}  // namespace wire_test_h3_bounds
