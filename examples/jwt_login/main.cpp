// Logging in for a JSON Web Token and using it: POST /login checks a password against a
// PBKDF2 hash and answers a token signed with HMAC-SHA256 (HS256); GET /me answers the
// token's claims, behind a before filter that refuses a missing, malformed, tampered,
// expired or non-HS256 token with 401. The cryptography is OpenSSL's libcrypto.
//
//   JWT_SECRET=... jwt_login [port] [--ttl SECONDS] [--pbkdf2-iterations N]
//
//   port                   default 8080
//   --ttl SECONDS          how long a token is valid (default 3600, at most ten years)
//   --pbkdf2-iterations N  PBKDF2-HMAC-SHA256 cost of the stored passwords (default
//                          600000, OWASP's advice); 0: no hash, compare plainly
//
//   curl -d '{"username":"alice","password":"wonderland"}' localhost:8080/login
//   curl -H "Authorization: Bearer $TOKEN" localhost:8080/me

#include "jwt.hpp"
#include "passwords.hpp"

#include <tern/json.hpp>
#include <tern/tern.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <thread>

namespace {

constexpr std::uint32_t default_pbkdf2_iterations = 600'000;
constexpr std::int64_t default_ttl_seconds = 3600;
constexpr std::int64_t max_ttl_seconds = 10LL * 366 * 24 * 3600;  // ten years
// RFC 7518 3.2: an HS256 key has at least the hash's 256 bits.
constexpr std::size_t advised_secret_size = 32;

struct settings {
    std::uint16_t port = 8080;
    std::int64_t ttl_seconds = default_ttl_seconds;
    std::uint32_t pbkdf2_iterations = default_pbkdf2_iterations;
};

// No Bearer credentials at all (RFC 6750 3.1: the challenge then carries no error code).
struct no_token : jwt::invalid_token {
    using jwt::invalid_token::invalid_token;
};

std::int64_t now_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

template <class T>
bool parse_number(std::string_view text, T& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc{} && end == text.data() + text.size();
}

// Member `name` of the login body, which must be a string; 400 naming it otherwise.
const std::string& string_field(const tern::json& body, const char* name) {
    const auto it = body.find(name);
    if (it == body.end()) throw tern::bad_request(std::string("missing field '") + name + "'");
    if (!it->is_string()) {
        throw tern::bad_request(std::string("field '") + name + "' must be a string");
    }
    return it->get_ref<const std::string&>();
}

// The token of `Authorization: Bearer <token>` (RFC 6750 2.1; the scheme is
// case-insensitive, RFC 9110 11.1).
std::string_view bearer_token(const tern::context& ctx) {
    constexpr std::string_view scheme = "bearer ";
    const auto auth = ctx.header("authorization");
    if (!auth || auth->size() < scheme.size() ||
        !std::equal(scheme.begin(), scheme.end(), auth->begin(), [](char a, char b) {
            return a == (b >= 'A' && b <= 'Z' ? static_cast<char>(b - 'A' + 'a') : b);
        })) {
        throw no_token("send Authorization: Bearer <token> (POST /login gives one)");
    }
    std::string_view token = auth->substr(scheme.size());
    token.remove_prefix(std::min(token.find_first_not_of(' '), token.size()));
    if (token.empty()) throw no_token("the Authorization header has no token");
    return token;
}

// Answers 401 with the challenge RFC 6750 3 asks for.
void refuse(tern::context& ctx, const jwt::invalid_token& e, bool with_error) {
    std::string challenge = "Bearer realm=\"jwt_login\"";
    if (with_error) {
        challenge += ", error=\"invalid_token\", error_description=\"";
        challenge += e.what();
        challenge += '"';
    }
    ctx.status(401).header("WWW-Authenticate", challenge).text(std::string(e.what()) + "\n");
}

int run(int argc, char** argv) {
    settings s;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        bool ok = false;
        if (arg == "--ttl" && i + 1 < argc) {
            ok = parse_number(argv[++i], s.ttl_seconds) && s.ttl_seconds > 0 &&
                 s.ttl_seconds <= max_ttl_seconds;
        } else if (arg == "--pbkdf2-iterations" && i + 1 < argc) {
            ok = parse_number(argv[++i], s.pbkdf2_iterations) &&
                 s.pbkdf2_iterations <= static_cast<std::uint32_t>(INT32_MAX);
        } else {
            ok = parse_number(arg, s.port);
        }
        if (!ok) {
            std::fprintf(stderr,
                         "usage: jwt_login [port] [--ttl SECONDS] [--pbkdf2-iterations N]\n");
            return 2;
        }
    }

