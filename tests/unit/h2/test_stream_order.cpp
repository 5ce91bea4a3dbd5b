// The order of an HTTP/2 client's stream ids (src/h2/stream_order.hpp, RFC 9113 5.1.1): new
// streams climb; a lower id is late trailers only on a stream still open or one the server
// reset lately.

#include <catch2/catch.hpp>

#include "h2/stream_order.hpp"

namespace unit_test_h2_stream_order {

using tern::detail::stream_order;
using verdict = stream_order::verdict;

TEST_CASE("h2 stream ids: each new stream's id is above every id the client opened") {
    stream_order order(4);
    CHECK(order.on_headers(1, false) == verdict::opens);
    CHECK(order.on_headers(5, false) == verdict::opens);  // ids may be skipped
    CHECK(order.on_headers(3, false) == verdict::out_of_order);
    CHECK(order.on_headers(5, false) == verdict::out_of_order);  // closed, not reset
    CHECK(order.on_headers(7, false) == verdict::opens);
}

TEST_CASE("h2 stream ids: a lower id is late trailers on an open stream") {
    stream_order order(4);
    CHECK(order.on_headers(1, false) == verdict::opens);
    CHECK(order.on_headers(3, false) == verdict::opens);
    CHECK(order.on_headers(1, true) == verdict::late);
}

TEST_CASE("h2 stream ids: trailers on a stream the server reset lately are late, not an error") {
    stream_order order(2);
    for (int id = 1; id <= 9; id += 2) CHECK(order.on_headers(id, false) == verdict::opens);
    order.on_reset(3);
    CHECK(order.on_headers(3, false) == verdict::late);
    // Only the last two resets are remembered.
    order.on_reset(5);
    order.on_reset(7);
    CHECK(order.on_headers(3, false) == verdict::out_of_order);
    CHECK(order.on_headers(5, false) == verdict::late);
    CHECK(order.on_headers(7, false) == verdict::late);
}

}  // namespace unit_test_h2_stream_order
