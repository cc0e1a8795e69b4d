package transfer

import (
	"bytes"
	"io"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/addonpkg/addonpkg/pkg/registry"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func absOf(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func nameTag(s string) (name.Tag, error) { return name.NewTag(s) }

func explainWrite(ref string, err error) error { return registry.Explain(ref, err) }
