package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/layout"
)

// ErrUnsupportedDestination marks a destination that cannot hold what is
// written to it (a tree kind, an index to a docker-archive).
var ErrUnsupportedDestination = errors.New("unsupported destination")

// Written describes what Write wrote.
type Written struct {
	// Reference is where it went, with its digest: REGISTRY/REPO@sha256:...
	// for registries and the local store (its name's repository, without
	// the tag), oci:DIR@sha256:... for layouts.
	Reference string          `json:"reference"`
	Digest    string          `json:"digest"`
	Size      int64           `json:"size"`
	MediaType types.MediaType `json:"mediaType"`
}

// Write writes an opened image or index to dst, a kind that is a Writer
// (the store, a registry, oci:, oci-archive:, docker-archive:). The media
// type written (to a registry's Content-Type, a layout's index.json, the
// result) is the one the manifest's own bytes give (mediatypes.Sniff),
// never what the source said, which for a registry is a header.
func Write(ctx context.Context, a *Artifact, dst Ref, opts Options) (*Written, error) {
	w, ok := opts.location(dst.Kind).(Writer)
	if !ok {
		return nil, fmt.Errorf("%s: %w", dst, ErrUnsupportedDestination)
	}
	a, err := typedByContent(a)
	if err != nil {
		return nil, err
	}
	if a.Index != nil {
		// Bounded as every index reader bounds it, before a byte is
		// written (go-containerregistry's WriteIndex walks it unbounded).
		if err := layout.CheckIndexGraph(ctx, a.Index); err != nil {
			return nil, fmt.Errorf("%s: %w", a.Ref, err)
		}
	}
	res, err := describe(a)
	if err != nil {
		return nil, err
	}
	if a.Digest, err = v1.NewHash(res.Digest); err != nil {
		return nil, err
	}
	if res.Reference, err = w.Write(ctx, a, dst, opts); err != nil {
		return nil, err
	}
	return res, nil
}

func describe(a *Artifact) (*Written, error) {
	var (
		raw []byte
		mt  types.MediaType
		err error
	)
	if a.Index != nil {
		raw, err = a.Index.RawManifest()
		if err == nil {
			mt, err = a.Index.MediaType()
		}
	} else {
		raw, err = a.Image.RawManifest()
		if err == nil {
			mt, err = a.Image.MediaType()
		}
	}
	if err != nil {
		return nil, err
	}
	h, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	return &Written{Digest: h.String(), Size: int64(len(raw)), MediaType: mt}, nil
}
