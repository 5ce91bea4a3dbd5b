#pragma once
// A request body kept in an unnamed temporary file instead of memory (a large upload):
// written as it arrives, then mapped read-only, so the rest of tern reads it as a string
// view (forms, multipart, JSON) while it stays in the page cache, not in the heap.

#include <cstdint>
#include <memory>
#include <string_view>

namespace tern::detail {

class spooled_body {
public:
    /// An unnamed file in `dir` (empty: $TMPDIR, else /tmp), removed when closed (O_TMPFILE,
    /// or a named file unlinked at once where O_TMPFILE is not supported). Null when it
    /// cannot be created.
    static std::shared_ptr<spooled_body> create(std::string_view dir);
    ~spooled_body();
    spooled_body(const spooled_body&) = delete;
    spooled_body& operator=(const spooled_body&) = delete;

    /// Appends `data`; false when the file cannot take it (no space, an I/O error).
    bool append(std::string_view data) noexcept;
    /// The body is complete: maps the file read-only. False when it cannot be mapped.
    bool finish() noexcept;
    /// The body (after finish()).
    std::string_view view() const noexcept;
    /// Bytes written so far.
    std::uint64_t size() const noexcept { return size_; }
    /// The open file (read it with pread(2) to stream it without mapping it all).
    int fd() const noexcept { return fd_; }

    explicit spooled_body(int fd) noexcept : fd_(fd) {}

private:
    int fd_;
    std::uint64_t size_ = 0;
    void* map_ = nullptr;
};

}  // namespace tern::detail