    const char* secret_env = std::getenv("JWT_SECRET");
    if (secret_env == nullptr || *secret_env == '\0') {
        std::fprintf(stderr,
                     "jwt_login: set JWT_SECRET to the key that signs the tokens (at least %zu "
                     "random bytes, e.g. JWT_SECRET=$(openssl rand -base64 32))\n",
                     advised_secret_size);
        return 2;
    }
    const std::string secret = secret_env;
    if (secret.size() < advised_secret_size) {
        std::fprintf(stderr,
                     "jwt_login: warning: JWT_SECRET is shorter than %zu bytes, the least "
                     "RFC 7518 3.2 allows for HS256\n",
                     advised_secret_size);
    }

    // The demo users, hashed now: each start has new salts.
    password_store users(s.pbkdf2_iterations);
    users.add("alice", "wonderland");
    users.add("bob", "builder");

    tern::app app;
    app.max_body_size(4 * 1024);  // a login body is a few dozen bytes; 413 over 4 KiB

    auto login = [&users, &secret, &s](tern::context& ctx) {
        const auto body = ctx.body_as<tern::json>();  // 400 when it is not JSON
        if (!body.is_object()) {
            throw tern::bad_request(
                "the body must be a JSON object with the fields 'username' and 'password'");
        }
        const std::string& user = string_field(body, "username");
        const std::string& password = string_field(body, "password");
        if (!users.check(user, password)) throw tern::unauthorized("wrong username or password");
        const std::int64_t now = now_seconds();
        const tern::json claims = {{"sub", user}, {"iat", now}, {"exp", now + s.ttl_seconds}};
        // RFC 6749 5.1: a response carrying a token is not to be cached.
        ctx.header("Cache-Control", "no-store").json({{"token", jwt::sign(claims, secret)}});
    };
    if (s.pbkdf2_iterations > 0) {
        // A hash at the default cost takes about 0.2 s of CPU: on the blocking pool, one
        // thread per core, a burst of logins queues (503 past max_blocking_queue) instead of
        // stalling every connection of an event loop.
        app.configure([](tern::config& c) {
            c.blocking.threads = std::max(1U, std::thread::hardware_concurrency());
        });
        app.post("/login", tern::blocking(login));
    } else {
        app.post("/login", login);
    }

    // The filter proves the token good; a context has no place to hand the claims to the
    // handler, so the handler verifies again (one HMAC) to read them.
    app.before("/me", [&secret](tern::context& ctx) {
        jwt::verify(bearer_token(ctx), secret, now_seconds());
    });
    app.get("/me", [&secret](tern::context& ctx) {
        ctx.json(jwt::verify(bearer_token(ctx), secret, now_seconds()));
    });

    app.exception<jwt::invalid_token>(
        [](jwt::invalid_token& e, tern::context& ctx) { refuse(ctx, e, true); });
    app.exception<no_token>([](no_token& e, tern::context& ctx) { refuse(ctx, e, false); });

    std::printf(
        "jwt_login: starting on http://0.0.0.0:%u/ (tokens valid %llds, PBKDF2 %u "
        "iterations; Ctrl-C stops)\n",
        s.port, static_cast<long long>(s.ttl_seconds), s.pbkdf2_iterations);
    std::fflush(stdout);
    app.listen(s.port);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {  // a port in use, OpenSSL failing at start-up
        std::fprintf(stderr, "jwt_login: %s\n", e.what());
        return 1;
    }
}
