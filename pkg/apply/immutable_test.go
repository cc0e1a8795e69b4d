package apply_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/addonpkg/addonpkg/pkg/apply"
)

// ErrImmutable is a 422 whose cause is a field that may not change, in
// the words the API server gives it; a value the schema refuses is
// rejected but not immutable, so Recreate is not suggested for it (ssa's
// IsImmutableError takes every 422 for one).
func TestImmutableFromCauses(t *testing.T) {
	invalid := func(gk schema.GroupKind, msg string) error {
		return apierrors.NewInvalid(gk, "x", field.ErrorList{field.Invalid(field.NewPath("spec", "f"), "v", msg)})
	}
	apps := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	for _, c := range []struct {
		name      string
		err       error
		immutable bool
	}{
		{"a selector", invalid(apps, apivalidation.FieldImmutableErrorMsg), true},
		{"a CEL rule", invalid(schema.GroupKind{Group: "example.com", Kind: "Widget"}, "Value is immutable"), true},
		{"a roleRef", invalid(schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}, "cannot change roleRef"), true},
		{"a StorageClass's parameters", apierrors.NewInvalid(schema.GroupKind{Group: "storage.k8s.io", Kind: "StorageClass"}, "x", field.ErrorList{field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden.")}), true},
		{"a Pod", apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "x", field.ErrorList{field.Forbidden(field.NewPath("spec"), "pod updates may not change fields other than `spec.containers[*].image`")}), true},
		// The words of the API server's Service validation
		// (ValidateServiceUpdate) for a changed clusterIP.
		{"a Service's clusterIP", apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "x", field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIPs").Index(0), []string{"10.0.0.11"}, "may not change once set")}), true},
		{"a bad clusterIP", invalid(schema.GroupKind{Kind: "Service"}, "must be a valid IP address"), false},
		{"a value that says it", apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", field.ErrorList{field.Invalid(field.NewPath("data"), "this is immutable", "must be short")}), false},
		{"a conflict", apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("the object has been modified")), false},
	} {
		err := apply.Wrap(c.err)
		if errors.Is(err, apply.ErrImmutable) != c.immutable {
			t.Errorf("%s: errors.Is(ErrImmutable) = %v, want %v (%v)", c.name, !c.immutable, c.immutable, err)
		}
		if _, isInvalid := c.err.(apierrors.APIStatus); isInvalid && apierrors.IsInvalid(c.err) && !errors.Is(err, apply.ErrRejected) {
			t.Errorf("%s: not ErrRejected", c.name)
		}
	}
}

// A refusal that quotes a whole template keeps its reason: the value is
// cut in its middle, not the message at its end, which lost "field is
// immutable" after a Job's template.
func TestLongCauseKeepsItsReason(t *testing.T) {
	template := map[string]any{"labels": strings.Repeat("x", 3000), "image": "busybox:2"}
	se := apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "j", field.ErrorList{field.Invalid(field.NewPath("spec", "template"), template, apivalidation.FieldImmutableErrorMsg)})
	err := apply.Wrap(fmt.Errorf("Job/default/j dry-run failed (Invalid): %w", se))
	msg := err.Error()
	if !strings.HasSuffix(msg, apivalidation.FieldImmutableErrorMsg) || !strings.HasPrefix(msg, `Job/default/j dry-run failed (Invalid): Job.batch "j" is invalid: spec.template: Invalid value:`) || len(msg) > 600 || !errors.Is(err, apply.ErrImmutable) {
		t.Errorf("message (%d bytes) %q, want the kind, field and reason, the value cut", len(msg), msg)
	}
}

// A refusal of many long causes (a hostile API server's, or a proxy's)
// is made short in about the time it takes to read: the message keeps
// 2000 bytes, so only its first causes can show, and cutting every one
// of 20000 in a 10 MB message took a minute, each time the error was
// printed.
func TestManyLongCausesCutQuickly(t *testing.T) {
	var (
		causes []metav1.StatusCause
		msg    strings.Builder
	)
	msg.WriteString(`ConfigMap "x" is invalid: [`)
	for i := range 20000 {
		c := metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid, Field: fmt.Sprintf("data[%d]", i),
			Message: fmt.Sprintf("Invalid value: %q: bad", strings.Repeat("x", 500)+fmt.Sprint(i))}
		causes = append(causes, c)
		fmt.Fprintf(&msg, "%s: %s, ", c.Field, c.Message)
	}
	se := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid,
		Message: msg.String() + "]", Details: &metav1.StatusDetails{Kind: "ConfigMap", Name: "x", Causes: causes}}}
	done := make(chan string, 1)
	go func() { done <- apply.Wrap(se).Error() }()
	select {
	case got := <-done:
		if !strings.HasPrefix(got, `ConfigMap "x" is invalid: [data[0]: Invalid value: "xxx`) || !strings.Contains(got, " … ") || len(got) > 2100 {
			t.Errorf("message (%d bytes) %.300q…, want the first causes, cut", len(got), got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("making the message of 20000 long causes took more than 10 s")
	}
}
