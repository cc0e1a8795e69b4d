// Package publish builds an add-on from where its tree is and writes it
// where it goes: what `addonpkg build` does, as one call. Build reads the
// tree of a build PATH (a folder, a file, a YAML stream, an https
// download, a git repository: source.ReadTree), packs it (build.Build) or
// puts it over a built add-on (build.Patch, with Options.Base), and
// writes the result under its names in the local store and to its output
// destinations (oci:, oci-archive:, docker-archive:).
//
// The policy of a build lives here: the default name (the tree's) and
// tag (NAME:VERSION, else NAME:latest, when nothing else is asked for),
// which names the store takes (source.StoreName), which destinations
// hold which form (CheckOutput), what a patch keeps of its base, and the
// patch that only deletes (Deletes with an empty PATH).
package publish
