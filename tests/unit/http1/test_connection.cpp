// HTTP/1 over the byte-transport seam without a socket (src/http/byte_transport.hpp): a fake
// transport records what the protocol writes, the deadlines it sets and the reads it asks
// for, and hands it bytes as a socket would. What the wire tests check over loopback for the
// framing, here for the protocol's own decisions: pipelining into one write, the deadline
// after a response, the error close, the stop between requests, and the two hand-overs (the
// h2c preface, a 101).

#include <catch2/catch.hpp>

#include "http/byte_transport.hpp"
#include "http/protocol_host.hpp"
#include "http1/open.hpp"

#include <tern/config.hpp>

#include <atomic>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace unit_test_http1_connection {

using namespace tern::detail;

namespace {

class empty_state final : public loop_state {};

// Answers every request with its target; "/upgrade" with a 101 carrying `protocol`.
class echo_handler final : public request_handler {
public:
    std::shared_ptr<upgraded_protocol> protocol;
    std::size_t body_limit(const request& /*head*/) const noexcept override { return 1024; }
    std::unique_ptr<loop_state> make_loop_state() override {
        return std::make_unique<empty_state>();
    }
    void handle(request& req, response& res, std::string_view /*ip*/, answer_later& /*later*/,
                loop_state& /*state*/) noexcept override {
        if (req.path == "/upgrade") {
            res.status = 101;
            res.fields.emplace_back("Upgrade", "test");
            res.fields.emplace_back("Connection", "Upgrade");
            res.upgrade = protocol;
            return;
        }
        res.content_type = "text/plain";
        res.body = std::string(req.target);
    }
    void handle_failure(request& /*req*/, int status, std::string_view message, response& res,
                        std::string_view /*ip*/, loop_state& /*state*/) noexcept override {
        res.status = status;
        res.body = std::string(message);
    }
};

class fake_host final : public protocol_host {
public:
    fake_host() {
        loop_ = loop_view{&handler, &state_,  &settings,       &limits_, &stopping_, &closing_,
                          &counted, &counted, &h2_connections, &counted, &counted};
    }
    std::shared_ptr<loop_door> door() override { return nullptr; }
    void expect_posted() override {}
    void unexpect_posted() noexcept override {}
    void post(std::function<void()> fn) override { fn(); }

    echo_handler handler;
    tern::config settings;
    std::atomic<std::uint64_t> counted{0};
    std::atomic<std::uint64_t> h2_connections{0};

private:
    empty_state state_;
    parser_limits limits_;
    std::atomic<bool> stopping_{false};
    std::atomic<bool> closing_{false};
};

// A transport with no socket: writes complete at once into `sent`, posts run on `run()`.
class fake_transport final : public byte_transport {
public:
    fake_transport() { read_buffer_ = std::span<char>(buffer_, sizeof buffer_); }

    void open(fake_host& host, opening how = {}) {
        user = open_protocol(self, host, how);
        user->start();
    }
    // As a socket's read: the bytes land in the read buffer, then on_read.
    void arrive(std::string_view bytes) {
        REQUIRE(reading);
        REQUIRE(bytes.size() <= sizeof buffer_);
        reading = false;
        std::memcpy(buffer_, bytes.data(), bytes.size());
        user->on_read({}, bytes.size());
        run();
    }
    void run() {
        while (!posted.empty()) {
            auto fn = std::move(posted.front());
            posted.pop_front();
            fn();
        }
    }

    void close() noexcept override {
        if (closed_) return;
        closed_ = true;
        if (user) user->on_close();
    }
    void hand_over(std::shared_ptr<transport_user> next) override {
        handed_over = true;
        previous = std::exchange(user, std::move(next));
        user->start();
    }
    void read() override { reading = true; }
    void stop_reading() noexcept override { reading = false; }
    int peek() noexcept override { return -1; }
    void wait_readable() override {}
    void write() override {
        ++writes;
        sent.append(out_);
        out_.clear();
        user->on_written({});
    }
    void shorten_write_timeout(std::chrono::milliseconds /*t*/) noexcept override {}
    void shutdown_sending() noexcept override { half_closed = true; }
    void linger() override {
        half_closed = true;
        lingering = true;
    }
    void set_deadline(clock::duration /*after*/, deadline_kind kind) override { deadline = kind; }
    void set_deadline_at(clock::time_point /*when*/, deadline_kind kind) override {
        deadline = kind;
    }
    void clear_deadline() noexcept override { deadline = deadline_kind::none; }
    void post(std::function<void()> fn) override { posted.push_back(std::move(fn)); }

    std::shared_ptr<fake_transport> self;  // set by make()
    std::shared_ptr<transport_user> user;
    std::shared_ptr<transport_user> previous;
    std::deque<std::function<void()>> posted;
    std::string sent;
    int writes = 0;
    bool reading = false;
    bool half_closed = false;
    bool lingering = false;
    bool handed_over = false;
    deadline_kind deadline = deadline_kind::none;

