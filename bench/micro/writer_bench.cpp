// Response serialization (tern::detail::write_response) into a reused output buffer.

#include "http/response.hpp"
#include "http/writer.hpp"

#include <benchmark/benchmark.h>

#include <string>

using tern::detail::framing;
using tern::detail::response;
using tern::detail::write_response;

namespace {

// The hello-world answer: status, Content-Type, a 13-byte body.
void BM_write_hello(benchmark::State& state) {
    response res;
    res.content_type = "text/plain; charset=utf-8";
    res.body = "Hello, World!";
    std::string out;
    out.reserve(4096);
    for (auto _ : state) {
        out.clear();
        write_response(out, res, framing{});
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(state.iterations());
}

// A JSON API answer: four user header fields and a 1 KiB body.
void BM_write_json_with_fields(benchmark::State& state) {
    response res;
    res.status = 201;
    res.content_type = "application/json";
    res.fields = {{"Cache-Control", "no-store"},
                  {"X-Request-Id", "5f2b9c2e-8d1a-4b7e-9a43-1c0d2e3f4a5b"},
                  {"Location", "/api/v1/orders/12345"},
                  {"Vary", "Accept-Encoding"}};
    res.body.assign(1024, 'x');
    std::string out;
    out.reserve(8192);
    for (auto _ : state) {
        out.clear();
        write_response(out, res, framing{});
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(state.iterations());
}

// 16 hello responses appended to one buffer, as for a pipelined batch; time per response.
void BM_write_hello_batch16(benchmark::State& state) {
    response res;
    res.content_type = "text/plain; charset=utf-8";
    res.body = "Hello, World!";
    std::string out;
    out.reserve(16 * 256);
    for (auto _ : state) {
        out.clear();
        for (int i = 0; i < 16; ++i) write_response(out, res, framing{});
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(state.iterations() * 16);
}

}  // namespace

BENCHMARK(BM_write_hello);
BENCHMARK(BM_write_json_with_fields);
BENCHMARK(BM_write_hello_batch16);
