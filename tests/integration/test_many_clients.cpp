// Many clients at once: every request gets its own answer, whatever the interleaving.
// Client threads record failures as strings; the assertions run on the test thread, since
// Catch2 assertions are not thread-safe.

#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_many_clients {

using namespace tern_test;

namespace {

// GET /c/{conn}/{req} answers "conn:req"; PUT /echo answers its body.
void routes(tern::app& app) {
    app.threads(4);
    app.get("/c/{conn}/{req}", [](tern::context& ctx) {
        ctx.text(std::string(ctx.path_param("conn")) + ":" + std::string(ctx.path_param("req")));
    });
    app.put("/echo", [](tern::context& ctx) { ctx.result(std::string(ctx.body())); });
}

// Collects failures from several threads.
class failures {
public:
    void add(std::string what) {
        const std::lock_guard<std::mutex> lock(mutex_);
        list_.push_back(std::move(what));
    }
    std::vector<std::string> take() {
        const std::lock_guard<std::mutex> lock(mutex_);
        return std::move(list_);
    }

private:
    std::mutex mutex_;
    std::vector<std::string> list_;
};

}  // namespace

TEST_CASE("20 connections x 20 requests from 4 threads all get their own answers",
          "[wire][many-clients]") {
    test_server server(routes);
    constexpr int thread_count = 4;
    constexpr int connections_per_thread = 5;
    constexpr int requests_per_connection = 20;
    failures failed;
    std::vector<std::thread> threads;
    for (int t = 0; t < thread_count; ++t) {
        threads.emplace_back([&, t] {
            try {
                // Each thread holds its five connections open together and takes turns
                // between them, so requests from different connections interleave.
                std::vector<raw_client> clients =
                    open_clients(server.port(), connections_per_thread);
                for (int req = 0; req < requests_per_connection; ++req) {
                    for (int k = 0; k < connections_per_thread; ++k) {
                        const std::string id = std::to_string(t * connections_per_thread + k);
                        const std::string expected = id + ":" + std::to_string(req);
                        auto& c = clients[static_cast<std::size_t>(k)];
                        c.send(get_request("/c/" + id + "/" + std::to_string(req)));
                        const response r = c.read_response();
                        if (r.status != 200 || r.body != expected) {
                            failed.add("expected " + expected + ", got " + describe(r));
                        }
                    }
                }
            } catch (const std::exception& e) {
                failed.add("thread " + std::to_string(t) + ": " + e.what());
            }
        });
    }
    for (auto& th : threads) th.join();
    const std::vector<std::string> list = failed.take();
    for (const auto& f : list) UNSCOPED_INFO(f);
    CHECK(list.empty());
}

TEST_CASE("20 connections pipelining 20 requests each from 4 threads get answers in order",
          "[wire][many-clients]") {
    test_server server(routes);
    failures failed;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            try {
                for (int k = 0; k < 5; ++k) {
                    const std::string id = std::to_string(t * 5 + k);
                    raw_client c(server.port());
                    std::string batch;
                    for (int req = 0; req < 20; ++req) {
                        batch += get_request("/c/" + id + "/" + std::to_string(req));
                    }
                    c.send(batch);
                    for (int req = 0; req < 20; ++req) {
                        const response r = c.read_response();
                        const std::string expected = id + ":" + std::to_string(req);
                        if (r.status != 200 || r.body != expected) {
                            failed.add("expected " + expected + ", got " + describe(r));
                        }
                    }
                }
            } catch (const std::exception& e) {
                failed.add("thread " + std::to_string(t) + ": " + e.what());
            }
        });
    }
    for (auto& th : threads) th.join();
    const std::vector<std::string> list = failed.take();
    for (const auto& f : list) UNSCOPED_INFO(f);
    CHECK(list.empty());
}

TEST_CASE("concurrent clients sending bodies each get their own body back",
          "[wire][many-clients]") {
    test_server server(routes);
    failures failed;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            try {
                raw_client c(server.port());
                for (int req = 0; req < 20; ++req) {
                    // Bodies of different sizes, each filled with a marker of its sender.
                    const std::string body(static_cast<std::size_t>(1000 * (req + 1)),
                                           static_cast<char>('a' + t));
                    c.send(body_request("PUT", "/echo", body));
                    const response r = c.read_response();
                    if (r.status != 200 || r.body != body) {
                        failed.add("thread " + std::to_string(t) + " request " +
                                   std::to_string(req) + ": got " + describe(r));
                    }
                }
            } catch (const std::exception& e) {
                failed.add("thread " + std::to_string(t) + ": " + e.what());
            }
        });
    }
    for (auto& th : threads) th.join();
    const std::vector<std::string> list = failed.take();
    for (const auto& f : list) UNSCOPED_INFO(f);
    CHECK(list.empty());
}

TEST_CASE("a client that connects and sends nothing does not block others",
          "[wire][many-clients]") {
    test_server server(routes);
    raw_client silent = server.client();  // holds a connection open, says nothing
    raw_client partial = server.client();
    partial.send("GET /c/0/0 HTTP/1.1\r\nHost: loc");  // stops mid-header
    std::vector<raw_client> clients = open_clients(server.port(), 10);
    for (std::size_t i = 0; i < clients.size(); ++i) {
        clients[i].send(get_request("/c/" + std::to_string(i) + "/0"));
    }
    for (std::size_t i = 0; i < clients.size(); ++i) {
        const response r = clients[i].read_response();
        INFO(describe(r));
        CHECK(r.body == std::to_string(i) + ":0");
    }
}

}  // namespace wire_test_many_clients
