#include "support/raw_client.hpp"

// The socket calls of libtern's platform seam (POSIX, or Winsock on Windows), header-only.
#include "platform/socket_api.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#if !defined(_WIN32)
#include <sys/un.h>
#endif

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>

namespace tern_test {

namespace {

namespace platform = tern::detail::platform;
static_assert(sizeof(socket_type) == sizeof(platform::native_socket) &&
              no_socket == static_cast<socket_type>(platform::invalid_socket));

char lower(char c) noexcept {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// Printable form of received bytes for error messages: control bytes escaped, truncated.
std::string printable(std::string_view bytes, std::size_t limit = 300) {
    std::string out;
    for (std::size_t i = 0; i < bytes.size() && i < limit; ++i) {
        const char c = bytes[i];
        if (c == '\r') {
            out += "\\r";
        } else if (c == '\n') {
            out += "\\n";
        } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) {
            static constexpr char hex[] = "0123456789abcdef";
            const auto u = static_cast<unsigned char>(c);
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 0xf];
        } else {
            out += c;
        }
    }
    if (bytes.size() > limit) out += "...(" + std::to_string(bytes.size()) + " bytes)";
    return out;
}

// Connects a new blocking stream socket to `addr`, not inherited by child processes; returns
// it, or no_socket with errno. TCP sockets get TCP_NODELAY.
socket_type open_socket(const sockaddr_storage& addr, platform::socket_length size) {
#if defined(_WIN32)
    platform::start_sockets();
    const platform::native_socket fd =
        ::WSASocketW(addr.ss_family, SOCK_STREAM, 0, nullptr, 0, WSA_FLAG_NO_HANDLE_INHERIT);
    if (fd == platform::invalid_socket) {
        platform::errno_from_socket_error();
        return no_socket;
    }
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), size) != 0) {
        const int err = platform::errno_from_socket_error();
        platform::close_socket(fd);
        errno = err;
        return no_socket;
    }
#else
    const int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return no_socket;
    int rc = 0;
    do {
        rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), size);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        const int err = errno;
        ::close(fd);
        errno = err;
        return no_socket;
    }
    if (addr.ss_family == AF_UNIX) return fd;
#endif
    platform::set_no_delay(fd);
    return static_cast<socket_type>(fd);
}

// Connects a new socket to 127.0.0.1:port; returns it, or no_socket with errno.
socket_type open_socket(std::uint16_t port) {
    sockaddr_storage storage{};
    auto& addr = reinterpret_cast<sockaddr_in&>(storage);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return open_socket(storage, sizeof addr);
}

// The socket open_socket returned; throws client_error naming `where` when there is none.
socket_type connected(socket_type fd, const std::string& where) {
    if (fd == no_socket) {
        throw client_error("raw_client: cannot connect to " + where + ": " + std::strerror(errno));
    }
    return fd;
}

platform::native_socket native(socket_type fd) noexcept {
    return static_cast<platform::native_socket>(fd);
}

// poll(2) of `fd` for `events` (WSAPoll on Windows) for `ms` milliseconds: the number ready
// (then `revents` says what), 0 on timeout, -1 with errno.
int poll_one(socket_type fd, short events, int ms, short* revents = nullptr) noexcept {
    pollfd pfd{native(fd), events, 0};
    const int ready = platform::poll_sockets(&pfd, 1, ms);
    if (revents != nullptr) *revents = pfd.revents;
    return ready;
}

}  // namespace

// ---- response and helpers ---------------------------------------------------------------

std::optional<std::string> response::header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
        if (iequals(n, name)) return v;
    }
    return std::nullopt;
}

std::size_t response::header_count(std::string_view name) const {
    return static_cast<std::size_t>(std::count_if(
        headers.begin(), headers.end(), [&](const auto& h) { return iequals(h.first, name); }));
}

std::string describe(const response& r) {
    std::string out = r.version + " " + std::to_string(r.status) + " " + r.reason + " |";
    for (const auto& [n, v] : r.headers) out += " " + n + ": " + v + " |";
    out += " body(" + std::to_string(r.body.size()) + "): " + printable(r.body, 120);
    return out;
}

bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
}

bool has_token(std::string_view list, std::string_view token) {
    while (!list.empty()) {
        const std::size_t comma = list.find(',');
        const std::string_view item = trim(list.substr(0, comma));
        if (iequals(item, token)) return true;
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
    }
    return false;
}

