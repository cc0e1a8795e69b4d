package kubeenv

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A connection the proxy takes up after Close (Accept returned it as the
// listener closed, or a relay dialled its destination as Close swept the
// live ones) is closed at once: Close waits for every relay, and one
// left open kept Close, and the Env's Stop, waiting on a peer that may
// never close.
func TestEgressProxyClosesWhatItTakesUpAfterClose(t *testing.T) {
	p, err := startEgressProxy(filepath.Join(t.TempDir(), "e.sock"))
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	ours, theirs := net.Pipe()
	defer theirs.Close()
	p.track(ours, true)
	done := make(chan error, 1)
	go func() {
		_, err := theirs.Read(make([]byte, 1))
		done <- err
	}()
	select {
	case err := <-done:
		if err != io.EOF {
			t.Errorf("read from a connection tracked after Close: %v, want EOF (closed)", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a connection tracked after Close stays open")
	}
}

// flakyListener fails its first Accept as a listener out of descriptors
// does (EMFILE), then accepts as the one it wraps.
type flakyListener struct {
	net.Listener
	failed bool
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if !l.failed {
		l.failed = true
		return nil, &net.OpError{Op: "accept", Net: "unix", Err: syscall.EMFILE}
	}
	return l.Listener.Accept()
}

// An Accept that fails for a reason other than the listener closing does
// not end the proxy: the API server's next call out (a webhook, an
// aggregated API) is still refused or relayed, not left unanswered for
// the rest of the test.
func TestEgressProxyOutlivesAFailedAccept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	p := &egressProxy{ln: &flakyListener{Listener: ln}, live: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve()
	defer p.Close()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "CONNECT 192.0.2.1:443 HTTP/1.1\r\nHost: 192.0.2.1:443\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer after a failed Accept: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("CONNECT off loopback: %s, want 403", resp.Status)
	}
}
