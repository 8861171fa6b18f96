/*
Copyright 2026 The Flotilla Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package v1alpha1 holds the cluster.karmada.io/v1alpha1 API: Cluster, one
// member cluster joined to the control plane, how to reach it and what it
// reports back. Like Karmada, Flotilla serves it from an aggregated API
// server (components/aggregated-apiserver), which adds the clusters/proxy
// subresource; the CRD generated from these types has the same wire shape
// and remains for control planes without that server.
//
// +kubebuilder:object:generate=true
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.flotilla-io.flotilla.api.cluster.v1alpha1
// +groupName=cluster.karmada.io
package v1alpha1
