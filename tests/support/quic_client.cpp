// A blocking QUIC client for HTTP/3 wire tests: see quic_client.hpp.

#include "support/quic_client.hpp"

#include <arpa/inet.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <iterator>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tern_test {

namespace {

// ngtcp2's timestamps: nanoseconds of the steady clock.
ngtcp2_tstamp now_ns() noexcept {
    return static_cast<ngtcp2_tstamp>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

// TLS 1.3 only, as QUIC requires (the server's list).
constexpr const char* priorities =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:"
    "+AES-128-CCM";
constexpr std::uint64_t h3_no_error = 0x100;

void random_fill(std::uint8_t* dest, std::size_t size) {
    if (gnutls_rnd(GNUTLS_RND_RANDOM, dest, size) != 0) {
        throw std::runtime_error("quic_client: gnutls_rnd failed");
    }
}

ngtcp2_cid random_cid(std::size_t length) {
    std::array<std::uint8_t, NGTCP2_MAX_CIDLEN> bytes{};
    random_fill(bytes.data(), length);
    ngtcp2_cid cid{};
    ngtcp2_cid_init(&cid, bytes.data(), length);
    return cid;
}

}  // namespace

struct quic_client::state {
    // What a stream has still to write: pieces of the bytes kept for it, and its end.
    struct queued_bytes {
        std::deque<std::span<const std::uint8_t>> pieces;
        bool fin = false;
    };

    int fd = -1;
    sockaddr_storage local{}, remote{};
    socklen_t local_length = sizeof local, remote_length = sizeof remote;
    gnutls_certificate_credentials_t credentials = nullptr;
    gnutls_session_t session = nullptr;
    ngtcp2_conn* conn = nullptr;
    ngtcp2_crypto_conn_ref ref{};
    std::unordered_map<std::int64_t, stream_state> streams;
    std::map<std::int64_t, queued_bytes> queued;
    // Every byte a stream was given, kept until QUIC forgets the stream: ngtcp2 does not
    // copy stream data, and resends lost packets from it.
    std::unordered_map<std::int64_t, std::deque<std::vector<std::uint8_t>>> kept;
    bool retried = false;
    std::vector<std::uint8_t> first_after_retry;  // the Initial that carried the token
    bool closed = false;
    std::string reason;
    std::uint64_t max_bidi = 0;
    // While true, bytes received grant no more flow-control credit; `held` is what they
    // would have granted, per stream, given all at once when the hold ends.
    bool hold_window = false;
    std::unordered_map<std::int64_t, std::uint64_t> held;
    std::vector<std::uint8_t> received = std::vector<std::uint8_t>(65536);
    // `divert`: the next divert_left datagrams go through divert_fd; `diverted` bytes did.
    int divert_fd = -1;
    int divert_left = 0;
    std::size_t diverted = 0;

    state() = default;
    state(const state&) = delete;
    state& operator=(const state&) = delete;
    ~state() {
        if (conn != nullptr) ngtcp2_conn_del(conn);
        if (session != nullptr) gnutls_deinit(session);
        if (credentials != nullptr) gnutls_certificate_free_credentials(credentials);
        if (fd >= 0) ::close(fd);
    }

    ngtcp2_path path() noexcept {
        return {{reinterpret_cast<ngtcp2_sockaddr*>(&local), local_length},
                {reinterpret_cast<ngtcp2_sockaddr*>(&remote), remote_length},
                nullptr};
    }

    void send_datagram(const std::uint8_t* bytes, std::size_t size) {
        // A datagram the kernel refuses (a full buffer) is a lost packet: ngtcp2 resends.
        if (retried && first_after_retry.empty()) first_after_retry.assign(bytes, bytes + size);
        if (divert_left > 0) {
            --divert_left;
            diverted += size;
            if (divert_fd >= 0) {
                (void)::sendto(divert_fd, bytes, size, 0,
                               reinterpret_cast<const sockaddr*>(&remote), remote_length);
            }
            return;
        }
        (void)::send(fd, bytes, size, 0);
    }

