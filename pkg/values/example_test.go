package values_test

import (
	"errors"
	"fmt"

	"github.com/addonpkg/addonpkg/pkg/values"
)

// An installer reads what the add-on declares, resolves what it was
// given against it (a required value not given is refused), and fills
// each rendered document.
func Example() {
	decl, err := values.Parse([]byte(`apiVersion: addon.cncf.io/v1alpha1
kind: AddonValues
values:
- name: DNS_SERVER_IP
  description: ClusterIP of the DNS Service
- name: DNS_DOMAIN
  default: cluster.local
`))
	if err != nil {
		panic(err)
	}

	_, err = values.Resolve(decl, nil)
	var missing *values.MissingError
	fmt.Println(errors.As(err, &missing), errors.Is(err, values.ErrMissing))

	vals, err := values.Resolve(decl, map[string]string{"DNS_SERVER_IP": "10.96.0.10"})
	if err != nil {
		panic(err)
	}
	out, err := values.Expand("service.yaml", []byte("clusterIP: ${DNS_SERVER_IP}\ndomain: ${DNS_DOMAIN}\nscript: echo $${HOME}\n"), vals)
	if err != nil {
		panic(err)
	}
	fmt.Print(string(out))
	// Output:
	// true true
	// clusterIP: 10.96.0.10
	// domain: cluster.local
	// script: echo ${HOME}
}
