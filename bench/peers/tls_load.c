/* tls_load: new TLS connections per second, full or resumed handshakes, for bench/tls.py.
 * One epoll loop, one thread, OpenSSL (libssl) and libc, so that it costs little beside the
 * server it measures.
 *
 *   tls_load PORT SECONDS CONNS VERSION MODE
 *
 *   VERSION  1.2 or 1.3: the only version offered.
 *   MODE     full: every connection makes a full handshake (no session offered).
 *            resume: every connection offers the session (the ticket) the previous
 *            connection of its slot received, as a browser does; the first of each slot is full.
 *
 * CONNS connections are kept in progress. Each sends "GET / HTTP/1.1" with "Connection:
 * close", reads the answer to the server's close and checks that it begins
 * "HTTP/1.1 200"; then the next connection of the slot starts. Nothing is verified of
 * the certificate (the server's handshake work is the same either way).
 *
 * Prints one JSON line: the counts (handshakes, resumed among them, answered requests,
 * errors), requests per second over SECONDS and this process's CPU seconds. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { st_connecting, st_handshaking, st_writing, st_reading };

struct conn {
    int fd;
    int state;
    SSL *ssl;
    SSL_SESSION *saved; /* resume mode: the session to offer next */
    char head[16];      /* the first bytes of the answer */
    size_t head_len;
};

static const char request[] = "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
static struct sockaddr_in server;
static SSL_CTX *ctx;
static int ep, resume;
static long handshakes, resumed, answered, errors;
static char first_error[200];

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void note_error(const char *what) {
    ++errors;
    if (!first_error[0]) {
        unsigned long e = ERR_peek_error();
        snprintf(first_error, sizeof first_error, "%s%s%s", what, e ? ": " : "",
                 e ? ERR_reason_error_string(e) : "");
    }
    ERR_clear_error();
}

static void arm(struct conn *c, unsigned events, int op) {
    struct epoll_event ev = {.events = events, .data.ptr = c};
    if (epoll_ctl(ep, op, c->fd, &ev) < 0) {
        perror("epoll_ctl");
        exit(1);
    }
}

static void start(struct conn *c) {
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (c->fd < 0) {
        perror("socket");
        exit(1);
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->state = st_connecting;
    c->head_len = 0;
    if (connect(c->fd, (struct sockaddr *)&server, sizeof server) < 0 && errno != EINPROGRESS) {
        perror("connect");
        exit(1);
    }
    arm(c, EPOLLOUT, EPOLL_CTL_ADD);
}

/* Ends the slot's connection and starts its next one. */
static void finish(struct conn *c, int ok) {
    if (c->ssl) {
        if (ok && resume) {
            /* Marked as shut down without sending close_notify to a socket the server has
             * closed: OpenSSL keeps a session resumable only after a clean shutdown. */
            SSL_set_shutdown(c->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
            SSL_SESSION *s = SSL_get1_session(c->ssl);
            if (c->saved) SSL_SESSION_free(c->saved);
            c->saved = s;
        }
        SSL_free(c->ssl);
        c->ssl = NULL;
    }
    if (!ok && c->saved) {
        SSL_SESSION_free(c->saved);
        c->saved = NULL;
    }
    close(c->fd); /* also leaves the epoll set */
    start(c);
}

/* Goes as far as the socket allows; returns when it must wait. */
static void step(struct conn *c) {
    for (;;) {
        int r = 0, err;
        switch (c->state) {
        case st_connecting: {
            int so_error = 0;
            socklen_t len = sizeof so_error;
            getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
            if (so_error) {
                note_error(strerror(so_error));
                finish(c, 0);
                return;
            }
            c->ssl = SSL_new(ctx);
            SSL_set_fd(c->ssl, c->fd);
            SSL_set_connect_state(c->ssl);
            SSL_set_tlsext_host_name(c->ssl, "localhost");
            if (resume && c->saved) SSL_set_session(c->ssl, c->saved);
            c->state = st_handshaking;
            continue;
        }
        case st_handshaking:
            r = SSL_do_handshake(c->ssl);
            if (r == 1) {
                ++handshakes;
                if (SSL_session_reused(c->ssl)) ++resumed;
                c->state = st_writing;
                continue;
            }
            break;
        case st_writing:
            r = SSL_write(c->ssl, request, sizeof request - 1);
            if (r > 0) {
                c->state = st_reading;
                continue;
            }
            break;
        case st_reading: {
            char buf[4096];
            r = SSL_read(c->ssl, buf, sizeof buf);
            if (r > 0) {
                size_t take = sizeof c->head - c->head_len;
                if (take > (size_t)r) take = (size_t)r;
                memcpy(c->head + c->head_len, buf, take);
                c->head_len += take;
                continue;
            }
            err = SSL_get_error(c->ssl, r);
            if (err == SSL_ERROR_ZERO_RETURN) {
                /* The server's close (with close_notify, or a bare TCP close). */
                int ok = c->head_len >= 12 && memcmp(c->head, "HTTP/1.1 200", 12) == 0;
                if (ok)
                    ++answered;
                else
                    note_error("an answer that is not 200");
                finish(c, ok);
                return;
            }
            break;
        }
        }
        err = SSL_get_error(c->ssl, r);
        if (err == SSL_ERROR_WANT_READ) {
            arm(c, EPOLLIN, EPOLL_CTL_MOD);
            return;
        }
        if (err == SSL_ERROR_WANT_WRITE) {
            arm(c, EPOLLOUT, EPOLL_CTL_MOD);
            return;
        }
        note_error(c->state == st_handshaking ? "handshake" : c->state == st_writing ? "write" : "read");
        finish(c, 0);
        return;
    }
}

int main(int argc, char **argv) {
    if (argc != 6 || (strcmp(argv[4], "1.2") && strcmp(argv[4], "1.3")) ||
        (strcmp(argv[5], "full") && strcmp(argv[5], "resume"))) {
        fprintf(stderr, "usage: tls_load PORT SECONDS CONNS 1.2|1.3 full|resume\n");
        return 2;
    }
    const double seconds = atof(argv[2]);
    const int conns = atoi(argv[3]);
    const int version = strcmp(argv[4], "1.2") ? TLS1_3_VERSION : TLS1_2_VERSION;
    resume = strcmp(argv[5], "resume") == 0;
    server.sin_family = AF_INET;
    server.sin_port = htons((unsigned short)atoi(argv[1]));
    server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx, version);
    SSL_CTX_set_max_proto_version(ctx, version);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    /* A bare TCP close ends the answer like close_notify (SSL_ERROR_ZERO_RETURN). */
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);

    ep = epoll_create1(0);
    struct conn *all = calloc((size_t)conns, sizeof *all);
    const double begin = now();
    for (int i = 0; i < conns; ++i) start(&all[i]);
    struct epoll_event events[256];
    while (now() - begin < seconds) {
        int n = epoll_wait(ep, events, 256, 100);
        for (int i = 0; i < n; ++i) step(events[i].data.ptr);
    }
    const double elapsed = now() - begin;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
                       ru.ru_stime.tv_usec / 1e6;
    printf("{\"version\": \"%s\", \"mode\": \"%s\", \"conns\": %d, \"seconds\": %.2f, "
           "\"handshakes\": %ld, \"resumed\": %ld, \"answered\": %ld, \"errors\": %ld, "
           "\"per_sec\": %.1f, \"cpu_s\": %.2f, \"first_error\": \"%s\"}\n",
           argv[4], argv[5], conns, elapsed, handshakes, resumed, answered, errors,
           answered / elapsed, cpu, first_error);
    return 0;
}
