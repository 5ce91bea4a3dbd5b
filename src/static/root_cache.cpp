#include "static/root_cache.hpp"

#include "platform/files.hpp"

#include <cerrno>

namespace tern::detail {

int root_cache::get(const std::string& root) {
    const std::time_t now = std::time(nullptr);
    auto it = entries_.begin();
    while (it != entries_.end() && it->path != root) ++it;
    if (it == entries_.end()) {
        if (entries_.size() == max_entries) entries_.erase(entries_.begin());
        it = entries_.insert(entries_.end(), entry{root, file_handle(), 0, 0, 0});
    }
    if (it->checked != now) {
        struct stat st {};
        if (!it->fd || platform::stat_no_follow(root.c_str(), st) != 0 || st.st_dev != it->dev ||
            st.st_ino != it->ino) {
            if (!reopen(*it)) {
                // Not cached: the next request tries the path again.
                const int err = errno;
                entries_.erase(it);
                errno = err;
                return -1;
            }
        }
        it->checked = now;
    }
    return it->fd.get();
}

bool root_cache::reopen(entry& e) {
    e.fd = file_handle(platform::open_directory(e.path.c_str()));
    platform::file_status st{};
    if (!e.fd || platform::stat_descriptor(e.fd.get(), st) != 0) {
        const int err = errno;
        e.fd = file_handle();
        errno = err;
        return false;
    }
    e.dev = st.st_dev;
    e.ino = st.st_ino;
    return true;
}

}  // namespace tern::detail
