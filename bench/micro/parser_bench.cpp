// The llhttp adapter (tern::detail::request_parser): nanoseconds to parse one request that is
// already in memory, the way a connection feeds what one read returned.

#include "http/parser.hpp"

#include <benchmark/benchmark.h>

#include <string>

using tern::detail::parser_limits;
using tern::detail::request_parser;

namespace {

// What a desktop browser sends for a page: 15 header fields, ~600 bytes.
const std::string browser_get =
    "GET /articles/2024/http-servers?page=2&sort=recent HTTP/1.1\r\n"
    "Host: www.example.com\r\n"
    "Connection: keep-alive\r\n"
    "Cache-Control: max-age=0\r\n"
    "sec-ch-ua: \"Chromium\";v=\"124\", \"Not-A.Brand\";v=\"99\"\r\n"
    "sec-ch-ua-mobile: ?0\r\n"
    "sec-ch-ua-platform: \"Linux\"\r\n"
    "Upgrade-Insecure-Requests: 1\r\n"
    "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.0.0 Safari/537.36\r\n"
    "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,"
    "*/*;q=0.8\r\n"
    "Sec-Fetch-Site: same-origin\r\n"
    "Sec-Fetch-Mode: navigate\r\n"
    "Sec-Fetch-Dest: document\r\n"
    "Referer: https://www.example.com/articles/2024\r\n"
    "Accept-Encoding: gzip, deflate, br\r\n"
    "Accept-Language: en-GB,en;q=0.9\r\n"
    "\r\n";

// What wrk sends.
const std::string wrk_get = "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n";

// A small JSON POST (bench/wrk/post.lua).
const std::string json_post =
    "POST /login HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n"
    "Content-Length: 75\r\n\r\n"
    "{\"username\":\"tern\",\"password\":\"correct horse battery staple\",\"remember\":true}";

void parse_one(benchmark::State& state, const std::string& bytes) {
    request_parser parser(parser_limits{});
    for (auto _ : state) {
        const auto r = parser.feed(bytes);
        if (r.what != request_parser::event::request) {
            state.SkipWithError("request did not parse");
            break;
        }
        benchmark::DoNotOptimize(parser.current().headers.data());
        parser.next();
    }
    state.SetItemsProcessed(state.iterations());
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
}

void BM_parse_browser_get(benchmark::State& state) { parse_one(state, browser_get); }
void BM_parse_wrk_get(benchmark::State& state) { parse_one(state, wrk_get); }
void BM_parse_json_post(benchmark::State& state) { parse_one(state, json_post); }

// 16 pipelined wrk requests in one buffer, as one read returns them; time per request.
void BM_parse_pipelined16(benchmark::State& state) {
    std::string batch;
    for (int i = 0; i < 16; ++i) batch += wrk_get;
    request_parser parser(parser_limits{});
    for (auto _ : state) {
        std::string_view in = batch;
        while (!in.empty()) {
            const auto r = parser.feed(in);
            if (r.what != request_parser::event::request) {
                state.SkipWithError("request did not parse");
                return;
            }
            in.remove_prefix(r.consumed);
            benchmark::DoNotOptimize(parser.current().path.data());
            parser.next();
        }
    }
    state.SetItemsProcessed(state.iterations() * 16);
}

}  // namespace

BENCHMARK(BM_parse_browser_get);
BENCHMARK(BM_parse_wrk_get);
BENCHMARK(BM_parse_json_post);
BENCHMARK(BM_parse_pipelined16);
