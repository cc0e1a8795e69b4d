package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// limitValue is a --max-* flag: a positive number. safetree.Limits reads
// 0 as its default, so --max-entries 0 was the default without a word,
// and a negative one was the default too.
type limitValue[T int | int64] struct{ p *T }

func (v limitValue[T]) String() string { return strconv.FormatInt(int64(*v.p), 10) }

func (v limitValue[T]) Type() string {
	if _, ok := any(*v.p).(int64); ok {
		return "int64"
	}
	return "int"
}

func (v limitValue[T]) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil || n <= 0 || int64(T(n)) != n {
		return fmt.Errorf("want a positive number")
	}
	*v.p = T(n)
	return nil
}

// addLimit declares the limit flag name on fs, with its default.
func addLimit[T int | int64](fs *pflag.FlagSet, p *T, name string, def T, help string) {
	*p = def
	fs.Var(limitValue[T]{p}, name, help)
}

// addLayerLimit adds --max-layers to a command that reads images.
func (a *app) addLayerLimit(cmd *cobra.Command) {
	addLimit(cmd.Flags(), &a.maxLayers, "max-layers", safetree.DefaultMaxLayers, "limit: layers of one image, checked before any layer is read")
}

// addKustomizeLimits adds the limits on what a kustomize tree makes
// kustomize do to a command that renders such trees:
// --max-mapping-keys, --max-kustomize-objects and --max-patch-targets.
func addKustomizeLimits(cmd *cobra.Command, keys, objects, targets *int) {
	f := cmd.Flags()
	addLimit(f, keys, "max-mapping-keys", safetree.DefaultMaxMappingKeys, "limit: keys of one YAML mapping, or of one generated ConfigMap or Secret, in a kustomize tree (kustomize takes time quadratic in them)")
	addLimit(f, objects, "max-kustomize-objects", safetree.DefaultMaxKustomizeObjects, "limit: objects kustomize loads to render a tree, each base counted as often as it is included (kustomize takes time quadratic in them)")
	addLimit(f, targets, "max-patch-targets", safetree.DefaultMaxPatchTargets, "limit: objects the patches and list transformers (images, labels, replicas...) of a kustomize tree may touch, summed over them (up to a millisecond each)")
}
