package apply

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// resettableMapper is controller-runtime's dynamic mapper, which Reset
// makes anew. The dynamic mapper learns a group's versions as they are
// asked for and forgets none that the API server still lists when it
// looks again: once an upgrade of an add-on's CRD stops serving a
// version (v1alpha1 to v1), it goes on mapping the kind to that version,
// which the API server answers with 404. The readiness wait then saw the
// custom resources NotFound until it timed out, and prune took its 404
// for an object already gone. Apply resets it once it has changed a CRD.
type resettableMapper struct {
	mu    sync.RWMutex
	inner meta.RESTMapper
	fresh func() (meta.RESTMapper, error)
}

var _ meta.ResettableRESTMapper = (*resettableMapper)(nil)

func newResettableMapper(fresh func() (meta.RESTMapper, error)) (*resettableMapper, error) {
	inner, err := fresh()
	if err != nil {
		return nil, err
	}
	return &resettableMapper{inner: inner, fresh: fresh}, nil
}

// Reset forgets what was discovered: the next mapping asks the API
// server again. A mapper that cannot be made (it makes none of its
// requests until used) keeps the one there is.
func (m *resettableMapper) Reset() {
	inner, err := m.fresh()
	if err != nil {
		return
	}
	m.mu.Lock()
	m.inner = inner
	m.mu.Unlock()
}

func (m *resettableMapper) current() meta.RESTMapper {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.inner
}

func (m *resettableMapper) KindFor(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return m.current().KindFor(r)
}

func (m *resettableMapper) KindsFor(r schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return m.current().KindsFor(r)
}

func (m *resettableMapper) ResourceFor(r schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return m.current().ResourceFor(r)
}

func (m *resettableMapper) ResourcesFor(r schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return m.current().ResourcesFor(r)
}

func (m *resettableMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	return m.current().RESTMapping(gk, versions...)
}

func (m *resettableMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return m.current().RESTMappings(gk, versions...)
}

func (m *resettableMapper) ResourceSingularizer(resource string) (string, error) {
	return m.current().ResourceSingularizer(resource)
}