    // Writes the queued stream bytes, then what else ngtcp2 has (ACKs, resets, flow
    // control), until it has nothing or congestion control stops it.
    void flush() {
        if (closed) return;
        std::array<std::uint8_t, NGTCP2_MAX_PMTUD_UDP_PAYLOAD_SIZE> buffer{};
        ngtcp2_path_storage ps;
        ngtcp2_path_storage_zero(&ps);
        ngtcp2_pkt_info pi{};
        const auto ts = now_ns();
        for (auto it = queued.begin(); it != queued.end();) {
            auto& q = it->second;
            bool done = false;
            for (;;) {
                std::array<ngtcp2_vec, 8> v{};
                const std::size_t count = std::min(v.size(), q.pieces.size());
                for (std::size_t i = 0; i < count; ++i) {
                    v[i] = {const_cast<std::uint8_t*>(q.pieces[i].data()), q.pieces[i].size()};
                }
                // The end goes with the last piece (ngtcp2 sets FIN once all of v is taken).
                const bool last = q.fin && count == q.pieces.size();
                ngtcp2_ssize taken = -1;
                const auto n = ngtcp2_conn_writev_stream(
                    conn, &ps.path, &pi, buffer.data(), buffer.size(), &taken,
                    last ? NGTCP2_WRITE_STREAM_FLAG_FIN : NGTCP2_WRITE_STREAM_FLAG_NONE, it->first,
                    v.data(), count, ts);
                if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED) break;  // flow control: later
                if (n == NGTCP2_ERR_STREAM_SHUT_WR || n == NGTCP2_ERR_STREAM_NOT_FOUND) {
                    done = true;  // reset meanwhile: the bytes go nowhere
                    break;
                }
                if (n < 0) {
                    fail(static_cast<int>(n), "write");
                    return;
                }
                for (auto left = taken > 0 ? static_cast<std::size_t>(taken) : 0; left != 0;) {
                    auto& front = q.pieces.front();
                    const auto step = std::min(left, front.size());
                    front = front.subspan(step);
                    left -= step;
                    if (front.empty()) q.pieces.pop_front();
                }
                if (n == 0) return;  // congestion control: after the next ACKs
                send_datagram(buffer.data(), static_cast<std::size_t>(n));
                if (taken >= 0 && q.pieces.empty() && (last || !q.fin)) {
                    done = true;
                    break;
                }
            }
            it = done ? queued.erase(it) : std::next(it);
        }
        for (;;) {
            const auto n =
                ngtcp2_conn_write_pkt(conn, &ps.path, &pi, buffer.data(), buffer.size(), ts);
            if (n < 0) {
                fail(static_cast<int>(n), "write");
                return;
            }
            if (n == 0) return;
            send_datagram(buffer.data(), static_cast<std::size_t>(n));
        }
    }

    // Reads every datagram waiting; true when there was one.
    bool read_waiting() {
        bool any = false;
        while (!closed) {
            const auto n = ::recv(fd, received.data(), received.size(), MSG_DONTWAIT);
            if (n < 0) {
                // ECONNREFUSED: an ICMP error for an earlier datagram; the next may be there.
                if (errno == EINTR || errno == ECONNREFUSED) continue;
                break;
            }
            any = true;
            const auto p = path();
            ngtcp2_pkt_info pi{};
            const int rv = ngtcp2_conn_read_pkt(conn, &p, &pi, received.data(),
                                                static_cast<std::size_t>(n), now_ns());
            if (rv != 0) fail(rv, "read");
        }
        return any;
    }

    void on_expiry() {
        const int rv = ngtcp2_conn_handle_expiry(conn, now_ns());
        if (rv != 0) {
            fail(rv, "timer");
            return;
        }
        flush();
    }

    // The connection is over: says why, and tells the server when ngtcp2 wants it told.
    void fail(int error, const char* where) {
        if (closed) return;
        closed = true;
        reason = std::string(where) + ": " + ngtcp2_strerror(error);
        if (error == NGTCP2_ERR_DRAINING || error == NGTCP2_ERR_CLOSING) {
            ngtcp2_connection_close_error peer{};
            ngtcp2_conn_get_connection_close_error(conn, &peer);
            reason +=
                " (the server's close: code " + std::to_string(peer.error_code) +
                (peer.type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION ? ", application)"
                                                                                  : ", transport)");
            return;
        }
        if (error == NGTCP2_ERR_IDLE_CLOSE) return;  // silent, as RFC 9000 10.1 says
        ngtcp2_connection_close_error ccerr{};
        ngtcp2_connection_close_error_set_transport_error_liberr(&ccerr, error, nullptr, 0);
        write_close(ccerr);
    }

