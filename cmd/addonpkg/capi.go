package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/addonpkg/addonpkg/pkg/addonset"
	"github.com/addonpkg/addonpkg/pkg/capi"
)

// crsFlags are render's flags for a Cluster API ClusterResourceSet.
type crsFlags struct {
	opts     capi.Options
	strategy string
}

// crsDependents are the flags that mean nothing without
// --cluster-resource-set.
var crsDependents = []string{"cluster-selector", "namespace", "strategy"}

func (c *crsFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&c.opts.Name, "cluster-resource-set", "", "print the set as the Cluster API ClusterResourceSet `NAME`, with a ConfigMap per member (a Secret for a member with Secrets)")
	f.StringToStringVar(&c.opts.ClusterSelector, "cluster-selector", nil, "with --cluster-resource-set: a label `k=v` the Clusters it installs into have (repeatable, or k=v,k2=v2; required)")
	// pflag prints an empty map's default as "[]": there is none.
	f.Lookup("cluster-selector").DefValue = ""
	f.StringVar(&c.opts.Namespace, "namespace", "", "with --cluster-resource-set: the namespace of its objects and of the Clusters it selects (default: kubectl's)")
	addEnumFlag(cmd, &c.strategy, "strategy", string(capi.ApplyOnce), "with --cluster-resource-set: "+string(capi.ApplyOnce)+" (create each object once) or "+string(capi.Reconcile)+" (apply again when the set changes)", string(capi.ApplyOnce), string(capi.Reconcile))
}

// check refuses, before anything is fetched, options that exclude each
// other and options capi would refuse.
func (c *crsFlags) check(cmd *cobra.Command, out string, asJSON bool) error {
	if c.opts.Name == "" {
		for _, n := range crsDependents {
			if cmd.Flags().Changed(n) {
				return flagConflict(cmd, fmt.Sprintf("--%s needs --cluster-resource-set", n))
			}
		}
		return nil
	}
	switch {
	case out != "":
		return flagConflict(cmd, "--cluster-resource-set prints one stream: redirect stdout rather than -o DIR")
	case asJSON:
		return flagConflict(cmd, "--cluster-resource-set and --json exclude each other")
	case len(c.opts.ClusterSelector) == 0:
		return flagConflict(cmd, "--cluster-resource-set needs --cluster-selector k=v: Cluster API refuses a ClusterResourceSet that selects no cluster")
	}
	c.opts.Strategy = capi.Strategy(c.strategy)
	return c.opts.Validate()
}

// write prints the rendered set as the ClusterResourceSet and its
// resources.
func (c *crsFlags) write(a *app, res *addonset.Result) error {
	members := make([]capi.Member, len(res.Members))
	for i, m := range res.Members {
		members[i] = capi.FromRendered(m.Name, m.Pinned, m.Addon, m.Result)
	}
	crs, err := capi.ClusterResourceSet(members, c.opts)
	if err != nil {
		return err
	}
	_, err = crs.WriteTo(a.stdout)
	return err
}
