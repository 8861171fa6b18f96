// Package membercluster reaches the member clusters of the federation from the
// control plane.
//
// A ClientCache builds, per Push-mode Cluster, the clients that talk to the
// member's API server (typed, dynamic, discovery and controller-runtime),
// from spec.apiEndpoint, the token and CA bundle of the Secret named by
// spec.secretRef, spec.insecureSkipTLSVerification and spec.proxyURL /
// spec.proxyHeader. The clients are cached and rebuilt only when the Cluster
// is recreated, its connection fields change or its Secret changes.
//
// An InformerManager runs informers inside members on behalf of controllers
// (nodes and pods for the cluster status, member objects for work status),
// one set per member, stopped when the member goes away or its clients are
// rebuilt.
package membercluster