bool is_imf_fixdate(std::string_view v) {
    // "Sun, 06 Nov 1994 08:49:37 GMT"
    //  0123456789012345678901234567 8
    if (v.size() != 29) return false;
    static constexpr std::array<std::string_view, 7> days{"Mon", "Tue", "Wed", "Thu",
                                                          "Fri", "Sat", "Sun"};
    static constexpr std::array<std::string_view, 12> months{
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    const auto digits = [&](std::size_t pos, std::size_t n) {
        for (std::size_t i = pos; i < pos + n; ++i) {
            if (!is_digit(v[i])) return false;
        }
        return true;
    };
    const auto number = [&](std::size_t pos, std::size_t n) {
        int value = 0;
        for (std::size_t i = pos; i < pos + n; ++i) value = value * 10 + (v[i] - '0');
        return value;
    };
    if (std::find(days.begin(), days.end(), v.substr(0, 3)) == days.end()) return false;
    if (v.substr(3, 2) != ", " || !digits(5, 2) || v[7] != ' ') return false;
    if (std::find(months.begin(), months.end(), v.substr(8, 3)) == months.end()) return false;
    if (v[11] != ' ' || !digits(12, 4) || v[16] != ' ') return false;
    if (!digits(17, 2) || v[19] != ':' || !digits(20, 2) || v[22] != ':' || !digits(23, 2)) {
        return false;
    }
    if (v.substr(25) != " GMT") return false;
    const int day = number(5, 2);
    return day >= 1 && day <= 31 && number(17, 2) <= 23 && number(20, 2) <= 59 &&
           number(23, 2) <= 60;
}

std::string get_request(std::string_view target, std::string_view extra_headers) {
    std::string out = "GET ";
    out += target;
    out += " HTTP/1.1\r\nHost: localhost\r\n";
    out += extra_headers;
    out += "\r\n";
    return out;
}

std::string body_request(std::string_view method, std::string_view target, std::string_view body,
                         std::string_view extra_headers) {
    std::string out(method);
    out += ' ';
    out += target;
    out += " HTTP/1.1\r\nHost: localhost\r\n";
    out += extra_headers;
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    out += body;
    return out;
}

// ---- TLS ------------------------------------------------------------------------------------

// The OpenSSL objects of one TLS connection. The SSL object reads and writes the socket
// through a BIO of our own (below) rather than OpenSSL's socket BIO, whose write(2) would
// raise SIGPIPE when the server has gone; this one passes MSG_NOSIGNAL as send() does (where
// the system has it: platform::no_signal).
struct raw_client::tls_state {
    SSL_CTX* ctx = nullptr;
    SSL* ssl = nullptr;
    socket_type fd = no_socket;
    bool eof = false;    // a read of the BIO saw the TCP end of input
    int io_errno = 0;    // errno of the BIO's last failed recv or send
    std::string alerts;  // alerts received and sent (not close_notify), for tls_error()

    explicit tls_state(socket_type socket) : fd(socket) {}
    ~tls_state() {
        SSL_free(ssl);  // frees the BIO too
        SSL_CTX_free(ctx);
    }
    tls_state(const tls_state&) = delete;
    tls_state& operator=(const tls_state&) = delete;

    // Builds ctx and ssl for `options` (no BIO yet); throws client_error when unusable.
    void setup(const tls_options& options);
    // Attaches the socket BIO.
    void attach_socket();
    // Sends close_notify once (errors ignored: the peer may be gone).
    void shutdown() noexcept;
    // OpenSSL's queued errors (consumed) and what else explains `ssl_error`.
    std::string describe(int ssl_error);

    static BIO_METHOD* socket_method();
    static int bio_write(BIO* bio, const char* data, std::size_t size, std::size_t* written);
    static int bio_read(BIO* bio, char* data, std::size_t size, std::size_t* read);
    static long bio_ctrl(BIO* bio, int cmd, long num, void* ptr);
    static void info_callback(const SSL* ssl, int where, int ret);
};

namespace {

// OpenSSL's queued errors, consumed, joined by "; ".
std::string take_openssl_errors() {
    std::string out;
    while (const unsigned long e = ERR_get_error()) {
        char text[256];
        ERR_error_string_n(e, text, sizeof text);
        if (!out.empty()) out += "; ";
        out += text;
    }
    return out;
}

[[noreturn]] void fail_setup(const std::string& what) {
    std::string message = "raw_client: TLS setup: " + what;
    if (const std::string errors = take_openssl_errors(); !errors.empty()) {
        message += ": " + errors;
    }
    throw client_error(message);
}

// A password callback that gives none: an encrypted key fails instead of prompting.
int no_password(char*, int, int, void*) { return -1; }

// Waits until `fd` is ready for `events` or the deadline passes: true when ready.
bool wait_for(socket_type fd, short events, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        const int ready = poll_one(fd, events, static_cast<int>(left.count()));
        if (ready < 0) {
            if (errno == EINTR) continue;
            throw client_error(std::string("raw_client: poll failed: ") + std::strerror(errno));
        }
        return ready > 0;
    }
}

}  // namespace

