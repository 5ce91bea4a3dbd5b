#include "static/static_files.hpp"

#include "http/header_values.hpp"
#include "http/token.hpp"
#include "platform/files.hpp"
#include "static/file_response.hpp"
#include "static/open_beneath.hpp"
#include "static/path_resolver.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace tern::detail {

namespace {

std::string validated_prefix(const std::string& hosted_path) {
    std::string_view prefix = hosted_path;
    while (prefix.size() > 1 && prefix.back() == '/') prefix.remove_suffix(1);
    if (prefix.empty() || prefix.front() != '/') {
        throw std::invalid_argument("tern: static_files hosted_path '" + hosted_path +
                                    "' must begin with '/'");
    }
    if (prefix == "/") return {};
    // Normal form: resolving it changes nothing, so a request path can be compared to it
    // byte for byte.
    resolved_path resolved;
    if (resolve_path(prefix, resolved) != path_status::ok || resolved.raw != prefix ||
        prefix.find_first_of("?#") != std::string_view::npos) {
        throw std::invalid_argument("tern: static_files hosted_path '" + hosted_path +
                                    "' is not a normalized path (no '.', '..' or empty "
                                    "segments, controls, spaces, '\\', '?' or '#')");
    }
    return std::string(prefix);
}

std::string validated_root(const std::string& directory) {
    if (directory.empty()) throw std::invalid_argument("tern: static_files needs a directory");
    std::string root = platform::real_path(directory.c_str());
    if (root.empty()) {
        throw std::invalid_argument("tern: static_files directory '" + directory +
                                    "': " + std::strerror(errno));
    }
    struct stat st {};
    if (::stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        throw std::invalid_argument("tern: static_files directory '" + directory +
                                    "' is not a directory");
    }
    return root;
}

void validate_index(const static_files_config& c) {
    const std::string& name = c.index_file;
    if (name.empty()) return;
    if (name == "." || name == ".." || name.find('/') != std::string::npos ||
        name.find('\\') != std::string::npos || name.find('\0') != std::string::npos ||
        has_control(name) || name.size() > platform::max_name_length) {
        throw std::invalid_argument("tern: static_files index_file '" + name +
                                    "' must be a plain file name");
    }
    if (name.front() == '.' && !c.allow_dotfiles) {
        throw std::invalid_argument("tern: static_files index_file '" + name +
                                    "' is a dotfile, which allow_dotfiles = false hides");
    }
}

// The fallback's path, checked like a request path so that it cannot leave the directory.
std::string validated_fallback(const static_files_config& c) {
    const std::string& name = c.spa_fallback;
    if (name.empty()) return {};
    const std::string raw = "/" + name;
    resolved_path resolved;
    if (name.find('\0') != std::string::npos || resolve_path(raw, resolved) != path_status::ok ||
        resolved.raw != raw || resolved.decoded != name || resolved.trailing_slash ||
        name.find('%') != std::string::npos) {
        throw std::invalid_argument("tern: static_files spa_fallback '" + name +
                                    "' must be a normalized relative file path (no '.', '..' "
                                    "or empty segments, '%', controls or '\\')");
    }
    if (resolved.hidden && !c.allow_dotfiles) {
        throw std::invalid_argument("tern: static_files spa_fallback '" + name +
                                    "' is a dotfile, which allow_dotfiles = false hides");
    }
    return name;
}

// Whether the request asks for a page a browser shows: its Accept lists text/html, text/* or
// */* with q > 0. No Accept field is no: scripts and tools that did not ask for HTML keep
// the 404 (RFC 9110 12.5.1 would let a server send anything then; the fallback chooses not
// to).
bool accepts_html(std::span<const header_field> headers) noexcept {
    bool html = false;
    for_each_member(headers, "Accept", [&](std::string_view member) {
        const auto [range, q] = split_weight(member);
        if (q > 0 && (iequals(range, "text/html") || iequals(range, "text/*") || range == "*/*")) {
            html = true;
        }
    });
    return html;
}

/// The part of `path` below `prefix` when `prefix` claims it at a segment boundary.
bool claims(std::string_view prefix, std::string_view path, std::string_view& rest) noexcept {
    if (path.empty() || path.front() != '/') return false;
    if (!path.starts_with(prefix)) return false;
    if (path.size() > prefix.size() && path[prefix.size()] != '/') return false;
    rest = path.substr(prefix.size());
    return true;
}

static_outcome status_only(response& res, int status) noexcept {
    res.status = status;
    return static_outcome::status_only;
}

// An open_beneath failure other than not_found as the answer, or not_handled.
static_outcome from_open_status(open_status st, response& res) noexcept {
    switch (st) {
        case open_status::forbidden:
            return status_only(res, 403);
        case open_status::failed:
            return status_only(res, 500);
        case open_status::ok:
        case open_status::not_found:
            break;
    }
    return static_outcome::not_handled;
}

std::string_view last_segment(std::string_view path) noexcept {
    const std::size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The options that change what open_beneath and the answer make of a path, as the bits of
// a file_cache key: one root served under other rules keeps other entries.
// The directory `dir_path`'s index file, relative to the root ("docs" + "index.html").
std::string index_path(std::string_view dir_path, const std::string& index_file) {
    std::string index(dir_path);
    if (!index.empty()) index.push_back('/');
    index.append(index_file);
    return index;
}

unsigned cache_rules(const static_files_config& c) noexcept {
    return (c.allow_dotfiles ? 1U : 0U) | (c.follow_symlinks ? 2U : 0U) |
           (c.precompressed ? 4U : 0U);
}

}  // namespace

static_files::static_files(const std::vector<static_files_config>& configs) {
    dirs_.reserve(configs.size());
    for (const auto& c : configs) {
        directory d{.prefix = validated_prefix(c.hosted_path),
                    .root = validated_root(c.directory),
                    .index_file = c.index_file,
                    .spa_fallback = validated_fallback(c),
                    .cache_control = c.cache_control,
                    .allow_dotfiles = c.allow_dotfiles,
                    .follow_symlinks = c.follow_symlinks,
                    .precompressed = c.precompressed,
                    .cache_small_files = c.cache_small_files,
                    .cache_rules = cache_rules(c),
                    .types = mime_types(c.extra_mime_types)};
        validate_index(c);
        if (has_control(c.cache_control)) {
            throw std::invalid_argument(
                "tern: static_files cache_control holds a control "
                "character");
        }
        dirs_.push_back(std::move(d));
    }
}

static_outcome static_files::serve(const request& req, response& res,
                                   root_cache& roots) const noexcept {
    if (req.method != "GET" && req.method != "HEAD") return static_outcome::not_handled;
    for (const auto& dir : dirs_) {
        std::string_view rest;
        if (!claims(dir.prefix, req.path, rest)) continue;
        const static_outcome answer = serve_in(dir, rest, req, res, roots);
        if (answer != static_outcome::not_handled) return answer;
    }
    // No directory has the file: the first claiming directory with a fallback answers.
    for (const auto& dir : dirs_) {
        std::string_view rest;
        if (dir.spa_fallback.empty() || !claims(dir.prefix, req.path, rest)) continue;
        return serve_fallback(dir, rest, req, res, roots);
    }
    return static_outcome::not_handled;
}

static_outcome static_files::serve_fallback(const directory& dir, std::string_view rest,
                                            const request& req, response& res, root_cache& roots) {
    resolved_path path;
    if (resolve_path(rest, path) != path_status::ok) return static_outcome::not_handled;
    // "/app/missing.js" names a file that is not there: a script or image gets its 404, not
    // a page it cannot use. So does a client that does not take HTML (fetch of JSON).
    if (last_segment(path.decoded).find('.') != std::string_view::npos) {
        return static_outcome::not_handled;
    }
    if (!accepts_html(req.headers)) return static_outcome::not_handled;

    const static_outcome answer = serve_file(dir, dir.spa_fallback, req, res, roots);
    // RFC 9110 12.5.5: the same path is a page or a 404 depending on Accept.
    if (answer == static_outcome::answered) res.fields.emplace_back("Vary", "Accept");
    return answer;
}

static_outcome static_files::serve_in(const directory& dir, std::string_view rest,
                                      const request& req, response& res, root_cache& roots) {
    resolved_path path;
    if (resolve_path(rest, path) != path_status::ok) return status_only(res, 400);
    // A hidden path is absent from this directory; another may still serve it.
    if (path.hidden && !dir.allow_dotfiles) return static_outcome::not_handled;

    // "docs/" asks for the directory's index file: the key the loop holds it under.
    std::string index;
    if (path.trailing_slash && !dir.index_file.empty()) {
        index = index_path(path.decoded, dir.index_file);
    }
    const std::string_view key = path.trailing_slash ? std::string_view(index) : path.decoded;
    if (const cached_file* file = held(dir, key, roots)) {
        return respond_with_cached(*file, file_options(dir, key, file), req.headers, res);
    }

    const beneath_options walk{.follow_symlinks = dir.follow_symlinks,
                               .allow_dotfiles = dir.allow_dotfiles};
    opened_file opened;
    open_status st = open_beneath(roots, dir.root, path.decoded, walk, opened);
    if (st != open_status::ok) return from_open_status(st, res);

    if (S_ISDIR(opened.st.st_mode)) {
        if (dir.index_file.empty()) return static_outcome::not_handled;
        if (index.empty()) index = index_path(path.decoded, dir.index_file);
        st = open_beneath(roots, dir.root, index, walk, opened);
        if (st != open_status::ok) return from_open_status(st, res);
        if (!S_ISREG(opened.st.st_mode)) return static_outcome::not_handled;
        if (!path.trailing_slash) {
            // Built from the normalized raw segments: never "//host" (an open redirect). The
            // query stays (RFC 9110 10.2.2).
            std::string location = dir.prefix + path.raw + "/";
            if (!req.query.empty()) {
                location.push_back('?');
                location.append(req.query);
            }
            res.fields.emplace_back("Location", std::move(location));
            return status_only(res, 301);
        }
        return answer_opened(dir, index, std::move(opened), req, res, roots);
    }
    if (!S_ISREG(opened.st.st_mode) || path.trailing_slash) {
        // Devices, FIFOs and sockets are never served; "file.txt/" names no directory.
        return static_outcome::not_handled;
    }
    return answer_opened(dir, path.decoded, std::move(opened), req, res, roots);
}

static_outcome static_files::serve_file(const directory& dir, std::string_view relative,
                                        const request& req, response& res, root_cache& roots) {
    if (const cached_file* file = held(dir, relative, roots)) {
        return respond_with_cached(*file, file_options(dir, relative, file), req.headers, res);
    }
    const beneath_options walk{.follow_symlinks = dir.follow_symlinks,
                               .allow_dotfiles = dir.allow_dotfiles};
    opened_file opened;
    const open_status st = open_beneath(roots, dir.root, relative, walk, opened);
    if (st != open_status::ok) return from_open_status(st, res);
    if (!S_ISREG(opened.st.st_mode)) return static_outcome::not_handled;
    return answer_opened(dir, relative, std::move(opened), req, res, roots);
}

const cached_file* static_files::held(const directory& dir, std::string_view relative,
                                      root_cache& roots) {
    if (!dir.cache_small_files || relative.empty()) return nullptr;
    return roots.files().find(dir.root, dir.cache_rules, relative);
}

static_outcome static_files::answer_opened(const directory& dir, std::string_view relative,
                                           opened_file opened, const request& req, response& res,
                                           root_cache& roots) {
    const file_response_options options = file_options(dir, relative);
    if (dir.cache_small_files) {
        cached_file read;
        if (read_cacheable(opened, dir.precompressed, read)) {
            read.typed_by = &dir.types;
            read.content_type = options.content_type;
            const cached_file* held =
                roots.files().store(dir.root, dir.cache_rules, relative, std::move(read));
            if (held != nullptr) return respond_with_cached(*held, options, req.headers, res);
        }
    }
    return respond_with_file(std::move(opened), options, req.headers, res);
}

file_response_options static_files::file_options(const directory& dir, std::string_view relative,
                                                 const cached_file* held) noexcept {
    // The type comes from the name as asked for: an index file's, a link's own. A cached
    // file keeps the one its directory's table chose (the same name: the cache's key).
    const bool typed = held != nullptr && held->typed_by == &dir.types;
    return {.content_type = typed ? held->content_type : dir.types.lookup(last_segment(relative)),
            .cache_control = dir.cache_control,
            .precompressed = dir.precompressed};
}

}  // namespace tern::detail
