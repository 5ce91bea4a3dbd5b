#pragma once
/// @file router.hpp
/// The route table: which handler answers a method and a path.

#include <tern/handler.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tern::detail {

/// A captured path parameter: name from the pattern, raw (not decoded) value viewing the
/// request path.
struct path_param {
    std::string_view name;   ///< The name written in the pattern (`{name}` or `<name>`).
    std::string_view value;  ///< The matched text, a view into the request path.
};

/// Maps method + path to a handler (see path_pattern.hpp for the pattern grammar).
///
/// Fully static patterns live in a hash table keyed by the whole path, so the common exact
/// route costs one hash lookup. The others live in a segment trie searched depth-first in
/// priority order: literal child, then `{param}`/`*`, then `<tail>`/final `*`, backtracking
/// when a deeper level fails. The first pattern in that order that matches the path and has
/// a route for the method wins; a path matched only by routes for other methods is a 405.
///
/// Routes are added during setup only: `add` invalidates handler pointers returned earlier,
/// and `find` is safe to call concurrently once adding has stopped.
class router {
public:
    /// Registers `h` for `method` + `pattern`. Throws std::invalid_argument, naming the
    /// pattern and the fault, for a bad pattern, an empty or invalid method (it must be an
    /// RFC 9110 token), or a duplicate route: the same method and the same pattern shape
    /// (parameter names do not count, and `{x}`/`*` or `<x>`/final `*` are the same shape).
    /// `body_limit`: the route's own limit on request bodies (0: config::max_body_size);
    /// `streamed_body`: its handler reads the body piece by piece (tern::streamed_body).
    void add(std::string_view method, std::string_view pattern, handler h,
             std::size_t body_limit = 0, bool streamed_body = false);

    /// How a lookup ended.
    enum class outcome {
        found,               ///< A route answers the request.
        method_not_allowed,  ///< The path has routes, none for this method (405, or OPTIONS).
        not_found,           ///< No pattern matches the path (404).
    };

    /// The result of `find`.
    struct match {
        outcome result = outcome::not_found;  ///< How the lookup ended.
        const handler* target = nullptr;      ///< set when found
        bool head_from_get = false;  ///< HEAD answered by the GET handler (no explicit HEAD route)
        std::size_t body_limit = 0;  ///< the route's own body limit (0: none)
        bool streamed_body = false;  ///< the handler reads the body piece by piece
        std::string allow;  ///< set for method_not_allowed: e.g. "GET, HEAD, OPTIONS, POST"
    };

    /// Finds the handler for `method` + `path` (path: no query string, not decoded, begins
    /// with '/'; anything else is not_found). Method comparison is case-sensitive. HEAD falls
    /// back to the GET route of the same pattern; OPTIONS without an explicit route gives
    /// method_not_allowed so the caller can answer 204 + Allow. `params` is cleared, then
    /// filled with the captures of the matched route (views into `path`); its capacity is
    /// kept, and a hit allocates nothing once that capacity suffices.
    match find(std::string_view method, std::string_view path,
               std::vector<path_param>& params) const;

    /// The Allow value for `path`: the methods of every route whose pattern matches it, plus
    /// HEAD when GET is there and OPTIONS always, ordered GET, HEAD, POST, PUT, PATCH,
    /// DELETE, OPTIONS, then the rest alphabetically, joined by ", "; empty when no pattern
    /// matches.
    std::string allow(std::string_view path) const;

    /// Calls `fn(method, pattern)` for every route, the pattern as it was registered; in no
    /// particular order.
    void for_each_route(
        const std::function<void(std::string_view method, std::string_view pattern)>& fn) const;

private:
    /// One method's handler on one pattern.
    struct route {
        std::string method;   ///< The method token, compared case-sensitively.
        handler target;       ///< What `find` points `match::target` at.
        std::string pattern;  ///< The pattern as written, for duplicate messages.
        /// One name per `{}`/`*`/`<>` segment, in order; empty for `*`, which captures
        /// nothing. Kept per route because same-shape patterns may name captures differently.
        std::vector<std::string> names;
        std::size_t body_limit = 0;  ///< See `add`.
        bool streamed_body = false;  ///< See `add`.
    };

    /// The routes of one pattern shape, one per method; a handful, so a linear scan.
    struct route_set {
        std::vector<route> routes;  ///< At most one per method.
        /// The route for `method`, or nullptr.
        const route* find(std::string_view method) const noexcept;
    };

    /// Heterogeneous hashing so lookups by string_view need no temporary std::string.
    struct string_hash {
        using is_transparent = void;  ///< Enables find(std::string_view).
        /// Hashes `s` as std::hash<std::string_view> does.
        std::size_t operator()(std::string_view s) const noexcept {
            return std::hash<std::string_view>{}(s);
        }
    };

    /// A map keyed by std::string that can be searched with a std::string_view.
    template <class T>
    using string_map = std::unordered_map<std::string, T, string_hash, std::equal_to<>>;

    /// A trie level: what may follow the segments consumed so far.
    struct node {
        string_map<std::unique_ptr<node>> literals;  ///< Children by literal segment text.
        std::unique_ptr<node> one_segment;           ///< Child for `{name}` or a non-final `*`.
        std::unique_ptr<route_set> tail;  ///< Patterns ending here in `<name>` or a final `*`.
        std::unique_ptr<route_set> end;   ///< Patterns ending exactly after this level.
    };

    /// Calls `visit(set)` for each route set whose pattern matches the segments of `path`
    /// from `pos` on, in priority order, until `visit` returns true; pushes one capture per
    /// variable segment on the way down and pops it when backtracking.
    template <class Visit>
    static bool walk(const node& n, std::string_view path, std::size_t pos, bool at_end,
                     std::vector<path_param>& params, Visit& visit);

    /// Calls `visit` on the static set for `path` (trailing slash ignored), then on the trie
    /// matches, as `walk`; visits nothing for a path that is not "/"-prefixed or is "//".
    template <class Visit>
    bool visit_matches(std::string_view path, std::vector<path_param>& params, Visit& visit) const;

    string_map<route_set> static_routes_;  ///< Fully literal patterns by trimmed path.
    node root_;                            ///< The trie of the other patterns.
};

}  // namespace tern::detail
