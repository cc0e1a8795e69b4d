package kubeenv

import (
	"io"
	"net"
	"path/filepath"
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
