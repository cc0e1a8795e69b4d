package apply

import (
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/addonpkg/addonpkg/pkg/safetree"
)

// readyStatus is kstatus's status of u, but for an APIService, which is
// ready only once the aggregator reports it Available. kstatus reads no
// Available condition, so to it an APIService whose backend never came
// up (metrics-server's, before any metrics-server pod runs) is Current
// the moment it is created, and a wait that said "ready" would leave a
// cluster where `kubectl top` fails and discovery of the group errors:
// what `kubectl wait --for=condition=Available` is used for.
func readyStatus(u *unstructured.Unstructured) (*status.Result, error) {
	res, err := status.Compute(u)
	if err != nil || res.Status != status.CurrentStatus || !isAPIService(u) {
		return res, err
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		c, _ := c.(map[string]any)
		if t, _ := c["type"].(string); t != "Available" {
			continue
		}
		if s, _ := c["status"].(string); s == "True" {
			return res, nil
		}
		msg := "not Available"
		if reason, _ := c["reason"].(string); reason != "" {
			msg += " (" + safetree.Sanitize(reason) + ")"
		}
		if m, _ := c["message"].(string); m != "" {
			msg += ": " + safetree.Sanitize(m)
		}
		return &status.Result{Status: status.InProgressStatus, Message: msg}, nil
	}
	return &status.Result{Status: status.InProgressStatus, Message: "no Available condition yet"}, nil
}

// isAPIService says whether u is an aggregated API's registration.
func isAPIService(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == "apiregistration.k8s.io" && gvk.Kind == "APIService"
}
