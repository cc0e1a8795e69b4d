package layout_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/addonpkg/addonpkg/pkg/layout"
)

// Write in several steps without a concurrent gc deleting what is not
// named yet: blobs first, then the image that names them.
func ExampleStore_Hold() {
	dir, err := os.MkdirTemp("", "store-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := layout.Init(dir)
	if err != nil {
		log.Fatal(err)
	}
	img, err := random.Image(64, 1)
	if err != nil {
		log.Fatal(err)
	}
	release, err := st.Hold()
	if err != nil {
		log.Fatal(err)
	}
	cfg, _ := img.RawConfigFile()
	h, _, _ := v1.SHA256(bytes.NewReader(cfg))
	if err := st.WriteBlob(h, int64(len(cfg)), bytes.NewReader(cfg)); err != nil {
		log.Fatal(err)
	}
	fmt.Println("config present:", st.HasBlob(h))
	if _, err := st.WriteImage(context.Background(), img, nil, "random:1"); err != nil {
		log.Fatal(err)
	}
	release()

	removed, _, err := st.GC()
	fmt.Println("gc removed", removed, err)
	// Output:
	// config present: true
	// gc removed 0 <nil>
}
