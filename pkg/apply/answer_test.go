package apply_test

import (
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// Answers of 2xx that are no Kubernetes answer fail their read with an
// error matching ErrServer; whole JSON, a watch's stream, an Accept's own
// type and an empty body pass as they are, byte for byte.
func TestAnswerCheck(t *testing.T) {
	const cm = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a\"}{[","namespace":"n"},"data":{"k":"\\\\"}}` + "\n"
	for _, tc := range []struct {
		name, contentType, accept, query, body string
		bad                                    bool
	}{
		{"object", "application/json", "", "", cm, false},
		{"list", "application/json", "", "", `[` + cm + `,{}]`, false},
		{"discovery", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", "", "", `{"items":[]}`, false},
		{"empty", "application/json", "", "", "", false},
		{"protobuf", "application/vnd.kubernetes.protobuf", "", "", "k8s\x00\x0a", false},
		{"asked for", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf", "", "\x0a\x03", false},
		{"watch", "application/json", "", "?watch=true", cm + cm[:20], false},
		// The API server answers a CBOR watch in application/cbor-seq,
		// which client-go decodes but does not name in its Accept.
		{"cbor watch", "application/cbor-seq", "application/cbor;q=1,application/json;q=0.9", "?watch=true", "\xd9\xd9\xf7\xa0", false},
		{"cut short", "application/json", "", "", cm[:len(cm)/2], true},
		{"cut in a string", "application/json", "", "", cm[:40], true},
		{"more after", "application/json", "", "", cm + "{}", true},
		{"not JSON", "application/json", "", "", "<html>502</html>", true},
		{"blank", "application/json", "", "", "  \n", true},
		{"page", "text/html", "application/json, */*", "", "<html>login</html>", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/namespaces/n/configmaps/a"+tc.query, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			resp, err := apply.CheckAnswers(http.DefaultTransport).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if tc.bad {
				if !errors.Is(err, apply.ErrServer) || strings.Contains(err.Error(), "\n") {
					t.Errorf("read: %v, want one line matching ErrServer", err)
				}
				return
			}
			if err != nil || string(got) != tc.body {
				t.Errorf("read %q, %v; want %q as it is", got, err, tc.body)
			}
		})
	}
}

// What a real API server answers passes the check untouched: a body the
// transport decompressed (the check sits above it, as in client-go), one
// sent in chunks, a Table, a Status in a 2xx, and answers that have no
// body to check (204, HEAD) whatever type they claim.
func TestAnswerCheckPassesRealAnswers(t *testing.T) {
	const status = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"c","kind":"configmaps"}}` + "\n"
	const table = `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{},"columnDefinitions":[{"name":"Name","type":"string"}],"rows":[{"cells":["c"],"object":{"kind":"PartialObjectMetadata"}}]}` + "\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gzip":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, status)
			zw.Close()
		case "/chunked":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, status[:30])
			w.(http.Flusher).Flush()
			io.WriteString(w, status[30:])
		case "/table":
			w.Header().Set("Content-Type", "application/json;as=Table;v=v1;g=meta.k8s.io")
			io.WriteString(w, table)
		case "/status":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, status)
		case "/nocontent":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNoContent)
		case "/head":
			w.Header().Set("Content-Type", "text/html")
		}
	}))
	defer srv.Close()
	for _, tc := range []struct{ method, path, want string }{
		{http.MethodGet, "/gzip", status},
		{http.MethodGet, "/chunked", status},
		{http.MethodGet, "/table", table},
		{http.MethodDelete, "/status", status},
		{http.MethodDelete, "/nocontent", ""},
		{http.MethodHead, "/head", ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept", "application/json, */*")
			resp, err := apply.CheckAnswers(&http.Transport{}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if err != nil || string(got) != tc.want {
				t.Errorf("read %q, %v; want %q as it is", got, err, tc.want)
			}
		})
	}
}
