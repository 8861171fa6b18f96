package clusterstorage

import (
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
)

func TestIsLongRunning(t *testing.T) {
	const proxy = "/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy"
	for _, tc := range []struct {
		method, target string
		want           bool
	}{
		{"GET", proxy + "/api/v1/namespaces/web/pods/web-1/log", true},
		{"GET", proxy + "/api/v1/namespaces/web/pods/web-1/log?follow=true", true},
		{"POST", proxy + "/api/v1/namespaces/web/pods/web-1/exec?command=sh", true},
		{"GET", proxy + "/api/v1/namespaces/web/pods/web-1/exec?command=sh", true},
		{"POST", proxy + "/api/v1/namespaces/web/pods/web-1/attach?stdout=true", true},
		{"POST", proxy + "/api/v1/namespaces/web/pods/web-1/portforward", true},
		{"GET", proxy + "/apis/apps/v1/deployments?watch=true", true},
		{"GET", proxy + "/api/v1/namespaces/web/pods", false},
		{"GET", proxy + "/api/v1/namespaces/web/pods/web-1", false},
		{"GET", proxy, false},
		{"GET", proxy + "/", false},
		{"GET", "/apis/cluster.karmada.io/v1alpha1/clusters", false},
		{"GET", "/apis/cluster.karmada.io/v1alpha1/clusters?watch=true", true},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.target, nil)
			factory := &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")} //nolint:staticcheck // the factory takes sets.String
			info, err := factory.NewRequestInfo(r)
			if err != nil {
				t.Fatal(err)
			}
			if got := IsLongRunning(r, info); got != tc.want {
				t.Errorf("IsLongRunning = %v, want %v", got, tc.want)
			}
		})
	}
}
