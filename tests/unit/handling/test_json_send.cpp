// ctx.json(document) serializes the document where it is (include/tern/json.hpp): no copy,
// which would cost the document's size again and recurse as deep as it nests. Allocations
// are counted by the unit-test binary's replaced operator new (support/allocation_counter).

#include <tern/json.hpp>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "support/allocation_counter.hpp"

namespace unit_test_handling_json_send {

using tern_test::allocation_count;

using support = tern::detail::json_support<tern::detail::json_tag>;

TEST_CASE("a json document is serialized without being copied", "[json]") {
    tern::json doc = tern::json::array();
    for (int i = 0; i < 2000; ++i)
        doc.push_back({{"id", i}, {"name", "todo " + std::to_string(i)}});
    const std::string expected = doc.dump();

    std::string text;
    const long before = allocation_count();
    text = support::dump(doc);
    const long during_dump = allocation_count() - before;
    CHECK(text == expected);
    // A copy allocates every object, key and string again (about 10,000 allocations here);
    // serializing in place allocates only the growing output text and the serializer.
    INFO("allocations while serializing: " << during_dump);
    CHECK(during_dump < 100);

    // ordered_json keeps its insertion order (it is not turned into a sorted json first).
    const nlohmann::ordered_json ordered = {{"b", 1}, {"a", 2}};
    CHECK(support::dump(ordered) == R"({"b":1,"a":2})");
    // Other values still go through a document.
    CHECK(support::dump(std::vector<int>{1, 2}) == "[1,2]");
}

TEST_CASE("the allocation counter sees a copy of a json document", "[json]") {
    // Proves the check above can fail: the old dump, nlohmann::json(value).dump(), copied.
    tern::json doc = tern::json::array();
    for (int i = 0; i < 2000; ++i)
        doc.push_back({{"id", i}, {"name", "todo " + std::to_string(i)}});
    const long before = allocation_count();
    const std::string text = tern::json(doc).dump();
    const long during_copy = allocation_count() - before;
    CHECK(during_copy > 2000);
}

}  // namespace unit_test_handling_json_send
