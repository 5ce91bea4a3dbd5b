// Replays a corpus of raw HTTP/1 inputs against a live tern::app over loopback.
//
//   tern_corpus_replay [--jobs N] [--timeout-ms MS] [--verbose] DIR...
//
// Every regular file in each DIR is one connection's input; where it holds "\n--MARK--\n"
// the parts between markers are separate writes with a short pause between them (the h2o
// corpus convention; the markers are not sent). After the last write the client shuts down
// its sending side and reads until the server closes. An input passes when the server
// closes the connection (a reset counts) within the timeout and everything it sent, if
// anything, begins with an HTTP/1.1 status line (or, for an input that opens with the
// HTTP/2 preface, the server's SETTINGS frame: h2c with prior knowledge); it fails on a hang
// (no close in time) or a malformed answer. A crash fails the whole run (under ASan/UBSan: any
// memory error or undefined behaviour). After all inputs the server must still answer GET /__alive
// with 200. The last line printed is "corpus replay: N passed, M failed"; the exit status is 0 only
// when M is 0 and the server still serves. The client is the wire tests' raw_client
// (tests/support/raw_client.hpp).

#include <tern/tern.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/raw_client.hpp"

namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

constexpr std::string_view marker = "\n--MARK--\n";
// The pause between two marked writes, so the server sees them as separate reads.
constexpr auto write_pause = std::chrono::milliseconds(10);

struct options {
    std::size_t jobs = 16;
    std::chrono::milliseconds timeout{5000};
    bool verbose = false;
    std::vector<fs::path> dirs;
};

// What happened to one input.
struct result {
    bool passed = false;
    std::string why;         ///< for a failure: what went wrong
    std::string first_line;  ///< the first line the server sent, if any
    std::size_t sent = 0, size = 0, received = 0;
};

std::vector<std::string_view> split_writes(std::string_view input) {
    std::vector<std::string_view> parts;
    while (true) {
        const auto at = input.find(marker);
        parts.push_back(input.substr(0, at));
        if (at == std::string_view::npos) return parts;
        input.remove_prefix(at + marker.size());
    }
}

std::string first_line_of(const std::string& bytes) {
    const auto end = bytes.find_first_of("\r\n");
    return bytes.substr(0, std::min<std::size_t>(end, 80));
}

// The time from now until `t`: zero once it has passed.
std::chrono::milliseconds time_left(clock_type::time_point t) {
    return std::max(std::chrono::milliseconds(0),
                    std::chrono::duration_cast<std::chrono::milliseconds>(t - clock_type::now()));
}

result replay(const std::string& input, std::uint16_t port, std::chrono::milliseconds timeout) {
    result r;
    const auto deadline = clock_type::now() + timeout;
    tern_test::raw_client client;
    const auto parts = split_writes(input);
    for (const auto part : parts) r.size += part.size();
    bool closed = false;
    try {
        client.connect(port);
        // Each part whole while reading what the server sends meanwhile (so neither side
        // blocks the other on full buffers); bytes still go out after the server has
        // answered: a closing server lingers and discards them. A short send means the
        // server closed or reset the connection, or the deadline passed.
        for (std::size_t i = 0; i < parts.size(); ++i) {
            if (i > 0) {
                // The pause, reading what arrives meanwhile.
                const auto until = std::min(clock_type::now() + write_pause, deadline);
                while (client.receive_more(time_left(until))) {
                }
                std::this_thread::sleep_until(until);
            }
            const std::size_t sent = client.send_while_reading(parts[i], time_left(deadline));
            r.sent += sent;
            if (sent < parts[i].size()) break;
        }
        client.shutdown_write();
        closed = client.closed_by_peer(time_left(deadline));
    } catch (const tern_test::client_error& e) {
        r.why = e.what();
        return r;
    }
    const std::string& got = client.buffered();
    r.received = got.size();
    r.first_line = first_line_of(got);
    if (!closed) {
        r.why = "hang: the server did not close within " + std::to_string(timeout.count()) + " ms";
        return r;
    }
    // An input that opens with the HTTP/2 preface is HTTP/2 with prior knowledge: the
    // answer then begins with the server's SETTINGS frame (type 4 on stream 0).
    const auto first = std::find_if(parts.begin(), parts.end(), [](auto p) { return !p.empty(); });
    const bool h2 = first != parts.end() && first->rfind("PRI * HTTP/2.0\r\n", 0) == 0;
    const bool settings_frame = got.size() >= 9 && got[3] == '\x04' && got[5] == 0 && got[6] == 0 &&
                                got[7] == 0 && got[8] == 0;
    if (!got.empty() && !(h2 ? settings_frame : got.rfind("HTTP/1.1 ", 0) == 0)) {
        r.why = h2 ? "malformed answer: it does not begin with an HTTP/2 SETTINGS frame"
                   : "malformed answer: it does not begin with an HTTP/1.1 status line";
        return r;
    }
    r.passed = true;
    return r;
}

