package source

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/addonpkg/addonpkg/pkg/addon"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Bounds of a docker-archive, checked before go-containerregistry's
// tarball reader sees the file: it reads manifest.json and each config
// whole, and scans the archive once for every file it opens.
const (
	maxDockerManifest = 4 << 20
	maxDockerEntries  = 10_000
	maxDockerLinkHops = 8
)

// ErrBadArchive marks an archive that is malformed or over its bounds.
var ErrBadArchive = errors.New("invalid archive")

// dockerEntry is what the pre-scan keeps of one tar entry.
type dockerEntry struct {
	typ  byte
	size int64
	link string
}

// checkDockerArchive reads the headers of a `docker save` tarball (never
// a file's bytes, but manifest.json's) and refuses it unless
// manifest.json, every config and every layer it names resolves (through
// at most maxDockerLinkHops links, as the tarball reader follows them)
// to a regular file, manifest.json and the configs are within their size
// caps, and there are at most maxLayers layers per image.
func checkDockerArchive(file string, maxLayers int) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	entries, err := scanDockerArchive(f)
	if err != nil {
		return err
	}
	const manifestName = "manifest.json"
	mpath, err := resolveDockerEntry(entries, manifestName, maxDockerManifest)
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	raw, err := readDockerEntry(f, mpath, maxDockerManifest)
	if err != nil {
		return err
	}
	var manifest []struct {
		Config string
		Layers []string
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		return fmt.Errorf("%w: manifest.json: %w", ErrBadArchive, err)
	}
	limits := safetree.Limits{MaxLayers: maxLayers}.WithDefaults()
	for _, m := range manifest {
		if err := limits.CheckLayers(len(m.Layers)); err != nil {
			return err
		}
		if _, err := resolveDockerEntry(entries, m.Config, addon.MaxConfigSize); err != nil {
			return err
		}
		for _, l := range m.Layers {
			if _, err := resolveDockerEntry(entries, l, -1); err != nil {
				return err
			}
		}
	}
	return nil
}

// scanDockerArchive lists the entries by clean name; the first of a name
// wins, as in the tarball reader.
func scanDockerArchive(r io.Reader) (map[string]dockerEntry, error) {
	entries := map[string]dockerEntry{}
	tr := tar.NewReader(r)
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			return entries, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadArchive, err)
		}
		if n >= maxDockerEntries {
			return nil, &safetree.LimitError{Name: "docker-archive entry count", Limit: maxDockerEntries}
		}
		name := path.Clean(hdr.Name)
		if _, ok := entries[name]; !ok {
			entries[name] = dockerEntry{typ: hdr.Typeflag, size: hdr.Size, link: hdr.Linkname}
		}
	}
}

// resolveDockerEntry follows name through links to a regular file of at
// most max bytes (max < 0: any size) and returns its name.
func resolveDockerEntry(entries map[string]dockerEntry, name string, max int64) (string, error) {
	p := path.Clean(name)
	for hops := 0; ; hops++ {
		e, ok := entries[p]
		if !ok {
			return "", fmt.Errorf("%w: %s is not in the archive", ErrBadArchive, oneLine(name))
		}
		switch e.typ {
		case tar.TypeSymlink, tar.TypeLink:
			if hops >= maxDockerLinkHops {
				return "", fmt.Errorf("%w: %s: more than %d links to follow", ErrBadArchive, oneLine(name), maxDockerLinkHops)
			}
			p = path.Join(path.Dir(p), path.Clean(e.link))
		case tar.TypeReg, tar.TypeRegA, tar.TypeGNUSparse:
			// A sparse file's size is the size a reader gets.
			if max >= 0 && e.size > max {
				return "", &safetree.LimitError{Name: "docker-archive " + path.Base(name) + " size", Limit: max, Entry: name}
			}
			return p, nil
		default:
			return "", fmt.Errorf("%w: %s is not a regular file", ErrBadArchive, oneLine(name))
		}
	}
}

// readDockerEntry reads the regular file name, at most max bytes.
func readDockerEntry(r io.Reader, name string, max int64) ([]byte, error) {
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBadArchive, name, err)
		}
		if path.Clean(hdr.Name) != name {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, max+1))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBadArchive, name, err)
		}
		if int64(len(b)) > max {
			return nil, &safetree.LimitError{Name: "docker-archive " + name + " size", Limit: max, Entry: name}
		}
		return b, nil
	}
}
