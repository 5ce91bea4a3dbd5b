// What the routes ask of a synchronous database (SQLite; PostgreSQL runs on the event loop
// instead, pg_async.hpp), and the types both use.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace todo_app {

/// A stored to-do.
struct todo {
    std::int64_t id = 0;
    std::string title;
    bool done = false;
};

/// What a client sends to create or replace a to-do, already validated.
struct todo_fields {
    std::string title;
    bool done = false;
};

/// The database failed or did not answer. The message is for the server's log, not the client.
struct db_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// A table of to-dos behind a synchronous driver. Every call may run on any blocking-pool
/// thread, several at once; the implementation keeps one connection per calling thread.
/// Failures throw db_error.
class todo_store {
public:
    virtual ~todo_store() = default;
    /// "sqlite" or "postgresql", as /health reports it.
    virtual std::string_view name() const noexcept = 0;
    /// At most `limit` to-dos after skipping `offset`, newest (highest id) first.
    virtual std::vector<todo> list(std::int64_t limit, std::int64_t offset) = 0;
    /// The to-do `id`, or nullopt when there is none.
    virtual std::optional<todo> get(std::int64_t id) = 0;
    /// Stores a new to-do and returns it with its id.
    virtual todo add(const todo_fields& fields) = 0;
    /// Replaces the title and done of `id`; nullopt when there is no such to-do.
    virtual std::optional<todo> replace(std::int64_t id, const todo_fields& fields) = 0;
    /// Deletes `id`; false when there was no such to-do.
    virtual bool remove(std::int64_t id) = 0;
    /// One real query on the table; throws db_error when the database does not answer it.
    virtual void ping() = 0;
};

}  // namespace todo_app
