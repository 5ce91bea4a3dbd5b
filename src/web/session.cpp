// tern::session: one request's view of its session. The store is reached only when the
// request is done (session_manager::commit), so these members touch nothing shared.

#include "web/session_id.hpp"

#include <tern/session.hpp>

namespace tern {

session_store::~session_store() = default;

session::~session() = default;

std::optional<std::string> session::get(std::string_view key) const {
    const auto it = data_.values.find(key);
    if (it == data_.values.end()) return std::nullopt;
    return it->second;
}

std::string session::get(std::string_view key, std::string_view fallback) const {
    const auto it = data_.values.find(key);
    return it == data_.values.end() ? std::string(fallback) : it->second;
}

bool session::contains(std::string_view key) const { return data_.values.contains(key); }

const std::map<std::string, std::string, std::less<>>& session::values() const noexcept {
    return data_.values;
}

session& session::set(std::string_view key, std::string value) {
    if (id_.empty()) id_ = detail::new_session_id();
    const auto it = data_.values.find(key);
    if (it != data_.values.end()) {
        it->second = std::move(value);
    } else {
        data_.values.emplace(std::string(key), std::move(value));
    }
    changed_ = true;
    return *this;
}

bool session::erase(std::string_view key) {
    const auto it = data_.values.find(key);
    if (it == data_.values.end()) return false;
    data_.values.erase(it);
    changed_ = true;
    return true;
}

bool session::is_new() const noexcept { return stored_id_.empty(); }

void session::regenerate() {
    id_ = detail::new_session_id();
    changed_ = true;
    regenerated_ = true;
}

void session::invalidate() {
    data_.values.clear();
    data_.created = {};  // a value set afterwards starts a session timed from then
    id_.clear();
    changed_ = false;
    clear_cookie_ = true;
    regenerated_ = false;  // a session started after a log-out is a new one
}

}  // namespace tern
