package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
	"github.com/addonpkg/addonpkg/pkg/build"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/registry"
	"github.com/addonpkg/addonpkg/pkg/source"
	"github.com/addonpkg/addonpkg/pkg/values"
)

// buildCoreDNS builds examples/coredns into the OCI layout dir, named as
// a build names it: coredns:1.11.
func buildCoreDNS(ctx context.Context, dir string) (*build.Result, error) {
	res, err := build.Build(ctx, os.DirFS("../coredns"), build.Options{Name: "coredns", Version: "1.11"})
	if err != nil {
		return nil, err
	}
	st, err := layout.Init(dir)
	if err != nil {
		return nil, err
	}
	_, err = st.WriteImage(ctx, res.Image, nil, "coredns:1.11")
	return res, err
}

// A folder built into an OCI layout is addressable as oci:DIR:TAG, and
// the installer renders it with the values it declares filled in.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "layout-*")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if _, err := buildCoreDNS(ctx, dir); err != nil {
		fmt.Println(err)
		return
	}
	var out bytes.Buffer
	if err := run(ctx, "oci:"+dir+":1.11", map[string]string{"DNS_SERVER_IP": "10.96.0.10"}, source.Options{}, &out); err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "kind: ") || strings.Contains(l, "clusterIP: ") {
			fmt.Println(strings.TrimSpace(l))
		}
	}
	// Output:
	// kind: ServiceAccount
	// kind: ClusterRole
	// kind: ClusterRoleBinding
	// kind: ConfigMap
	// kind: Service
	// clusterIP: 10.96.0.10
	// kind: Deployment
}

// An installer fills values in (spec/addon-v1.md section 6.6): coredns
// without its required DNS_SERVER_IP is refused, and nothing is written,
// rather than a stream with ${DNS_SERVER_IP} and ${DNS_DOMAIN} left in it.
func TestRequiredValueMissing(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	if _, err := buildCoreDNS(ctx, dir); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := run(ctx, "oci:"+dir+":1.11", nil, source.Options{}, &out)
	var me *values.MissingError
	if !errors.As(err, &me) || len(me.Missing) != 1 || me.Missing[0].Name != "DNS_SERVER_IP" {
		t.Errorf("coredns without DNS_SERVER_IP: error %v, want a MissingError naming it", err)
	}
	if out.Len() != 0 {
		t.Errorf("%d bytes written for a refused add-on:\n%s", out.Len(), out.String())
	}
}

// The installer reads a registry add-on through source's registry path
// (the retry policy, the blobs read once and verified), against the real
// Distribution registry on 127.0.0.1.
func TestRegistryAddon(t *testing.T) {
	reg := testregistry.Start(t, testregistry.Options{})
	ctx := t.Context()
	res, err := buildCoreDNS(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	opts := source.Options{Registry: registry.Options{Transport: reg.Transport()}}
	dst, err := source.Parse(reg.Host + "/addons/coredns:1.11")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := source.Write(ctx, &source.Artifact{Image: res.Image, Digest: res.Digest}, dst, opts); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(ctx, dst.String(), map[string]string{"DNS_SERVER_IP": "10.96.0.10"}, opts, &out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\nkind: "); n != 6 {
		t.Errorf("%d objects rendered, want coredns's 6:\n%s", n, out.String())
	}
}