    void write_close(const ngtcp2_connection_close_error& ccerr) {
        std::array<std::uint8_t, NGTCP2_MAX_PMTUD_UDP_PAYLOAD_SIZE> buffer{};
        ngtcp2_path_storage ps;
        ngtcp2_path_storage_zero(&ps);
        ngtcp2_pkt_info pi{};
        const auto n = ngtcp2_conn_write_connection_close(conn, &ps.path, &pi, buffer.data(),
                                                          buffer.size(), &ccerr, now_ns());
        if (n > 0) send_datagram(buffer.data(), static_cast<std::size_t>(n));
    }

    // ngtcp2's callbacks, with `user_data` the state.
    static state& self(void* user_data) { return *static_cast<state*>(user_data); }

    static ngtcp2_conn* get_conn(ngtcp2_crypto_conn_ref* ref) {
        return static_cast<state*>(ref->user_data)->conn;
    }

    static int recv_retry(ngtcp2_conn* conn, const ngtcp2_pkt_hd* hd, void* user_data) {
        self(user_data).retried = true;
        return ngtcp2_crypto_recv_retry_cb(conn, hd, user_data);
    }

    static void rand(std::uint8_t* dest, std::size_t size, const ngtcp2_rand_ctx* /*ctx*/) {
        (void)gnutls_rnd(GNUTLS_RND_RANDOM, dest, size);
    }

    static int new_cid(ngtcp2_conn* /*conn*/, ngtcp2_cid* cid, std::uint8_t* token,
                       std::size_t size, void* /*user_data*/) {
        std::array<std::uint8_t, NGTCP2_MAX_CIDLEN> bytes{};
        if (size > bytes.size() || gnutls_rnd(GNUTLS_RND_RANDOM, bytes.data(), size) != 0 ||
            gnutls_rnd(GNUTLS_RND_RANDOM, token, NGTCP2_STATELESS_RESET_TOKENLEN) != 0) {
            return NGTCP2_ERR_CALLBACK_FAILURE;
        }
        ngtcp2_cid_init(cid, bytes.data(), size);
        return 0;
    }

    static int stream_data(ngtcp2_conn* conn, std::uint32_t flags, std::int64_t id,
                           std::uint64_t /*offset*/, const std::uint8_t* data, std::size_t size,
                           void* user_data, void* /*stream_user_data*/) {
        auto& s = self(user_data).streams[id];
        s.bytes.insert(s.bytes.end(), data, data + size);
        if ((flags & NGTCP2_STREAM_DATA_FLAG_FIN) != 0) s.ended = true;
        if (self(user_data).hold_window) {
            self(user_data).held[id] += size;
            return 0;
        }
        ngtcp2_conn_extend_max_stream_offset(conn, id, size);
        ngtcp2_conn_extend_max_offset(conn, size);
        return 0;
    }

    static int stream_close(ngtcp2_conn* /*conn*/, std::uint32_t /*flags*/, std::int64_t id,
                            std::uint64_t /*code*/, void* user_data, void* /*stream_user_data*/) {
        auto& s = self(user_data);
        s.streams[id].closed = true;
        s.kept.erase(id);  // ngtcp2 is done with its bytes (a write to it is refused)
        return 0;
    }

    static int stream_reset(ngtcp2_conn* /*conn*/, std::int64_t id, std::uint64_t /*final_size*/,
                            std::uint64_t code, void* user_data, void* /*stream_user_data*/) {
        auto& s = self(user_data).streams[id];
        s.reset = true;
        s.reset_code = code;
        return 0;
    }

    static int acked(ngtcp2_conn* /*conn*/, std::int64_t id, std::uint64_t /*offset*/,
                     std::uint64_t size, void* user_data, void* /*stream_user_data*/) {
        self(user_data).streams[id].acked += size;
        return 0;
    }

    static int more_bidi(ngtcp2_conn* /*conn*/, std::uint64_t max_streams, void* user_data) {
        self(user_data).max_bidi = max_streams;
        return 0;
    }

