// The to-do table in PostgreSQL through libpq: one connection per calling thread.
#pragma once

#include "store.hpp"

#include <cstdint>
#include <string>

namespace todo_app {

/// PostgreSQL behind todo_store. Each thread that calls it opens its own connection
/// (thread_local, on first use) and prepares its statements there; a connection that breaks
/// (the server restarted, say) is opened again by the next call on that thread.
class pg_store final : public todo_store {
public:
    /// Connects with `conninfo` (libpq's "host=... dbname=..." or a postgresql:// URI; a
    /// connect_timeout of 5 s unless it names one) and creates the table when missing.
    /// Throws db_error when the server cannot be reached or refuses.
    explicit pg_store(std::string conninfo);

    std::string_view name() const noexcept override { return "postgresql"; }
    std::vector<todo> list(std::int64_t limit, std::int64_t offset) override;
    std::optional<todo> get(std::int64_t id) override;
    todo add(const todo_fields& fields) override;
    std::optional<todo> replace(std::int64_t id, const todo_fields& fields) override;
    bool remove(std::int64_t id) override;
    void ping() override;

    class connection;

private:
    connection& here();  // this thread's connection, opened (again) when needed

    std::string conninfo_;
    std::uint64_t generation_;  // tells this store's thread_local connections from another's
};

}  // namespace todo_app
