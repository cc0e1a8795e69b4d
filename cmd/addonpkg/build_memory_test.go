package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 16, item 4: build of a folder holds the folder's shape, not its
// bytes: a generated folder of 256 MiB of small manifests (4096 files of
// two 32 KiB ConfigMaps) builds, validated, with a peak RSS of half its
// size at most (85 MiB measured), and every document is in the
// inventory. Its 20 MiB layer waits in a temporary file.
func TestBuildFolderPeakRSS(t *testing.T) {
	bigData(t, "writes a 256 MiB folder")
	binary(t)
	work := t.TempDir()
	src := filepath.Join(work, "big-addon")
	const dirs, perDir, docsPerFile = 32, 128, 2
	size := writeManifestFolder(t, src, dirs, perDir, docsPerFile)
	if size < 256<<20 {
		t.Fatalf("generated %d bytes, want 256 MiB", size)
	}
	dir := t.TempDir()
	// TMPDIR: the compressed layer spills there, and goes with the test.
	r := runPeak(t, dir, []string{"ADDONPKG_HOME=" + filepath.Join(dir, "home"), "TMPDIR=" + dir},
		"build", src, "-t", "big:1", "--json")
	t.Logf("exit %d in %v, peak RSS %.1f MiB for a %.1f MiB folder", r.code, r.took, float64(r.peak)/(1<<20), float64(size)/(1<<20))
	if r.code != 0 {
		t.Fatalf("build: exit %d: %s", r.code, r.stderr)
	}
	var out struct {
		Digest string `json:"digest"`
		Config struct {
			Inventory struct {
				Objects []struct {
					Name string `json:"name"`
				} `json:"objects"`
			} `json:"inventory"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("--json: %v: %q", err, r.stdout)
	}
	if got, want := len(out.Config.Inventory.Objects), dirs*perDir*docsPerFile; got != want {
		t.Errorf("inventory of %d objects, want %d", got, want)
	}
	if r.peak > size/2 {
		t.Errorf("peak RSS %.1f MiB for a %.1f MiB folder: the build held the folder's bytes", float64(r.peak)/(1<<20), float64(size)/(1<<20))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind in %s: %v", dir, entries)
	}
}

// writeManifestFolder writes dirs x perDir YAML files of docsPerFile
// ConfigMaps, each with a 32 KiB value: 1 KiB of random hex, then a
// repeated pattern (deterministic, and quick to compress), and returns
// the bytes written.
func writeManifestFolder(t *testing.T, root string, dirs, perDir, docsPerFile int) int64 {
	t.Helper()
	rng := rand.NewChaCha8([32]byte{16})
	raw := make([]byte, 512)
	filler := strings.Repeat("0123456789abcdef", 31<<10/16)
	var total int64
	for d := range dirs {
		sub := filepath.Join(root, fmt.Sprintf("part-%02d", d))
		must(t, os.MkdirAll(sub, 0o755))
		for f := range perDir {
			fh, err := os.Create(filepath.Join(sub, fmt.Sprintf("cm-%03d.yaml", f)))
			must(t, err)
			w := bufio.NewWriterSize(fh, 64<<10)
			for k := range docsPerFile {
				rng.Read(raw)
				n, err := fmt.Fprintf(w, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d-%d-%d\n  namespace: big\ndata:\n  blob: %s%s\n",
					d, f, k, hex.EncodeToString(raw), filler)
				must(t, err)
				total += int64(n)
			}
			must(t, w.Flush())
			must(t, fh.Close())
		}
	}
	return total
}

// A folder over the add-on size limit is refused from its listing,
// before any file is read: six sparse files of 100 MiB, each within the
// file size limit, add up to more than 512 MiB; build and unpack refuse
// them in bounded memory (reading them first would hold 512 MiB).
func TestFolderOverLimitNotRead(t *testing.T) {
	t.Parallel()
	binary(t)
	src := filepath.Join(t.TempDir(), "addon")
	must(t, os.MkdirAll(src, 0o755))
	must(t, os.WriteFile(filepath.Join(src, "a.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"), 0o644))
	for i := range 6 {
		part := filepath.Join(src, fmt.Sprintf("part-%d", i))
		must(t, os.Mkdir(part, 0o755))
		f, err := os.Create(filepath.Join(part, "big.yaml"))
		must(t, err)
		must(t, f.Truncate(100<<20))
		must(t, f.Close())
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"build", []string{"build", src, "-t", "x:1"}},
		{"unpack", []string{"unpack", src}},
		{"unpack -o", []string{"unpack", src, "-o", "out"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := runPeak(t, dir, []string{"ADDONPKG_HOME=" + filepath.Join(dir, "home")}, tc.args...)
			checkRefused(t, r, 64<<20, "part-5/big.yaml", "add-on size limit of 536870912 exceeded")
		})
	}
}
