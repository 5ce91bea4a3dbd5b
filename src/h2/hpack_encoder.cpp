// The HPACK encoder of responses (RFC 7541 6), and its indexing policy: which fields go into
// the dynamic table, which stay literals, which are never indexed.

#include "h2/hpack.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>

namespace tern::h2::hpack {

namespace {

// What a field's name says about indexing its value.
enum class policy {
    literal,  // values change per response: indexing them would only churn the table
    index,    // few values per connection, repeated across responses
    never,    // credentials (RFC 7541 7.1.3)
};

// Response fields whose values repeat across responses. `date` changes once a second, so on a
// busy connection it is sent whole once a second and as one byte otherwise; `etag` and
// `last-modified` repeat whenever a file is served again on the connection (a page's assets
// fetched again, a polled resource), where Huffman-coding them each time was a tenth of an
// HTTP/2 static-file response's instructions. Anything else (content-length, set-cookie,
// location, content-range, expires, age, custom fields, ...) is a literal.
constexpr std::array<std::string_view, indexed_name_count> indexed_names = {
    "server",
    "date",
    "etag",
    "last-modified",
    "content-type",
    "cache-control",
    "vary",
    "content-encoding",
    "content-language",
    "accept-ranges",
    "access-control-allow-origin",
    "access-control-allow-credentials",
    "access-control-allow-methods",
    "access-control-allow-headers",
    "access-control-expose-headers",
    "access-control-max-age",
    "strict-transport-security",
    "x-content-type-options",
    "x-frame-options",
    "referrer-policy",
    "cross-origin-opener-policy",
    "cross-origin-resource-policy",
    "alt-svc",
};

// indexed_names by length: for each length, the slots of the names that long (at most
// `per_length`, -1 after them). Every response field is looked up, so a lookup compares
// only names of its length, first byte first (a scan of all 23 was three memcmp calls a
// field, a tenth of the encoder's work).
constexpr std::size_t longest_indexed = 32;
constexpr std::size_t per_length = 4;
using slots_by_length = std::array<std::array<std::int8_t, per_length>, longest_indexed + 1>;

constexpr slots_by_length make_slots_by_length() {
    slots_by_length table{};
    for (auto& slots : table) slots.fill(-1);
    for (std::size_t k = 0; k < indexed_names.size(); ++k) {
        auto& slots = table[indexed_names[k].size()];
        std::size_t n = 0;
        while (slots[n] != -1) ++n;
        slots[n] = static_cast<std::int8_t>(k);
    }
    return table;
}

constexpr slots_by_length indexed_by_length = make_slots_by_length();

static_assert([] {
    for (const auto name : indexed_names) {
        if (name.size() > longest_indexed) return false;
    }
    for (const auto& slots : indexed_by_length) {
        if (slots[per_length - 1] != -1) return false;  // room for one more of each length
    }
    return true;
}());

// `name`'s place in indexed_names, or -1.
int indexed_slot(std::string_view name) noexcept {
    if (name.size() > longest_indexed || name.empty()) return -1;
    for (const std::int8_t slot : indexed_by_length[name.size()]) {
        if (slot < 0) return -1;
        const std::string_view candidate = indexed_names[static_cast<std::uint8_t>(slot)];
        if (candidate[0] == name[0] && candidate == name) return slot;
    }
    return -1;
}

// What `name` (at `slot` of indexed_names, or -1) says about indexing its value.
policy policy_of(std::string_view name, int slot) noexcept {
    if (slot >= 0) return policy::index;
    if (name == "authorization" || name == "proxy-authorization") return policy::never;
    return policy::literal;
}

// A field larger than this share of the table is not inserted: it would push out the
// several smaller fields that repeat more often.
constexpr std::uint32_t largest_share = 4;

void append_string(std::string& out, std::string_view s) {
    const std::size_t coded = huffman_encoded_size(s);
    if (coded < s.size()) {
        append_integer(out, 0x80, 7, static_cast<std::uint32_t>(coded));
        huffman_encode(s, out);
    } else {
        append_integer(out, 0x00, 7, static_cast<std::uint32_t>(s.size()));
        out.append(s);
    }
}

constexpr std::uint32_t default_table_size = 4096;  // SETTINGS_HEADER_TABLE_SIZE's initial value

}  // namespace

void append_integer(std::string& out, std::uint8_t first_byte, unsigned prefix_bits,
                    std::uint32_t value) {
    const std::uint32_t mask = (1U << prefix_bits) - 1;
    if (value < mask) {
        out.push_back(static_cast<char>(first_byte | value));
        return;
    }
    out.push_back(static_cast<char>(first_byte | mask));
    value -= mask;
    while (value >= 0x80) {
        out.push_back(static_cast<char>((value & 0x7fU) | 0x80U));
        value >>= 7;
    }
    out.push_back(static_cast<char>(value));
}

encoder::encoder(std::uint32_t max_table_size) : table_(max_table_size), own_max_(max_table_size) {
    table_.set_capacity(std::min(max_table_size, default_table_size));
    smallest_ = table_.capacity();
}

void encoder::set_peer_max_table_size(std::uint32_t size) noexcept {
    table_.set_capacity(std::min(own_max_, size));
    smallest_ = std::min(smallest_, table_.capacity());
}

void encoder::begin_block(std::string& out) {
    // RFC 7541 4.2: the smallest size used since the last block, when it was smaller than
    // both the one the peer knows and the final one, then the final one.
    const std::uint32_t now = table_.capacity();
    if (smallest_ < now && smallest_ < signalled_) append_integer(out, 0x20, 5, smallest_);
    if (now != signalled_ || smallest_ < now) append_integer(out, 0x20, 5, now);
    signalled_ = now;
    smallest_ = now;
}

void encoder::status(int code, std::string& out) {
    // The static table's :status entries (RFC 7541 Appendix A, indices 8 to 14).
    switch (code) {
        case 200:
            out.push_back(static_cast<char>(0x80 | 8));
            return;
        case 204:
            out.push_back(static_cast<char>(0x80 | 9));
            return;
        case 206:
            out.push_back(static_cast<char>(0x80 | 10));
            return;
        case 304:
            out.push_back(static_cast<char>(0x80 | 11));
            return;
        case 400:
            out.push_back(static_cast<char>(0x80 | 12));
            return;
        case 404:
            out.push_back(static_cast<char>(0x80 | 13));
            return;
        case 500:
            out.push_back(static_cast<char>(0x80 | 14));
            return;
        default:
            break;
    }
    // A literal without indexing, named by index 8: three digits gain nothing from Huffman.
    std::array<char, 12> digits{};
    const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), code).ptr;
    out.push_back(0x08);
    const auto size = static_cast<std::size_t>(end - digits.data());
    append_integer(out, 0x00, 7, static_cast<std::uint32_t>(size));
    out.append(digits.data(), size);
}

