package doctor

import (
	"testing"

	"github.com/addonpkg/addonpkg/pkg/registry"
)

// A repository is named with or without a tag, a docker:// or an oci://
// prefix.
func TestRepository(t *testing.T) {
	for _, s := range []string{
		"registry.example.com/addons/coredns",
		"registry.example.com/addons/coredns:1.11",
		"docker://registry.example.com/addons/coredns",
		"oci://registry.example.com/addons/coredns:1.11",
	} {
		repo, err := repository(s, registry.Options{})
		if err != nil || repo.Name() != "registry.example.com/addons/coredns" {
			t.Errorf("repository(%q) = %v, %v", s, repo, err)
		}
	}
	if _, err := repository("Not A Repo!", registry.Options{}); err == nil {
		t.Error("a bad name was taken")
	}
}
