// Package selfimage builds addonpkg's own container image, for running
// addonpkg inside a cluster (a Job or an init container that unpacks an
// add-on before it is applied): one layer holding a static addonpkg
// binary, the files a non-root user needs, and nothing else (no shell,
// no package manager). It is reproducible like the add-ons addonpkg
// builds: the same binary and options give the same digest.
package selfimage

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/match"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/addonpkg/addonpkg/pkg/registry"
)

// The user the image runs as, and its home.
const (
	UID  = 65532
	GID  = 65532
	User = "nonroot"
	Home = "/home/nonroot"
	// BinaryPath is where the binary is, and the entrypoint.
	BinaryPath = "/usr/local/bin/addonpkg"
)

// ErrNoBinary: Options.Binary is missing or not a file.
var ErrNoBinary = errors.New("no addonpkg binary")

// Options say what goes into the image.
type Options struct {
	// Binary is the path of a statically linked addonpkg for Platform
	// (CGO_ENABLED=0 go build). Required.
	Binary string
	// Platform is the binary's platform; zero means linux/amd64.
	Platform v1.Platform
	// Created is the time of every file and of the config; zero means the
	// Unix epoch.
	Created time.Time
	// Version and Revision become the image's
	// org.opencontainers.image.version and .revision labels.
	Version, Revision string
	// Source becomes the org.opencontainers.image.source label.
	Source string
}

// Build makes the image: an OCI image of one gzip layer.
func Build(ctx context.Context, o Options) (v1.Image, error) {
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoBinary, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	created := o.Created.UTC()
	if o.Created.IsZero() {
		created = time.Unix(0, 0).UTC()
	}
	p := o.Platform
	if p.OS == "" {
		p.OS, p.Architecture = "linux", "amd64"
	}
	layerTar, err := rootfs(bin, created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	labels := map[string]string{ocispec.AnnotationTitle: "addonpkg"}
	for k, v := range map[string]string{ocispec.AnnotationVersion: o.Version, ocispec.AnnotationRevision: o.Revision, ocispec.AnnotationSource: o.Source} {
		if v != "" {
			labels[k] = v
		}
	}
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		OS: p.OS, Architecture: p.Architecture, Variant: p.Variant,
		Created: v1.Time{Time: created},
		RootFS:  v1.RootFS{Type: "layers"},
		Config: v1.Config{
			User:       fmt.Sprintf("%d:%d", UID, GID),
			Entrypoint: []string{BinaryPath},
			Env: []string{
				"PATH=/usr/local/bin",
				"HOME=" + Home,
				"ADDONPKG_HOME=" + Home + "/.local/share/addonpkg",
				"DOCKER_CONFIG=" + Home + "/.docker",
			},
			WorkingDir: Home,
			Labels:     labels,
		},
	})
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "addonpkg selfimage", Comment: "addonpkg binary and a non-root user"}})
}

// rootfs is the layer: directories, /etc/passwd and /etc/group for the
// user, a writable /tmp and home, and the binary. Sorted, owned by root
// except the home, times fixed.
func rootfs(bin []byte, created time.Time) ([]byte, error) {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\n", User, UID, GID, User, Home)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", User, GID)
	type entry struct {
		name string
		mode int64
		uid  int
		data []byte
		dir  bool
	}
	entries := []entry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/" + User + "/", mode: 0o700, uid: UID, dir: true},
		{name: "tmp/", mode: 0o1777, dir: true},
		{name: "usr/", mode: 0o755, dir: true},
		{name: "usr/local/", mode: 0o755, dir: true},
		{name: "usr/local/bin/", mode: 0o755, dir: true},
		{name: "usr/local/bin/addonpkg", mode: 0o755, data: bin},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: created, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(e.data))}
		if e.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteLayout writes img to the OCI layout dir (created if needed),
// tagged tag: the entry of that tag is replaced, others are kept.
func WriteLayout(dir, tag string, img v1.Image) error {
	const refName = ocispec.AnnotationRefName
	p, err := layout.FromPath(dir)
	if err != nil {
		if p, err = layout.Write(dir, empty.Index); err != nil {
			return fmt.Errorf("write layout %s: %w", dir, err)
		}
	}
	if err := p.ReplaceImage(img, match.Annotation(refName, tag), layout.WithAnnotations(map[string]string{refName: tag})); err != nil {
		return fmt.Errorf("write layout %s: %w", dir, err)
	}
	return nil
}

// Push pushes img to ref.
func Push(ctx context.Context, img v1.Image, ref string, o registry.Options) error {
	r, err := o.ParseReference(ref)
	if err != nil {
		return err
	}
	ropts, err := o.Remote(ctx)
	if err != nil {
		return err
	}
	if err := remote.Write(r, img, ropts...); err != nil {
		return registry.Explain(ref, err)
	}
	return nil
}
