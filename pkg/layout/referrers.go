package layout

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/addonpkg/addonpkg/pkg/mediatypes"
)

// Referrers lists the manifests of the store whose subject is subject,
// the one discovery of referrers in a layout (referrers.Layout and
// imagelock.FromLayout are it): every manifest of index.json whose own
// bytes name subject as their subject, and every manifest listed in an
// index tagged with subject's referrers tag (sha256-HEX, the referrers
// tag schema a copy may have carried into the layout) whose bytes do too.
// With repo set (the local store) that tag is REPO:sha256-HEX; with repo
// "" it is sha256-HEX under any name.
//
// Each descriptor has the media type the manifest's bytes give, and its
// artifactType (the config's media type when it has none) and
// annotations, as a registry's referrers list does. A manifest that
// cannot be read is skipped: it could not be copied or verified either.
// The list is sorted by digest, each manifest once.
//
// Each manifest is read once per Store to learn its subject (see cache);
// a call then costs what it finds, not what the store holds.
func (s *Store) Referrers(ctx context.Context, subject v1.Hash, repo string) ([]v1.Descriptor, error) {
	idx, err := s.index()
	if err != nil {
		return nil, err
	}
	tag := strings.Replace(subject.String(), ":", "-", 1)
	isTag := func(refName string) bool {
		if repo != "" {
			return refName == repo+":"+tag
		}
		return refName == tag || strings.HasSuffix(refName, ":"+tag)
	}
	isTagIndex := func(mt types.MediaType, refName string) bool {
		return mediatypes.IsIndex(mediatypes.MediaType(mt)) && isTag(refName)
	}
	seen := map[v1.Hash]bool{subject: true}
	var out []v1.Descriptor
	// add lists d, whose facts name subject, with the annotations its
	// bytes give (read again: only what is found is).
	add := func(d v1.Descriptor) {
		if seen[d.Digest] {
			return
		}
		seen[d.Digest] = true
		s.c.stats.manifestReads.Add(1)
		raw, err := s.readBlob(d.Digest, d.Size, manifestCap)
		if err != nil {
			return
		}
		mt, err := mediatypes.Sniff(raw)
		if err != nil {
			return
		}
		sub, art, ann := subjectOf(raw)
		if sub == nil || sub.Digest != subject {
			return
		}
		out = append(out, v1.Descriptor{MediaType: mt, Size: int64(len(raw)), Digest: d.Digest, ArtifactType: art, Annotations: ann})
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The indexes tagged with subject's referrers tag: what they list.
	for _, e := range idx.Manifests {
		if !isTagIndex(e.MediaType, e.Annotations[mediatypes.AnnotationRefName]) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s.c.stats.manifestReads.Add(1)
		raw, err := s.readBlob(e.Digest, e.Size, manifestCap)
		if err != nil {
			continue
		}
		doc, err := mediatypes.ParseDocument(raw)
		if err != nil {
			continue
		}
		for _, c := range doc.Manifests {
			if f, ok := s.factsOf(c); ok && f.hasSub && f.subject == subject && f.mediaType != "" {
				add(c)
			}
		}
	}
	// The entries whose manifests name subject (an index tagged with the
	// referrers tag counts for what it lists, above, not for itself).
	for _, e := range s.entriesNaming(idx, subject) {
		if !isTagIndex(e.desc.MediaType, e.refName) {
			add(e.desc)
		}
	}
	slices.SortFunc(out, func(a, b v1.Descriptor) int { return strings.Compare(a.Digest.String(), b.Digest.String()) })
	return out, nil
}

// subjectOf reads the subject, artifact type and annotations of a
// manifest's bytes; the artifact type defaults to the config's media type,
// as the distribution spec says for the referrers list.
func subjectOf(raw []byte) (*v1.Descriptor, string, map[string]string) {
	var doc struct {
		Subject      *v1.Descriptor    `json:"subject"`
		ArtifactType string            `json:"artifactType"`
		Annotations  map[string]string `json:"annotations"`
		Config       struct {
			MediaType string `json:"mediaType"`
		} `json:"config"`
	}
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&doc); err != nil {
		return nil, "", nil
	}
	art := doc.ArtifactType
	if art == "" {
		art = doc.Config.MediaType
	}
	return doc.Subject, art, doc.Annotations
}
