#include "static/file_cache.hpp"

#include "http/date.hpp"
#include "static/open_beneath.hpp"
#include "static/validators.hpp"

#include "platform/files.hpp"

#include <algorithm>
#include <functional>

namespace tern::detail {

namespace {

/// Reads all `st.st_size` bytes of `fd`. Asks for one byte more, so a file that grew since
/// its stat is noticed as well as one that shrank.
bool read_whole(int fd, const platform::file_status& st, std::string& out) {
    const auto size = static_cast<std::size_t>(st.st_size);
    out.resize(size + 1);
    std::size_t done = 0;
    while (done < out.size()) {
        const ssize_t n = platform::read_file_at(fd, out.data() + done, out.size() - done, done);
        if (n < 0) return false;
        if (n == 0) break;
        done += static_cast<std::size_t>(n);
    }
    if (done != size) return false;
    out.resize(size);
    return true;
}

bool fits(const platform::file_status& st) noexcept {
    return st.st_size >= 0 && static_cast<std::uint64_t>(st.st_size) <= max_cached_file_bytes;
}

/// The sibling `suffix` of `opened` into `out`: known absent, or read whole.
// The validators an answer from the entry carries, made once instead of per request.
void make_validators(cached_variant& v, std::string_view coding) {
    v.etag = make_etag(v.st, coding);
    format_http_date(v.st.st_mtime, v.last_modified);
}

bool read_sibling(const opened_file& opened, std::string_view suffix, std::string_view coding,
                  cached_variant& out) {
    file_handle file;
    if (!open_sibling(opened, suffix, file, out.st)) return true;  // absent: that is an answer
    out.present = true;
    if (!fits(out.st) || !read_whole(file.get(), out.st, out.bytes)) return false;
    make_validators(out, coding);
    return true;
}

}  // namespace

bool read_cacheable(const opened_file& opened, bool siblings, cached_file& out) {
    out = cached_file{};
    if (!S_ISREG(opened.st.st_mode) || !fits(opened.st)) return false;
    out.identity.present = true;
    out.identity.st = opened.st;
    if (!read_whole(opened.file.get(), opened.st, out.identity.bytes)) return false;
    make_validators(out.identity, {});
    if (!siblings) return true;
    return read_sibling(opened, ".br", "br", out.br) &&
           read_sibling(opened, ".gz", "gzip", out.gzip);
}

const cached_file* file_cache::find(const std::string& root, unsigned rules,
                                    std::string_view relative) {
    const std::size_t hash = std::hash<std::string_view>{}(relative);
    const auto it = locate(root, rules, relative, hash);
    if (it == entries_.end()) return nullptr;
    if (it->loaded != std::time(nullptr)) {
        // Read in an earlier second: the caller walks the path again and stores it anew.
        erase(it);
        return nullptr;
    }
    it->used = ++tick_;
    return &it->file;
}

const cached_file* file_cache::store(const std::string& root, unsigned rules,
                                     std::string_view relative, cached_file&& file) {
    const std::size_t hash = std::hash<std::string_view>{}(relative);
    if (const auto old = locate(root, rules, relative, hash); old != entries_.end()) erase(old);
    const std::size_t size = file.bytes();
    if (size > limits_.max_bytes || limits_.max_entries == 0) return nullptr;
    while (!entries_.empty() &&
           (entries_.size() >= limits_.max_entries || bytes_ + size > limits_.max_bytes)) {
        erase(std::min_element(entries_.begin(), entries_.end(),
                               [](const entry& a, const entry& b) { return a.used < b.used; }));
    }
    entry& e = entries_.emplace_back();
    e.root = root;
    e.rules = rules;
    e.relative.assign(relative);
    e.hash = hash;
    e.loaded = std::time(nullptr);
    e.used = ++tick_;
    e.file = std::move(file);
    bytes_ += size;
    return &e.file;
}

std::vector<file_cache::entry>::iterator file_cache::locate(const std::string& root, unsigned rules,
                                                            std::string_view relative,
                                                            std::size_t hash) {
    return std::find_if(entries_.begin(), entries_.end(), [&](const entry& e) {
        return e.hash == hash && e.rules == rules && e.relative == relative && e.root == root;
    });
}

void file_cache::erase(std::vector<entry>::iterator it) {
    bytes_ -= it->file.bytes();
    // Order does not matter (the tick orders use): the last entry takes the hole.
    if (it != entries_.end() - 1) *it = std::move(entries_.back());
    entries_.pop_back();
}

}  // namespace tern::detail
