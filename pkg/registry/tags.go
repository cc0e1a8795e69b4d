package registry

import (
	"context"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// ListTags lists the tags of repo, page after page as remote.List does,
// within one budget for the whole listing: the index cap (each page is
// capped by itself in the transport, manifestCap), counting each tag's
// bytes and a kilobyte for each page. remote.List follows a registry's
// Link to the next page as long as there is one, so a registry that
// answers every page with another link kept addonpkg asking, and growing
// the list, without end. Over the budget it fails with the cap's
// *safetree.LimitError.
func ListTags(ctx context.Context, repo name.Repository, opts ...remote.Option) ([]string, error) {
	p, err := remote.NewPuller(opts...)
	if err != nil {
		return nil, err
	}
	l, err := p.Lister(ctx, repo)
	if err != nil {
		return nil, err
	}
	var tags []string
	var spent int64
	for l.HasNext() {
		page, err := l.Next(ctx)
		if err != nil {
			return nil, err
		}
		// A page costs a kilobyte even when it brings no tag, so that
		// empty pages that link on are bounded too (to 16,384 requests
		// at the default cap: more than a million tags in pages of 100).
		spent += 1024
		for _, t := range page.Tags {
			spent += int64(len(t))
		}
		if err := manifestLimit.Check("tag list of "+repo.Name(), spent); err != nil {
			return nil, err
		}
		tags = append(tags, page.Tags...)
	}
	return tags, nil
}
