// Package relocate points the images of a rendered add-on at a mirror
// registry, by digest, from the add-on's image lock (package imagelock):
// an image the lock lists as IMAGE with digest D becomes
// MIRROR/PATH@D (imagelock.MirrorReference).
//
// A kustomize tree is rendered again with the lock's images added to the
// `images:` of its root kustomization, so kustomize's own images
// transformer rewrites them (containers and initContainers); of that
// render only the core workload kinds are kept, since the transformer
// also rewrites custom resources, whose images are their own (spec 6.2).
// In plain manifests, and for what kustomize leaves
// (ephemeral containers), the container, init-container and
// ephemeral-container image fields of the core workload kinds (Pod,
// PodTemplate, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob,
// ReplicationController) are rewritten.
//
// Every image the stream references must be in the lock: otherwise
// nothing is relocated and the error (a *MissingError) names them.
package relocate