void raw_client::tls_state::setup(const tls_options& options) {
    ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == nullptr) fail_setup("SSL_CTX_new");
    // A TCP close without close_notify reads as a close (SSL_ERROR_ZERO_RETURN, told apart
    // by `eof`), as curl does, instead of a fatal error that sends the server an alert.
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    const auto old_version = [](int v) { return v > 0 && v < TLS1_2_VERSION; };
    // OpenSSL 3 offers TLS 1.0 and 1.1 only at security level 0.
    if (old_version(options.min_version) || old_version(options.max_version)) {
        SSL_CTX_set_security_level(ctx, 0);
    }
    if (options.min_version != 0 && SSL_CTX_set_min_proto_version(ctx, options.min_version) != 1) {
        fail_setup("min_version " + std::to_string(options.min_version));
    }
    if (options.max_version != 0 && SSL_CTX_set_max_proto_version(ctx, options.max_version) != 1) {
        fail_setup("max_version " + std::to_string(options.max_version));
    }
    if (!options.cipher_list.empty() &&
        SSL_CTX_set_cipher_list(ctx, options.cipher_list.c_str()) != 1) {
        fail_setup("cipher_list \"" + options.cipher_list + "\"");
    }
    if (!options.ca_pem.empty()) {
        BIO* bio = BIO_new_mem_buf(options.ca_pem.data(), static_cast<int>(options.ca_pem.size()));
        if (bio == nullptr) fail_setup("BIO_new_mem_buf");
        X509_STORE* store = SSL_CTX_get_cert_store(ctx);
        int added = 0;
        while (X509* cert = PEM_read_bio_X509(bio, nullptr, no_password, nullptr)) {
            const int ok = X509_STORE_add_cert(store, cert);
            X509_free(cert);
            if (ok != 1) {
                BIO_free(bio);
                fail_setup("X509_STORE_add_cert");
            }
            ++added;
        }
        BIO_free(bio);
        if (added == 0) fail_setup("ca_pem holds no certificate");
        ERR_clear_error();  // the read that ended the loop queued "no start line"
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    }
    if (!options.client_cert_pem.empty() || !options.client_key_pem.empty()) {
        BIO* cert_bio = BIO_new_mem_buf(options.client_cert_pem.data(),
                                        static_cast<int>(options.client_cert_pem.size()));
        X509* cert =
            cert_bio ? PEM_read_bio_X509(cert_bio, nullptr, no_password, nullptr) : nullptr;
        BIO_free(cert_bio);
        const int cert_ok = cert ? SSL_CTX_use_certificate(ctx, cert) : 0;
        X509_free(cert);
        if (cert_ok != 1) fail_setup("client_cert_pem");
        BIO* key_bio = BIO_new_mem_buf(options.client_key_pem.data(),
                                       static_cast<int>(options.client_key_pem.size()));
        EVP_PKEY* key =
            key_bio ? PEM_read_bio_PrivateKey(key_bio, nullptr, no_password, nullptr) : nullptr;
        BIO_free(key_bio);
        const int key_ok = key ? SSL_CTX_use_PrivateKey(ctx, key) : 0;
        EVP_PKEY_free(key);
        if (key_ok != 1) fail_setup("client_key_pem");
        if (SSL_CTX_check_private_key(ctx) != 1) fail_setup("client key and certificate");
    }
    if (!options.alpn.empty()) {
        // RFC 7301 §3.1: each protocol name prefixed by its one-byte length.
        std::string wire;
        for (const std::string& protocol : options.alpn) {
            if (protocol.empty() || protocol.size() > 255) {
                fail_setup("ALPN protocol \"" + protocol + "\" must be 1 to 255 bytes");
            }
            wire += static_cast<char>(protocol.size());
            wire += protocol;
        }
        // SSL_CTX_set_alpn_protos returns 0 on success.
        if (SSL_CTX_set_alpn_protos(ctx, reinterpret_cast<const unsigned char*>(wire.data()),
                                    static_cast<unsigned int>(wire.size())) != 0) {
            fail_setup("SSL_CTX_set_alpn_protos");
        }
    }

    ssl = SSL_new(ctx);
    if (ssl == nullptr) fail_setup("SSL_new");
    // Without AUTO_RETRY, an SSL_read that handled only handshake records (TLS 1.3 session
    // tickets) returns WANT_READ instead of blocking for application data, so the caller
    // polls again and its deadline holds.
    SSL_clear_mode(ssl, SSL_MODE_AUTO_RETRY);
    SSL_set_app_data(ssl, this);
    SSL_set_info_callback(ssl, info_callback);
    if (!options.server_name.empty() &&
        SSL_set_tlsext_host_name(ssl, options.server_name.c_str()) != 1) {
        fail_setup("server_name \"" + options.server_name + "\"");
    }
    SSL_set_connect_state(ssl);
}

void raw_client::tls_state::attach_socket() {
    BIO* bio = BIO_new(socket_method());
    if (bio == nullptr) fail_setup("BIO_new");
    BIO_set_data(bio, this);
    BIO_set_init(bio, 1);
    SSL_set_bio(ssl, bio, bio);  // one reference, owned by ssl
}