    static std::shared_ptr<fake_transport> make() {
        auto t = std::make_shared<fake_transport>();
        t->self = t;
        return t;
    }

private:
    char buffer_[4096];
};

struct released {
    std::shared_ptr<fake_transport> t;
    ~released() {
        if (t) {
            t->user.reset();
            t->previous.reset();
            t->self.reset();
        }
    }
};

// An upgraded protocol that records what it receives and sends a greeting once.
class recorder final : public upgraded_protocol {
public:
    std::string received;
    bool attached = false;
    bool greeted = false;
    bool closed_told = false;
    void attach(std::shared_ptr<loop_door> /*door*/,
                std::weak_ptr<exchange_port> /*port*/) override {
        attached = true;
    }
    pull_status pull(std::string& out, std::size_t /*max*/) override {
        if (!greeted) {
            out.append("hello over test");
            greeted = true;
        }
        return pull_status::more;
    }
    void closed() noexcept override { closed_told = true; }
    bool receive(std::string_view bytes) override {
        received.append(bytes);
        return true;
    }
};

}  // namespace

TEST_CASE(
    "HTTP/1 without a socket: pipelined requests answered in one write, then the keep-alive "
    "deadline and the next read",
    "[http1]") {
    fake_host host;
    released guard{fake_transport::make()};
    auto& t = *guard.t;
    t.open(host);
    REQUIRE(t.reading);
    t.arrive("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(t.writes == 1);
    CHECK(t.sent.find("HTTP/1.1 200 OK") == 0);
    CHECK(t.sent.find("\r\n\r\n/a") != std::string::npos);
    CHECK(t.sent.find("\r\n\r\n/b") != std::string::npos);
    CHECK(t.sent.find("\r\n\r\n/a") < t.sent.find("\r\n\r\n/b"));
    CHECK(host.counted == 2);
    CHECK(t.deadline == deadline_kind::idle);
    CHECK(t.reading);
    CHECK_FALSE(t.closed());
}

TEST_CASE(
    "HTTP/1 without a socket: half a request sets the header deadline, a bad one gets 400 and a "
    "half-close",
    "[http1]") {
    fake_host host;
    released guard{fake_transport::make()};
    auto& t = *guard.t;
    t.open(host);
    t.arrive("GET /a HTTP/1.1\r\nHo");
    CHECK(t.writes == 0);
    CHECK(t.deadline == deadline_kind::header);
    t.arrive("st: x\r\nBad header\r\n\r\n");
    CHECK(t.sent.find("HTTP/1.1 400 ") == 0);
    CHECK(t.sent.find("Connection: close") != std::string::npos);
    CHECK(t.lingering);
}

TEST_CASE(
    "HTTP/1 without a socket: a stop between requests closes, a stop mid-request answers it with "
    "Connection: close",
    "[http1]") {
    fake_host host;
    released guard{fake_transport::make()};
    auto& t = *guard.t;
    t.open(host);
    t.arrive("GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
    t.user->stop_when_idle();
    CHECK(t.closed());

    released second{fake_transport::make()};
    auto& u = *second.t;
    u.open(host);
    u.arrive("GET /a HTTP/1.1\r\n");
    u.user->stop_when_idle();
    CHECK_FALSE(u.closed());
}

TEST_CASE(
    "HTTP/1 without a socket: the h2c preface on the first read hands the transport to HTTP/2, "
    "which sends its SETTINGS",
    "[http1][h2]") {
    fake_host host;
    released guard{fake_transport::make()};
    auto& t = *guard.t;
    t.open(host);
    t.arrive("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    CHECK(t.handed_over);
    CHECK(host.h2_connections == 1);
    REQUIRE(t.sent.size() >= 9);
    CHECK(t.sent[3] == '\x04');  // a SETTINGS frame first (RFC 9113 3.4)
    CHECK(t.sent.find("HTTP/1.1") == std::string::npos);
}

TEST_CASE(
    "HTTP/1 without a socket: the preface is looked for on the first read only, and not with http2 "
    "off",
    "[http1][h2]") {
    fake_host host;
    released guard{fake_transport::make()};
    auto& t = *guard.t;
    t.open(host);
    t.arrive("GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
    t.arrive("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    CHECK_FALSE(t.handed_over);
    // Parsed as HTTP/1: a request of version 2.0, which HTTP/1 does not serve.
    const auto second = t.sent.find("HTTP/1.1 ", 1);
    REQUIRE(second != std::string::npos);
    CHECK(t.sent.substr(second, 12) == "HTTP/1.1 505");
    CHECK(t.half_closed);

    host.settings.http2.enabled = false;
    released off{fake_transport::make()};
    auto& u = *off.t;
    u.open(host);
    u.arrive("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    CHECK_FALSE(u.handed_over);
}

TEST_CASE(
    "HTTP/1 without a socket: a 101 goes out before the upgraded protocol's bytes, which get what "
    "followed the handshake",
    "[http1]") {
    fake_host host;
    auto protocol = std::make_shared<recorder>();
    host.handler.protocol = protocol;
    released guard{fake_transport::make()};
    auto& t = *guard.t;
    t.open(host);
    t.arrive("GET /upgrade HTTP/1.1\r\nHost: x\r\n\r\nfirst bytes");
    CHECK(t.handed_over);
    CHECK(protocol->attached);
    CHECK(protocol->received == "first bytes");
    CHECK(t.sent.find("HTTP/1.1 101 ") == 0);
    const auto greeting = t.sent.find("hello over test");
    REQUIRE(greeting != std::string::npos);
    CHECK(greeting > t.sent.find("\r\n\r\n"));
    REQUIRE(t.reading);
    t.arrive("more");
    CHECK(protocol->received == "first bytesmore");
    t.close();
    CHECK(protocol->closed_told);
}

}  // namespace unit_test_http1_connection
