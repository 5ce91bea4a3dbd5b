#pragma once
// Ownership of an open file descriptor: a file body travels from the static-files layer
// through the response to the connection that sends it, and is closed however that ends.

namespace tern::detail {

/// Move-only owner of a file descriptor; closes it on destruction.
class file_handle {
public:
    file_handle() = default;
    explicit file_handle(int fd) noexcept : fd_(fd) {}
    // Inline, with reset() out of line: a response without a file (most of them) never
    // leaves the caller's file for its handle.
    ~file_handle() {
        if (fd_ >= 0) reset();
    }
    file_handle(file_handle&& other) noexcept : fd_(other.release()) {}
    file_handle& operator=(file_handle&& other) noexcept {
        if (this != &other) {
            if (fd_ >= 0) reset();
            fd_ = other.release();
        }
        return *this;
    }
    file_handle(const file_handle&) = delete;
    file_handle& operator=(const file_handle&) = delete;

    /// The descriptor, or -1.
    int get() const noexcept { return fd_; }
    /// Whether a descriptor is held.
    explicit operator bool() const noexcept { return fd_ >= 0; }
    /// Gives up ownership without closing; returns the descriptor.
    int release() noexcept {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }
    /// Closes the descriptor now (if any).
    void reset() noexcept;

private:
    int fd_ = -1;
};

}  // namespace tern::detail