    static ngtcp2_callbacks table() {
        ngtcp2_callbacks cb{};
        cb.client_initial = ngtcp2_crypto_client_initial_cb;
        cb.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
        cb.encrypt = ngtcp2_crypto_encrypt_cb;
        cb.decrypt = ngtcp2_crypto_decrypt_cb;
        cb.hp_mask = ngtcp2_crypto_hp_mask_cb;
        cb.recv_retry = recv_retry;
        cb.update_key = ngtcp2_crypto_update_key_cb;
        cb.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
        cb.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
        cb.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
        cb.version_negotiation = ngtcp2_crypto_version_negotiation_cb;
        cb.rand = rand;
        cb.get_new_connection_id = new_cid;
        cb.recv_stream_data = stream_data;
        cb.stream_close = stream_close;
        cb.stream_reset = stream_reset;
        cb.extend_max_local_streams_bidi = more_bidi;
        cb.acked_stream_data_offset = acked;
        return cb;
    }
};

quic_client::quic_client(std::uint16_t port, std::uint64_t stream_window)
    : state_(std::make_unique<state>()) {
    auto& s = *state_;
    s.fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s.fd < 0) throw std::runtime_error("quic_client: socket failed");
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::memcpy(&s.remote, &to, sizeof to);
    s.remote_length = sizeof to;
    if (::connect(s.fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0 ||
        ::getsockname(s.fd, reinterpret_cast<sockaddr*>(&s.local), &s.local_length) != 0) {
        throw std::runtime_error("quic_client: cannot connect the UDP socket");
    }

    // TLS: ALPN h3, any certificate (a test's self-signed one), no early data.
    static const gnutls_datum_t alpn{
        const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>("h3")), 2};
    if (gnutls_certificate_allocate_credentials(&s.credentials) != 0 ||
        gnutls_init(&s.session, GNUTLS_CLIENT) != 0 ||
        gnutls_priority_set_direct(s.session, priorities, nullptr) != 0 ||
        ngtcp2_crypto_gnutls_configure_client_session(s.session) != 0 ||
        gnutls_credentials_set(s.session, GNUTLS_CRD_CERTIFICATE, s.credentials) != 0 ||
        gnutls_alpn_set_protocols(s.session, &alpn, 1, GNUTLS_ALPN_MANDATORY) != 0 ||
        gnutls_server_name_set(s.session, GNUTLS_NAME_DNS, "localhost", 9) != 0) {
        throw std::runtime_error("quic_client: GnuTLS cannot make a session");
    }
    s.ref.get_conn = state::get_conn;
    s.ref.user_data = &s;
    gnutls_session_set_ptr(s.session, &s.ref);

    ngtcp2_settings settings;
    ngtcp2_settings_default(&settings);
    settings.initial_ts = now_ns();
    ngtcp2_transport_params params;
    ngtcp2_transport_params_default(&params);
    // The server's control and QPACK streams, answers as large as a test asks for; a long
    // idle timeout of its own, so the server's rules.
    params.initial_max_streams_uni = 8;
    params.initial_max_stream_data_bidi_local = stream_window;
    params.initial_max_stream_data_uni = 1 << 20;
    params.initial_max_data = 64 << 20;
    params.max_idle_timeout = 60 * NGTCP2_SECONDS;
    const auto dcid = random_cid(18);
    const auto scid = random_cid(16);
    const auto path = s.path();
    const auto cb = state::table();
    if (ngtcp2_conn_client_new(&s.conn, &dcid, &scid, &path, NGTCP2_PROTO_VER_V1, &cb, &settings,
                               &params, nullptr, &s) != 0) {
        throw std::runtime_error("quic_client: ngtcp2 cannot make a connection");
    }
    ngtcp2_conn_set_tls_native_handle(s.conn, s.session);
}

quic_client::~quic_client() {
    auto& s = *state_;
    // An open connection is closed with H3_NO_ERROR, so the server forgets it at once. One
    // whose handshake never completed sends nothing (a closing Initial could start one).
    if (!s.closed && ngtcp2_conn_get_handshake_completed(s.conn) != 0) {
        ngtcp2_connection_close_error ccerr{};
        ngtcp2_connection_close_error_set_application_error(&ccerr, h3_no_error, nullptr, 0);
        s.write_close(ccerr);
    }
}

bool quic_client::handshake(std::chrono::milliseconds limit) {
    return pump_until([this] { return ngtcp2_conn_get_handshake_completed(state_->conn) != 0; },
                      limit);
}

bool quic_client::retried() const noexcept { return state_->retried; }

