#pragma once
// HPACK (RFC 7541), tern's own: Huffman coding, a decoder of header blocks and an encoder of
// response fields. Transport-free: bytes in, fields out, and fields in, bytes appended to the
// caller's buffer. The frame layer (src/h2/frames*) reassembles a header block from its
// HEADERS and CONTINUATION frames before the decoder sees it, and reserves the frame header
// before the encoder appends to the write buffer.

#include "h2/hpack_table.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tern::h2::hpack {

// ---- Huffman coding (RFC 7541 5.2, Appendix B) ---------------------------------------------

/// Bytes `in` takes Huffman-coded, padding included.
std::size_t huffman_encoded_size(std::string_view in) noexcept;
/// Appends `in`, Huffman-coded and padded with ones to a whole byte, to `out`.
void huffman_encode(std::string_view in, std::string& out);
/// Appends the decoding of `in` to `out`. False, with `out` holding some of it, when `in`
/// codes the EOS symbol or ends in padding longer than 7 bits or not all ones (5.2).
bool huffman_decode(std::string_view in, std::string& out);

namespace detail {

enum class huffman_result {
    ok,       ///< decoded whole
    invalid,  ///< as huffman_decode's false
    over,     ///< valid, but longer than the limit: only the limit's worth was appended
};
/// huffman_decode appending at most `limit` bytes; the rest of `in` is still checked.
huffman_result huffman_decode(std::string_view in, std::string& out, std::size_t limit);

}  // namespace detail

// ---- the decoder ---------------------------------------------------------------------------

/// What decoding a header block came to.
enum class decode_status {
    ok,                 ///< every field delivered
    compression_error,  ///< malformed: a connection error (RFC 9113 4.3)
    too_large,          ///< the fields passed max_list_size; those before were delivered
    too_many_fields,    ///< more than max_field_count fields; those before were delivered
};

/// The bounds of one decoded header block, counted as it decodes.
struct decode_limits {
    /// Fields delivered at most; one more gives too_many_fields.
    std::size_t max_field_count;
    /// Bytes of fields delivered at most, each counted as name + value + 32 (RFC 9113
    /// 6.5.2); a field that would pass it gives too_large.
    std::size_t max_list_size;
};

/// Decodes the header blocks a peer's encoder sends on one connection, keeping the dynamic
/// table in step with it. Holds the table (`max_table_size` bytes, allocated up front) and a
/// scratch buffer whose capacity is kept between blocks, so decoding allocates nothing once
/// the scratch has grown to the longest Huffman-coded field seen.
class decoder {
public:
    /// `max_table_size`: the SETTINGS_HEADER_TABLE_SIZE tern advertises (default: the
    /// protocol's 4,096); the dynamic table starts at that size.
    explicit decoder(std::uint32_t max_table_size = 4096);

    /// The SETTINGS_HEADER_TABLE_SIZE tern advertised, once the peer acknowledged it. A
    /// value below the table's size shrinks the table at once, and the next block must then
    /// begin with a dynamic table size update (RFC 7541 4.2); a larger one lets the peer's
    /// updates go up to it (reallocating the table).
    void set_max_table_size(std::uint32_t max_table_size);

    /// Decodes one complete header block, calling `on_field(std::string_view name,
    /// std::string_view value, bool never_indexed)` for each field in order. The views are
    /// valid during the call only. Fields are counted against `limits` as they decode: past
    /// one, no further field is delivered or copied, and the rest of the block is still
    /// walked, so the dynamic table stays in step and the connection can go on (the stream
    /// gets 431). compression_error is returned for a malformed block (RFC 7541: an integer
    /// truncated or past 2^32 - 1, an index 0 or beyond the tables, bad Huffman, a string
    /// cut short, a table size update above the advertised size, missing when required, or
    /// after a field), even after a limit was passed; the decoder's state is then undefined
    /// and the connection must end (COMPRESSION_ERROR).
    template <class OnField>
    decode_status decode(std::span<const std::uint8_t> block, const decode_limits& limits,
                         OnField&& on_field) {
        begin(block, limits);
        field f;
        while (next(f)) on_field(f.name, f.value, f.never_indexed);
        return status_;
    }

    /// The dynamic table, for tests and the frame layer's accounting.
    const dynamic_table& table() const noexcept { return table_; }

private:
    struct field {
        std::string_view name;
        std::string_view value;
        bool never_indexed = false;
    };
    // A string literal's place in the block (RFC 7541 5.2).
    struct string_ref {
        const std::uint8_t* data = nullptr;
        std::size_t size = 0;
        bool huffman = false;
    };

