// Package airgap copies an add-on together with every container image it
// runs, by digest, into a mirror registry, an OCI layout, the local store
// or one oci-archive file that can be carried across an air gap, and
// writes the add-on's image lock (package imagelock) beside it, so that
// relocation (package relocate) needs no network.
//
// Images go to MIRROR/PATH@DIGEST in a registry (imagelock.MirrorReference)
// and, untagged, into the same layout as the add-on otherwise. A source
// that carries a lock (an archive made by an earlier copy) gives the list
// of images and their digests: nothing is resolved again, so the copy out
// of the archive works with the original registries out of reach.
package airgap