bool quic_client::migrate() {
    auto& s = *state_;
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_storage local{};
    socklen_t local_length = sizeof local;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&s.remote), s.remote_length) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_length) != 0) {
        ::close(fd);
        return false;
    }
    const ngtcp2_path path{{reinterpret_cast<ngtcp2_sockaddr*>(&local), local_length},
                           {reinterpret_cast<ngtcp2_sockaddr*>(&s.remote), s.remote_length},
                           nullptr};
    if (ngtcp2_conn_initiate_immediate_migration(s.conn, &path, now_ns()) != 0) {
        ::close(fd);
        return false;
    }
    ::close(s.fd);
    s.fd = fd;
    s.local = local;
    s.local_length = local_length;
    return true;
}

void quic_client::divert(int fd, int count) {
    state_->divert_fd = fd;
    state_->divert_left = count;
}

std::size_t quic_client::diverted_bytes() const noexcept { return state_->diverted; }

std::vector<std::uint8_t> quic_client::server_cid() const {
    const auto* cid = ngtcp2_conn_get_dcid(state_->conn);
    return {cid->data, cid->data + cid->datalen};
}

void quic_client::send_first_initial_again() {
    // Through the client's own socket, whatever `divert` says.
    const auto& d = state_->first_after_retry;
    if (!d.empty()) (void)::send(state_->fd, d.data(), d.size(), 0);
}

std::int64_t quic_client::open_bidi() {
    std::int64_t id = -1;
    if (state_->closed || ngtcp2_conn_open_bidi_stream(state_->conn, &id, nullptr) != 0) {
        return -1;
    }
    return id;
}

std::int64_t quic_client::open_uni() {
    std::int64_t id = -1;
    if (state_->closed || ngtcp2_conn_open_uni_stream(state_->conn, &id, nullptr) != 0) {
        return -1;
    }
    return id;
}

void quic_client::send(std::int64_t id, std::span<const std::uint8_t> bytes, bool fin) {
    auto& s = *state_;
    auto& q = s.queued[id];
    if (!bytes.empty()) {
        auto& kept = s.kept[id];
        kept.emplace_back(bytes.begin(), bytes.end());  // a deque: earlier pieces stay put
        q.pieces.emplace_back(kept.back());
    }
    q.fin = q.fin || fin;
    s.flush();
}

void quic_client::reset(std::int64_t id, std::uint64_t app_code) {
    state_->flush();
    state_->queued.erase(id);
    if (!state_->closed) (void)ngtcp2_conn_shutdown_stream(state_->conn, id, app_code);
}

void quic_client::hold_window(bool hold) {
    auto& s = *state_;
    s.hold_window = hold;
    if (hold) return;
    for (const auto& [id, bytes] : std::exchange(s.held, {})) {
        ngtcp2_conn_extend_max_stream_offset(s.conn, id, bytes);
        ngtcp2_conn_extend_max_offset(s.conn, bytes);
    }
    s.flush();
}

