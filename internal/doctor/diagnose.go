package doctor

import (
	"context"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/addonpkg/addonpkg/pkg/registry"
)

// Diagnose probes (Probe) the repository that target names, through one
// connection made of o (Connect). target is REGISTRY/REPO, or
// REGISTRY/REPO:TAG (which names the repository too), with or without a
// docker:// or oci:// prefix.
func Diagnose(ctx context.Context, target string, o registry.Options) (*Report, error) {
	repo, err := repository(target, o)
	if err != nil {
		return nil, err
	}
	ropts, dopts, err := Connect(ctx, o)
	if err != nil {
		return nil, err
	}
	return Probe(ctx, repo, ropts, dopts...)
}

// repository is the repository target names; the error is the
// repository's when it is no reference either.
func repository(target string, o registry.Options) (name.Repository, error) {
	s := strings.TrimPrefix(strings.TrimPrefix(target, "docker://"), "oci://")
	repo, err := o.ParseRepository(s)
	if err == nil {
		return repo, nil
	}
	ref, rerr := o.ParseReference(s)
	if rerr != nil {
		return name.Repository{}, err
	}
	return ref.Context(), nil
}

// Remember keeps rep in the default cache (DefaultCache) for the push
// policy (AcceptsArtifact). Without a cache directory it does nothing;
// the error is the cache's failure to write.
func Remember(rep *Report) error {
	cache, err := DefaultCache()
	if err != nil {
		return nil // no cache directory: the next push probes again
	}
	return cache.Store(rep)
}
