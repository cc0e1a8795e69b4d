package referrers_test

import (
	"context"
	"errors"
	"testing"

	"github.com/addonpkg/addonpkg/pkg/layout"
	"github.com/addonpkg/addonpkg/pkg/referrers"
	"github.com/addonpkg/addonpkg/pkg/registry"
)

// Beside finds where referrers live beside a layout or a registry, and
// for a manifest read from neither (a docker-archive) says, with
// ErrUnsupported, that nothing can refer to it: what copies referrers
// (transfer, addonset's mirror) tests for it and copies none.
func TestBesideNeitherLayoutNorRegistry(t *testing.T) {
	ctx := context.Background()
	if _, err := referrers.Beside(ctx, nil, "", "", registry.Options{}); !errors.Is(err, referrers.ErrUnsupported) {
		t.Errorf("Beside(no layout, no registry) = %v, want ErrUnsupported", err)
	}
	st, err := layout.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if loc, err := referrers.Beside(ctx, st, "", "", registry.Options{}); err != nil || loc == nil {
		t.Errorf("Beside(a layout) = %v, %v, want its location", loc, err)
	}
	if loc, err := referrers.Beside(ctx, nil, "", "127.0.0.1:5000/addons/demo:1", registry.Options{}); err != nil || loc == nil {
		t.Errorf("Beside(a registry reference) = %v, %v, want its location", loc, err)
	}
}
