package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/layout"
)

// An index that a registry serves as text/plain is still read as an
// index: unpack, pull and inspect decide from the manifest's own bytes,
// never from the Content-Type header.
func TestCLIIndexWithWrongContentType(t *testing.T) {
	t.Parallel()
	home := cliNewHome(t)
	srv := storeCLIRegistry(t, "text/plain; charset=utf-8")
	host := strings.TrimPrefix(srv.URL, "http://")
	cliMust(t, "build", cliExampleDir("coredns"), "-t", "coredns:1")
	want := filepath.Join(t.TempDir(), "want")
	cliMust(t, "unpack", "coredns:1", "-o", want)

	st, err := layout.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	d, err := st.Resolve("coredns:1")
	if err != nil {
		t.Fatal(err)
	}
	img, err := st.Image(d)
	if err != nil {
		t.Fatal(err)
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), mutate.IndexAddendum{
		Add:        img,
		Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}},
	})
	ref, err := name.ParseReference(host + "/addons/coredns:idx")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, idx, remote.WithContext(context.Background())); err != nil {
		t.Fatal(err)
	}
	got := filepath.Join(t.TempDir(), "got")
	cliMust(t, "unpack", ref.String(), "--platform", "linux/amd64", "-o", got)
	cliSameTree(t, want, got)
	cliMust(t, "pull", "-q", "--all-platforms", ref.String())
}
