#pragma once
// The to-do API of the rest_api example: its data, its store and the routes, filters,
// settings and error mappers that serve it. main.cpp runs it on a port;
// tests/examples/test_rest_api.cpp runs it under the test kit (tern::testing).

#include <tern/json.hpp>
#include <tern/tern.hpp>

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace rest_api {

struct todo {
    int id = 0;
    std::string title;
    bool done = false;
};

// What a client sends to create or replace a to-do.
struct todo_input {
    std::string title;
    bool done = false;
};

// Thrown by the store for an id it does not hold; mapped to a 404 by add_routes.
struct no_such_todo : std::runtime_error {
    explicit no_such_todo(int id) : std::runtime_error("no to-do with id " + std::to_string(id)) {}
};

// Handlers run on several event-loop threads at once: the store locks.
class todo_store {
public:
    std::vector<todo> list(std::size_t offset, std::size_t limit) const {
        std::lock_guard lock(mutex_);
        std::vector<todo> page;
        for (auto it = todos_.begin(); it != todos_.end() && page.size() < limit; ++it) {
            if (offset > 0) {
                --offset;
                continue;
            }
            page.push_back(it->second);
        }
        return page;
    }
    todo get(int id) const {
        std::lock_guard lock(mutex_);
        const auto it = todos_.find(id);
        if (it == todos_.end()) throw no_such_todo(id);
        return it->second;
    }
    todo add(const todo_input& in) {
        std::lock_guard lock(mutex_);
        const todo t{next_id_++, in.title, in.done};
        todos_[t.id] = t;
        return t;
    }
    todo replace(int id, const todo_input& in) {
        std::lock_guard lock(mutex_);
        const auto it = todos_.find(id);
        if (it == todos_.end()) throw no_such_todo(id);
        it->second.title = in.title;
        it->second.done = in.done;
        return it->second;
    }
    void remove(int id) {
        std::lock_guard lock(mutex_);
        if (todos_.erase(id) == 0) throw no_such_todo(id);
    }

private:
    mutable std::mutex mutex_;
    std::map<int, todo> todos_;
    int next_id_ = 1;
};

/// Sets `app` up as the to-do API over `store` (which must outlive the app's serving):
/// limits, CORS, compression, the login, the /api routes and their auth filter, and the
/// JSON error answers.
void add_routes(tern::app& app, todo_store& store);

}  // namespace rest_api