    void begin(std::span<const std::uint8_t> block, const decode_limits& limits) noexcept;
    bool next(field& out);
    bool fail() noexcept;
    bool read_integer(unsigned prefix_bits, std::uint32_t& value) noexcept;
    bool read_string(string_ref& out) noexcept;
    bool admit(std::size_t name_size, std::size_t value_size) noexcept;
    bool indexed(std::uint32_t index, field& out);
    bool literal(unsigned prefix_bits, bool incremental, field& out);
    bool copy_string(const string_ref& s, std::size_t limit, std::string_view& out, bool& over);

    dynamic_table table_;
    std::uint32_t max_table_size_;  // the advertised size: updates may go up to it
    bool update_required_ = false;  // the advertised size fell below the table's
    std::uint32_t smallest_;        // the smallest size advertised since the last update
    std::string scratch_;           // Huffman-decoded strings and copies of wrapped entries

    // The block being decoded.
    const std::uint8_t* in_ = nullptr;
    const std::uint8_t* end_ = nullptr;
    decode_limits limits_{};
    std::size_t fields_ = 0;
    std::size_t list_size_ = 0;
    decode_status status_ = decode_status::ok;
    bool at_start_ = true;
};

// ---- the encoder ---------------------------------------------------------------------------

/// The encoder's own cap on its dynamic table, in bytes. The fields worth indexing in a
/// response (server, content-type, cache-control, vary, content-encoding, CORS and security
/// policy fields) take a handful of values on one connection: 10 to 15 entries of 40 to 90
/// bytes. A larger table would only keep stale values, at the connection's memory.
inline constexpr std::uint32_t encoder_table_size = 1024;

/// Encodes the fields of responses on one connection. The static table gives whole fields
/// (one byte) or names; a small dynamic table keeps fields that repeat across responses
/// with few values (server, content-type, cache-control, vary, ...); fields whose values
/// change per response (date, content-length, etag, last-modified, set-cookie, location,
/// ...) are literals not indexed, and authorization fields are never indexed. A string is
/// Huffman-coded only when that is shorter. Allocates nothing after construction beyond
/// what appending to `out` takes.
/// How many response field names the encoder indexes (hpack_encoder.cpp).
inline constexpr std::size_t indexed_name_count = 23;

class encoder {
public:
    /// `max_table_size`: tern's own cap on the dynamic table (default encoder_table_size);
    /// the table used is the smaller of it and the peer's SETTINGS_HEADER_TABLE_SIZE.
    explicit encoder(std::uint32_t max_table_size = encoder_table_size);

    /// The peer's SETTINGS_HEADER_TABLE_SIZE: the table shrinks at once if it must, and the
    /// next block begins with the dynamic table size update(s) telling the peer (RFC 7541
    /// 4.2: the smallest size since the last block, then the final one).
    void set_peer_max_table_size(std::uint32_t size) noexcept;

    /// Starts a header block in `out`: the size updates owed, if any. Before the peer's
    /// SETTINGS are known the peer's table holds 4,096 bytes, so the first block tells it
    /// the size tern uses when that is smaller.
    void begin_block(std::string& out);
    /// Appends `:status`: one byte for 200, 204, 206, 304, 400, 404 and 500 (static
    /// entries), a literal with the static name otherwise.
    void status(int code, std::string& out);
    /// Appends a field. `name` must be lower case already (RFC 9113 8.2.1: the caller's
    /// job, nothing checks it here). `never_index` marks the field never to be indexed by
    /// any encoder down the line (RFC 7541 7.1.3), as for a credential.
    void field(std::string_view name, std::string_view value, std::string& out,
               bool never_index = false);

    /// The dynamic table, for tests.
    const dynamic_table& table() const noexcept { return table_; }

private:
    void literal(std::uint8_t first_byte, unsigned prefix_bits, std::uint32_t name_index,
                 std::string_view name, std::string_view value, std::string& out);

    dynamic_table table_;
    // For each name the encoder indexes (hpack_encoder.cpp's indexed_names), the number
    // (dynamic_table::inserted()) of the newest entry it added or found under that name, 0
    // for none: a response's fields are mostly the previous response's values again, found
    // with one comparison instead of a search of the static and dynamic tables.
    std::array<std::uint64_t, indexed_name_count> recent_{};
    std::uint32_t own_max_;
    std::uint32_t signalled_ = 4096;  // the size the peer's decoder has (the default until told)
    std::uint32_t smallest_ = 4096;   // the smallest size used since the last block
};

// ---- integers (RFC 7541 5.1), shared by both halves ----------------------------------------

/// Appends `value` as an integer of `prefix_bits` bits, the first byte's other bits from
/// `first_byte`.
void append_integer(std::string& out, std::uint8_t first_byte, unsigned prefix_bits,
                    std::uint32_t value);

}  // namespace tern::h2::hpack
