#pragma once
// Request IDs (app.request_ids): which incoming values are kept, and the ids made for the
// rest: a random 64-bit prefix per event loop and a counter, so ids are unique without a
// lock or a shared counter.

#include <cstdint>
#include <string>
#include <string_view>

namespace tern::detail {

/// The longest request id kept from a request.
inline constexpr std::size_t max_request_id_length = 128;

/// Whether `id` is kept as sent: 1..128 bytes of `A-Z a-z 0-9 . _ : @ / + = -`.
bool valid_request_id(std::string_view id) noexcept;

/// Makes one loop's request ids: "<16 hex digits of the loop's random prefix>-<counter in
/// hex>". Loop thread only.
class request_id_source {
public:
    /// Draws the prefix from the kernel's random source (getrandom(2)).
    request_id_source();
    /// Writes the next id into `out`.
    void next(std::string& out);

private:
    std::uint64_t prefix_ = 0;
    std::uint64_t counter_ = 0;
};

}  // namespace tern::detail