// True when a fresh connection gets 200 for GET /__alive.
bool still_serving(std::uint16_t port, std::chrono::milliseconds timeout) {
    const result r = replay("GET /__alive HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
                            port, timeout);
    std::printf("final GET /__alive: %s\n",
                r.first_line.empty() ? "(no answer)" : r.first_line.c_str());
    return r.passed && r.first_line.rfind("HTTP/1.1 200", 0) == 0;
}

// The server every input is sent to: a few ordinary routes and moderately small limits, so
// the inputs reach handlers, parameters, bodies and the limit paths.
void add_routes(tern::app& app) {
    app.get("/__alive", [](tern::context& ctx) { ctx.text("alive"); });
    app.get("/", [](tern::context& ctx) {
        std::size_t n = ctx.query_string().size();
        for (const auto& h : ctx.headers()) n += h.name.size() + h.value.size();
        ctx.text("GET / " + std::to_string(n));
    });
    app.post("/", [](tern::context& ctx) { ctx.status(201).text("created"); });
    app.put("/", [](tern::context& ctx) { ctx.text(std::to_string(ctx.body().size())); });
    app.get("/users/{id}", [](tern::context& ctx) {
        ctx.text("user " + std::string(ctx.path_param("id")) + " " +
                 ctx.query_param("q").value_or(""));
    });
    app.get("/files/<path>",
            [](tern::context& ctx) { ctx.text(std::string(ctx.path_param("path"))); });
    const auto echo = [](tern::context& ctx) {
        ctx.content_type("application/octet-stream").result(std::string(ctx.body()));
    };
    app.post("/echo", echo);
    app.put("/echo", echo);
}

std::vector<fs::path> files_in(const std::vector<fs::path>& dirs) {
    std::vector<fs::path> files;
    for (const auto& dir : dirs) {
        for (const auto& entry : fs::directory_iterator(dir)) {
            if (entry.is_regular_file()) files.push_back(entry.path());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool parse_args(int argc, char** argv, options& opt) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if ((arg == "--jobs" || arg == "--timeout-ms") && i + 1 < argc) {
            const long value = std::strtol(argv[++i], nullptr, 10);
            if (value <= 0) return false;
            if (arg == "--jobs") {
                opt.jobs = static_cast<std::size_t>(value);
            } else {
                opt.timeout = std::chrono::milliseconds(value);
            }
        } else if (arg == "--verbose") {
            opt.verbose = true;
        } else if (!arg.empty() && arg.front() != '-') {
            if (!fs::is_directory(argv[i])) {
                std::fprintf(stderr, "replay: %s is not a directory\n", argv[i]);
                return false;
            }
            opt.dirs.emplace_back(argv[i]);
        } else {
            return false;
        }
    }
    return !opt.dirs.empty();
}

}  // namespace

int main(int argc, char** argv) {
    options opt;
    if (!parse_args(argc, argv, opt)) {
        std::fprintf(stderr, "usage: %s [--jobs N] [--timeout-ms MS] [--verbose] CORPUS_DIR...\n",
                     argv[0]);
        return 2;
    }
    const auto files = files_in(opt.dirs);

    tern::config cfg;
    cfg.threads = 2;
    cfg.limits.max_body_size = 4096;
    cfg.limits.max_header_count = 50;
    cfg.limits.max_header_size = 4096;
    cfg.limits.max_line_size = 4096;
    cfg.limits.max_empty_lines = 3;
    tern::app app(cfg);
    add_routes(app);
    app.start("127.0.0.1", 0);
    const std::uint16_t port = app.port();

    std::atomic<std::size_t> next{0};
    std::atomic<std::size_t> passed{0}, failed{0};
    std::mutex print_mutex;
    const auto started = clock_type::now();
    const auto worker = [&] {
        for (std::size_t i = next++; i < files.size(); i = next++) {
            const result r = replay(read_file(files[i]), port, opt.timeout);
            (r.passed ? passed : failed)++;
            if (!r.passed || opt.verbose) {
                const std::lock_guard<std::mutex> lock(print_mutex);
                std::printf("%s %s: %s (sent %zu of %zu bytes, received %zu) %s\n",
                            r.passed ? "ok  " : "FAIL", files[i].string().c_str(),
                            r.passed ? "closed" : r.why.c_str(), r.sent, r.size, r.received,
                            r.first_line.c_str());
                std::fflush(stdout);
            }
        }
    };
    std::vector<std::thread> pool;
    for (std::size_t j = 0; j < std::max<std::size_t>(1, opt.jobs); ++j) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - started);

    const bool serving = still_serving(port, opt.timeout);
    if (!serving) std::printf("FAIL: the server no longer answers GET /__alive with 200\n");
    app.stop();

    std::printf("replayed %zu inputs from %zu director%s in %lld ms, %zu at a time\n", files.size(),
                opt.dirs.size(), opt.dirs.size() == 1 ? "y" : "ies",
                static_cast<long long>(elapsed.count()), opt.jobs);
    std::printf("corpus replay: %zu passed, %zu failed\n", passed.load(), failed.load());
    return failed == 0 && serving ? 0 : 1;
}
