#include "h2/hpack_table.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace tern::h2::hpack {

namespace {

// RFC 7541 Appendix A; index 0 is unused so that an entry's place is its HPACK index.
constexpr std::array<static_entry, static_table_length + 1> static_entries = {{
    {"", ""},
    {":authority", ""},                    // 1
    {":method", "GET"},                    // 2
    {":method", "POST"},                   // 3
    {":path", "/"},                        // 4
    {":path", "/index.html"},              // 5
    {":scheme", "http"},                   // 6
    {":scheme", "https"},                  // 7
    {":status", "200"},                    // 8
    {":status", "204"},                    // 9
    {":status", "206"},                    // 10
    {":status", "304"},                    // 11
    {":status", "400"},                    // 12
    {":status", "404"},                    // 13
    {":status", "500"},                    // 14
    {"accept-charset", ""},                // 15
    {"accept-encoding", "gzip, deflate"},  // 16
    {"accept-language", ""},               // 17
    {"accept-ranges", ""},                 // 18
    {"accept", ""},                        // 19
    {"access-control-allow-origin", ""},   // 20
    {"age", ""},                           // 21
    {"allow", ""},                         // 22
    {"authorization", ""},                 // 23
    {"cache-control", ""},                 // 24
    {"content-disposition", ""},           // 25
    {"content-encoding", ""},              // 26
    {"content-language", ""},              // 27
    {"content-length", ""},                // 28
    {"content-location", ""},              // 29
    {"content-range", ""},                 // 30
    {"content-type", ""},                  // 31
    {"cookie", ""},                        // 32
    {"date", ""},                          // 33
    {"etag", ""},                          // 34
    {"expect", ""},                        // 35
    {"expires", ""},                       // 36
    {"from", ""},                          // 37
    {"host", ""},                          // 38
    {"if-match", ""},                      // 39
    {"if-modified-since", ""},             // 40
    {"if-none-match", ""},                 // 41
    {"if-range", ""},                      // 42
    {"if-unmodified-since", ""},           // 43
    {"last-modified", ""},                 // 44
    {"link", ""},                          // 45
    {"location", ""},                      // 46
    {"max-forwards", ""},                  // 47
    {"proxy-authenticate", ""},            // 48
    {"proxy-authorization", ""},           // 49
    {"range", ""},                         // 50
    {"referer", ""},                       // 51
    {"refresh", ""},                       // 52
    {"retry-after", ""},                   // 53
    {"server", ""},                        // 54
    {"set-cookie", ""},                    // 55
    {"strict-transport-security", ""},     // 56
    {"transfer-encoding", ""},             // 57
    {"user-agent", ""},                    // 58
    {"vary", ""},                          // 59
    {"via", ""},                           // 60
    {"www-authenticate", ""},              // 61
}};

constexpr std::size_t longest_static_name = 27;  // access-control-allow-origin

// The static indices ordered by the length of their names, and where each length starts in
// that order, so that a lookup compares only names of its own length (at most 8 of them).
struct static_index {
    std::array<std::uint8_t, static_table_length> by_length{};
    std::array<std::uint8_t, longest_static_name + 2> start{};
};

constexpr static_index make_static_index() {
    static_index index;
    std::size_t n = 0;
    for (std::size_t length = 0; length <= longest_static_name; ++length) {
        index.start[length] = static_cast<std::uint8_t>(n);
        for (std::size_t i = 1; i <= static_table_length; ++i) {
            if (static_entries[i].name.size() == length) {
                index.by_length[n++] = static_cast<std::uint8_t>(i);
            }
        }
    }
    index.start[longest_static_name + 1] = static_cast<std::uint8_t>(n);
    return index;
}

constexpr static_index static_lookup = make_static_index();
static_assert(static_lookup.start[longest_static_name + 1] == static_table_length,
              "every static name is at most longest_static_name bytes long");

}  // namespace

const static_entry& static_table_entry(std::size_t index) noexcept { return static_entries[index]; }

static_match find_static(std::string_view name, std::string_view value) noexcept {
    static_match match;
    if (name.size() > longest_static_name) return match;
    const auto first = static_lookup.start[name.size()];
    const auto last = static_lookup.start[name.size() + 1];
    // Entries of one name are neighbours in Appendix A, so they are here too, in order.
    for (auto k = first; k < last; ++k) {
        const auto i = static_lookup.by_length[k];
        const auto& entry = static_entries[i];
        if (entry.name != name) {
            if (match.index != 0) break;
            continue;
        }
        if (match.index == 0) match.index = i;
        if (entry.value == value) return {i, true};
    }
    return match;
}

// ---- the dynamic table ---------------------------------------------------------------------

dynamic_table::dynamic_table(std::uint32_t max_capacity)
    : bytes_(max_capacity),
      entries_(max_capacity / entry_overhead + 1),
      capacity_(max_capacity),
      max_capacity_(max_capacity) {}

