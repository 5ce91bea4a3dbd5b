#pragma once
// What an HTTP/2 connection (src/h2/connection.hpp) needs around it when a test or a fuzzer
// runs it without a transport: the worker's side (protocol_host) over a fake_loop, with the
// handler, settings and parser limits the caller chooses, and an exchange port that does
// nothing (the harness pulls the connection's output itself). Header-only: the HTTP/2
// fuzzer includes it too.

#include "http/exchange_port.hpp"
#include "http/parser.hpp"
#include "http/protocol_host.hpp"
#include "http/request_handler.hpp"
#include "support/fake_loop.hpp"

#include <tern/config.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

namespace tern_test {

/// A handler's per-loop state that holds nothing.
class empty_state final : public tern::detail::loop_state {};

/// The worker's side of one HTTP/2 connection: `settings` and `limits` as given, posted
/// functions queued on `loop`, `stopping` raised by the test to start a stop.
class fake_h2_host final : public tern::detail::protocol_host {
public:
    fake_h2_host(fake_loop& loop, tern::detail::request_handler& handler,
                 const tern::config& settings_in, const tern::detail::parser_limits& limits_in)
        : settings(settings_in), limits(limits_in), loop_door_(loop) {
        loop_ = loop_view{&handler,  &state_,   &settings, &limits,   &stopping, &no_,
                          &counted_, &counted_, &counted_, &counted_, &counted_};
    }
    std::shared_ptr<tern::detail::loop_door> door() override { return nullptr; }
    void expect_posted() override {}
    void unexpect_posted() noexcept override {}
    void post(std::function<void()> fn) override { loop_door_.post(std::move(fn)); }

    const tern::config settings;
    const tern::detail::parser_limits limits;
    std::atomic<bool> stopping{false};

private:
    fake_loop& loop_door_;
    empty_state state_;
    std::atomic<bool> no_{false};
    std::atomic<std::uint64_t> counted_{0};
};

/// The connection's side of the exchange port when the harness pulls after every turn.
class idle_port final : public tern::detail::exchange_port {
public:
    std::shared_ptr<tern::detail::loop_door> door() override { return nullptr; }
    void hold(std::shared_ptr<tern::detail::held_link> /*link*/) override {}
    void finish(tern::detail::response&& /*res*/) override {}
    void wake() override {}
};

}  // namespace tern_test
