package transfer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/source"
)

// ErrReferrers marks a copy whose add-on was written but whose referrers
// (Options.Referrers) could not all be copied.
var ErrReferrers = errors.New("copy referrers")

// copyReferrers copies what refers to the written manifest (res.Digest)
// and, for an index, to each of its manifests, from where a was read to
// dst, when o.Referrers is set; res.Referrers counts them.
func (o Options) copyReferrers(ctx context.Context, a *source.Artifact, res *Result, dst referrers.Location) error {
	if !o.Referrers {
		return nil
	}
	src, err := referrers.FromArtifact(ctx, a, o.Options)
	if errors.Is(err, referrers.ErrUnsupported) {
		return nil // a docker-archive: nothing can refer to it
	}
	if err != nil {
		return err
	}
	d, err := v1.NewHash(res.Digest)
	if err != nil {
		return err
	}
	subjects := []v1.Hash{d}
	if a.Index != nil {
		im, err := a.Index.IndexManifest()
		if err != nil {
			return err
		}
		for _, c := range im.Manifests {
			subjects = append(subjects, c.Digest)
		}
	}
	copied, err := referrers.Copy(ctx, src, dst, subjects, o.ReferrerLimits)
	res.Referrers = len(copied)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", a.Ref, ErrReferrers, err)
	}
	return nil
}

// repositoryOf drops the :TAG or @DIGEST of a store name.
func repositoryOf(name string) string {
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		name = name[:i]
	}
	return name
}
