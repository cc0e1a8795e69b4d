package selfimage_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/addonpkg/addonpkg/hack/selfimage"
	"github.com/addonpkg/addonpkg/internal/testing/testregistry"
	"github.com/addonpkg/addonpkg/pkg/registry"
)

// needTool finds a tool on PATH; missing, it fails under CI and skips
// elsewhere.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed: run hack/install-deps.sh", name)
		}
		t.Skipf("%s is not installed: run hack/install-deps.sh", name)
	}
	return p
}

// staticBinary builds addonpkg as make image does.
func staticBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "addonpkg")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=v0.0.0-selfimage -X main.commit=feedface", "-o", bin, "../../cmd/addonpkg")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// The image unpacks with umoci, and the binary in its root file system
// runs (it is static: there is no libc in the image) and says its
// version. It runs as a non-root user, has no shell, and the same inputs
// give the same digest.
func TestImageRunsFromItsRootfs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the image holds a linux binary")
	}
	umoci := needTool(t, "umoci")
	bin := staticBinary(t)
	opts := selfimage.Options{
		Binary: bin, Platform: v1.Platform{OS: "linux", Architecture: runtime.GOARCH},
		Created: time.Unix(1_700_000_000, 0), Version: "v0.0.0-selfimage", Revision: "feedface",
	}
	img, err := selfimage.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := selfimage.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("not reproducible: %s, then %s", d1, d2)
	}

	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != selfimage.BinaryPath {
		t.Errorf("config: user %q, entrypoint %q", cf.Config.User, cf.Config.Entrypoint)
	}
	if cf.Config.Labels["org.opencontainers.image.revision"] != "feedface" {
		t.Errorf("labels: %v", cf.Config.Labels)
	}

	dir := filepath.Join(t.TempDir(), "layout")
	if err := selfimage.WriteLayout(dir, "test", img); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(t.TempDir(), "bundle")
	if out, err := exec.Command(umoci, "unpack", "--rootless", "--image", dir+":test", bundle).CombinedOutput(); err != nil {
		t.Fatalf("umoci unpack: %v\n%s", err, out)
	}
	rootfs := filepath.Join(bundle, "rootfs")
	for _, sh := range []string{"bin/sh", "bin/bash", "usr/bin/sh", "bin/busybox"} {
		if _, err := os.Lstat(filepath.Join(rootfs, sh)); err == nil {
			t.Errorf("the image has a shell: /%s", sh)
		}
	}
	passwd, err := os.ReadFile(filepath.Join(rootfs, "etc", "passwd"))
	if err != nil || !containsLine(string(passwd), "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin") {
		t.Errorf("/etc/passwd: %q %v", passwd, err)
	}
	out, err := exec.Command(filepath.Join(rootfs, "usr", "local", "bin", "addonpkg"), "version", "--json").Output()
	if err != nil {
		t.Fatalf("addonpkg version from the rootfs: %v", err)
	}
	var v struct{ Version, Commit, Platform string }
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if v.Version != "v0.0.0-selfimage" || v.Commit != "feedface" || v.Platform != "linux/"+runtime.GOARCH {
		t.Errorf("version --json from the rootfs: %s", out)
	}
	// umoci's view of the config agrees (the user is not root).
	var spec struct {
		Process struct {
			User struct{ UID, GID uint32 } `json:"user"`
			Args []string                  `json:"args"`
		} `json:"process"`
	}
	b, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	if len(spec.Process.Args) == 0 || spec.Process.Args[0] != selfimage.BinaryPath {
		t.Errorf("runtime spec args %q", spec.Process.Args)
	}

	// A second write of the same tag replaces it.
	if err := selfimage.WriteLayout(dir, "test", img); err != nil {
		t.Fatal(err)
	}
	idx, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var im v1.IndexManifest
	if err := json.Unmarshal(idx, &im); err != nil || len(im.Manifests) != 1 {
		t.Errorf("index.json after writing the tag twice: %s", idx)
	}
}

// Push sends the image to a registry (a real one, on 127.0.0.1): the
// registry then holds the same digest.
func TestPush(t *testing.T) {
	reg := testregistry.Start(t, testregistry.Options{})
	img, err := selfimage.Build(context.Background(), selfimage.Options{Binary: writeFile(t, "not really a binary")})
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Host + "/addonpkg/addonpkg:test"
	if err := selfimage.Push(context.Background(), img, ref, registry.Options{}); err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(r, remote.WithTransport(reg.Transport()))
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := img.Digest(); desc.Digest != want {
		t.Errorf("registry holds %s, want %s", desc.Digest, want)
	}
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBuildWithoutBinary(t *testing.T) {
	_, err := selfimage.Build(context.Background(), selfimage.Options{Binary: filepath.Join(t.TempDir(), "none")})
	if err == nil || !errors.Is(err, selfimage.ErrNoBinary) {
		t.Errorf("got %v, want ErrNoBinary", err)
	}
}

func containsLine(s, line string) bool { return slices.Contains(strings.Split(s, "\n"), line) }
