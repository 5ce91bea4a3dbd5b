// Request ids without sockets: which incoming values are kept, and that made ones differ.

#include "handling/request_id.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>

namespace unit_test_handling_request_ids {

using tern::detail::request_id_source;
using tern::detail::valid_request_id;

TEST_CASE("a request id is kept when it is 1..128 characters of the allowed set", "[request_id]") {
    CHECK(valid_request_id("a"));
    CHECK(valid_request_id("f47ac10b-58cc-4372-a567-0e02b2c3d479"));
    CHECK(valid_request_id("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=x") == false);
    CHECK(valid_request_id("trace:abc/def@host+x=y_z.1"));
    CHECK(valid_request_id(std::string(128, 'x')));
    CHECK_FALSE(valid_request_id(std::string(129, 'x')));
    CHECK_FALSE(valid_request_id(""));
    for (const char* bad :
         {"a b", "a\tb", "a\"b", "a\\b", "a\x01", "a,b", "<script>", "\xc3\xa9"}) {
        INFO(bad);
        CHECK_FALSE(valid_request_id(bad));
    }
}

TEST_CASE("made request ids are valid and distinct within a loop and across loops",
          "[request_id]") {
    request_id_source a;
    request_id_source b;
    std::set<std::string> seen;
    std::string id;
    for (int i = 0; i < 1000; ++i) {
        a.next(id);
        CHECK(valid_request_id(id));
        seen.insert(id);
        b.next(id);
        seen.insert(id);
    }
    CHECK(seen.size() == 2000);
}

}  // namespace unit_test_handling_request_ids
