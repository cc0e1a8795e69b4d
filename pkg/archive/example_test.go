package archive_test

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"log"
	"testing/fstest"
	"time"

	"github.com/addonpkg/addonpkg/pkg/archive"
)

// Write a tree as the image form's reproducible tar: entries under the
// prefix in canonical order, modes normalized, one fixed time. The
// content identity does not depend on the prefix, the modes' private
// bits or the times, so both forms of one add-on share it.
func ExampleWriteTar() {
	tree := fstest.MapFS{
		"b.yaml":     {Data: []byte("kind: ConfigMap\n"), Mode: 0o600, ModTime: time.Now()},
		"a/run.sh":   {Data: []byte("#!/bin/sh\n"), Mode: 0o700},
		"a/c.yaml":   {Data: []byte("kind: Secret\n"), Mode: 0o640},
		"a/link.yml": {Data: []byte("c.yaml"), Mode: fs.ModeSymlink | 0o777},
	}
	var image bytes.Buffer
	res, err := archive.WriteTar(&image, tree, archive.TarOptions{Prefix: "addon"})
	if err != nil {
		log.Fatal(err)
	}
	tr := tar.NewReader(&image)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%c %04o %s %s\n", h.Typeflag, h.Mode, h.ModTime.UTC().Format(time.DateOnly), h.Name)
	}

	artifact, err := archive.WriteTar(io.Discard, tree, archive.TarOptions{})
	if err != nil {
		log.Fatal(err)
	}
	id, err := archive.Identity(tree)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Identity == artifact.Identity, res.Identity == id, res.DiffID == artifact.DiffID)
	// Output:
	// 5 0755 1970-01-01 addon/
	// 5 0755 1970-01-01 addon/a/
	// 0 0644 1970-01-01 addon/a/c.yaml
	// 2 0777 1970-01-01 addon/a/link.yml
	// 0 0755 1970-01-01 addon/a/run.sh
	// 0 0644 1970-01-01 addon/b.yaml
	// true true false
}
