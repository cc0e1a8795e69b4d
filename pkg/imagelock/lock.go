package imagelock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
	"github.com/addonpkg/addonpkg/pkg/reference"
	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// lockCap caps the bytes of a lock document a reader accepts.
var lockCap = safetree.DefaultCap(safetree.LimitLockBytes)

// Lock is the image lock document.
type Lock struct {
	// MediaType is mediatypes.ImagesLock.
	MediaType mediatypes.MediaType `json:"mediaType"`
	// Subject is the digest of the add-on manifest the lock belongs to.
	Subject string `json:"subject"`
	// Mirror is the registry prefix (HOST[:PORT][/PATH]) the images were
	// copied under; empty when they were copied into an OCI layout or
	// archive.
	Mirror string `json:"mirror,omitempty"`
	// Images are sorted by Image, one entry per distinct reference.
	Images []Image `json:"images"`
}

// Image is one entry of a lock.
type Image struct {
	// Image is the reference as the add-on's manifests write it
	// (registry.k8s.io/coredns/coredns:v1.11.1, nginx, repo@sha256:...).
	Image string `json:"image"`
	// Digest is the manifest or index that was copied: the one Image
	// resolved to at the source, or with a platform chosen, that
	// platform's manifest.
	Digest string `json:"digest"`
	// MediaType is the media type of that manifest or index.
	MediaType string `json:"mediaType,omitempty"`
	// Mirrored is where the copy is: MIRROR/PATH@DIGEST in a registry,
	// PATH@DIGEST in a layout or archive; always MirrorReference(Lock.Mirror,
	// Image, Digest), which Validate checks.
	Mirrored string `json:"mirrored"`
}

// Errors callers can test with errors.Is.
var (
	// ErrInvalid marks a lock document that does not parse or validate.
	ErrInvalid = errors.New("invalid image lock")
	// ErrNoLock marks an add-on that has no image lock.
	ErrNoLock = errors.New("no image lock")
	// ErrPinnedDigest marks a lock entry whose digest differs from the one
	// its image reference pins (repo@sha256:A locked as sha256:B). The add-on
	// names that digest, and a signature over the add-on covers it; the
	// lock is not signed, so it may not redirect it. Such an error also
	// matches ErrInvalid.
	ErrPinnedDigest = errors.New("image lock changes a pinned digest")
)

// Parse reads and validates a lock document.
func Parse(b []byte) (*Lock, error) {
	if err := lockCap.Check("", int64(len(b))); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	var l Lock
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the document", ErrInvalid)
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	return &l, nil
}

// Validate checks the media type, the subject, and every entry: the
// reference parses, the digest is a sha256 digest (the very digest the
// reference pins, when it pins one: ErrPinnedDigest), no reference is
// listed twice.
func (l *Lock) Validate() error {
	if l.MediaType != mediatypes.ImagesLock {
		return fmt.Errorf("%w: mediaType %q, want %q", ErrInvalid, l.MediaType, mediatypes.ImagesLock)
	}
	if _, err := parseDigest(l.Subject); err != nil {
		return fmt.Errorf("%w: subject: %w", ErrInvalid, err)
	}
	seen := map[string]bool{}
	for i, im := range l.Images {
		ref, err := name.ParseReference(im.Image)
		if err != nil {
			return fmt.Errorf("%w: images[%d]: %w", ErrInvalid, i, err)
		}
		if _, err := parseDigest(im.Digest); err != nil {
			return fmt.Errorf("%w: images[%d] (%s): %w", ErrInvalid, i, im.Image, err)
		}
		// The lock is unsigned and travels as a referrer anyone with push
		// access can replace: it may resolve a tag, never overrule a digest
		// the (possibly signed) add-on itself names.
		if pinned, ok := ref.(name.Digest); ok && pinned.DigestStr() != im.Digest {
			return fmt.Errorf("%w: %w: %s is locked as %s", ErrInvalid, ErrPinnedDigest, im.Image, im.Digest)
		}
		if im.Mirrored == "" {
			return fmt.Errorf("%w: images[%d] (%s): no mirrored reference", ErrInvalid, i, im.Image)
		}
		// The mirrored reference follows from the rest: a lock cannot send
		// a reader anywhere else.
		want, err := MirrorReference(l.Mirror, im.Image, im.Digest)
		if err != nil {
			return fmt.Errorf("%w: images[%d]: %w", ErrInvalid, i, err)
		}
		if im.Mirrored != want {
			return fmt.Errorf("%w: images[%d] (%s): mirrored %q, want %q", ErrInvalid, i, im.Image, im.Mirrored, want)
		}
		if seen[im.Image] {
			return fmt.Errorf("%w: %s is listed twice", ErrInvalid, im.Image)
		}
		seen[im.Image] = true
	}
	return nil
}

func parseDigest(s string) (v1.Hash, error) {
	if !strings.HasPrefix(s, "sha256:") {
		return v1.Hash{}, fmt.Errorf("digest %q is not sha256:<hex>", s)
	}
	return v1.NewHash(s)
}

// Encode gives the document's canonical bytes: entries sorted by Image,
// two-space indented, ending in a newline. Equal locks encode equally.
func (l *Lock) Encode() ([]byte, error) {
	c := *l
	c.MediaType = mediatypes.ImagesLock
	c.Images = slices.Clone(l.Images)
	if c.Images == nil {
		c.Images = []Image{}
	}
	slices.SortFunc(c.Images, func(a, b Image) int { return strings.Compare(a.Image, b.Image) })
	if err := c.Validate(); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Lookup finds the entry of an image reference, as the manifests write it.
func (l *Lock) Lookup(image string) (Image, bool) {
	for _, im := range l.Images {
		if im.Image == image {
			return im, true
		}
	}
	return Image{}, false
}

// MirrorReference names an image's copy under mirror (HOST[:PORT][/PATH]):
// MIRROR/PATH@DIGEST, PATH being reference.Path(image). With an empty mirror
// it is PATH@DIGEST, the name relative to whatever mirror the image will
// be copied into.
func MirrorReference(mirror, image, digest string) (string, error) {
	repo, err := reference.Path(image)
	if err != nil {
		return "", err
	}
	if _, err := parseDigest(digest); err != nil {
		return "", fmt.Errorf("image %q: %w", image, err)
	}
	mirror = strings.TrimSuffix(mirror, "/")
	if mirror == "" {
		return repo + "@" + digest, nil
	}
	s := mirror + "/" + repo + "@" + digest
	if _, err := name.NewDigest(s); err != nil {
		return "", fmt.Errorf("mirror %q: %w", mirror, err)
	}
	return s, nil
}