void raw_client::tls_state::shutdown() noexcept {
    if ((SSL_get_shutdown(ssl) & SSL_SENT_SHUTDOWN) == 0) SSL_shutdown(ssl);
    ERR_clear_error();
}

std::string raw_client::tls_state::describe(int ssl_error) {
    std::string out = take_openssl_errors();
    const auto add = [&](const std::string& text) {
        if (!out.empty()) out += "; ";
        out += text;
    };
    if (ssl_error == SSL_ERROR_SYSCALL) {
        add(io_errno != 0 ? std::string(std::strerror(io_errno))
                          : std::string("the connection closed"));
    } else if (ssl_error == SSL_ERROR_ZERO_RETURN) {
        add(eof ? "the server closed the connection without close_notify"
                : "the server sent close_notify");
    }
    if (const long verify = SSL_get_verify_result(ssl);
        (SSL_get_verify_mode(ssl) & SSL_VERIFY_PEER) != 0 && verify != X509_V_OK) {
        add(std::string("certificate verify result: ") + X509_verify_cert_error_string(verify));
    }
    if (!alerts.empty()) add(alerts);
    if (out.empty()) add("SSL error " + std::to_string(ssl_error));
    return out;
}

BIO_METHOD* raw_client::tls_state::socket_method() {
    static BIO_METHOD* const method = [] {
        BIO_METHOD* m =
            BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "tern_test socket");
        if (m != nullptr) {
            BIO_meth_set_write_ex(m, bio_write);
            BIO_meth_set_read_ex(m, bio_read);
            BIO_meth_set_ctrl(m, bio_ctrl);
        }
        return m;
    }();
    return method;
}

int raw_client::tls_state::bio_write(BIO* bio, const char* data, std::size_t size,
                                     std::size_t* written) {
    auto* state = static_cast<tls_state*>(BIO_get_data(bio));
    BIO_clear_retry_flags(bio);
    for (;;) {
        const ssize_t n = platform::send_bytes(native(state->fd), data, size, platform::no_signal);
        if (n >= 0) {
            *written = static_cast<std::size_t>(n);
            return 1;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            BIO_set_retry_write(bio);
        } else {
            state->io_errno = errno;
        }
        *written = 0;
        return 0;
    }
}

int raw_client::tls_state::bio_read(BIO* bio, char* data, std::size_t size, std::size_t* read) {
    auto* state = static_cast<tls_state*>(BIO_get_data(bio));
    BIO_clear_retry_flags(bio);
    *read = 0;
    if (size == 0) return 0;
    for (;;) {
        const ssize_t n = platform::receive_bytes(native(state->fd), data, size, 0);
        if (n > 0) {
            *read = static_cast<std::size_t>(n);
            return 1;
        }
        if (n == 0) {
            state->eof = true;  // BIO_CTRL_EOF tells OpenSSL: "unexpected eof while reading"
            return 0;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            BIO_set_retry_read(bio);
        } else {
            state->io_errno = errno;
        }
        return 0;
    }
}

long raw_client::tls_state::bio_ctrl(BIO* bio, int cmd, long, void*) {
    switch (cmd) {
        case BIO_CTRL_FLUSH:
            return 1;
        case BIO_CTRL_EOF:
            return static_cast<tls_state*>(BIO_get_data(bio))->eof ? 1 : 0;
        default:
            return 0;
    }
}

void raw_client::tls_state::info_callback(const SSL* ssl, int where, int ret) {
    if ((where & SSL_CB_ALERT) == 0 || (ret & 0xff) == SSL_AD_CLOSE_NOTIFY) return;
    auto* state = static_cast<tls_state*>(SSL_get_app_data(ssl));
    if (!state->alerts.empty()) state->alerts += "; ";
    state->alerts += (where & SSL_CB_READ) ? "alert received: " : "alert sent: ";
    state->alerts += SSL_alert_type_string_long(ret);
    state->alerts += ' ';
    state->alerts += SSL_alert_desc_string_long(ret);
    state->alerts += " (" + std::to_string(ret & 0xff) + ")";  // 3.0 names no TLS 1.3 alert
}

std::string tls_client_hello(const tls_options& options) {
    ERR_clear_error();
    raw_client::tls_state state(no_socket);
    state.setup(options);
    BIO* in = BIO_new(BIO_s_mem());
    BIO* out = BIO_new(BIO_s_mem());
    if (in == nullptr || out == nullptr) {
        BIO_free(in);
        BIO_free(out);
        fail_setup("BIO_new");
    }
    SSL_set_bio(state.ssl, in, out);
    // With nothing to read, SSL_connect writes the ClientHello and waits for the server.
    const int rc = SSL_connect(state.ssl);
    if (SSL_get_error(state.ssl, rc) != SSL_ERROR_WANT_READ) fail_setup("SSL_connect");
    char* data = nullptr;
    const long n = BIO_get_mem_data(out, &data);
    return std::string(data, static_cast<std::size_t>(n));
}

