#include "static/open_beneath.hpp"

#include "platform/files.hpp"
#include "static/root_cache.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <vector>

namespace tern::detail {

namespace {

/// As many symlinks as one lookup may expand (Linux's own limit).
constexpr int max_symlinks = 40;

open_status from_errno(int err) noexcept {
    switch (err) {
        case ENOENT:
        case ENOTDIR:
        case ENAMETOOLONG:
        case ELOOP:
        case ENXIO:   // a UNIX socket, or a device without a driver
        case ENODEV:  // a device node
            return open_status::not_found;
        case EACCES:
        case EPERM:
            return open_status::forbidden;
        default:
            return open_status::failed;
    }
}

/// Pops the next non-empty component of `path` from `pos`; empty when none is left.
std::string_view next_component(std::string_view path, std::size_t& pos) noexcept {
    while (pos < path.size() && path[pos] == '/') ++pos;
    const std::size_t start = pos;
    while (pos < path.size() && path[pos] != '/') ++pos;
    return path.substr(start, pos - start);
}

bool only_slashes(std::string_view rest) noexcept {
    return rest.find_first_not_of('/') == std::string_view::npos;
}

/// For an absolute link target: the part below `root` when the target spells the root's
/// real path component by component ("/srv/public/a" under "/srv/public"), false when it
/// points elsewhere ("/srv/public-evil/a", "/etc").
bool strip_root(std::string_view root, std::string_view target, std::string_view& below) {
    std::size_t rpos = 0;
    std::size_t tpos = 0;
    for (;;) {
        const std::string_view want = next_component(root, rpos);
        if (want.empty()) break;
        std::string_view got = next_component(target, tpos);
        while (got == ".") got = next_component(target, tpos);
        if (got != want) return false;
    }
    below = target.substr(tpos);
    return true;
}

// One lookup's progress: what is left to walk and the symlink-free directory reached.
struct beneath_walk {
    explicit beneath_walk(std::string_view path) : pending(path) {}

    std::string pending;   // what is left to walk; grows when a link expands
    std::size_t pos = 0;   // where in `pending` the next component starts
    std::string resolved;  // components walked so far, symlink-free: "a/b"
    file_handle cur;       // the directory at `resolved`; empty: the root
    int links = 0;         // symlinks expanded so far

    // "..": only link targets bring it here (the request path has none left). Goes up along
    // the symlink-free path walked so far; false at the root, above which it never goes.
    bool go_up() {
        if (resolved.empty()) return false;
        const std::size_t cut = resolved.rfind('/');
        std::string up = cut == std::string::npos ? std::string() : resolved.substr(0, cut);
        up.append(pending, pos);
        restart(std::move(up));
        return true;
    }

    // A directory opened on the way down becomes the current one.
    void enter(int fd, std::string_view comp) {
        cur = file_handle(fd);
        if (!resolved.empty()) resolved.push_back('/');
        resolved.append(comp);
    }

