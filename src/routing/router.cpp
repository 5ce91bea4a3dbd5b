#include "routing/router.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <utility>

#include "http/token.hpp"
#include "routing/path_pattern.hpp"

namespace tern::detail {

namespace {

// The order of the Allow list: the common methods in the order people read them, the
// rest alphabetically after, so the header is stable whatever the registration order.
int allow_rank(std::string_view method) noexcept {
    static constexpr std::string_view known[] = {"GET",   "HEAD",   "POST",   "PUT",
                                                 "PATCH", "DELETE", "OPTIONS"};
    for (std::size_t i = 0; i < std::size(known); ++i) {
        if (method == known[i]) {
            return static_cast<int>(i);
        }
    }
    return static_cast<int>(std::size(known));
}

}  // namespace

const router::route* router::route_set::find(std::string_view method) const noexcept {
    for (const route& r : routes) {
        if (r.method == method) {
            return &r;
        }
    }
    return nullptr;
}

void router::add(std::string_view method, std::string_view pattern, handler h,
                 std::size_t body_limit, bool streamed_body) {
    if (!is_token(method)) {
        std::string message = "invalid method \"";
        message.append(method);
        message.append("\" for route pattern \"");
        message.append(pattern);
        message.append("\": a method must be a non-empty RFC 9110 token");
        throw std::invalid_argument(message);
    }
    const path_pattern parsed(pattern);

    route_set* set = nullptr;
    std::vector<std::string> names;
    if (parsed.is_static()) {
        set = &static_routes_[parsed.static_path()];
    } else {
        node* at = &root_;
        for (const pattern_segment& segment : parsed.segments()) {
            if (segment.kind == segment_kind::literal) {
                auto it = at->literals.find(segment.text);
                if (it == at->literals.end()) {
                    it = at->literals.emplace(segment.text, std::make_unique<node>()).first;
                }
                at = it->second.get();
                continue;
            }
            names.push_back(segment.text);  // Empty for `*`, which captures nothing.
            if (matches_one_segment(segment.kind)) {
                if (!at->one_segment) {
                    at->one_segment = std::make_unique<node>();
                }
                at = at->one_segment.get();
            } else {
                // A tail is always the last segment (the parser guarantees it), so the
                // pattern ends on this node's tail set rather than on a deeper node.
                if (!at->tail) {
                    at->tail = std::make_unique<route_set>();
                }
                set = at->tail.get();
            }
        }
        if (set == nullptr) {
            if (!at->end) {
                at->end = std::make_unique<route_set>();
            }
            set = at->end.get();
        }
    }

    // Patterns that reach the same set have the same shape, so they match the same paths;
    // a second route for one method there could never be chosen.
    if (const route* existing = set->find(method)) {
        std::string message = "duplicate route ";
        message.append(method);
        message.append(" \"");
        message.append(pattern);
        message.append("\": it matches the same paths as ");
        message.append(existing->method);
        message.append(" \"");
        message.append(existing->pattern);
        message.append("\", already registered (parameter names do not distinguish routes)");
        throw std::invalid_argument(message);
    }
    set->routes.push_back(route{std::string(method), std::move(h), parsed.text(), std::move(names),
                                body_limit, streamed_body});
}

template <class Visit>
bool router::walk(const node& n, std::string_view path, std::size_t pos, bool at_end,
                  std::vector<path_param>& params, Visit& visit) {
    if (at_end) {
        return n.end && visit(*n.end);
    }
    const std::size_t slash = path.find('/', pos);
    const bool last = slash == std::string_view::npos;
    const std::size_t segment_end = last ? path.size() : slash;
    const std::string_view segment = path.substr(pos, segment_end - pos);

    // An empty segment (from "//") matches no literal (none is empty) and no `{name}`.
    if (!segment.empty()) {
        if (const auto it = n.literals.find(segment); it != n.literals.end()) {
            if (walk(*it->second, path, segment_end + 1, last, params, visit)) {
                return true;
            }
        }
        if (n.one_segment) {
            params.push_back({{}, segment});
            if (walk(*n.one_segment, path, segment_end + 1, last, params, visit)) {
                return true;
            }
            params.pop_back();
        }
    }
    // The tail takes everything from here: one or more characters, slashes included.
    if (n.tail && pos < path.size()) {
        params.push_back({{}, path.substr(pos)});
        if (visit(*n.tail)) {
            return true;
        }
        params.pop_back();
    }
    return false;
}

template <class Visit>
bool router::visit_matches(std::string_view path, std::vector<path_param>& params,
                           Visit& visit) const {
    if (path.empty() || path.front() != '/') {
        return false;  // Not an origin-form path (e.g. "*"): no route can match it.
    }
    const std::string_view trimmed = trim_trailing_slash(path);
    if (trimmed.size() == 1 && path.size() != 1) {
        // "//" trims to "/" but is one empty segment, not the root; as with "/users//",
        // nothing matches an empty segment.
        return false;
    }
    // A static pattern that matches beats every dynamic one: at the first segment where
    // they differ it has a literal and the other does not. So it is tried first.
    if (const auto it = static_routes_.find(trimmed); it != static_routes_.end()) {
        if (visit(it->second)) {
            return true;
        }
    }
    // The root path "/" has no segments; any other path has at least one (maybe empty).
    return walk(root_, trimmed, 1, trimmed.size() == 1, params, visit);
}

router::match router::find(std::string_view method, std::string_view path,
                           std::vector<path_param>& params) const {
    match m;
    params.clear();

    const route* chosen = nullptr;
    bool from_get = false;
    bool path_matched = false;  // some pattern matches the path, whatever its methods
    // RFC 9110 §9.3.2: HEAD is GET without the body, so a pattern with GET but no HEAD
    // answers HEAD with its GET handler. This is decided per pattern, in priority order, so
    // the most specific pattern wins for HEAD exactly as it would for GET.
    auto pick = [&](const route_set& set) {
        path_matched = true;
        if ((chosen = set.find(method)) != nullptr) {
            return true;
        }
        if (method == "HEAD" && (chosen = set.find("GET")) != nullptr) {
            from_get = true;
            return true;
        }
        return false;
    };

    if (visit_matches(path, params, pick)) {
        // The walk pushed one unnamed capture per variable segment; name them from the
        // chosen route, then drop the `*` ones, which are not parameters.
        for (std::size_t i = 0; i < params.size() && i < chosen->names.size(); ++i) {
            params[i].name = chosen->names[i];
        }
        params.erase(std::remove_if(params.begin(), params.end(),
                                    [](const path_param& p) { return p.name.empty(); }),
                     params.end());
        m.result = outcome::found;
        m.target = &chosen->target;
        m.body_limit = chosen->body_limit;
        m.streamed_body = chosen->streamed_body;
        m.head_from_get = from_get;
        return m;
    }

    params.clear();
    if (!path_matched) {
        m.result = outcome::not_found;  // no pattern at all: no Allow to compute (static files)
        return m;
    }
    m.allow = allow(path);
    m.result = m.allow.empty() ? outcome::not_found : outcome::method_not_allowed;
    return m;
}

std::string router::allow(std::string_view path) const {
    bool matched = false;
    std::vector<std::string_view> methods;
    auto collect = [&](const route_set& set) {
        matched = true;
        for (const route& r : set.routes) {
            if (std::find(methods.begin(), methods.end(), r.method) == methods.end()) {
                methods.push_back(r.method);
            }
        }
        return false;  // Keep walking: Allow is the union over every matching pattern.
    };
    std::vector<path_param> scratch;
    visit_matches(path, scratch, collect);
    if (!matched) {
        return {};
    }

    const auto has = [&](std::string_view m) {
        return std::find(methods.begin(), methods.end(), m) != methods.end();
    };
    if (has("GET") && !has("HEAD")) {
        methods.push_back("HEAD");
    }
    if (!has("OPTIONS")) {
        methods.push_back("OPTIONS");  // Always answered, explicitly or with 204 + Allow.
    }
    std::sort(methods.begin(), methods.end(), [](std::string_view a, std::string_view b) {
        const int ra = allow_rank(a);
        const int rb = allow_rank(b);
        return ra != rb ? ra < rb : a < b;
    });

    std::string out;
    for (const std::string_view m : methods) {
        if (!out.empty()) {
            out.append(", ");
        }
        out.append(m);
    }
    return out;
}

void router::for_each_route(
    const std::function<void(std::string_view method, std::string_view pattern)>& fn) const {
    auto each = [&](const route_set& set) {
        for (const route& r : set.routes) fn(r.method, r.pattern);
    };
    for (const auto& [path, set] : static_routes_) each(set);
    std::vector<const node*> todo{&root_};
    while (!todo.empty()) {
        const node* n = todo.back();
        todo.pop_back();
        if (n->end) each(*n->end);
        if (n->tail) each(*n->tail);
        if (n->one_segment) todo.push_back(n->one_segment.get());
        for (const auto& [text, child] : n->literals) todo.push_back(child.get());
    }
}

}  // namespace tern::detail