bool raw_client::start_tls(const tls_options& options) {
    if (fd_ == no_socket) throw client_error("raw_client: start_tls on a closed client");
    if (tls_ != nullptr) throw client_error("raw_client: start_tls: TLS is already active");
    tls_error_.clear();
    ERR_clear_error();
    auto state = std::make_unique<tls_state>(fd_);
    state->setup(options);
    state->attach_socket();

    // The handshake runs on a non-blocking socket so that the read deadline bounds it;
    // the socket is blocking again afterwards, as for the plain path.
    if (!platform::set_non_blocking(native(fd_))) {
        throw client_error(std::string("raw_client: cannot make the socket non-blocking: ") +
                           std::strerror(errno));
    }
    const auto deadline = clock::now() + timeout_;
    std::string error;
    for (;;) {
        ERR_clear_error();
        state->io_errno = 0;
        const int rc = SSL_connect(state->ssl);
        if (rc == 1) break;
        const int e = SSL_get_error(state->ssl, rc);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            if (wait_for(fd_, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) continue;
            error = "timed out: the handshake did not finish within " +
                    std::to_string(timeout_.count()) + " ms";
            if (!state->alerts.empty()) error += "; " + state->alerts;
            break;
        }
        error = state->describe(e);
        break;
    }
    platform::set_non_blocking(native(fd_), false);
    if (!error.empty()) {
        tls_error_ = std::move(error);
        return false;
    }
    tls_ = state.release();
    return true;
}

std::string raw_client::tls_version() const {
    return tls_ != nullptr ? SSL_get_version(tls_->ssl) : std::string();
}

std::string raw_client::tls_alpn() const {
    if (tls_ == nullptr) return {};
    const unsigned char* data = nullptr;
    unsigned int size = 0;
    SSL_get0_alpn_selected(tls_->ssl, &data, &size);
    return data != nullptr ? std::string(reinterpret_cast<const char*>(data), size) : std::string();
}

std::string raw_client::tls_peer_cert_pem() const {
    if (tls_ == nullptr) return {};
    X509* cert = SSL_get1_peer_certificate(tls_->ssl);
    if (cert == nullptr) return {};
    std::string out;
    if (BIO* bio = BIO_new(BIO_s_mem())) {
        if (PEM_write_bio_X509(bio, cert) == 1) {
            char* data = nullptr;
            const long n = BIO_get_mem_data(bio, &data);
            out.assign(data, static_cast<std::size_t>(n));
        }
        BIO_free(bio);
    }
    X509_free(cert);
    return out;
}

std::string raw_client::tls_cipher() const {
    return tls_ != nullptr ? SSL_get_cipher_name(tls_->ssl) : std::string();
}

bool raw_client::tls_close_notify_received() const noexcept {
    // SSL_OP_IGNORE_UNEXPECTED_EOF marks a bare TCP close as received shutdown too.
    return tls_ != nullptr && (SSL_get_shutdown(tls_->ssl) & SSL_RECEIVED_SHUTDOWN) != 0 &&
           !tls_->eof;
}

void raw_client::tls_send(std::string_view bytes) {
    while (!bytes.empty()) {
        ERR_clear_error();
        tls_->io_errno = 0;
        std::size_t written = 0;
        if (SSL_write_ex(tls_->ssl, bytes.data(), bytes.size(), &written) == 1) {
            bytes.remove_prefix(written);
            continue;
        }
        // The socket's own error first: after a close_notify, SSL_get_error says
        // ZERO_RETURN for any failure, including an EPIPE from the socket.
        if (tls_->io_errno != 0) {
            ERR_clear_error();
            throw client_error(std::string("raw_client: send failed: ") +
                               std::strerror(tls_->io_errno));
        }
        const int e = SSL_get_error(tls_->ssl, 0);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) continue;
        throw client_error("raw_client: TLS send failed: " + tls_->describe(e));
    }
}