bool quic_client::pump(std::chrono::milliseconds for_) {
    auto& s = *state_;
    const auto until = now_ns() + static_cast<ngtcp2_tstamp>(std::max<std::int64_t>(
                                      0, std::chrono::nanoseconds(for_).count()));
    s.flush();
    // What has come in already is read without waiting (pump(0ms) does only that).
    if (s.read_waiting()) {
        s.flush();
        return !s.closed;
    }
    while (!s.closed) {
        auto now = now_ns();
        if (ngtcp2_conn_get_expiry(s.conn) <= now) {
            s.on_expiry();
            if (s.closed) break;
            now = now_ns();
        }
        if (now >= until) return false;
        const auto wake = std::min(until, ngtcp2_conn_get_expiry(s.conn));
        // Whole milliseconds, rounded up (at least one: a timer due now is handled next turn).
        const auto wait = wake <= now ? 1 : static_cast<int>((wake - now + 999'999) / 1'000'000);
        pollfd p{s.fd, POLLIN, 0};
        if (::poll(&p, 1, wait) > 0 && s.read_waiting()) {
            s.flush();
            return !s.closed;
        }
    }
    return false;
}

quic_client::stream_state quic_client::stream(std::int64_t id) const {
    const auto found = state_->streams.find(id);
    return found == state_->streams.end() ? stream_state{} : found->second;
}

bool quic_client::closed() const noexcept { return state_->closed; }

std::string quic_client::close_reason() const { return state_->reason; }

std::uint64_t quic_client::max_bidi_streams() const noexcept { return state_->max_bidi; }

std::uint64_t quic_client::send_credit(std::int64_t id) const {
    return ngtcp2_conn_get_max_stream_data_left(state_->conn, id);
}

// ---- HTTP/3 bytes by hand ---------------------------------------------------------------

namespace {

// A QUIC variable-length integer (RFC 9000 16).
void put_varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
    if (v < 64) {
        out.push_back(static_cast<std::uint8_t>(v));
    } else if (v < 16384) {
        out.push_back(static_cast<std::uint8_t>(0x40 | (v >> 8)));
        out.push_back(static_cast<std::uint8_t>(v));
    } else {
        out.push_back(static_cast<std::uint8_t>(0x80 | (v >> 24)));
        out.push_back(static_cast<std::uint8_t>(v >> 16));
        out.push_back(static_cast<std::uint8_t>(v >> 8));
        out.push_back(static_cast<std::uint8_t>(v));
    }
}

bool get_varint(std::span<const std::uint8_t> in, std::size_t& at, std::uint64_t& v) {
    if (at >= in.size()) return false;
    const std::size_t length = std::size_t{1} << (in[at] >> 6);
    if (in.size() - at < length) return false;
    v = in[at] & 0x3fU;
    for (std::size_t i = 1; i < length; ++i) v = (v << 8) | in[at + i];
    at += length;
    return true;
}

// A QPACK integer with an N-bit prefix (RFC 9204 4.1.1, RFC 7541 5.1) after `flags`.
void put_prefixed(std::vector<std::uint8_t>& out, std::uint8_t flags, int bits, std::uint64_t v) {
    const std::uint64_t max = (std::uint64_t{1} << bits) - 1;
    if (v < max) {
        out.push_back(static_cast<std::uint8_t>(flags | v));
        return;
    }
    out.push_back(static_cast<std::uint8_t>(flags | max));
    for (v -= max; v >= 128; v >>= 7) out.push_back(static_cast<std::uint8_t>(0x80 | (v & 0x7f)));
    out.push_back(static_cast<std::uint8_t>(v));
}

bool get_prefixed(std::span<const std::uint8_t> in, std::size_t& at, int bits, std::uint64_t& v) {
    if (at >= in.size()) return false;
    const std::uint64_t max = (std::uint64_t{1} << bits) - 1;
    v = in[at++] & max;
    if (v < max) return true;
    for (int shift = 0; at < in.size() && shift < 56; shift += 7) {
        const auto b = in[at++];
        v += std::uint64_t{b & 0x7fU} << shift;
        if ((b & 0x80) == 0) return true;
    }
    return false;
}

// A string literal without Huffman coding (H = 0, a 7-bit length prefix).
void put_literal(std::vector<std::uint8_t>& out, std::string_view text) {
    put_prefixed(out, 0x00, 7, text.size());
    out.insert(out.end(), text.begin(), text.end());
}

// One whole frame at `at`: its type and payload; false when the bytes end before it does.
bool next_frame(std::span<const std::uint8_t> in, std::size_t& at, std::uint64_t& type,
                std::span<const std::uint8_t>& payload) {
    std::uint64_t length = 0;
    if (!get_varint(in, at, type) || !get_varint(in, at, length) || in.size() - at < length) {
        return false;
    }
    payload = in.subspan(at, static_cast<std::size_t>(length));
    at += static_cast<std::size_t>(length);
    return true;
}

// A request's HEADERS frame: `method` an indexed field line of the static table, then
// :scheme, :path, :authority and, when `length` is set, content-length (and, when
// `expect_continue`, expect: 100-continue; when `content_type` is not empty, content-type).
std::vector<std::uint8_t> h3_request(std::uint8_t method, std::string_view path,
                                     const std::uint64_t* length, bool expect_continue,
                                     std::string_view content_type = {}) {
    // Required Insert Count 0 and Base 0: no dynamic table (RFC 9204 4.5.1).
    std::vector<std::uint8_t> fields{0x00, 0x00};
    fields.push_back(method);
    fields.push_back(0xd7);  // indexed, static 23: :scheme https
    if (path == "/") {
        fields.push_back(0xc1);  // indexed, static 1: :path /
    } else {
        fields.push_back(0x51);  // literal with the name of static 1 (:path)
        put_literal(fields, path);
    }
    fields.push_back(0x50);  // literal with the name of static 0 (:authority)
    put_literal(fields, "127.0.0.1");
    if (length != nullptr) {
        fields.push_back(0x54);  // literal with the name of static 4 (content-length)
        put_literal(fields, std::to_string(*length));
    }
    if (expect_continue) {
        // A literal field line with a literal name (RFC 9204 4.5.6): expect: 100-continue.
        constexpr std::string_view name = "expect";
        put_prefixed(fields, 0x20, 3, name.size());
        fields.insert(fields.end(), name.begin(), name.end());
        put_literal(fields, "100-continue");
    }
    if (!content_type.empty()) {
        // A literal with the name of static 44 (content-type), 4-bit prefix (RFC 9204 4.5.4).
        put_prefixed(fields, 0x50, 4, 44);
        put_literal(fields, content_type);
    }
    std::vector<std::uint8_t> frame;
    put_varint(frame, 0x01);  // HEADERS
    put_varint(frame, fields.size());
    frame.insert(frame.end(), fields.begin(), fields.end());
    return frame;
}

}  // namespace

std::vector<std::uint8_t> h3_control_stream() {
    return {0x00, 0x04, 0x00};  // stream type control; SETTINGS, empty
}

std::vector<std::uint8_t> h3_get(std::string_view path) {
    return h3_request(0xd1, path, nullptr, false);  // indexed, static 17: :method GET
}

std::vector<std::uint8_t> h3_post(std::string_view path, std::uint64_t length,
                                  bool expect_continue) {
    // Indexed, static 20: :method POST.
    return h3_request(0xd4, path, &length, expect_continue);
}

std::vector<std::uint8_t> h3_post(std::string_view path) {
    return h3_request(0xd4, path, nullptr, false);  // indexed, static 20: :method POST
}

std::vector<std::uint8_t> h3_post_typed(std::string_view path, std::uint64_t length,
                                        std::string_view content_type) {
    return h3_request(0xd4, path, &length, false, content_type);
}

std::vector<std::uint8_t> h3_data(std::string_view payload) {
    std::vector<std::uint8_t> frame;
    put_varint(frame, 0x00);  // DATA
    put_varint(frame, payload.size());
    frame.insert(frame.end(), payload.begin(), payload.end());
    return frame;
}

namespace {

// The status of a HEADERS frame's field section that starts with an indexed :status of
// QPACK's static table (RFC 9204 Appendix A's :status rows); 0 otherwise.
int status_of(std::span<const std::uint8_t> fields) {
    if (fields.size() < 3 || fields[0] != 0 || fields[1] != 0 || (fields[2] & 0xc0) != 0xc0) {
        return 0;
    }
    std::size_t i = 2;
    std::uint64_t index = 0;
    if (!get_prefixed(fields, i, 6, index)) return 0;
    static constexpr std::array<int, 5> rows_24_to_28{103, 200, 304, 404, 503};
    static constexpr std::array<int, 9> rows_63_to_71{100, 204, 206, 302, 400, 403, 421, 425, 500};
    if (index >= 24 && index <= 28) return rows_24_to_28[index - 24];
    if (index >= 63 && index <= 71) return rows_63_to_71[index - 63];
    return 0;
}

}  // namespace

int h3_status(std::span<const std::uint8_t> bytes) {
    std::size_t at = 0;
    std::uint64_t type = 0;
    std::span<const std::uint8_t> fields;
    if (!next_frame(bytes, at, type, fields) || type != 0x01) return 0;
    return status_of(fields);
}

std::vector<int> h3_statuses(std::span<const std::uint8_t> bytes) {
    std::vector<int> statuses;
    std::size_t at = 0;
    std::uint64_t type = 0;
    std::span<const std::uint8_t> payload;
    while (next_frame(bytes, at, type, payload)) {
        if (type == 0x01) statuses.push_back(status_of(payload));  // HEADERS
    }
    return statuses;
}

std::string h3_body(std::span<const std::uint8_t> bytes) {
    std::string body;
    std::size_t at = 0;
    std::uint64_t type = 0;
    std::span<const std::uint8_t> payload;
    while (next_frame(bytes, at, type, payload)) {
        if (type == 0x00) body.append(payload.begin(), payload.end());  // DATA
    }
    return body;
}

}  // namespace tern_test
