package testregistry

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
)

// StallingBlobs serves an in-memory registry on 127.0.0.1 whose blob
// GETs answer the headers and one chunk of a chunked body, then nothing
// until the test ends: a stall that no Content-Length gives away. It
// returns the registry's host:port; manifests and uploads work as usual.
func StallingBlobs(t testing.TB) string {
	t.Helper()
	inner := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/blobs/sha256:") {
			inner.ServeHTTP(w, r)
			return
		}
		// Take the connection: write a chunked answer by hand, one chunk,
		// then nothing.
		conn, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n")
		bw.Flush()
		<-stop
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) }) // runs first: the hijacked handlers return
	return strings.TrimPrefix(srv.URL, "http://")
}