raw_client::recv_status raw_client::tls_receive_some(clock::time_point deadline) {
    for (;;) {
        // Bytes OpenSSL has decrypted already are not in the socket for poll to see.
        if (SSL_pending(tls_->ssl) == 0 && !wait_for(fd_, POLLIN, deadline)) {
            return recv_status::timed_out;
        }
        std::array<char, 64 * 1024> chunk;
        ERR_clear_error();
        tls_->io_errno = 0;
        std::size_t n = 0;
        if (SSL_read_ex(tls_->ssl, chunk.data(), chunk.size(), &n) == 1) {
            buffer_.append(chunk.data(), n);
            return recv_status::data;
        }
        const int e = SSL_get_error(tls_->ssl, 0);
        switch (e) {
            case SSL_ERROR_WANT_READ:
            case SSL_ERROR_WANT_WRITE:
                continue;  // handshake records only (a session ticket): wait again
            case SSL_ERROR_ZERO_RETURN:
                // close_notify, or a TCP close without one (SSL_OP_IGNORE_UNEXPECTED_EOF).
                if (tls_->eof) tls_error_ = tls_->describe(e);
                peer_closed_ = true;
                return recv_status::closed;
            case SSL_ERROR_SYSCALL:
                if (tls_->io_errno == 0 || tls_->io_errno == ECONNRESET) {
                    tls_error_ = tls_->describe(e);
                    peer_closed_ = true;
                    return recv_status::closed;
                }
                throw client_error("raw_client: recv failed: " + tls_->describe(e));
            case SSL_ERROR_SSL: {
                // A fatal alert from the server ends the connection; anything else (a
                // record that does not decrypt) is a server bug the test should see.
                const unsigned long first = ERR_peek_error();
                if (ERR_GET_LIB(first) == ERR_LIB_SSL &&
                    ERR_GET_REASON(first) >= SSL_AD_REASON_OFFSET) {
                    tls_error_ = tls_->describe(e);
                    peer_closed_ = true;
                    return recv_status::closed;
                }
                throw client_error("raw_client: TLS read failed: " + tls_->describe(e));
            }
            default:
                throw client_error("raw_client: TLS read failed: " + tls_->describe(e));
        }
    }
}

// ---- raw_client -----------------------------------------------------------------------------

raw_client::raw_client(std::uint16_t port) { connect(port); }

raw_client::~raw_client() { close(); }

raw_client::raw_client(raw_client&& other) noexcept
    : fd_(std::exchange(other.fd_, no_socket)),
      tls_(std::exchange(other.tls_, nullptr)),
      tls_error_(std::move(other.tls_error_)),
      peer_closed_(other.peer_closed_),
      buffer_(std::move(other.buffer_)),
      timeout_(other.timeout_) {}

raw_client& raw_client::operator=(raw_client&& other) noexcept {
    if (this != &other) {
        close();
        fd_ = std::exchange(other.fd_, no_socket);
        tls_ = std::exchange(other.tls_, nullptr);
        tls_error_ = std::move(other.tls_error_);
        peer_closed_ = other.peer_closed_;
        buffer_ = std::move(other.buffer_);
        timeout_ = other.timeout_;
    }
    return *this;
}

void raw_client::connect(std::uint16_t port) {
    close();
    adopt(connected(open_socket(port), "127.0.0.1:" + std::to_string(port)));
}

