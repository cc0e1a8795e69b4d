package referrers

import (
	"context"
	"fmt"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/registry"
)

// Beside is the location of what refers to a manifest read from the
// layout st (in the local store, repo is the repository its tags are
// prefixed with), or, st nil, from the registry reference ref, reached
// with ro: source.Artifact.Beside gives the three. Neither is an error
// wrapping ErrUnsupported (a docker-archive).
func Beside(ctx context.Context, st *layout.Store, repo, ref string, ro registry.Options) (Location, error) {
	if st != nil {
		return Layout(st, repo), nil
	}
	if ref == "" {
		return nil, fmt.Errorf("%w: no registry or layout to look in", ErrUnsupported)
	}
	r, err := ro.ParseReference(ref)
	if err != nil {
		return nil, err
	}
	return Registry(r.Context(), ro)
}
