package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/docker/cli/cli/config"
	"github.com/docker/cli/cli/config/types"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Login checks user and password against the registry (a GET /v2/
// through the registry's own auth flow) and saves them in the docker
// config only if they work.
func Login(ctx context.Context, server, user, password string, o Options) error {
	var nopts []name.Option
	if o.PlainHTTP {
		nopts = append(nopts, name.Insecure)
	}
	reg, err := name.NewRegistry(server, nopts...)
	if err != nil {
		return fmt.Errorf("invalid registry %q: %w", server, err)
	}
	rt, err := o.transport()
	if err != nil {
		return err
	}
	auth := &authn.Basic{Username: user, Password: password}
	t, err := transport.NewWithContext(ctx, reg, auth, rt, []string{reg.Scope(transport.PullScope)})
	if err != nil {
		return Explain(server, fmt.Errorf("log in: %w", err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s://%s/v2/", reg.Scheme(), reg.RegistryStr()), nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: t}).Do(req)
	if err != nil {
		return Explain(server, fmt.Errorf("log in: %w", err))
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return &Error{Ref: server, Kind: ErrUnauthorized, Message: fmt.Sprintf("the registry refused the user name or password (HTTP %d)", resp.StatusCode), Hint: "no credentials saved"}
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: log in: unexpected HTTP %d from /v2/", server, resp.StatusCode)
	}
	cf, err := config.Load(dockerConfigDir())
	if err != nil {
		return fmt.Errorf("read docker config: %w", err)
	}
	key := reg.RegistryStr()
	if key == name.DefaultRegistry {
		key = authn.DefaultAuthKey
	}
	if err := cf.GetCredentialsStore(key).Store(types.AuthConfig{ServerAddress: key, Username: user, Password: password}); err != nil {
		return fmt.Errorf("save credentials: %w", err)
	}
	return nil
}

// ErrNotLoggedIn is Logout's error when the docker config holds no
// credentials for the server (nothing to remove). docker logout treats
// it as a note, not a failure.
var ErrNotLoggedIn = errors.New("not logged in")

// Logout removes saved credentials for server; ErrNotLoggedIn if there
// are none.
func Logout(server string) error {
	cf, err := config.Load(dockerConfigDir())
	if err != nil {
		return fmt.Errorf("read docker config: %w", err)
	}
	key := server
	if key == name.DefaultRegistry || key == "docker.io" {
		key = authn.DefaultAuthKey
	}
	if _, ok := cf.AuthConfigs[key]; !ok && cf.CredentialsStore == "" && cf.CredentialHelpers[key] == "" {
		return fmt.Errorf("%s: %w", server, ErrNotLoggedIn)
	}
	if err := cf.GetCredentialsStore(key).Erase(key); err != nil {
		return fmt.Errorf("remove credentials: %w", err)
	}
	return nil
}
