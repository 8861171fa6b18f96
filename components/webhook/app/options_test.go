package app

import (
	"strings"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	o, err := ParseOptions()
	if err != nil {
		t.Fatal(err)
	}
	if o.securePort != 8443 || o.bindAddress != "0.0.0.0" || o.certName != "tls.crt" || o.keyName != "tls.key" ||
		o.notReadyTolerationSeconds != 300 || o.unreachableTolerationSeconds != 300 || o.gracefulShutdown != 30*time.Second {
		t.Errorf("defaults = %+v", o)
	}
}

func TestValidate(t *testing.T) {
	_, err := ParseOptions("--secure-port=0", "--tls-min-version=1.1", "--cert-dir=")
	for _, flag := range []string{"--secure-port", "--tls-min-version", "--cert-dir"} {
		if err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("error %v does not name %s", err, flag)
		}
	}
}

func TestEndpoints(t *testing.T) {
	// Karmada's paths, every one served.
	want := []string{
		"/mutate-propagationpolicy", "/validate-propagationpolicy",
		"/mutate-clusterpropagationpolicy", "/validate-clusterpropagationpolicy",
		"/mutate-overridepolicy", "/validate-overridepolicy", "/validate-clusteroverridepolicy",
		"/mutate-resourcebinding", "/validate-resourcebinding", "/mutate-clusterresourcebinding",
		"/mutate-work", "/validate-clustertaintpolicy",
		"/validate-resourceinterpretercustomization", "/validate-resourceinterpreterwebhookconfiguration",
		"/validate-federatedresourcequota", "/validate-resourcedeletionprotection", "/convert",
		"/mutate-federatedhpa", "/validate-federatedhpa", "/validate-cronfederatedhpa",
		"/mutate-multiclusterservice", "/validate-multiclusterservice", "/validate-multiclusteringress",
	}
	got := Endpoints(Handlers{})
	for _, p := range want {
		if got[p] == nil {
			t.Errorf("%s is not served", p)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d endpoints, want %d", len(got), len(want))
	}
}

func TestQuotaEnforcement(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--feature-gates=FederatedQuotaEnforcement=true"}, true},
		{[]string{"--enable-federated-quota-enforcement"}, true},
		{[]string{"--feature-gates=FederatedQuotaEnforcement=false"}, false},
	} {
		o, err := ParseOptions(tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.enforceQuotas(); got != tc.want {
			t.Errorf("%v: enforcement %v, want %v", tc.args, got, tc.want)
		}
	}
	if _, err := ParseOptions("--feature-gates=NoSuchGate=true"); err == nil || !strings.Contains(err.Error(), "NoSuchGate") {
		t.Errorf("an unknown gate: %v, want an error naming it", err)
	}
}
