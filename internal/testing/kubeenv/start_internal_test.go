package kubeenv

import (
	"context"
	"net"
	"os"
	"testing"
)

// A port another process took between freePorts and the server's bind
// is not the end of the package's tests: Start tries again on new
// ports. Without the retry, Start failed with "kube-apiserver exited:
// ... bind: address already in use".
func TestStartRetriesOnATakenPort(t *testing.T) {
	if _, _, ok := Binaries(); !ok {
		if os.Getenv("CI") != "" {
			t.Fatal(ErrMissingBinary)
		}
		t.Skip(ErrMissingBinary)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	calls := 0
	pickPorts = func(n int) ([]int, error) {
		calls++
		ports, err := freePorts(n)
		if err == nil && calls == 1 {
			ports[n-1] = l.Addr().(*net.TCPAddr).Port // kube-apiserver's
		}
		return ports, err
	}
	t.Cleanup(func() { pickPorts = freePorts })
	env, err := Start(context.Background())
	if err != nil {
		t.Fatalf("start with the first port taken: %v", err)
	}
	env.Stop()
	if calls != 2 {
		t.Errorf("ports picked %d times, want 2", calls)
	}
}
