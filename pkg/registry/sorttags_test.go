package registry

import (
	"slices"
	"testing"
)

// SortTags puts semantic versions first, oldest first (v prefix, missing
// parts and pre-releases as semver orders them), then the other tags.
func TestSortTags(t *testing.T) {
	tags := []string{"latest", "1.10.0", "v1.2", "1.2.3-rc.1", "1.2.3", "main", "1", "2024.01.02", "v1.2.3+build"}
	SortTags(tags)
	want := []string{"1", "v1.2", "1.2.3-rc.1", "1.2.3", "v1.2.3+build", "1.10.0", "2024.01.02", "latest", "main"}
	if !slices.Equal(tags, want) {
		t.Errorf("SortTags = %q, want %q", tags, want)
	}
}
