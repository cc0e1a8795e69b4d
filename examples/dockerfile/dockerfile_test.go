package dockerfile_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	dockerfilePath = "Dockerfile"
	// contextDir is the build context the Dockerfile's comment builds:
	// docker build -f examples/dockerfile/Dockerfile ... examples/coredns
	contextDir = "../coredns"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case
	args string
	line int
}

// parseDockerfile splits a Dockerfile into instructions. It knows what the
// recipe uses: comment lines (also inside continuations), blank lines and
// backslash continuations with the default escape character.
func parseDockerfile(t *testing.T, file string) []instruction {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var (
		out     []instruction
		cur     strings.Builder
		curLine int
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if cur.Len() == 0 {
			curLine = n
		}
		if body, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(body)
			cur.WriteString(" ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args), line: curLine})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur.Len() != 0 {
		t.Fatalf("%s: continuation at end of file", file)
	}
	return out
}

// parseLabelArgs parses the arguments of a LABEL instruction in its
// key=value form. Keys and values may be double-quoted (with backslash
// escapes) or bare.
func parseLabelArgs(s string) (map[string]string, error) {
	labels := map[string]string{}
	i := 0
	word := func(stop func(byte) bool) (string, error) {
		var b strings.Builder
		if i < len(s) && s[i] == '"' {
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return "", fmt.Errorf("unterminated quote in %q", s)
			}
			i++ // closing quote
			return b.String(), nil
		}
		for ; i < len(s) && !stop(s[i]); i++ {
			b.WriteByte(s[i])
		}
		return b.String(), nil
	}
	space := func(c byte) bool { return c == ' ' || c == '\t' }
	for {
		for i < len(s) && space(s[i]) {
			i++
		}
		if i >= len(s) {
			return labels, nil
		}
		k, err := word(func(c byte) bool { return c == '=' || space(c) })
		if err != nil {
			return nil, err
		}
		if i >= len(s) || s[i] != '=' {
			return nil, fmt.Errorf("label %q is not in key=value form", k)
		}
		i++
		v, err := word(space)
		if err != nil {
			return nil, err
		}
		if k == "" {
			return nil, fmt.Errorf("empty label key in %q", s)
		}
		labels[k] = v
	}
}

// fileTime stands for the context files' mtimes, which COPY keeps;
// buildTime is when the image was built.
var (
	fileTime  = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	buildTime = v1.Time{Time: time.Date(2024, 5, 2, 8, 0, 0, 0, time.UTC)}
)

// recipe is what the Dockerfile asks for, in the terms the test models.
type recipe struct {
	copySrc, copyDst string
	labels           map[string]string
}

// readRecipe reads the Dockerfile and fails if it stops being the recipe
// this test models: FROM scratch, one COPY, then LABELs.
func readRecipe(t *testing.T) recipe {
	t.Helper()
	ins := parseDockerfile(t, dockerfilePath)
	r := recipe{labels: map[string]string{}}
	for i, in := range ins {
		switch {
		case i == 0:
			if in.cmd != "FROM" || in.args != "scratch" {
				t.Fatalf("Dockerfile:%d: want FROM scratch first, got %s %s", in.line, in.cmd, in.args)
			}
		case in.cmd == "COPY" && r.copyDst == "":
			f := strings.Fields(in.args)
			if len(f) != 2 || strings.HasPrefix(f[0], "--") {
				t.Fatalf("Dockerfile:%d: want COPY <src> <dst>, got COPY %s", in.line, in.args)
			}
			r.copySrc, r.copyDst = f[0], f[1]
		case in.cmd == "LABEL":
			l, err := parseLabelArgs(in.args)
			if err != nil {
				t.Fatalf("Dockerfile:%d: %v", in.line, err)
			}
			for k, v := range l {
				r.labels[k] = v
			}
		default:
			t.Fatalf("Dockerfile:%d: %s is not modelled by this test", in.line, in.cmd)
		}
	}
	return r
}

