package airgap_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/airgap"
	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// A Helm chart's images are in templates addonpkg does not render:
// copy --with-images refuses it, as every renderer does, instead of
// writing an empty lock (issue 25).
func TestCopyWithImagesRefusesHelmChart(t *testing.T) {
	var tb bytes.Buffer
	zw := gzip.NewWriter(&tb)
	tw := tar.NewWriter(zw)
	for name, body := range map[string]string{
		"webapp/Chart.yaml":                "apiVersion: v2\nname: webapp\nversion: 0.3.1\n",
		"webapp/templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n    spec:\n      containers:\n      - image: {{ .Values.image }}\n",
	} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := layout.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), mediatypes.HelmConfig)
	raw, err = mutate.Append(raw, mutate.Addendum{Layer: static.NewLayer(tb.Bytes(), mediatypes.HelmChartContent)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteImage(context.Background(), raw, nil, "1"); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.tar")
	_, err = airgap.Copy(context.Background(), source.Ref{Kind: source.KindLayout, Path: dir, Name: "1"}, source.Ref{Kind: source.KindArchive, Path: out, Name: "1"}, airgap.Options{})
	if !errors.Is(err, addon.ErrHelmChart) {
		t.Errorf("copy --with-images of a Helm chart: %v, want addon.ErrHelmChart", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the refused copy wrote the archive")
	}
}

// A mirror is a registry prefix: a scheme, an impossible port or a "."
// or ".." path component is refused by relocation and copy alike (issue
// 25: --relocate took http://m.example, m.example:99999999 and
// m.example/a/../b).
func TestCheckMirror(t *testing.T) {
	for _, tc := range []struct {
		mirror string
		ok     bool
	}{
		{"m.example", true},
		{"m.example:5000/a/b/", true},
		{"127.0.0.1:5000", true},
		{"localhost/x", true},
		{"http://m.example", false},
		{"https://m.example/a", false},
		{"m.example:99999999", false},
		{"m.example:0", false},
		{"m.example:", false},
		{"m.example/a/../b", false},
		{"m.example/./b", false},
		{"m.example//b", false},
		{"m.example/a@sha256:" + "1111111111111111111111111111111111111111111111111111111111111111", false},
		{"", false},
		{"mirror", false},
	} {
		err := reference.CheckMirror(tc.mirror)
		if tc.ok != (err == nil) || err != nil && !errors.Is(err, reference.ErrBadMirror) {
			t.Errorf("CheckMirror(%q) = %v, want ok=%v", tc.mirror, err, tc.ok)
		}
		_, err = airgap.Copy(context.Background(), source.Ref{Kind: source.KindLayout, Path: t.TempDir(), Name: "1"}, source.Ref{Kind: source.KindArchive, Path: filepath.Join(t.TempDir(), "x.tar"), Name: "1"}, airgap.Options{Mirror: tc.mirror})
		if !tc.ok && tc.mirror != "" && !errors.Is(err, reference.ErrBadMirror) {
			t.Errorf("copy with image mirror %q: %v, want reference.ErrBadMirror", tc.mirror, err)
		}
	}
}
