package bootstrap_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/internal/bootstrap"
	"github.com/flotilla-io/flotilla/internal/localfed"
	"github.com/flotilla-io/flotilla/internal/localfed/localfedtest"
)

var fed = &localfedtest.Shared{Options: localfed.Options{StartTimeout: 5 * time.Minute}}

func TestMain(m *testing.M) { os.Exit(fed.Main(m)) }

func TestParseToken(t *testing.T) {
	tests := []struct {
		in      string
		wantErr bool
	}{
		{"abcdef.0123456789abcdef", false},
		{"abcdef0123456789abcdef", true},
		{"ABCDEF.0123456789abcdef", true},
		{"abcde.0123456789abcdef", true},
		{"", true},
	}
	for _, tt := range tests {
		got, err := bootstrap.ParseToken(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseToken(%q) error %v, want error %v", tt.in, err, tt.wantErr)
		}
		if err == nil && got.String() != tt.in {
			t.Errorf("ParseToken(%q) = %q", tt.in, got)
		}
		if err != nil && !strings.Contains(err.Error(), "--token") {
			t.Errorf("ParseToken(%q) error %q does not name --token", tt.in, err)
		}
	}
}

// TestTokensAndDiscovery: a token created is listed, authenticates for
// cluster-info, is trusted only with the right CA pin, and is gone once
// deleted.
func TestTokensAndDiscovery(t *testing.T) {
	f := fed.Get(t)
	ctx := t.Context()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(f.ControlPlane.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	token, err := bootstrap.CreateToken(ctx, c, time.Hour, "test")
	if err != nil {
		t.Fatal(err)
	}
	listed, err := bootstrap.ListTokens(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].String() != token.String() || listed[0].Expires.IsZero() || listed[0].Description != "test" {
		t.Fatalf("listed %+v, want the token created", listed)
	}
	if err := bootstrap.EnsureClusterInfo(ctx, c, f.ControlPlane.Endpoint, f.ControlPlane.CAData); err != nil {
		t.Fatal(err)
	}
	hash, err := bootstrap.CAHash(f.ControlPlane.CAData)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bootstrap.Discover(ctx, f.ControlPlane.Endpoint, token, []string{"sha256:" + strings.Repeat("a", 64)}); err == nil ||
		!strings.Contains(err.Error(), "refusing to trust") {
		t.Errorf("discovery with a wrong pin: %v, want a refusal", err)
	}
	if _, err := bootstrap.Discover(ctx, f.ControlPlane.Endpoint, token, []string{"sha256:short"}); err == nil ||
		!strings.Contains(err.Error(), "--discovery-token-ca-cert-hash") {
		t.Errorf("discovery with a malformed pin: %v, want an error naming the flag", err)
	}
	// The RBAC of the token's group may reach the authorizer a moment after
	// it was written.
	var cfgErr error
	for range 50 {
		if _, cfgErr = bootstrap.Discover(ctx, f.ControlPlane.Endpoint, token, []string{hash}); cfgErr == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if cfgErr != nil {
		t.Fatalf("discovery with the right pin: %v", cfgErr)
	}
	if err := bootstrap.DeleteToken(ctx, c, token.ID); err != nil {
		t.Fatal(err)
	}
	if listed, err := bootstrap.ListTokens(ctx, c); err != nil || len(listed) != 0 {
		t.Errorf("tokens after delete: %+v, %v", listed, err)
	}
	if err := bootstrap.DeleteToken(ctx, c, token.ID); err == nil || !strings.Contains(err.Error(), "no bootstrap token") {
		t.Errorf("deleting it again: %v, want not found", err)
	}
}