// contextTar writes the layer that COPY <dir>/. <dst> gives on an empty
// base: the destination directory, then every file of the context below
// it, owned by root, mode 0755 for directories and 0644 for files.
func contextTar(t *testing.T, dir, dst string) []byte {
	t.Helper()
	root := strings.Trim(dst, "/")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		h := &tar.Header{Name: path.Join(root, p), ModTime: fileTime, Uid: 0, Gid: 0, Format: tar.FormatPAX}
		var data []byte
		switch {
		case d.IsDir():
			h.Typeflag, h.Mode, h.Name = tar.TypeDir, 0o755, h.Name+"/"
		case d.Type().IsRegular():
			if data, err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
				return err
			}
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(len(data))
		default:
			return fmt.Errorf("%s: not a regular file or directory", p)
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// buildImage assembles the image that the recipe produces, with the given
// manifest, config and layer media types.
func buildImage(t *testing.T, r recipe, manifestType, configType, layerType types.MediaType) v1.Image {
	t.Helper()
	if r.copySrc != "." {
		t.Fatalf("COPY source %q: the test models COPY of the whole context (.)", r.copySrc)
	}
	tb := contextTar(t, contextDir, r.copyDst)
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tb)), nil
	}, tarball.WithMediaType(layerType))
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.Append(mutate.MediaType(empty.Image, manifestType), mutate.Addendum{
		Layer:     layer,
		MediaType: layerType,
		History:   v1.History{CreatedBy: "COPY " + r.copySrc + " " + r.copyDst + " # buildkit", Created: buildTime},
	})
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Created = buildTime
	cf.Config.Labels = r.labels
	// Set the config file first, then its media type.
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return mutate.ConfigMediaType(img, configType)
}

