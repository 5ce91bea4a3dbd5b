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
// With -upload BYTES every request is instead a POST of BYTES bytes to URL (bench/
// streamed-upload.py --protocol h3): the 64 KiB pattern byte i = (i*7) % 251, repeated and
// cut at BYTES, made by a reader as the stream takes it (never held whole), with a
// content-length, or without one with -chunked. The reader hashes what it gives (FNV-1a, 64
// bits), and the answer must be "bytes=BYTES fnv1a=THAT" (examples/bench_app's POST /hash),
// else the request counts as an error. Each answer is printed as it comes:
//
//	h3load: answer STATUS SECONDS BODY
//
// -n is then the number of uploads (default: one per stream, -c x -m), and -d is not a
// bound. h3load -digest BYTES prints the pattern's FNV-1a for BYTES bytes and exits (what
// the script checks the HTTP/1.1 and HTTP/2 answers against).
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
	"strconv"
	"strings"
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
	upload := flag.Int64("upload", 0, "POST this many bytes of the pattern per request")
	chunked := flag.Bool("chunked", false, "with -upload: send no content-length")
	digest := flag.Int64("digest", -1, "print the pattern's FNV-1a for this many bytes, exit")
	flag.Parse()
	if *digest >= 0 {
		p := newPattern(*digest)
		if _, err := io.Copy(io.Discard, p); err != nil {
			fmt.Fprintln(os.Stderr, "h3load:", err)
			os.Exit(1)
		}
		fmt.Println(p.hash)
		return
	}
	if *upload > 0 && *total == 0 {
		*total = int64(*connections) * int64(*streams)
	}
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
					if *upload > 0 {
						if post(client, url, *upload, *chunked) {
							atomic.AddInt64(&requests, 1)
							atomic.AddInt64(&bytes, *upload)
						} else {
							atomic.AddInt64(&errors, 1)
						}
						continue
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

// pattern reads as the upload's body: byte i of the stream is ((i % 65536) * 7) % 251, for
// `left` bytes; it hashes what it gives.
type pattern struct {
	chunk []byte
	at    int64
	left  int64
	hash  uint64
}

func newPattern(size int64) *pattern {
	chunk := make([]byte, 64*1024)
	for i := range chunk {
		chunk[i] = byte((i * 7) % 251)
	}
	return &pattern{chunk: chunk, left: size, hash: 14695981039346656037}
}

func (p *pattern) Read(b []byte) (int, error) {
	if p.left == 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(b) && p.left > 0 {
		off := p.at % int64(len(p.chunk))
		m := copy(b[n:], p.chunk[off:])
		if int64(m) > p.left {
			m = int(p.left)
		}
		h := p.hash
		for _, c := range b[n : n+m] {
			h ^= uint64(c)
			h *= 1099511628211
		}
		p.hash = h
		n += m
		p.at += int64(m)
		p.left -= int64(m)
	}
	return n, nil
}

func (p *pattern) Close() error { return nil }

// post sends one upload and checks its answer; true when it is "bytes=SIZE fnv1a=DIGEST".
func post(client *http.Client, url string, size int64, chunked bool) bool {
	body := newPattern(size)
	req, err := http.NewRequest("POST", url, body)
	if err != nil {
		fmt.Fprintln(os.Stderr, "h3load:", err)
		return false
	}
	req.ContentLength = size
	if chunked {
		req.ContentLength = -1
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "h3load: upload:", err)
		return false
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := strings.TrimSpace(string(answer))
	fmt.Printf("h3load: answer %d %.3f %s\n", resp.StatusCode, time.Since(start).Seconds(), text)
	want := "bytes=" + strconv.FormatInt(size, 10) + " fnv1a=" + strconv.FormatUint(body.hash, 10)
	if err != nil || resp.StatusCode != 200 || body.left != 0 || text != want {
		fmt.Fprintf(os.Stderr, "h3load: upload answered %d %q, expected %q\n", resp.StatusCode,
			text, want)
		return false
	}
	return true
}
