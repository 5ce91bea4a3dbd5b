// The to-do table in an SQLite file: WAL mode, one connection per calling thread.
#pragma once

#include "store.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace todo_app {

/// SQLite behind todo_store. Each thread that calls it opens its own connection to the file
/// (on first use) with prepared statements and a busy timeout. The store owns them and
/// closes them one after another when it is destroyed (after the app has stopped and its
/// pool threads are gone): the last to close checkpoints the WAL into the file and removes
/// it, which connections closed at the same moment by exiting threads could each leave to
/// the other.
class sqlite_store final : public todo_store {
public:
    /// Opens `path` (created when missing), switches it to WAL mode and creates the table
    /// when missing. Throws db_error when the file cannot be opened or set up.
    explicit sqlite_store(std::string path);
    ~sqlite_store() override;
    sqlite_store(const sqlite_store&) = delete;
    sqlite_store& operator=(const sqlite_store&) = delete;

    std::string_view name() const noexcept override { return "sqlite"; }
    std::vector<todo> list(std::int64_t limit, std::int64_t offset) override;
    std::optional<todo> get(std::int64_t id) override;
    todo add(const todo_fields& fields) override;
    std::optional<todo> replace(std::int64_t id, const todo_fields& fields) override;
    bool remove(std::int64_t id) override;
    void ping() override;

    class connection;

private:
    connection& here();  // this thread's connection to path_, opened on first use

    std::string path_;
    std::uint64_t generation_;  // tells this store's connections from another's
    std::mutex connections_mutex_;
    std::vector<std::unique_ptr<connection>> connections_;  // one per thread that called
};

}  // namespace todo_app
