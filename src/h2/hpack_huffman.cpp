// HPACK's Huffman code (RFC 7541 5.2, Appendix B). Encoding packs each byte's code into a
// 64-bit accumulator. Decoding walks the code tree four bits at a time: a table made at
// compile time from the code table gives, for each inner node of the tree and each
// nibble, the node reached, the symbol completed on the way (codes are at least 5 bits
// long, so at most one per nibble), whether the EOS symbol was met, and whether stopping
// there is allowed (at the root, or at most 7 bits down the all-ones path: padding).

#include "h2/hpack.hpp"

#include <array>

namespace tern::h2::hpack {

namespace {

struct code {
    std::uint32_t bits;   // right-aligned
    std::uint8_t length;  // in bits, 5 to 30
};

constexpr std::size_t eos = 256;

// RFC 7541 Appendix B: the code of each byte value, then EOS.
constexpr std::array<code, 257> codes = {{
    {0x1ff8, 13},     {0x7fffd8, 23},   {0xfffffe2, 28},  {0xfffffe3, 28},  // 0-3
    {0xfffffe4, 28},  {0xfffffe5, 28},  {0xfffffe6, 28},  {0xfffffe7, 28},  // 4-7
    {0xfffffe8, 28},  {0xffffea, 24},   {0x3ffffffc, 30}, {0xfffffe9, 28},  // 8-11
    {0xfffffea, 28},  {0x3ffffffd, 30}, {0xfffffeb, 28},  {0xfffffec, 28},  // 12-15
    {0xfffffed, 28},  {0xfffffee, 28},  {0xfffffef, 28},  {0xffffff0, 28},  // 16-19
    {0xffffff1, 28},  {0xffffff2, 28},  {0x3ffffffe, 30}, {0xffffff3, 28},  // 20-23
    {0xffffff4, 28},  {0xffffff5, 28},  {0xffffff6, 28},  {0xffffff7, 28},  // 24-27
    {0xffffff8, 28},  {0xffffff9, 28},  {0xffffffa, 28},  {0xffffffb, 28},  // 28-31
    {0x14, 6},        {0x3f8, 10},      {0x3f9, 10},      {0xffa, 12},      // 32-35
    {0x1ff9, 13},     {0x15, 6},        {0xf8, 8},        {0x7fa, 11},      // 36-39
    {0x3fa, 10},      {0x3fb, 10},      {0xf9, 8},        {0x7fb, 11},      // 40-43
    {0xfa, 8},        {0x16, 6},        {0x17, 6},        {0x18, 6},        // 44-47
    {0x0, 5},         {0x1, 5},         {0x2, 5},         {0x19, 6},        // 48-51
    {0x1a, 6},        {0x1b, 6},        {0x1c, 6},        {0x1d, 6},        // 52-55
    {0x1e, 6},        {0x1f, 6},        {0x5c, 7},        {0xfb, 8},        // 56-59
    {0x7ffc, 15},     {0x20, 6},        {0xffb, 12},      {0x3fc, 10},      // 60-63
    {0x1ffa, 13},     {0x21, 6},        {0x5d, 7},        {0x5e, 7},        // 64-67
    {0x5f, 7},        {0x60, 7},        {0x61, 7},        {0x62, 7},        // 68-71
    {0x63, 7},        {0x64, 7},        {0x65, 7},        {0x66, 7},        // 72-75
    {0x67, 7},        {0x68, 7},        {0x69, 7},        {0x6a, 7},        // 76-79
    {0x6b, 7},        {0x6c, 7},        {0x6d, 7},        {0x6e, 7},        // 80-83
    {0x6f, 7},        {0x70, 7},        {0x71, 7},        {0x72, 7},        // 84-87
    {0xfc, 8},        {0x73, 7},        {0xfd, 8},        {0x1ffb, 13},     // 88-91
    {0x7fff0, 19},    {0x1ffc, 13},     {0x3ffc, 14},     {0x22, 6},        // 92-95
    {0x7ffd, 15},     {0x3, 5},         {0x23, 6},        {0x4, 5},         // 96-99
    {0x24, 6},        {0x5, 5},         {0x25, 6},        {0x26, 6},        // 100-103
    {0x27, 6},        {0x6, 5},         {0x74, 7},        {0x75, 7},        // 104-107
    {0x28, 6},        {0x29, 6},        {0x2a, 6},        {0x7, 5},         // 108-111
    {0x2b, 6},        {0x76, 7},        {0x2c, 6},        {0x8, 5},         // 112-115
    {0x9, 5},         {0x2d, 6},        {0x77, 7},        {0x78, 7},        // 116-119
    {0x79, 7},        {0x7a, 7},        {0x7b, 7},        {0x7ffe, 15},     // 120-123
    {0x7fc, 11},      {0x3ffd, 14},     {0x1ffd, 13},     {0xffffffc, 28},  // 124-127
    {0xfffe6, 20},    {0x3fffd2, 22},   {0xfffe7, 20},    {0xfffe8, 20},    // 128-131
    {0x3fffd3, 22},   {0x3fffd4, 22},   {0x3fffd5, 22},   {0x7fffd9, 23},   // 132-135
    {0x3fffd6, 22},   {0x7fffda, 23},   {0x7fffdb, 23},   {0x7fffdc, 23},   // 136-139
    {0x7fffdd, 23},   {0x7fffde, 23},   {0xffffeb, 24},   {0x7fffdf, 23},   // 140-143
    {0xffffec, 24},   {0xffffed, 24},   {0x3fffd7, 22},   {0x7fffe0, 23},   // 144-147
    {0xffffee, 24},   {0x7fffe1, 23},   {0x7fffe2, 23},   {0x7fffe3, 23},   // 148-151
    {0x7fffe4, 23},   {0x1fffdc, 21},   {0x3fffd8, 22},   {0x7fffe5, 23},   // 152-155
    {0x3fffd9, 22},   {0x7fffe6, 23},   {0x7fffe7, 23},   {0xffffef, 24},   // 156-159
    {0x3fffda, 22},   {0x1fffdd, 21},   {0xfffe9, 20},    {0x3fffdb, 22},   // 160-163
    {0x3fffdc, 22},   {0x7fffe8, 23},   {0x7fffe9, 23},   {0x1fffde, 21},   // 164-167
    {0x7fffea, 23},   {0x3fffdd, 22},   {0x3fffde, 22},   {0xfffff0, 24},   // 168-171
    {0x1fffdf, 21},   {0x3fffdf, 22},   {0x7fffeb, 23},   {0x7fffec, 23},   // 172-175
    {0x1fffe0, 21},   {0x1fffe1, 21},   {0x3fffe0, 22},   {0x1fffe2, 21},   // 176-179
    {0x7fffed, 23},   {0x3fffe1, 22},   {0x7fffee, 23},   {0x7fffef, 23},   // 180-183
    {0xfffea, 20},    {0x3fffe2, 22},   {0x3fffe3, 22},   {0x3fffe4, 22},   // 184-187
    {0x7ffff0, 23},   {0x3fffe5, 22},   {0x3fffe6, 22},   {0x7ffff1, 23},   // 188-191
    {0x3ffffe0, 26},  {0x3ffffe1, 26},  {0xfffeb, 20},    {0x7fff1, 19},    // 192-195
    {0x3fffe7, 22},   {0x7ffff2, 23},   {0x3fffe8, 22},   {0x1ffffec, 25},  // 196-199
    {0x3ffffe2, 26},  {0x3ffffe3, 26},  {0x3ffffe4, 26},  {0x7ffffde, 27},  // 200-203
    {0x7ffffdf, 27},  {0x3ffffe5, 26},  {0xfffff1, 24},   {0x1ffffed, 25},  // 204-207
    {0x7fff2, 19},    {0x1fffe3, 21},   {0x3ffffe6, 26},  {0x7ffffe0, 27},  // 208-211
    {0x7ffffe1, 27},  {0x3ffffe7, 26},  {0x7ffffe2, 27},  {0xfffff2, 24},   // 212-215
    {0x1fffe4, 21},   {0x1fffe5, 21},   {0x3ffffe8, 26},  {0x3ffffe9, 26},  // 216-219
    {0xffffffd, 28},  {0x7ffffe3, 27},  {0x7ffffe4, 27},  {0x7ffffe5, 27},  // 220-223
    {0xfffec, 20},    {0xfffff3, 24},   {0xfffed, 20},    {0x1fffe6, 21},   // 224-227
    {0x3fffe9, 22},   {0x1fffe7, 21},   {0x1fffe8, 21},   {0x7ffff3, 23},   // 228-231
    {0x3fffea, 22},   {0x3fffeb, 22},   {0x1ffffee, 25},  {0x1ffffef, 25},  // 232-235
    {0xfffff4, 24},   {0xfffff5, 24},   {0x3ffffea, 26},  {0x7ffff4, 23},   // 236-239
    {0x3ffffeb, 26},  {0x7ffffe6, 27},  {0x3ffffec, 26},  {0x3ffffed, 26},  // 240-243
    {0x7ffffe7, 27},  {0x7ffffe8, 27},  {0x7ffffe9, 27},  {0x7ffffea, 27},  // 244-247
    {0x7ffffeb, 27},  {0xffffffe, 28},  {0x7ffffec, 27},  {0x7ffffed, 27},  // 248-251
    {0x7ffffee, 27},  {0x7ffffef, 27},  {0x7fffff0, 27},  {0x3ffffee, 26},  // 252-255
    {0x3fffffff, 30},                                                       // 256-256
}};

// ---- the decoding table, made at compile time ----------------------------------------------

// A complete prefix code of 257 symbols has 256 inner nodes: a node fits a byte.
constexpr std::size_t inner_nodes = 256;

struct code_tree {
    // child[node][bit]: an inner node (>= 0), or -(symbol + 1) for a leaf.
    std::array<std::array<std::int16_t, 2>, inner_nodes> child{};
    // Whether stopping at the node leaves valid padding: the path to it is all ones and at
    // most 7 bits long (RFC 7541 5.2).
    std::array<bool, inner_nodes> padding{};
};

constexpr std::int16_t unset = 0x7fff;

constexpr code_tree make_code_tree() {
    code_tree tree;
    for (auto& c : tree.child) c = {unset, unset};
    std::array<std::uint8_t, inner_nodes> depth{};
    std::array<bool, inner_nodes> ones{};
    ones[0] = true;
    std::size_t nodes = 1;
    for (std::size_t symbol = 0; symbol < codes.size(); ++symbol) {
        std::size_t node = 0;
        for (int b = codes[symbol].length - 1; b > 0; --b) {
            const unsigned bit = (codes[symbol].bits >> b) & 1U;
            if (tree.child[node][bit] == unset) {
                tree.child[node][bit] = static_cast<std::int16_t>(nodes);
                depth[nodes] = static_cast<std::uint8_t>(depth[node] + 1);
                ones[nodes] = ones[node] && bit == 1;
                ++nodes;
            }
            node = static_cast<std::size_t>(tree.child[node][bit]);
        }
        tree.child[node][codes[symbol].bits & 1U] =
            static_cast<std::int16_t>(-1 - static_cast<int>(symbol));
    }
    for (std::size_t n = 0; n < inner_nodes; ++n) tree.padding[n] = ones[n] && depth[n] <= 7;
    return tree;
}

enum : std::uint8_t {
    emits = 1,       // a symbol was completed: `symbol`
    accepted = 2,    // the string may end here
    failed = 4,      // the EOS symbol was met
    past_limit = 8,  // (while decoding only) a symbol was dropped at the limit
};

struct step {
    std::uint8_t node;
    std::uint8_t symbol;
    std::uint8_t flags;
};

using decode_table = std::array<std::array<step, 16>, inner_nodes>;

constexpr decode_table make_decode_table() {
    const code_tree tree = make_code_tree();
    decode_table table{};
    for (std::size_t start = 0; start < inner_nodes; ++start) {
        for (unsigned nibble = 0; nibble < 16; ++nibble) {
            std::size_t node = start;
            step s{0, 0, 0};
            for (int b = 3; b >= 0; --b) {
                const auto next = tree.child[node][(nibble >> b) & 1U];
                if (next >= 0) {
                    node = static_cast<std::size_t>(next);
                    continue;
                }
                const auto symbol = static_cast<std::size_t>(-1 - next);
                if (symbol == eos) {
                    s.flags |= failed;
                    break;
                }
                s.flags |= emits;
                s.symbol = static_cast<std::uint8_t>(symbol);
                node = 0;
            }
            if ((s.flags & failed) != 0)
                node = 0;
            else if (tree.padding[node])
                s.flags |= accepted;
            s.node = static_cast<std::uint8_t>(node);
            table[start][nibble] = s;
        }
    }
    return table;
}

constexpr decode_table decoding = make_decode_table();

// A string of n bytes codes at most 8n / 5 symbols (the shortest code is 5 bits).
constexpr std::size_t most_decoded(std::size_t n) { return n * 8 / 5; }

}  // namespace

std::size_t huffman_encoded_size(std::string_view in) noexcept {
    std::size_t bits = 0;
    for (const char c : in) bits += codes[static_cast<std::uint8_t>(c)].length;
    return (bits + 7) / 8;
}

void huffman_encode(std::string_view in, std::string& out) {
    const std::size_t old = out.size();
    out.resize(old + huffman_encoded_size(in));
    auto* w = reinterpret_cast<std::uint8_t*>(out.data() + old);
    // At most 7 bits wait in the accumulator between bytes, and a code has at most 30: 37
    // bits are held at once. Bits above them are left over from earlier bytes, and ignored.
    std::uint64_t held = 0;
    unsigned count = 0;
    for (const char c : in) {
        const code& k = codes[static_cast<std::uint8_t>(c)];
        held = (held << k.length) | k.bits;
        count += k.length;
        while (count >= 8) {
            count -= 8;
            *w++ = static_cast<std::uint8_t>(held >> count);
        }
    }
    // Padding: the most significant bits of EOS, all ones (RFC 7541 5.2).
    if (count > 0) *w = static_cast<std::uint8_t>((held << (8 - count)) | (0xffU >> count));
}

bool huffman_decode(std::string_view in, std::string& out) {
    return detail::huffman_decode(in, out, most_decoded(in.size())) == detail::huffman_result::ok;
}

namespace detail {

huffman_result huffman_decode(std::string_view in, std::string& out, std::size_t limit) {
    const std::size_t old = out.size();
    const std::size_t most = most_decoded(in.size());
    const bool bounded = limit < most;
    // One byte more than can be decoded: the loop stores every nibble's symbol at the write
    // position and moves on only when one was completed, which spares it a branch.
    out.resize(old + (bounded ? limit : most) + 1);
    char* const first = out.data() + old;
    char* w = first;
    std::uint8_t node = 0;
    std::uint8_t flags = accepted;
    std::uint8_t seen = 0;  // every nibble's flags, or-ed: for `failed`
    if (!bounded) {
        for (const char c : in) {
            const auto byte = static_cast<std::uint8_t>(c);
            const step& high = decoding[node][byte >> 4];
            *w = static_cast<char>(high.symbol);
            w += high.flags & emits;
            const step& low = decoding[high.node][byte & 0xfU];
            *w = static_cast<char>(low.symbol);
            w += low.flags & emits;
            node = low.node;
            flags = low.flags;
            seen |= high.flags | low.flags;
        }
    } else {
        const char* const stop = first + limit;
        for (const char c : in) {
            const auto byte = static_cast<std::uint8_t>(c);
            const std::array<unsigned, 2> nibbles = {static_cast<unsigned>(byte >> 4U),
                                                     byte & 0xfU};
            for (const unsigned nibble : nibbles) {
                const step& s = decoding[node][nibble];
                if ((s.flags & emits) != 0) {
                    if (w == stop) {
                        seen |= past_limit;
                    } else {
                        *w++ = static_cast<char>(s.symbol);
                    }
                }
                node = s.node;
                flags = s.flags;
                seen |= s.flags;
            }
        }
    }
    out.resize(old + static_cast<std::size_t>(w - first));
    if ((seen & failed) != 0 || (flags & accepted) == 0) return huffman_result::invalid;
    return (seen & past_limit) != 0 ? huffman_result::over : huffman_result::ok;
}

}  // namespace detail

}  // namespace tern::h2::hpack