    // Walks `link`'s target in place of the link (`target` is what readlinkat gave); false
    // when it may not be followed.
    bool follow(const std::string& root, std::string_view target) {
        if (target.empty()) return false;
        if (target.front() == '/') {
            // Absolute: must name the root's real path, then walk from the root.
            if (!strip_root(root, target, target)) return false;
            resolved.clear();
            cur = file_handle();
        }
        std::string expanded(target);
        expanded.push_back('/');
        expanded.append(pending, pos);
        pending = std::move(expanded);
        pos = 0;
        return true;
    }

private:
    void restart(std::string path) {
        pending = std::move(path);
        pos = 0;
        resolved.clear();
        cur = file_handle();
    }
};

// The lookup's last component `comp`, in the directory `at`, opened or stat'ed: `opened`
// names it.
void record_found(opened_file& opened, int at, beneath_walk& walk, std::string_view comp) {
    opened.dir = at;
    opened.dir_handle = std::move(walk.cur);
    opened.name.assign(comp);
}

// The path named a directory by its last step ("", "a/.", a link to "sub/..").
open_status found_directory(int root_fd, beneath_walk& walk, opened_file& opened) {
    if (!walk.cur) {
        // The root itself: only its fstat is used, and the cached descriptor stays cached.
        if (platform::stat_descriptor(root_fd, opened.st) != 0) return from_errno(errno);
        return open_status::ok;
    }
    if (platform::stat_descriptor(walk.cur.get(), opened.st) != 0) return from_errno(errno);
    opened.file = std::move(walk.cur);
    opened.name.clear();
    return open_status::ok;
}

}  // namespace

open_status open_beneath(root_cache& roots, const std::string& root, std::string_view relative,
                         const beneath_options& options, opened_file& opened) {
    opened = opened_file{};
    const int root_fd = roots.get(root);
    if (root_fd < 0) return from_errno(errno);

    beneath_walk walk(relative);
    char name[platform::max_name_length + 1];
    for (;;) {
        const std::string_view comp = next_component(walk.pending, walk.pos);
        if (comp.empty()) break;
        if (comp == ".") continue;
        if (comp == "..") {
            if (!walk.go_up()) return open_status::not_found;
            continue;
        }
        if (!options.allow_dotfiles && comp.front() == '.') return open_status::not_found;
        if (comp.size() > platform::max_name_length) return open_status::not_found;
        std::memcpy(name, comp.data(), comp.size());
        name[comp.size()] = '\0';

        const int at = walk.cur ? walk.cur.get() : root_fd;
        const bool last = only_slashes(std::string_view(walk.pending).substr(walk.pos));
        // Directories through the platform seam (O_PATH on Linux), files as they are.
        const int fd =
            last ? platform::open_file_at(at, name) : platform::open_directory_at(at, name);
        if (fd >= 0) {
            if (!last) {
                walk.enter(fd, comp);
                continue;
            }
            opened.file = file_handle(fd);
            if (platform::stat_descriptor(fd, opened.st) != 0) return from_errno(errno);
            record_found(opened, at, walk, comp);
            return open_status::ok;
        }
        const int err = errno;

        // O_NOFOLLOW refuses a link with ELOOP (ENOTDIR beside O_DIRECTORY, EMLINK on
        // FreeBSD); readlinkat tells a link from a real loop or a non-directory.
        if (err == ELOOP || err == ENOTDIR || err == EMLINK) {
            char target[PATH_MAX];
            const ssize_t n = platform::read_link_at(at, name, target, sizeof target);
            if (n >= 0) {
                if (!options.follow_symlinks || ++walk.links > max_symlinks ||
                    static_cast<std::size_t>(n) == sizeof target ||
                    !walk.follow(root, std::string_view(target, static_cast<std::size_t>(n)))) {
                    return open_status::not_found;
                }
                continue;
            }
            if (err != EMLINK) return open_status::not_found;
        }
        if (last && err == EACCES) {
            // A directory without read permission can still hold a readable index file.
            platform::file_status st{};
            if (platform::stat_at_no_follow(at, name, st) == 0 && S_ISDIR(st.st_mode)) {
                opened.st = st;
                record_found(opened, at, walk, comp);
                return open_status::ok;
            }
        }
        return from_errno(err);
    }
    return found_directory(root_fd, walk, opened);
}

bool open_sibling(const opened_file& opened, std::string_view suffix, file_handle& file,
                  platform::file_status& st) {
    std::string name = opened.name;
    name.append(suffix);
    file_handle sibling(platform::open_file_at(opened.dir, name.c_str()));
    platform::file_status found{};
    if (!sibling || platform::stat_descriptor(sibling.get(), found) != 0 || !S_ISREG(found.st_mode))
        return false;
    file = std::move(sibling);
    st = found;
    return true;
}

}  // namespace tern::detail
