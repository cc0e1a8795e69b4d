package source_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/internal/netguard"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// A git server that sends the start of its ref advertisement, chunked,
// and then nothing: the fetch fails after the idle timeout, naming the
// source, instead of hanging.
func TestGitChunkedStall(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"1e\r\n001e# service=git-upload-pack\n\r\n")
		bw.Flush()
		select {
		case <-stop:
		case <-time.After(30 * time.Second):
		}
	}))
	defer srv.Close()
	defer close(stop)
	src := "git+" + srv.URL + "/x.git"
	err := resolveErr(t, src, source.Options{Timeout: time.Second, Netrc: filepath.Join(t.TempDir(), "none")})
	checkOneLine(t, err, srv.URL+"/x.git", "timed out after 1s")
	if !errors.Is(err, netguard.ErrIdleTimeout) {
		t.Errorf("not an idle timeout: %v", err)
	}
}

// Git credentials go to the repository's origin only: a server that
// redirects the repository to another port gets them, the other port
// does not.
func TestGitCredentialsStayWithTheirOrigin(t *testing.T) {
	t.Setenv(source.EnvGitToken, "")
	t.Setenv(source.EnvGitUser, "")
	f := newGitFixture(t)
	other := newAuthLog(t, true, func(w http.ResponseWriter, r *http.Request) {
		f.https.Config.Handler.ServeHTTP(w, r)
	})
	// The public repository, behind basic auth, moved to another port.
	front := newAuthLog(t, true, func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != gitUser || p != gitPass {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		http.Redirect(w, r, other.URL+strings.Replace(r.URL.RequestURI(), "/moved.git/", "/public.git/", 1), http.StatusFound)
	})
	opts := f.opts(t)
	netrc := filepath.Join(t.TempDir(), "netrc")
	writeFile(t, netrc, "machine 127.0.0.1 login "+gitUser+" password "+gitPass+"\n")
	opts.Netrc = netrc
	ad := resolve(t, "git+"+front.URL+"/moved.git//addons/coredns?ref=v1", opts)
	if ad.Config.Revision != f.c1 {
		t.Errorf("revision %s, want %s", ad.Config.Revision, f.c1)
	}
	if front.withCredentials() == 0 {
		t.Error("the origin never got the credentials")
	}
	if n := other.withCredentials(); n != 0 {
		t.Errorf("the server on another port got credentials %d times", n)
	}
}

// User and password in a git+http:// URL to a host that is not loopback
// are refused before anything is sent, --plain-http or not.
func TestGitNoCredentialsInClear(t *testing.T) {
	sent := 0
	opts := source.Options{Registry: registry.Options{PlainHTTP: true, Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent++
		return nil, errors.New("no network in this test")
	})}}
	err := resolveErr(t, "git+http://alice:s3cret@git.example.test/x.git", opts)
	checkOneLine(t, err, "http://git.example.test/x.git", "plain http:// URL are refused")
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("the error shows the password: %v", err)
	}
	if sent != 0 {
		t.Errorf("%d requests sent", sent)
	}
}
