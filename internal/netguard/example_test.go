package netguard_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"time"

	"github.com/addonpkg/addonpkg/internal/netguard"
)

// Which URLs may receive credentials.
func ExampleCheckCredentials() {
	for _, s := range []string{"https://registry.example.com/v2/", "http://registry.example.com/v2/", "http://127.0.0.1:5000/v2/"} {
		u, _ := url.Parse(s)
		err := netguard.CheckCredentials(u)
		fmt.Println(s, err == nil, errors.Is(err, netguard.ErrCleartextCredentials))
	}
	// Output:
	// https://registry.example.com/v2/ true false
	// http://registry.example.com/v2/ false true
	// http://127.0.0.1:5000/v2/ true false
}

// Credentials are bound to an origin: scheme, host and port.
func ExampleOriginOf() {
	a, _ := url.Parse("https://Example.com/a")
	b, _ := url.Parse("https://example.com:443/b")
	c, _ := url.Parse("https://example.com:8443/b")
	fmt.Println(netguard.OriginOf(a), netguard.OriginOf(a) == netguard.OriginOf(b), netguard.OriginOf(a) == netguard.OriginOf(c))
	// Output: https://example.com:443 true false
}

// A client whose requests follow the rules: here, a server that never
// answers fails after the idle timeout with a typed error.
func ExampleTransport() {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		defer conn.Close()
		<-stop
	}))
	defer srv.Close()
	defer close(stop)

	client := &http.Client{Transport: &netguard.Transport{Idle: 100 * time.Millisecond}}
	_, err := client.Get(srv.URL + "/addon.tar.gz")
	var ie *netguard.IdleTimeoutError
	fmt.Println(errors.Is(err, netguard.ErrIdleTimeout), errors.As(err, &ie) && ie.Idle == 100*time.Millisecond)
	// Output: true true
}
