package source_test

import (
	"errors"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/source"
)

func TestStoreName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"coredns", "coredns:latest"},
		{"coredns:1.11", "coredns:1.11"},
		{"registry.example.com/addons/coredns", "registry.example.com/addons/coredns:latest"},
		{"localhost:5000/x:1", "localhost:5000/x:1"},
		{"coredns@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "coredns@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
	} {
		got, err := source.StoreName(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("StoreName(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"oci:./layout:1", "oci-archive:a.tar", "./dir", "https://example.com/a.yaml", "Bad Name"} {
		_, err := source.StoreName(in)
		if !errors.Is(err, source.ErrStoreName) {
			t.Errorf("StoreName(%q): %v, want ErrStoreName", in, err)
		}
	}
	if _, err := source.StoreName("oci:x"); err == nil || err.Error() != `"oci:x": want NAME[:TAG] or REGISTRY/REPO[:TAG]` {
		t.Errorf("message: %v", err)
	}
}