void encoder::field(std::string_view name, std::string_view value, std::string& out,
                    bool never_index) {
    const int slot = never_index ? -1 : indexed_slot(name);
    if (slot >= 0) {
        // The entry last added or found under this name, if it is still in the table and
        // holds this value: its index, without a search.
        const std::uint64_t number = recent_[static_cast<std::size_t>(slot)];
        const std::uint64_t i = table_.inserted() - number;
        if (number != 0 && i < table_.count() && table_.value_equals(i, value)) {
            append_integer(out, 0x80, 7, static_cast<std::uint32_t>(static_table_length + 1 + i));
            return;
        }
    }
    const policy p = never_index ? policy::never : policy_of(name, slot);
    const static_match in_static = find_static(name, value);
    if (in_static.full && p != policy::never) {
        out.push_back(static_cast<char>(0x80U | in_static.index));  // 6.1
        return;
    }
    std::uint32_t name_index = in_static.index;
    if (p == policy::index) {
        for (std::size_t i = 0; i < table_.count(); ++i) {
            if (table_.equals(i, name, value)) {
                if (slot >= 0) recent_[static_cast<std::size_t>(slot)] = table_.inserted() - i;
                append_integer(out, 0x80, 7,
                               static_cast<std::uint32_t>(static_table_length + 1 + i));
                return;
            }
        }
    }
    if (name_index == 0) {
        // A name the static table lacks may be in the dynamic one, with another value.
        for (std::size_t i = 0; i < table_.count(); ++i) {
            if (table_.name_equals(i, name)) {
                name_index = static_cast<std::uint32_t>(static_table_length + 1 + i);
                break;
            }
        }
    }
    const std::size_t entry_size = name.size() + value.size() + entry_overhead;
    if (p == policy::index && entry_size <= table_.capacity() / largest_share) {
        literal(0x40, 6, name_index, name, value, out);  // 6.2.1, with incremental indexing
        if (table_.insert(name, value) && slot >= 0) {
            recent_[static_cast<std::size_t>(slot)] = table_.inserted();
        }
    } else if (p == policy::never) {
        literal(0x10, 4, name_index, name, value, out);  // 6.2.3, never indexed
    } else {
        literal(0x00, 4, name_index, name, value, out);  // 6.2.2, without indexing
    }
}

void encoder::literal(std::uint8_t first_byte, unsigned prefix_bits, std::uint32_t name_index,
                      std::string_view name, std::string_view value, std::string& out) {
    append_integer(out, first_byte, prefix_bits, name_index);
    if (name_index == 0) append_string(out, name);
    append_string(out, value);
}

}  // namespace tern::h2::hpack
