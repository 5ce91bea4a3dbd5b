// tern's command line for h2spec's test library (tests/conformance/h2spec.sh builds it):
// h2spec 2.6's packages come from ../shared/tools/h2spec/h2spec-src, this file only reads
// the flags the conformance run uses and calls h2spec.Run. Written for tern; h2spec's own
// command (cobra-based) is not needed for these flags.
//
//	h2spec-run -h 127.0.0.1 -p PORT [-t -k] [-o SECONDS] [-j REPORT.xml] [-S] [SECTION...]
//
// Exits 0 when every test selected passed, 1 when one failed, 2 on a usage or run error.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/summerwind/h2spec"
	"github.com/summerwind/h2spec/config"
)

func main() {
	host := flag.String("h", "127.0.0.1", "target host")
	port := flag.Int("p", 0, "target port")
	path := flag.String("P", "/", "target path")
	useTLS := flag.Bool("t", false, "connect over TLS (ALPN h2)")
	insecure := flag.Bool("k", false, "do not verify the server's certificate")
	timeout := flag.Int("o", 2, "seconds to wait for a frame")
	report := flag.String("j", "", "write a JUnit report to this file")
	strict := flag.Bool("S", false, "also run the tests for SHOULDs")
	maxHeader := flag.Int("max-header-length", 4000, "longest header value sent")
	verbose := flag.Bool("v", false, "print each frame")
	flag.Parse()
	if *port <= 0 {
		fmt.Fprintln(os.Stderr, "h2spec-run: -p PORT is required")
		os.Exit(2)
	}
	c := &config.Config{
		Host:         *host,
		Port:         *port,
		Path:         *path,
		Timeout:      time.Duration(*timeout) * time.Second,
		MaxHeaderLen: *maxHeader,
		JUnitReport:  *report,
		Strict:       *strict,
		TLS:          *useTLS,
		Insecure:     *insecure,
		Verbose:      *verbose,
		Sections:     flag.Args(),
	}
	ok, err := h2spec.Run(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "h2spec-run:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}
