package referrers

import (
	"context"
	"fmt"

	"github.com/addonpkg/addonpkg/pkg/source"
)

// FromArtifact is the location an opened artifact was read from: its
// registry repository, or the layout (the local store, with its
// repository name as the tag prefix; an oci: or oci-archive: layout).
func FromArtifact(ctx context.Context, a *source.Artifact, opts source.Options) (Location, error) {
	if st := a.Layout(); st != nil {
		switch a.Ref.Kind {
		case source.KindStore, source.KindRegistry:
			return Layout(st, a.Repository()), nil
		}
		return Layout(st, ""), nil
	}
	if a.Ref.Kind != source.KindRegistry {
		return nil, fmt.Errorf("%s: %w", a.Ref, ErrUnsupported)
	}
	ref, err := opts.Registry.ParseReference(a.Ref.Name)
	if err != nil {
		return nil, err
	}
	ropts, err := opts.Registry.Remote(ctx)
	if err != nil {
		return nil, err
	}
	return Registry(ref.Context(), ropts...), nil
}
