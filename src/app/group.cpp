// Route groups (`app.group("/api", ...)`): patterns, filters and WebSocket routes under a
// prefix, handed to the app with the prefix put in front.

#include <tern/app.hpp>

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace tern {

// ---- groups ------------------------------------------------------------------------------

std::string group::full(std::string_view pattern) const {
    // "/" inside a group is the group's own path; the pattern parser checks the rest.
    if (pattern == "/" && !prefix_.empty()) return prefix_;
    return prefix_ + std::string(pattern);
}

group& group::get(std::string_view pattern, route_handler h) {
    return add("GET", pattern, std::move(h));
}
group& group::post(std::string_view pattern, route_handler h) {
    return add("POST", pattern, std::move(h));
}
group& group::put(std::string_view pattern, route_handler h) {
    return add("PUT", pattern, std::move(h));
}
group& group::patch(std::string_view pattern, route_handler h) {
    return add("PATCH", pattern, std::move(h));
}
group& group::del(std::string_view pattern, route_handler h) {
    return add("DELETE", pattern, std::move(h));
}
group& group::head(std::string_view pattern, route_handler h) {
    return add("HEAD", pattern, std::move(h));
}
group& group::options(std::string_view pattern, route_handler h) {
    return add("OPTIONS", pattern, std::move(h));
}

group& group::add(std::string_view method, std::string_view pattern, route_handler h) {
    app_.add(method, full(pattern), std::move(h));
    return *this;
}

group& group::ws(std::string_view pattern, const ws_setup& setup) {
    app_.ws(full(pattern), setup);
    return *this;
}

group& group::subgroup(std::string_view prefix, const std::function<void(tern::group&)>& fn) {
    if (prefix.empty() || prefix.front() != '/' || prefix == "/" || prefix.back() == '/') {
        throw std::invalid_argument(
            "tern: a group prefix begins with '/' and does not end with "
            "one, like \"/api\"; got '" +
            std::string(prefix) + "'");
    }
    tern::group inner(app_, prefix_ + std::string(prefix));
    fn(inner);
    return *this;
}

group& group::before(handler h) {
    app_.add_filter(true, {prefix_, prefix_ + "/*"}, std::move(h));
    return *this;
}
group& group::before(std::string_view pattern, handler h) {
    app_.add_filter(true, {full(pattern)}, std::move(h));
    return *this;
}
group& group::after(handler h) {
    app_.add_filter(false, {prefix_, prefix_ + "/*"}, std::move(h));
    return *this;
}
group& group::after(std::string_view pattern, handler h) {
    app_.add_filter(false, {full(pattern)}, std::move(h));
    return *this;
}

}  // namespace tern