void raw_client::connect(std::string_view address, std::uint16_t port) {
    close();
    sockaddr_storage storage{};
    platform::socket_length size = 0;
    const std::string text(address);
    if (auto& v4 = reinterpret_cast<sockaddr_in&>(storage);
        ::inet_pton(AF_INET, text.c_str(), &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons(port);
        size = sizeof v4;
    } else if (auto& v6 = reinterpret_cast<sockaddr_in6&>(storage);
               ::inet_pton(AF_INET6, text.c_str(), &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(port);
        size = sizeof v6;
    } else {
        throw client_error("raw_client: \"" + text + "\" is not a numeric IP address");
    }
    adopt(connected(open_socket(storage, size), text + " port " + std::to_string(port)));
}

void raw_client::connect_unix(std::string_view path) {
    close();
#if defined(_WIN32)
    throw client_error("raw_client: no Unix socket on Windows: " + std::string(path));
#else
    sockaddr_storage storage{};
    auto& addr = reinterpret_cast<sockaddr_un&>(storage);
    if (path.size() >= sizeof addr.sun_path) {
        throw client_error("raw_client: Unix socket path too long: " + std::string(path));
    }
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, path.size());
    adopt(connected(open_socket(storage, sizeof addr), "the Unix socket " + std::string(path)));
#endif
}

void raw_client::adopt(socket_type fd) noexcept {
    fd_ = fd;
    peer_closed_ = false;
    tls_error_.clear();
}

int raw_client::connect_error(std::uint16_t port) {
    const socket_type fd = open_socket(port);
    if (fd == no_socket) return errno;
    platform::close_socket(native(fd));
    return 0;
}

void raw_client::close() noexcept {
    delete std::exchange(tls_, nullptr);
    if (fd_ != no_socket) platform::close_socket(native(fd_));
    fd_ = no_socket;
    buffer_.clear();
}

void raw_client::send(std::string_view bytes) {
    if (fd_ == no_socket) throw client_error("raw_client: send on a closed client");
    if (tls_ != nullptr) return tls_send(bytes);
    while (!bytes.empty()) {
        const ssize_t n =
            platform::send_bytes(native(fd_), bytes.data(), bytes.size(), platform::no_signal);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw client_error(std::string("raw_client: send failed: ") + std::strerror(errno));
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
}

std::size_t raw_client::send_while_reading(std::string_view bytes,
                                           std::chrono::milliseconds timeout) {
    if (fd_ == no_socket) throw client_error("raw_client: send on a closed client");
    if (tls_ != nullptr) throw client_error("raw_client: send_while_reading over TLS");
    const auto deadline = clock::now() + timeout;
#if defined(_WIN32)
    // No MSG_DONTWAIT on Windows: the socket is non-blocking while this runs.
    platform::set_non_blocking(native(fd_));
    struct blocking_again {
        socket_type fd;
        ~blocking_again() { platform::set_non_blocking(native(fd), false); }
    } restore{fd_};
#endif
    std::size_t sent = 0;
    while (sent < bytes.size()) {
        const ssize_t n =
            platform::send_bytes(native(fd_), bytes.data() + sent, bytes.size() - sent,
                                 platform::no_signal | platform::dont_wait);
        if (n > 0) {
            sent += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) break;  // EPIPE, ECONNRESET
        // The socket is full: wait until it takes more, reading what the server sends
        // meanwhile (once it has closed its side there is nothing more to read).
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
        if (left.count() <= 0) break;
        short revents = 0;
        const int ready =
            poll_one(fd_, static_cast<short>(peer_closed_ ? POLLOUT : POLLIN | POLLOUT),
                     static_cast<int>(left.count()), &revents);
        if (ready < 0 && errno != EINTR) {
            throw client_error(std::string("raw_client: poll failed: ") + std::strerror(errno));
        }
        if (ready > 0 && !peer_closed_ && (revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            receive_some(deadline);  // poll says it will not wait
        }
    }
    return sent;
}

void raw_client::send_raw_and_close(std::string_view bytes) {
    send(bytes);
    close();
}

void raw_client::shutdown_write() {
    if (fd_ == no_socket) return;
    if (tls_ != nullptr) tls_->shutdown();
    ::shutdown(native(fd_), platform::shut_write);
}

raw_client::recv_status raw_client::receive_some(clock::time_point deadline) {
    if (fd_ == no_socket) throw client_error("raw_client: read on a closed client");
    if (peer_closed_) return recv_status::closed;
    if (tls_ != nullptr) return tls_receive_some(deadline);
    for (;;) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
        if (left.count() <= 0) return recv_status::timed_out;
        const int ready = poll_one(fd_, POLLIN, static_cast<int>(left.count()));
        if (ready < 0) {
            if (errno == EINTR) continue;
            throw client_error(std::string("raw_client: poll failed: ") + std::strerror(errno));
        }
        if (ready == 0) return recv_status::timed_out;
        std::array<char, 64 * 1024> chunk;
        const ssize_t n = platform::receive_bytes(native(fd_), chunk.data(), chunk.size(), 0);
        if (n > 0) {
            buffer_.append(chunk.data(), static_cast<std::size_t>(n));
            return recv_status::data;
        }
        if (n == 0 || errno == ECONNRESET) {
            peer_closed_ = true;
            return recv_status::closed;
        }
        if (errno == EINTR || errno == EAGAIN) continue;
        throw client_error(std::string("raw_client: recv failed: ") + std::strerror(errno));
    }
}

void raw_client::fail(std::string_view what, std::string_view why) const {
    throw client_error("raw_client: " + std::string(what) + ": " + std::string(why) +
                       "; received so far: \"" + printable(buffer_) + "\"");
}

void raw_client::fill_to(std::size_t n, clock::time_point deadline, std::string_view what) {
    while (buffer_.size() < n) {
        switch (receive_some(deadline)) {
            case recv_status::data:
                break;
            case recv_status::closed:
                fail(what, "connection closed early (wanted " + std::to_string(n) + " bytes)");
            case recv_status::timed_out:
                fail(what, "timed out (wanted " + std::to_string(n) + " bytes)");
        }
    }
}

std::size_t raw_client::fill_until(std::string_view delimiter, std::size_t from,
                                   clock::time_point deadline, std::string_view what) {
    for (;;) {
        const std::size_t pos = buffer_.find(delimiter, from);
        if (pos != std::string::npos) return pos;
        switch (receive_some(deadline)) {
            case recv_status::data:
                break;
            case recv_status::closed:
                fail(what, "connection closed early");
            case recv_status::timed_out:
                fail(what, "timed out");
        }
    }
}

response raw_client::read_response(bool head_request) {
    return read_response(head_request, timeout_);
}

response raw_client::read_response(bool head_request, std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    const std::size_t head_end = fill_until("\r\n\r\n", 0, deadline, "reading response head");
    const std::string head = buffer_.substr(0, head_end);
    buffer_.erase(0, head_end + 4);

    response r;
    const std::size_t line_end = std::min(head.find("\r\n"), head.size());
    const std::string_view status_line = std::string_view(head).substr(0, line_end);
    // "HTTP/1.1 200 OK": version SP 3DIGIT SP [reason]
    const std::size_t sp = status_line.find(' ');
    if (sp == std::string_view::npos || status_line.substr(0, 5) != "HTTP/" ||
        status_line.size() < sp + 4 || !is_digit(status_line[sp + 1]) ||
        !is_digit(status_line[sp + 2]) || !is_digit(status_line[sp + 3]) ||
        (status_line.size() > sp + 4 && status_line[sp + 4] != ' ')) {
        throw client_error("raw_client: malformed status line \"" + printable(status_line) + "\"");
    }
    r.version = std::string(status_line.substr(0, sp));
    std::from_chars(status_line.data() + sp + 1, status_line.data() + sp + 4, r.status);
    if (status_line.size() > sp + 5) r.reason = std::string(status_line.substr(sp + 5));

    std::size_t pos = line_end;
    while (pos < head.size()) {
        pos += 2;  // skip CRLF
        const std::size_t next = std::min(head.find("\r\n", pos), head.size());
        const std::string_view line = std::string_view(head).substr(pos, next - pos);
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0) {
            throw client_error("raw_client: malformed header line \"" + printable(line) + "\"");
        }
        r.headers.emplace_back(std::string(line.substr(0, colon)),
                               std::string(trim(line.substr(colon + 1))));
        pos = next;
    }

    const bool no_body =
        head_request || (r.status >= 100 && r.status < 200) || r.status == 204 || r.status == 304;
    if (no_body) return r;

    if (r.header_count("Content-Length") > 1) {
        throw client_error("raw_client: several Content-Length fields: " + describe(r));
    }
    if (const auto cl = r.header("Content-Length")) {
        std::size_t length = 0;
        const auto [end, ec] = std::from_chars(cl->data(), cl->data() + cl->size(), length);
        if (ec != std::errc{} || end != cl->data() + cl->size()) {
            throw client_error("raw_client: malformed Content-Length \"" + *cl + "\"");
        }
        fill_to(length, deadline, "reading response body");
        r.body = buffer_.substr(0, length);
        buffer_.erase(0, length);
        return r;
    }
    if (const auto te = r.header("Transfer-Encoding"); te && has_token(*te, "chunked")) {
        for (;;) {
            const std::size_t size_end = fill_until("\r\n", 0, deadline, "reading chunk size");
            std::size_t size = 0;
            const std::string size_field = buffer_.substr(0, buffer_.find_first_of(";\r"));
            const auto [end, ec] =
                std::from_chars(size_field.data(), size_field.data() + size_field.size(), size, 16);
            if (ec != std::errc{} || end != size_field.data() + size_field.size()) {
                throw client_error("raw_client: malformed chunk size \"" + printable(size_field) +
                                   "\"");
            }
            buffer_.erase(0, size_end + 2);
            if (size == 0) {
                // Trailer fields (ignored), then the empty line.
                fill_to(2, deadline, "reading the last chunk");
                const std::size_t trailer_end =
                    buffer_.compare(0, 2, "\r\n") == 0
                        ? 0
                        : fill_until("\r\n\r\n", 0, deadline, "reading trailers") + 2;
                buffer_.erase(0, trailer_end + 2);
                return r;
            }
            fill_to(size + 2, deadline, "reading chunk data");
            r.body.append(buffer_, 0, size);
            buffer_.erase(0, size + 2);
        }
    }
    // Neither: the body runs until the server closes.
    r.body = read_all_until_close(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()));
    return r;
}

