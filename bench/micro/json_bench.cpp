// What body_as's depth pre-scan (tern::detail::json_depth_within) adds to parsing a JSON
// body: nanoseconds for the scan alone and for nlohmann_json's parse it guards, on the body
// of bench/wrk/post.lua (76 bytes) and on a 1 KiB array of objects.

#include "web/json_depth.hpp"

#include <nlohmann/json.hpp>

#include <benchmark/benchmark.h>

#include <string>

namespace {

const std::string login_body =
    R"({"username":"tern","password":"correct horse battery staple","remember":true})";

std::string todo_list() {
    std::string s = "[";
    for (int i = 0; s.size() < 1000; ++i) {
        if (i > 0) s += ',';
        s += R"({"id":)" + std::to_string(i) + R"(,"title":"write the docs","done":false})";
    }
    return s + "]";
}

const std::string list_body = todo_list();

void bm_depth_scan(benchmark::State& state, const std::string& body) {
    for (auto _ : state) {
        benchmark::DoNotOptimize(tern::detail::json_depth_within(body, 512));
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(body.size()));
}

void bm_parse(benchmark::State& state, const std::string& body) {
    for (auto _ : state) {
        auto doc = nlohmann::json::parse(body);
        benchmark::DoNotOptimize(doc);
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(body.size()));
}

}  // namespace

BENCHMARK_CAPTURE(bm_depth_scan, login_76B, login_body);
BENCHMARK_CAPTURE(bm_parse, login_76B, login_body);
BENCHMARK_CAPTURE(bm_depth_scan, todo_list_1KiB, list_body);
BENCHMARK_CAPTURE(bm_parse, todo_list_1KiB, list_body);
