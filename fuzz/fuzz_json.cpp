// libFuzzer harness for the JSON body path (include/tern/json.hpp, src/handling/context_json.cpp,
// src/web/json_depth.hpp): `ctx.body_as<T>()` and `ctx.json(...)` on bodies a client
// controls completely.
//
// The last byte chooses max_json_depth (1..64), the two before it max_json_size (0..4096)
// (FuzzedDataProvider takes integers from the end); the rest is the body. Checks: body_as
// throws only http_error 400 or 413 (never another exception, never a crash however deep
// the body); a body it accepts has no NUL byte, nests no deeper than max_json_depth and is
// within max_json_size; the depth pre-scan agrees exactly with the parser on every body
// without NUL that nlohmann_json accepts; a document body_as returns goes back out through
// ctx.json as JSON that parses to the same document; a from_json that keeps a sub-document
// round-trips it too. Broken invariants call __builtin_trap().

#include "handling/exchange.hpp"
#include "http/request.hpp"
#include "http/response.hpp"
#include "web/json_depth.hpp"

#include <tern/context.hpp>
#include <tern/http_error.hpp>
#include <tern/json.hpp>

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

// The deepest nesting of `doc`, iteratively (a recursive walk is what the limit avoids).
std::size_t depth_of(const tern::json& doc) {
    std::size_t deepest = 0;
    std::vector<std::pair<const tern::json*, std::size_t>> todo{{&doc, 0}};
    while (!todo.empty()) {
        const auto [j, d] = todo.back();
        todo.pop_back();
        if (!j->is_structured()) continue;
        deepest = std::max(deepest, d + 1);
        for (const auto& child : *j) todo.emplace_back(&child, d + 1);
    }
    return deepest;
}

struct first_element {
    tern::json kept;
};

void from_json(const tern::json& j, first_element& f) { f.kept = j.at(0); }

// Calls `fn` and returns the http_error status it threw, 0 when it returned.
template <class Fn>
int status_of(Fn&& fn) {
    try {
        fn();
        return 0;
    } catch (const tern::http_error& e) {
        return e.status();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider fdp(data, size);
    const std::size_t max_depth = fdp.ConsumeIntegralInRange<std::size_t>(1, 64);
    const std::size_t max_size = fdp.ConsumeIntegralInRange<std::size_t>(0, 4096);

    tern::detail::request req;
    req.body = fdp.ConsumeRemainingBytesAsString();
    tern::detail::response res;
    tern::detail::exchange_scratch scratch;
    tern::detail::exchange ex{req, res, "127.0.0.1", scratch, {}};
    ex.env.max_json_size = max_size;
    ex.env.max_json_depth = max_depth;
    tern::context ctx(ex);

    // The pre-scan is exact for JSON the parser accepts (and never throws). nlohmann_json
    // stops at a NUL byte, so it is compared on bodies without one (body_as refuses those).
    const bool has_nul = req.body.find('\0') != std::string::npos;
    const tern::json reference = tern::json::parse(req.body, nullptr, false);
    if (!reference.is_discarded() && !has_nul) {
        const std::size_t depth = depth_of(reference);
        check(tern::detail::json_depth_within(req.body, depth));
        check(depth == 0 || !tern::detail::json_depth_within(req.body, depth - 1));
    }

    tern::json doc;
    const int status = status_of([&] { doc = ctx.body_as<tern::json>(); });
    check(status == 0 || status == 400 || status == 413);
    check((status == 413) == (req.body.size() > max_size));
    if (status != 0) return 0;
    check(!has_nul && !reference.is_discarded() && doc == reference);
    check(req.body.size() <= max_size && depth_of(doc) <= max_depth);

    // Out through ctx.json without a copy, and back: the same document.
    ctx.json(doc);
    check(res.content_type == "application/json");
    check(tern::json::parse(res.body) == doc);

    first_element f;
    const int kept_status = status_of([&] { f = ctx.body_as<first_element>(); });
    check(kept_status == 0 || kept_status == 400);
    if (kept_status == 0) {
        ctx.json(f.kept);
        check(tern::json::parse(res.body) == doc.at(0));
    }
    return 0;
}
