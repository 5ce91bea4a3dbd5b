// bench/gateway.py's client load: CONNECTIONS threads, each calling fetch_blocking on URL in a
// loop for SECONDS through one tern::client (its pool keeps a connection per thread alive).
// Prints {"requests": N, "errors": N, "per_sec": X} on stdout.
//
//     bench_client_load URL CONNECTIONS SECONDS

#include <tern/client.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fputs("usage: bench_client_load URL CONNECTIONS SECONDS\n", stderr);
        return 2;
    }
    const std::string url = argv[1];
    const int connections = std::atoi(argv[2]);
    const int seconds = std::atoi(argv[3]);
    if (connections <= 0 || seconds <= 0) {
        std::fputs("usage: bench_client_load URL CONNECTIONS SECONDS\n", stderr);
        return 2;
    }
    tern::client client;
    std::atomic<long> requests{0};
    std::atomic<long> errors{0};
    const auto start = std::chrono::steady_clock::now();
    const auto until = start + std::chrono::seconds(seconds);
    std::vector<std::thread> threads;
    for (int i = 0; i < connections; ++i) {
        threads.emplace_back([&] {
            tern::client_request request;
            request.url = url;
            while (std::chrono::steady_clock::now() < until) {
                try {
                    if (client.fetch_blocking(request).status == 200) {
                        requests.fetch_add(1, std::memory_order_relaxed);
                    } else {
                        errors.fetch_add(1, std::memory_order_relaxed);
                    }
                } catch (const tern::client_error&) {
                    errors.fetch_add(1, std::memory_order_relaxed);
                }
            }
        });
    }
    for (auto& t : threads) t.join();
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("{\"requests\": %ld, \"errors\": %ld, \"per_sec\": %.1f}\n", requests.load(),
                errors.load(), static_cast<double>(requests.load()) / elapsed);
    return 0;
}
