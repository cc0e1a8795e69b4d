package source

import (
	"context"
	"errors"
	"fmt"

	"github.com/addonpkg/addonpkg/pkg/layout"
)

// ErrNotVerifiable marks a source that Options.Verify cannot check: a
// folder, an http download or a git tree (no manifest digest), or a
// docker-archive (no place for signatures).
var ErrNotVerifiable = errors.New("cannot verify a signature")

// Verifier checks an opened artifact before any of its layers is read:
// that its manifest digest (Artifact.Digest) is signed. pkg/signature
// implements it with public keys; other kinds of verification (keyless)
// can be added behind the same interface.
type Verifier interface {
	VerifyArtifact(ctx context.Context, a *Artifact, opts Options) error
}

// Layout is the OCI image layout the artifact was read from (the local
// store, an oci: directory, an oci-archive's contents), where its
// signatures and referrers are too; nil for a registry or a
// docker-archive.
func (a *Artifact) Layout() *layout.Store { return a.store }

func verifyArtifact(ctx context.Context, a *Artifact, opts Options) error {
	if opts.Verify == nil {
		return nil
	}
	if a.Ref.Kind == KindDockerArchive {
		return fmt.Errorf("%s: %w: a docker-archive holds no signatures", a.Ref, ErrNotVerifiable)
	}
	return opts.Verify.VerifyArtifact(ctx, a, opts)
}