std::string raw_client::read_all_until_close() { return read_all_until_close(timeout_); }

std::string raw_client::read_all_until_close(std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    for (;;) {
        switch (receive_some(deadline)) {
            case recv_status::data:
                break;
            case recv_status::closed:
                return std::exchange(buffer_, std::string());
            case recv_status::timed_out:
                fail("read_all_until_close", "the server did not close the connection in time");
        }
    }
}

bool raw_client::answered_within(std::chrono::milliseconds timeout) {
    if (!buffer_.empty() || peer_closed_) return true;
    return receive_some(clock::now() + timeout) != recv_status::timed_out;
}

bool raw_client::receive_more(std::chrono::milliseconds timeout) {
    if (peer_closed_) return false;
    return receive_some(clock::now() + timeout) == recv_status::data;
}

bool raw_client::closed_by_peer() { return closed_by_peer(timeout_); }

bool raw_client::closed_by_peer(std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    for (;;) {
        switch (receive_some(deadline)) {
            case recv_status::data:
                break;
            case recv_status::closed:
                return true;
            case recv_status::timed_out:
                return false;
        }
    }
}

std::vector<raw_client> open_clients(std::uint16_t port, std::size_t n) {
    std::vector<raw_client> clients;
    clients.reserve(n);
    for (std::size_t i = 0; i < n; ++i) clients.emplace_back(port);
    return clients;
}

}  // namespace tern_test
