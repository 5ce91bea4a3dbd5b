// h3load: an HTTP/3 load generator for bench/h3.py, on Debian's quic-go (0.29,
// golang-github-lucas-clemente-quic-go-dev), built offline in GOPATH mode. Debian 12's h2load
// and curl speak no HTTP/3 (docs/http3.md).
//
//	h3load -c CONNECTIONS -m STREAMS [-d SECONDS | -n REQUESTS] [-new] URL
//
// Opens CONNECTIONS QUIC connections (one http3.RoundTripper each) and keeps STREAMS GETs of
// URL in flight on each for SECONDS, or until REQUESTS have been sent (-n, for
// bench/h3-instructions.py's fixed counts; then -d is not a bound), reading every body whole.
// With -new every request has a connection of its own, closed after its answer (a handshake
// per request: bench/h3.py's new-connections row); CONNECTIONS of them at a time, -m is 1.
// Prints one line:
//
//	h3load: N requests, E errors, R req/s, B body bytes
//
// The certificate is not verified (a benchmark against a self-signed certificate on
// 127.0.0.1).
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lucas-clemente/quic-go"
	"github.com/lucas-clemente/quic-go/http3"
)

func main() {
	connections := flag.Int("c", 1, "QUIC connections")
	streams := flag.Int("m", 1, "requests in flight on each connection")
	seconds := flag.Float64("d", 5, "seconds")
	total := flag.Int64("n", 0, "requests in all (0: as many as -d allows)")
	fresh := flag.Bool("new", false, "a new connection for every request")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: h3load -c N -m N [-d SECONDS | -n REQUESTS] URL")
		os.Exit(2)
	}
	url := flag.Arg(0)
	var requests, errors, bytes, started int64
	var reported int32
	deadline := time.Now().Add(time.Duration(*seconds * float64(time.Second)))
	start := time.Now()
	var wg sync.WaitGroup
	newTransport := func() *http3.RoundTripper {
		return &http3.RoundTripper{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}},
			QuicConfig:      &quic.Config{MaxIncomingStreams: 1000, KeepAlivePeriod: time.Second},
		}
	}
	if *fresh {
		*streams = 1
	}
	for c := 0; c < *connections; c++ {
		rt := newTransport()
		client := &http.Client{Transport: rt}
		for s := 0; s < *streams; s++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					if *total > 0 {
						if atomic.AddInt64(&started, 1) > *total {
							return
						}
					} else if !time.Now().Before(deadline) {
						return
					}
					get := client.Get
					var own *http3.RoundTripper
					if *fresh {
						own = newTransport()
						get = (&http.Client{Transport: own}).Get
					}
					resp, err := get(url)
					if err != nil {
						if own != nil {
							own.Close()
						}
						if atomic.AddInt64(&errors, 1) == 1 && atomic.CompareAndSwapInt32(&reported, 0, 1) {
							fmt.Fprintln(os.Stderr, "h3load: the first error:", err)
						}
						time.Sleep(time.Millisecond)
						continue
					}
					n, err := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if own != nil {
						own.Close()
					}
					if err != nil || resp.StatusCode != 200 {
						atomic.AddInt64(&errors, 1)
						continue
					}
					atomic.AddInt64(&requests, 1)
					atomic.AddInt64(&bytes, n)
				}
			}()
		}
		defer rt.Close()
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	fmt.Printf("h3load: %d requests, %d errors, %.0f req/s, %d body bytes\n", requests, errors,
		float64(requests)/elapsed, bytes)
}
