package source_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/source"
)

// authLog is a server on 127.0.0.1 that serves a YAML file and records
// the Authorization header of every request it gets.
type authLog struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

func newAuthLog(t *testing.T, tls bool, h http.HandlerFunc) *authLog {
	t.Helper()
	a := &authLog{}
	a.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.auth = append(a.auth, r.Header.Get("Authorization"))
		a.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		io.WriteString(w, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
	}))
	if tls {
		a.StartTLS()
	} else {
		a.Start()
	}
	t.Cleanup(a.Close)
	return a
}

func (a *authLog) withCredentials() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, s := range a.auth {
		if s != "" {
			n++
		}
	}
	return n
}

// Credentials of an http source (in the URL, or from netrc) go to the
// URL's origin only: a redirect to another port, over https or plain
// http, carries none. net/http alone copies them to every port of the
// same host name.
func TestHTTPCredentialsStayWithTheirOrigin(t *testing.T) {
	netrc := filepath.Join(t.TempDir(), "netrc")
	if err := os.WriteFile(netrc, []byte("machine 127.0.0.1 login alice password s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		toTLS    bool
		userinfo bool
	}{
		{"netrc, redirect to https on another port", true, false},
		{"netrc, redirect to plain http on another port", false, false},
		{"URL userinfo, redirect to https on another port", true, true},
		{"URL userinfo, redirect to plain http on another port", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			to := newAuthLog(t, c.toTLS, nil)
			from := newAuthLog(t, true, func(w http.ResponseWriter, r *http.Request) {
				if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "s3cret" {
					w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
					http.Error(w, "unauthorized", http.StatusUnauthorized)
					return
				}
				http.Redirect(w, r, to.URL+"/addon.yaml", http.StatusFound)
			})
			u := from.URL + "/private/addon.yaml"
			if c.userinfo {
				u = strings.Replace(u, "https://", "https://alice:s3cret@", 1)
			}
			opts := source.Options{Locations: remote, HTTPClient: from.Client(), Netrc: netrc, Timeout: 20 * time.Second}
			if c.userinfo {
				opts.Netrc = filepath.Join(t.TempDir(), "none")
			}
			resolve(t, u, opts)
			if from.withCredentials() == 0 {
				t.Error("the origin never got the credentials")
			}
			if n := to.withCredentials(); n != 0 {
				t.Errorf("the redirect target on another port got credentials %d times", n)
			}
		})
	}
}

// User and password in a plain http:// URL are refused unless the host
// is loopback, before anything is sent (the README's "for https only").
func TestHTTPNoCredentialsInClear(t *testing.T) {
	sent := 0
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent++
		return nil, errors.New("no network in this test")
	})}
	u := "http://alice:s3cret@addons.example.test/coredns.yaml"
	opts := source.Options{Locations: remote, HTTPClient: client}
	opts.Registry.PlainHTTP = true // the user allowed plain http, not credentials in clear
	err := resolveErr(t, u, opts)
	checkOneLine(t, err, "http://addons.example.test/coredns.yaml", "plain http:// URL are refused")
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("the error shows the password: %v", err)
	}
	if sent != 0 {
		t.Errorf("%d requests sent", sent)
	}

	// To loopback, asked for explicitly in the URL, they are sent.
	loop := newAuthLog(t, false, nil)
	resolve(t, strings.Replace(loop.URL, "http://", "http://alice:s3cret@", 1)+"/x.yaml", source.Options{Locations: remote, Timeout: 20 * time.Second})
	if loop.withCredentials() != 1 {
		t.Errorf("loopback http got credentials %d times, want 1", loop.withCredentials())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
