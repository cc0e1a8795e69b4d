package imagelock_test

import (
	"fmt"
	"os"

	"github.com/addonpkg/addonpkg/pkg/imagelock"
	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// A mirrored image keeps its repository path, drops its registry host,
// and is addressed by digest.
func ExampleMirrorReference() {
	const d = "sha256:1b2a0fd1a8c3b9c5e0e39e5b9b4a2b5c7f6d0b8a4f0e3c1d2b6a7e8f9c0d1e2f"
	for _, image := range []string{"registry.k8s.io/coredns/coredns:v1.11.1", "nginx:1.27"} {
		ref, err := imagelock.MirrorReference("mirror.internal:5000", image, d)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(ref)
	}
	// Output:
	// mirror.internal:5000/coredns/coredns@sha256:1b2a0fd1a8c3b9c5e0e39e5b9b4a2b5c7f6d0b8a4f0e3c1d2b6a7e8f9c0d1e2f
	// mirror.internal:5000/library/nginx@sha256:1b2a0fd1a8c3b9c5e0e39e5b9b4a2b5c7f6d0b8a4f0e3c1d2b6a7e8f9c0d1e2f
}

// A lock lists each image as the manifests write it, the digest copied
// and where the copy is.
func ExampleLock_Encode() {
	const (
		subject = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		d       = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	)
	mirrored, _ := imagelock.MirrorReference("mirror.internal", "busybox:1.36", d)
	l := &imagelock.Lock{MediaType: mediatypes.ImagesLock, Subject: subject, Mirror: "mirror.internal",
		Images: []imagelock.Image{{Image: "busybox:1.36", Digest: d, Mirrored: mirrored}}}
	b, err := l.Encode()
	if err != nil {
		fmt.Println(err)
		return
	}
	os.Stdout.Write(b)
	// Output:
	// {
	//   "mediaType": "application/vnd.cncf.addon.images.lock.v1+json",
	//   "subject": "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	//   "mirror": "mirror.internal",
	//   "images": [
	//     {
	//       "image": "busybox:1.36",
	//       "digest": "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
	//       "mirrored": "mirror.internal/library/busybox@sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	//     }
	//   ]
	// }
}