void dynamic_table::set_max_capacity(std::uint32_t max_capacity) {
    if (max_capacity <= max_capacity_) {
        max_capacity_ = max_capacity;
        set_capacity(std::min(capacity_, max_capacity));
        return;
    }
    // Lay the entries out again, oldest first, in rings of the new size.
    dynamic_table grown(max_capacity);
    grown.set_capacity(capacity_);
    std::string name;
    std::string value;
    for (std::size_t i = count_; i-- > 0;) {
        name.clear();
        value.clear();
        append_name(i, name);
        append_value(i, value);
        grown.insert(name, value);
    }
    grown.inserted_ = inserted_;  // the same entries, under the same numbers
    *this = std::move(grown);
}

void dynamic_table::set_capacity(std::uint32_t capacity) noexcept {
    capacity_ = std::min(capacity, max_capacity_);
    while (size_ > capacity_) evict_oldest();
}

bool dynamic_table::insert(std::string_view name, std::string_view value) noexcept {
    const std::size_t needed = name.size() + value.size() + entry_overhead;
    if (needed > capacity_) {
        clear();
        return false;
    }
    while (size_ + needed > capacity_) evict_oldest();
    // The names and values held take at most capacity_ - 32 per entry bytes, and the ring
    // has capacity_ bytes or more: the new bytes never overwrite an entry still held.
    const auto offset = next_;
    write(offset, name);
    write(static_cast<std::uint32_t>((offset + name.size()) % bytes_.size()), value);
    next_ = static_cast<std::uint32_t>((offset + name.size() + value.size()) % bytes_.size());
    entries_[(oldest_ + count_) % entries_.size()] = {
        offset, static_cast<std::uint32_t>(name.size()), static_cast<std::uint32_t>(value.size())};
    ++count_;
    ++inserted_;
    size_ += static_cast<std::uint32_t>(needed);
    return true;
}

void dynamic_table::clear() noexcept {
    while (count_ > 0) evict_oldest();
}

void dynamic_table::evict_oldest() noexcept {
    const entry& gone = entries_[oldest_];
    size_ -= static_cast<std::uint32_t>(gone.name_size + gone.value_size + entry_overhead);
    oldest_ = (oldest_ + 1) % entries_.size();
    --count_;
    // An empty table starts its bytes at the ring's start again, so that entries wrap
    // around its end less often.
    if (count_ == 0) {
        oldest_ = 0;
        next_ = 0;
    }
}

bool dynamic_table::view(std::size_t i, std::string_view& name,
                         std::string_view& value) const noexcept {
    const entry& e = at(i);
    if (e.offset + e.name_size + e.value_size > bytes_.size()) return false;
    const char* p = bytes_.data() + e.offset;
    name = {p, e.name_size};
    value = {p + e.name_size, e.value_size};
    return true;
}

void dynamic_table::append_name(std::size_t i, std::string& out) const {
    const entry& e = at(i);
    append(e.offset, e.name_size, out);
}

void dynamic_table::append_value(std::size_t i, std::string& out) const {
    const entry& e = at(i);
    append(value_offset(e), e.value_size, out);
}

bool dynamic_table::name_equals(std::size_t i, std::string_view name) const noexcept {
    const entry& e = at(i);
    return e.name_size == name.size() && bytes_equal(e.offset, name);
}

bool dynamic_table::equals(std::size_t i, std::string_view name,
                           std::string_view value) const noexcept {
    const entry& e = at(i);
    return e.name_size == name.size() && e.value_size == value.size() &&
           bytes_equal(e.offset, name) && bytes_equal(value_offset(e), value);
}

bool dynamic_table::value_equals(std::size_t i, std::string_view value) const noexcept {
    const entry& e = at(i);
    return e.value_size == value.size() && bytes_equal(value_offset(e), value);
}

void dynamic_table::write(std::uint32_t offset, std::string_view bytes) noexcept {
    if (bytes.empty()) return;
    const std::size_t first = std::min(bytes.size(), bytes_.size() - offset);
    std::memcpy(bytes_.data() + offset, bytes.data(), first);
    std::memcpy(bytes_.data(), bytes.data() + first, bytes.size() - first);
}

void dynamic_table::append(std::uint32_t offset, std::uint32_t size, std::string& out) const {
    if (size == 0) return;
    const std::size_t first = std::min<std::size_t>(size, bytes_.size() - offset);
    out.append(bytes_.data() + offset, first);
    out.append(bytes_.data(), size - first);
}

bool dynamic_table::bytes_equal(std::uint32_t offset, std::string_view bytes) const noexcept {
    if (bytes.empty()) return true;
    const std::size_t first = std::min(bytes.size(), bytes_.size() - offset);
    if (first == bytes.size()) {  // the usual case: the entry does not wrap
        return std::memcmp(bytes_.data() + offset, bytes.data(), first) == 0;
    }
    return std::memcmp(bytes_.data() + offset, bytes.data(), first) == 0 &&
           std::memcmp(bytes_.data(), bytes.data() + first, bytes.size() - first) == 0;
}

}  // namespace tern::h2::hpack
