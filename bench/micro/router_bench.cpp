// Route lookup (tern::detail::router::find) with 10, 100 and 1000 routes registered: an exact
// (static) route, a parameterised one, and a miss.

#include "routing/router.hpp"

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

using tern::detail::path_param;
using tern::detail::router;

namespace {

void noop(tern::context&) {}

// n routes of the given shape: "/api/v1/resource<i>/items" or "/api/v1/resource<i>/{id}/items".
router make_router(long n, bool with_param) {
    router r;
    for (long i = 0; i < n; ++i) {
        const std::string base = "/api/v1/resource" + std::to_string(i);
        r.add("GET", with_param ? base + "/{id}/items" : base + "/items", noop);
        r.add("POST", with_param ? base + "/{id}/items" : base + "/items", noop);
    }
    return r;
}

void lookup(benchmark::State& state, const router& r, const std::string& path) {
    std::vector<path_param> params;
    params.reserve(4);
    for (auto _ : state) {
        auto m = r.find("GET", path, params);
        if (m.result != router::outcome::found) {
            state.SkipWithError("route not found");
            break;
        }
        benchmark::DoNotOptimize(m.target);
    }
    state.SetItemsProcessed(state.iterations());
}

void BM_route_static(benchmark::State& state) {
    const auto r = make_router(state.range(0), false);
    lookup(state, r, "/api/v1/resource" + std::to_string(state.range(0) / 2) + "/items");
}

void BM_route_param(benchmark::State& state) {
    const auto r = make_router(state.range(0), true);
    lookup(state, r, "/api/v1/resource" + std::to_string(state.range(0) / 2) + "/12345/items");
}

void BM_route_miss(benchmark::State& state) {
    const auto r = make_router(state.range(0), true);
    std::vector<path_param> params;
    for (auto _ : state) {
        auto m = r.find("GET", "/api/v1/unknown/12345/items", params);
        benchmark::DoNotOptimize(m.result);
    }
    state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK(BM_route_static)->Arg(10)->Arg(100)->Arg(1000);
BENCHMARK(BM_route_param)->Arg(10)->Arg(100)->Arg(1000);
BENCHMARK(BM_route_miss)->Arg(10)->Arg(100)->Arg(1000);