// roundTrip writes img to an OCI image layout on disk and reads it back,
// so that the assertions see the stored manifest, config and blobs as a
// reader would, not the in-memory image.
func roundTrip(t *testing.T, img v1.Image) v1.Image {
	t.Helper()
	p, err := layout.Write(t.TempDir(), empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 {
		t.Fatalf("layout holds %d manifests, want 1", len(im.Manifests))
	}
	got, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	checkDigests(t, got)
	return got
}

// checkDigests hashes the blobs read back, since reads from a layout are
// not digest-checked: the config against the manifest, each layer against
// its manifest digest and size, and its uncompressed stream against the
// config's diff_id.
func checkDigests(t *testing.T, img v1.Image) {
	t.Helper()
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	rawConfig, err := img.RawConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if h, n, _ := v1.SHA256(bytes.NewReader(rawConfig)); h != m.Config.Digest || n != m.Config.Size {
		t.Errorf("config is %s (%d bytes), manifest says %s (%d bytes)", h, n, m.Config.Digest, m.Config.Size)
	}
	if len(cf.RootFS.DiffIDs) != len(m.Layers) {
		t.Fatalf("%d diff_ids for %d layers", len(cf.RootFS.DiffIDs), len(m.Layers))
	}
	for i, d := range m.Layers {
		l, err := img.LayerByDigest(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		hash := func(open func() (io.ReadCloser, error)) (v1.Hash, int64) {
			rc, err := open()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			h, n, err := v1.SHA256(rc)
			if err != nil {
				t.Fatal(err)
			}
			return h, n
		}
		if h, n := hash(l.Compressed); h != d.Digest || n != d.Size {
			t.Errorf("layer %d is %s (%d bytes), manifest says %s (%d bytes)", i, h, n, d.Digest, d.Size)
		}
		if h, _ := hash(l.Uncompressed); h != cf.RootFS.DiffIDs[i] {
			t.Errorf("layer %d uncompressed is %s, diff_id says %s", i, h, cf.RootFS.DiffIDs[i])
		}
	}
}

func TestDockerfileImageIsAddonImage(t *testing.T) {
	r := readRecipe(t)
	if want := mediatypes.DefaultContentDir + "/"; r.copyDst != want {
		t.Fatalf("COPY destination %q, want %q", r.copyDst, want)
	}
	source, err := os.ReadFile(filepath.Join(contextDir, "coredns.yaml"))
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name                                string
		manifestType, configType, layerType types.MediaType
		wantManifest, wantConfig, wantLayer mediatypes.MediaType
	}{{
		name:         "docker media types (docker build)",
		manifestType: types.DockerManifestSchema2, configType: types.DockerConfigJSON, layerType: types.DockerLayer,
		wantManifest: mediatypes.DockerManifest, wantConfig: mediatypes.DockerConfig, wantLayer: mediatypes.DockerLayerGzip,
	}, {
		name:         "oci media types (buildah default)",
		manifestType: types.OCIManifestSchema1, configType: types.OCIConfigJSON, layerType: types.OCILayer,
		wantManifest: mediatypes.OCIManifest, wantConfig: mediatypes.OCIConfig, wantLayer: mediatypes.OCILayerGzip,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img := roundTrip(t, buildImage(t, r, tc.manifestType, tc.configType, tc.layerType))

			rawManifest, err := img.RawManifest()
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				MediaType    string `json:"mediaType"`
				ArtifactType string `json:"artifactType"`
				Config       struct {
					MediaType string `json:"mediaType"`
				} `json:"config"`
				Layers []struct {
					MediaType   string            `json:"mediaType"`
					Digest      string            `json:"digest"`
					Annotations map[string]string `json:"annotations"`
				} `json:"layers"`
			}
			if err := json.Unmarshal(rawManifest, &m); err != nil {
				t.Fatal(err)
			}
			if got := mediatypes.MediaType(m.MediaType); got != tc.wantManifest || !mediatypes.IsManifest(got) {
				t.Errorf("manifest mediaType %q, want %q", got, tc.wantManifest)
			}
			if got := mediatypes.MediaType(m.Config.MediaType); got != tc.wantConfig {
				t.Errorf("config mediaType %q, want %q", got, tc.wantConfig)
			}
			if len(m.Layers) != 1 {
				t.Fatalf("%d layers, want 1", len(m.Layers))
			}
			layers := make([]mediatypes.Layer, len(m.Layers))
			for i, l := range m.Layers {
				layers[i] = mediatypes.Layer{MediaType: mediatypes.MediaType(l.MediaType), Annotations: l.Annotations}
			}
			if layers[0].MediaType != tc.wantLayer || mediatypes.LayerCompression(layers[0].MediaType) != mediatypes.Gzip {
				t.Errorf("layer mediaType %q, want gzip layer %q", layers[0].MediaType, tc.wantLayer)
			}

			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			labels := cf.Config.Labels
			if !maps.Equal(labels, r.labels) {
				t.Errorf("config labels %v, want the Dockerfile's %v", labels, r.labels)
			}
			if cf.Architecture != "amd64" || cf.OS != "linux" {
				t.Errorf("platform %s/%s, want linux/amd64", cf.OS, cf.Architecture)
			}

			// The classification a reader makes from the pulled manifest and config.
			if got := mediatypes.Classify(mediatypes.MediaType(m.Config.MediaType), mediatypes.MediaType(m.ArtifactType), layers, labels); got != mediatypes.FormImage {
				t.Errorf("Classify = %q, want %q", got, mediatypes.FormImage)
			}

			// The labels name the add-on; they are those of the Dockerfile.
			for k, want := range map[string]string{
				mediatypes.LabelSpec:         mediatypes.SpecVersion,
				mediatypes.LabelName:         "coredns",
				mediatypes.LabelKind:         "manifests",
				mediatypes.AnnotationTitle:   labels[mediatypes.LabelName],
				mediatypes.AnnotationVersion: labels[mediatypes.LabelVersion],
			} {
				if got, ok := labels[k]; !ok || got != want {
					t.Errorf("label %s = %q (present %v), want %q", k, got, ok, want)
				}
			}
			if labels[mediatypes.LabelVersion] == "" {
				t.Errorf("label %s is empty", mediatypes.LabelVersion)
			}
			if _, err := os.Stat(filepath.Join(contextDir, "kustomization.yaml")); err == nil {
				t.Errorf("%s has a kustomization.yaml but the kind label is %q", contextDir, labels[mediatypes.LabelKind])
			}

			// rootfs.diff_ids names the one layer.
			ls, err := img.Layers()
			if err != nil {
				t.Fatal(err)
			}
			diffID, err := ls[0].DiffID()
			if err != nil {
				t.Fatal(err)
			}
			if cf.RootFS.Type != "layers" || !slices.Equal(cf.RootFS.DiffIDs, []v1.Hash{diffID}) {
				t.Errorf("rootfs %+v, want layers [%s]", cf.RootFS, diffID)
			}

			// The layer holds addon/ and addon/coredns.yaml, byte for byte.
			rc, err := ls[0].Uncompressed()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			var names []string
			var got []byte
			tr := tar.NewReader(rc)
			for {
				h, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, h.Name)
				if h.Uid != 0 || h.Gid != 0 || h.ModTime.IsZero() || h.ModTime.Unix() == 0 {
					t.Errorf("%s: uid %d gid %d mtime %v", h.Name, h.Uid, h.Gid, h.ModTime)
				}
				if h.Name == "addon/coredns.yaml" {
					if h.Typeflag != tar.TypeReg || h.Mode != 0o644 {
						t.Errorf("%s: type %c mode %o", h.Name, h.Typeflag, h.Mode)
					}
					if got, err = io.ReadAll(tr); err != nil {
						t.Fatal(err)
					}
				}
			}
			if want := []string{"addon/", "addon/.addonvalues", "addon/coredns.yaml"}; !slices.Equal(names, want) {
				t.Errorf("layer entries %q, want %q", names, want)
			}
			if !bytes.Equal(got, source) {
				t.Errorf("addon/coredns.yaml in the layer (%d bytes) differs from %s/coredns.yaml (%d bytes)", len(got), contextDir, len(source))
			}
		})
	}
}

func TestParseLabelArgs(t *testing.T) {
	got, err := parseLabelArgs(`a="x y" b=z "c.d"="q\"uote"`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "x y", "b": "z", "c.d": `q"uote`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range []string{`a`, `a="x`, `=x`} {
		if _, err := parseLabelArgs(bad); err == nil {
			t.Errorf("parseLabelArgs(%q): no error", bad)
		}
	}
}
