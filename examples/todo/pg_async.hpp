// PostgreSQL through libpq's non-blocking API, on tern's event loops: each loop keeps a few
// connections of its own, and a handler coroutine drives one query at a time on one of
// them, waiting for the socket with tern::wait_readable / tern::wait_writable. No thread
// waits for the database, and the blocking pool is not used.
#pragma once

#include "store.hpp"

#include <libpq-fe.h>
#include <tern/tern.hpp>

#include <exception>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace todo_app {

/// A statement and its parameters (text), sent with PQsendQueryParams: the unnamed
/// statement, parsed and run in one round trip.
struct pg_call {
    const char* sql = nullptr;
    std::vector<std::string> params;
};

/// What a route makes of the statement's result (it may throw, as a handler does).
using pg_answer = std::function<void(tern::context&, const PGresult*)>;
/// What a route answers when the database fails (instead of letting db_error through).
using pg_failure = std::function<void(tern::context&, const std::exception&)>;

/// The to-dos in a result of "id, title, done" rows. Throws db_error on a malformed id.
std::vector<todo> todos_of(const PGresult* r);

/// PostgreSQL for the routes. Each event loop opens at most `per_loop` connections (on first
/// use, and again after one failed), each running one statement at a time; at most
/// `max_waiting` requests of a loop wait for one of them (beyond that the answer is 503 at
/// once: the database is the bottleneck, and a longer queue only adds latency).
class pg_async {
public:
    /// Creates the table when missing, on a blocking connection made and closed here (before
    /// serving). Throws db_error when the server cannot be reached or refuses.
    pg_async(std::string conninfo, std::size_t per_loop, std::size_t max_waiting,
             std::chrono::milliseconds timeout);

    /// Runs `call` on a connection of the calling loop, then `answer(ctx, result)`. A
    /// statement the database refuses, a connection that fails and no answer within the
    /// timeout throw db_error (the app's 503), or go to `failure` when it is given.
    tern::task run(tern::context& ctx, pg_call call, pg_answer answer, pg_failure failure = {});

    const std::string& conninfo() const noexcept { return conninfo_; }
    std::size_t per_loop() const noexcept { return per_loop_; }
    std::size_t max_waiting() const noexcept { return max_waiting_; }

private:
    std::string conninfo_;
    std::size_t per_loop_;
    std::size_t max_waiting_;
    std::chrono::milliseconds timeout_;
    std::uint64_t generation_;  // tells this store's per-loop connections from another's
};

}  // namespace todo_app
