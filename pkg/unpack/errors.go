package unpack

import (
	"errors"
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// Sentinel errors; the concrete errors below wrap them. A refusal of a
// tree rule or a limit matches safetree's sentinels (safetree.ErrUnsafe
// and its classes, safetree.ErrLimit), a blob that is not the one its
// descriptor names errdef.ErrDigestMismatch: unpack does not rename them.
var (
	// ErrNoContent: the image holds no add-on tree.
	ErrNoContent = errors.New("no add-on content")
	// ErrNoPlatform: an index has no manifest for the wanted platform.
	ErrNoPlatform = errors.New("no matching platform")
	// ErrUnsupported: a manifest or layer type addonpkg does not read.
	ErrUnsupported = errors.New("unsupported media type")
	// ErrCorrupt: a layer that does not decode, a config that does not
	// parse, or a DiffID or identity that does not match what the image
	// claims.
	ErrCorrupt = errors.New("corrupt add-on")
)

// EntryError names a refused layer entry.
type EntryError struct {
	Layer  int // 1-based, bottom to top
	Entry  string
	Reason string
	Err    error // a safetree class (matching safetree.ErrUnsafe) or ErrCorrupt
}

func (e *EntryError) Error() string {
	return fmt.Sprintf("layer %d: entry %q: %s", e.Layer, sanitize(e.Entry), sanitize(e.Reason))
}

func (e *EntryError) Unwrap() error { return e.Err }

// PlatformError lists the platforms an index has.
type PlatformError struct {
	Want string
	Have []string
}

func (e *PlatformError) Error() string {
	have := make([]string, len(e.Have))
	for i, h := range e.Have {
		have[i] = sanitize(h)
	}
	if len(have) == 0 {
		// Attestations are neither chosen nor listed (spec 9.1).
		return fmt.Sprintf("no manifest for platform %s: the index holds only attestation manifests, no image", sanitize(e.Want))
	}
	return fmt.Sprintf("no manifest for platform %s (the index has: %s)", sanitize(e.Want), strings.Join(have, ", "))
}

func (e *PlatformError) Unwrap() error { return ErrNoPlatform }

// sanitize keeps hostile names from breaking the one-line error.
func sanitize(s string) string { return safetree.Sanitize(s) }

func layerErr(layer int, h v1.Hash, err error) error {
	return fmt.Errorf("layer %d (%s): %w", layer, h, err)
}

// inLayer gives a safetree refusal the layer it was found in.
func inLayer(layer int, err error) error {
	var se *safetree.Error
	if errors.As(err, &se) {
		return &EntryError{Layer: layer, Entry: se.Entry, Reason: se.Reason, Err: se.Err}
	}
	return err
}

// Finer sentinels: each is also its parent (errors.Is(safetree.ErrLinkEscape,
// safetree.ErrUnsafe) holds), so callers that test the parent see no change.
// They let a caller tell the refusal classes of spec/addon-v1.md apart
// (see internal/conformance.Classify).
var (
	// ErrDiffIDMismatch: a layer whose uncompressed bytes do not hash to
	// the DiffID of the image config. It is an ErrCorrupt.
	ErrDiffIDMismatch error = &subError{msg: "layer does not match its diff_id", parent: ErrCorrupt}
	// ErrIdentityMismatch: an artifact whose config states another content
	// identity than its content has. It is an ErrCorrupt.
	ErrIdentityMismatch error = &subError{msg: "content identity does not match the config", parent: ErrCorrupt}
)

// subError is a sentinel that is also its parent sentinel.
type subError struct {
	msg    string
	parent error
}

func (e *subError) Error() string        { return e.msg }
func (e *subError) Is(target error) bool { return target == e.parent }
