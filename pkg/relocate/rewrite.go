package relocate

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/addonpkg/addonpkg/pkg/render"
)

// rewriteDocument rewrites the image fields of a core workload document
// whose image the lock lists. A document it changes is encoded again
// (YAML); the others keep their bytes.
func rewriteDocument(d *render.Document, targets map[string]string) error {
	path := render.PodSpecPath(d.Object.APIVersion, d.Object.Kind)
	if path == nil {
		return nil
	}
	if !slices.ContainsFunc(d.Images, func(im string) bool { _, ok := targets[im]; return ok }) {
		return nil
	}
	node, err := yaml.Parse(string(d.Raw))
	if err != nil {
		return err
	}
	// An image written as an alias or through a merge key is rewritten
	// where the API server reads it: the document is expanded first.
	node = render.Resolved(node)
	changed := false
	for _, v := range render.ImageNodes(node) {
		if t, ok := targets[v.Value]; ok {
			v.Value, v.Style, v.Tag = t, 0, yaml.NodeTagString
			changed = true
		}
	}
	if !changed {
		return nil
	}
	s, err := node.String()
	if err != nil {
		return err
	}
	// The images as the renderer reads them, from the new bytes.
	docs, err := render.SplitDocuments(d.File, []byte(s))
	if err != nil {
		return err
	}
	if len(docs) != 1 {
		return fmt.Errorf("relocate %s: re-encoding gave %d documents", d.Object, len(docs))
	}
	d.Raw, d.Images = docs[0].Raw, docs[0].Images
	return nil
}

// overlayFS is fsys with one file's bytes replaced.
type overlayFS struct {
	fs.FS
	name string
	data []byte
}

func (o *overlayFS) Open(name string) (fs.File, error) {
	if name != o.name {
		return o.FS.Open(name)
	}
	st, err := fs.Stat(o.FS, name)
	if err != nil {
		return nil, err
	}
	return &overlayFile{Reader: bytes.NewReader(o.data), info: overlayInfo{FileInfo: st, size: int64(len(o.data))}}, nil
}

func (o *overlayFS) ReadFile(name string) ([]byte, error) {
	if name == o.name {
		return slices.Clone(o.data), nil
	}
	return fs.ReadFile(o.FS, name)
}

func (o *overlayFS) Stat(name string) (fs.FileInfo, error) {
	st, err := fs.Stat(o.FS, name)
	if err != nil || name != o.name {
		return st, err
	}
	return overlayInfo{FileInfo: st, size: int64(len(o.data))}, nil
}

func (o *overlayFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(o.FS, name) }

type overlayFile struct {
	*bytes.Reader
	info overlayInfo
}

func (f *overlayFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *overlayFile) Close() error               { return nil }

var _ io.ReaderAt = (*overlayFile)(nil)

type overlayInfo struct {
	fs.FileInfo
	size int64
}

func (i overlayInfo) Size() int64        { return i.size }
func (i overlayInfo) ModTime() time.Time { return i.FileInfo.ModTime() }
