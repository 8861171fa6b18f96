// Package server is the estimator's gRPC service: it checks that a request
// is for its cluster, answers it from the caches with the estimate and
// unschedulable packages, and turns failures into gRPC status errors.
package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	corelisters "k8s.io/client-go/listers/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/flotilla/components/scheduler-estimator/internal/cache"
	"github.com/flotilla-io/flotilla/components/scheduler-estimator/internal/estimate"
	"github.com/flotilla-io/flotilla/components/scheduler-estimator/internal/unschedulable"
	"github.com/flotilla-io/flotilla/internal/estimatorrpc"
)

// Options are what a Server answers from.
type Options struct {
	// ClusterName is the member this estimator serves; requests for
	// another are refused.
	ClusterName string
	Nodes       *cache.Cache
	// Quotas are the member's ResourceQuotas; nil leaves quotas out.
	Quotas    corelisters.ResourceQuotaLister
	Workloads *unschedulable.Workloads
	// IgnoreAssumed answers as if requests carried no assumed workloads.
	IgnoreAssumed bool
	// Parallelism is how many goroutines count the nodes of one answer.
	Parallelism int
	// Now is the clock unschedulable thresholds are measured with;
	// time.Now when nil.
	Now func() time.Time
	// Metrics, when set, count the requests and their latency.
	Metrics *Metrics
}

// Server implements estimatorrpc.EstimatorServer.
type Server struct {
	o Options
	// matches keep which nodes each claim allows while the nodes' labels,
	// taints and cordons stay.
	matches *estimate.MatchCache
}

var _ estimatorrpc.EstimatorServer = (*Server)(nil)

// New returns a Server answering from o.
func New(o Options) *Server {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Server{o: o, matches: estimate.NewMatchCache()}
}

// MaxAvailableReplicas answers how many replicas fit in the cluster.
func (s *Server) MaxAvailableReplicas(ctx context.Context, req *estimatorrpc.MaxAvailableReplicasRequest) (resp *estimatorrpc.MaxAvailableReplicasResponse, err error) {
	defer s.observe(ctx, estimatorrpc.MethodMaxAvailableReplicas, time.Now(), &err, func() any { return resp.MaxReplicas })
	if err := s.checkCluster(req.Cluster); err != nil {
		return nil, err
	}
	quotas, err := s.quotas(req.ReplicaRequirements.Namespace)
	if err != nil {
		return nil, err
	}
	if s.o.IgnoreAssumed && len(req.AssumedWorkloads) > 0 {
		r := *req
		r.AssumedWorkloads = nil
		req = &r
	}
	var n int32
	s.o.Nodes.Read(func(nodes []*estimate.Node, version uint64) {
		n, err = estimate.MaxReplicas(ctx, s.cluster(nodes, version, quotas), req, s.o.Parallelism)
	})
	if err != nil {
		return nil, statusOf(err)
	}
	return &estimatorrpc.MaxAvailableReplicasResponse{MaxReplicas: n}, nil
}

// MaxAvailableComponentSets answers how many complete component sets fit.
func (s *Server) MaxAvailableComponentSets(ctx context.Context, req *estimatorrpc.MaxAvailableComponentSetsRequest) (resp *estimatorrpc.MaxAvailableComponentSetsResponse, err error) {
	defer s.observe(ctx, estimatorrpc.MethodMaxAvailableComponentSets, time.Now(), &err, func() any { return resp.MaxSets })
	if err := s.checkCluster(req.Cluster); err != nil {
		return nil, err
	}
	quotas, err := s.quotas(req.Namespace)
	if err != nil {
		return nil, err
	}
	if s.o.IgnoreAssumed && len(req.AssumedWorkloads) > 0 {
		r := *req
		r.AssumedWorkloads = nil
		req = &r
	}
	var n int32
	s.o.Nodes.Read(func(nodes []*estimate.Node, version uint64) {
		n, err = estimate.MaxSets(ctx, s.cluster(nodes, version, quotas), req)
	})
	if err != nil {
		return nil, statusOf(err)
	}
	return &estimatorrpc.MaxAvailableComponentSetsResponse{MaxSets: n}, nil
}

// GetUnschedulableReplicas answers how many replicas of a workload have
// been unschedulable for longer than the request's threshold.
func (s *Server) GetUnschedulableReplicas(ctx context.Context, req *estimatorrpc.UnschedulableReplicasRequest) (resp *estimatorrpc.UnschedulableReplicasResponse, err error) {
	defer s.observe(ctx, estimatorrpc.MethodGetUnschedulableReplicas, time.Now(), &err, func() any { return resp.UnschedulableReplicas })
	if err := s.checkCluster(req.Cluster); err != nil {
		return nil, err
	}
	pods, err := s.o.Workloads.PodsOf(req.Resource)
	if err != nil {
		return nil, statusOf(err)
	}
	return &estimatorrpc.UnschedulableReplicasResponse{UnschedulableReplicas: unschedulable.Count(pods, req.UnschedulableThreshold, s.o.Now())}, nil
}

func (s *Server) cluster(nodes []*estimate.Node, version uint64, quotas []*corev1.ResourceQuota) estimate.Cluster {
	return estimate.Cluster{Nodes: nodes, Version: version, Quotas: quotas, Matches: s.matches}
}

func (s *Server) checkCluster(cluster string) error {
	if cluster != s.o.ClusterName {
		return status.Error(codes.InvalidArgument, field.Invalid(field.NewPath("cluster"), cluster, fmt.Sprintf("this estimator serves cluster %q", s.o.ClusterName)).Error())
	}
	return nil
}

// quotas are the ResourceQuotas of namespace; none for a request that names
// no namespace.
func (s *Server) quotas(namespace string) ([]*corev1.ResourceQuota, error) {
	if namespace == "" || s.o.Quotas == nil {
		return nil, nil
	}
	quotas, err := s.o.Quotas.ResourceQuotas(namespace).List(labels.Everything())
	if err != nil {
		return nil, status.Errorf(codes.Internal, "listing the ResourceQuotas of %s: %v", namespace, err)
	}
	return quotas, nil
}

// observe logs and counts one answer.
func (s *Server) observe(ctx context.Context, method string, start time.Time, err *error, answer func() any) {
	elapsed := time.Since(start)
	s.o.Metrics.observe(method, *err, elapsed)
	logger := ctrl.LoggerFrom(ctx).WithValues("method", method, "duration", elapsed)
	if *err != nil {
		if code := status.Code(*err); code == codes.Internal || code == codes.Unknown {
			logger.Error(*err, "Estimation failed")
		} else {
			logger.V(2).Info("Request refused", "reason", (*err).Error())
		}
		return
	}
	logger.V(4).Info("Estimated", "answer", answer())
}

// statusOf turns an estimation failure into a gRPC status: bad requests
// (field errors, which name the request's field) are InvalidArgument, a
// workload missing from the member NotFound.
func statusOf(err error) error {
	switch {
	case isFieldError(err):
		return status.Error(codes.InvalidArgument, err.Error())
	case apierrors.IsNotFound(err):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.Internal, err.Error())
}

func isFieldError(err error) bool {
	var fe *field.Error
	if errors.As(err, &fe) {
		return true
	}
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) || len(agg.Errors()) == 0 {
		return false
	}
	for _, e := range agg.Errors() {
		if !isFieldError(e) {
			return false
		}
	}
	return true
}
